"""The local driver's run log (runs.RunLog): rows added between reads all reach its arrays, in order."""

from __future__ import annotations

from array import array

from bftune.schedulers.core.jobs import Job
from bftune.schedulers.drivers.local.runs import REJECTED, RunLog
from bftune.workloads.model import JobRecord


def _ended(record: JobRecord, start: float, attempt: int = 0) -> Job:
    job = Job(str(record.id).zfill(7) + (f"#{attempt}" if attempt else ""), record.id, record.submit, record.procs,
              float(record.walltime), attempt=attempt)
    job.start, job.alloc = start, [(0, record.procs - 1)]
    return job


RECORDS = [JobRecord(1, 0.0, 2, 10, 20), JobRecord(2, 5.0, 1, 30, 30), JobRecord(3, 6.0, 4, 5, 50)]


def test_rows_added_after_a_read_are_kept_in_order():
    log = RunLog(RECORDS, 7)
    log.add(0, _ended(RECORDS[0], 1.0), 0.0, 11.0, "COMPLETED_SUCCESSFULLY")
    assert len(log) == 1 and log[0].end == 11.0  # a read seals what was pending
    log.add(1, _ended(RECORDS[1], 11.0), 5.0, 41.0, "COMPLETED_WALLTIME_REACHED")
    log.add(2, _ended(RECORDS[2], -1.0), 6.0, -1.0, REJECTED)
    log.add(0, _ended(RECORDS[0], 50.0, attempt=1), 11.0, 60.0, "COMPLETED_SUCCESSFULLY")
    runs = list(log)
    assert [r.id for r in runs] == ["0000001", "0000002", "0000003", "0000001#1"] == log.names()
    assert [r.state for r in runs] == ["COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", REJECTED,
                                       "COMPLETED_SUCCESSFULLY"]
    assert [r.start for r in runs] == [1.0, 11.0, -1.0, 50.0] and [r.subtime for r in runs] == [0.0, 5.0, 6.0, 11.0]
    assert [r.attempt for r in runs] == [0, 0, 0, 1] and runs[2].alloc is None and runs[3].alloc == [(0, 1)]
    assert log.alloc == ["0-1", "0", "", "0-1"]
    for column in (log.job, log.attempt, log.subtime, log.start, log.end, log.state):
        assert isinstance(column, array) and len(column) == 4  # typed arrays once read, nothing left pending
    assert log.seal() is log and len(log) == 4  # sealing again adds nothing


def test_an_unread_log_reports_every_row():
    log = RunLog(RECORDS, 7)
    for i, record in enumerate(RECORDS):
        log.add(i, _ended(record, float(i)), record.submit, float(i) + 1, "COMPLETED_SUCCESSFULLY")
    assert log.column("procs") == [2, 1, 4] and len(log) == 3
