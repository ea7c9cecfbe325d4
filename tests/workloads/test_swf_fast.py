"""The vectorised SWF path must give exactly what the line-by-line path gives."""

from __future__ import annotations

from array import array

import pytest
from bftune.workloads import parsecache, swf
from bftune.workloads.cleaning import _replaced
from bftune.workloads.errors import WorkloadError
from locations import SHARED_WORKLOADS

TRACES = sorted(SHARED_WORKLOADS.glob("*.swf.gz")) if SHARED_WORKLOADS.is_dir() else []


def _both(monkeypatch, read):
    monkeypatch.setenv(parsecache.SWITCH, "off")  # else the second read would come from the first one's cache
    monkeypatch.setattr(swf, "FAST_PATH_MIN_CHARS", 0)
    fast = read()
    monkeypatch.setattr(swf, "FAST_PATH_MIN_CHARS", float("inf"))
    slow = read()
    return fast, slow


def _same(a, b):
    assert a.jobs == b.jobs
    assert [tuple(map(type, _values(x))) for x in a.jobs] == [tuple(map(type, _values(x))) for x in b.jobs]
    assert (a.cleaning, a.header, a.header_lines, a.max_procs, a.unix_start_time, a.timezone) == \
        (b.cleaning, b.header, b.header_lines, b.max_procs, b.unix_start_time, b.timezone)


@pytest.mark.slow
@pytest.mark.skipif(not TRACES, reason=f"no archive traces at {SHARED_WORKLOADS}")
@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_fast_path_equals_careful_path_on_archive_traces(monkeypatch, path):
    fallback = "runtime" if "lublin" in path.name else None
    fast, slow = _both(monkeypatch, lambda: swf.read_swf(path, walltime_fallback=fallback))
    _same(fast, slow)


@pytest.mark.parametrize("cleaning", ["keep-overruns", "batsim-converter", "ran"])
def test_fast_path_equals_careful_path_for_named_cleanings(monkeypatch, cleaning):
    text = HEADER + "\n".join([
        line(1, 0, -1, 10.5, 2, 3.25, -1, 2, 20, -1, 1, 7),
        line(2, 5, -1, 0, 1, -1, -1, 1, 20),  # runtime <= 0
        line(3, 5, -1, 30, 8, -1, -1, 8, 40),  # too wide
        line(4, 6, -1, 30, 1, -1, -1, -1, 20),  # overrun
        line(5, 6, -1, 30, -1, -1, -1, 2, 40),  # requested procs only
        line(6, 7, -1, 30, 1, -1, -1, 1, -1),  # no requested time
        line(7, 8, -1, 30, 1, -1, -1, 1, 45),  # request below 2 x runtime
    ]) + "\n"
    fast, slow = _both(monkeypatch, lambda: swf.parse_swf(text, source="t.swf", cleaning=cleaning))
    _same(fast, slow)
    assert len(fast) == {"keep-overruns": 5, "batsim-converter": 4, "ran": 5}[cleaning]


HEADER = "; MaxProcs: 4\n; UnixStartTime: 100\n"


def _values(job) -> list:
    return [getattr(job, name) for name in job.__slots__]


def line(*fields):
    f = list(fields) + [-1] * (18 - len(fields))
    return " ".join(str(x) for x in f)


def test_fast_path_handles_fractional_times_and_cleaning(monkeypatch):
    text = HEADER + "\n".join([
        line(1, 0, -1, 10.5, 2, 3.25, -1, 2, 20, -1, 1, 7),
        line(2, 5, -1, 0, 1, -1, -1, 1, 20),  # runtime <= 0
        line(3, 5, -1, 30, 8, -1, -1, 8, 40),  # too wide
        line(4, -1, -1, 30, 1, -1, -1, 1, 40),  # negative submit
        line(5, 6, -1, 30, 1, -1, -1, -1, 20),  # walltime < runtime (procs from field 5)
        line(6, 6, -1, 30, -1, -1, -1, -1, 40),  # no procs at all
    ]) + "\n"
    fast, slow = _both(monkeypatch, lambda: swf.parse_swf(text, source="t.swf"))
    _same(fast, slow)
    assert fast.jobs[0].runtime == 10.5 and isinstance(fast.jobs[0].submit, int)
    assert fast.cleaning["runtime_le_0"] == 1 and fast.cleaning["procs_gt_machine"] == 1


def test_fast_path_defers_bad_lines_to_the_careful_path(monkeypatch):
    monkeypatch.setattr(swf, "FAST_PATH_MIN_CHARS", 0)
    bad_count = HEADER + line(1, 0, -1, 10, 2.5, -1, -1, 2, 20) + "\n"  # fractional processors
    with pytest.raises(WorkloadError, match=r"t\.swf:3"):
        swf.parse_swf(bad_count, source="t.swf")
    ragged = HEADER + line(1, 0, -1, 10, 2, -1, -1, 2, 20) + "\n1 2 3\n"
    with pytest.raises(WorkloadError, match=r"t\.swf:4"):
        swf.parse_swf(ragged, source="t.swf")


@pytest.mark.parametrize("cleaning", ["keep-overruns", "ran"])
def test_a_fractional_runtime_replaces_a_missing_request_on_every_path(monkeypatch, cleaning):
    """Integral requested times (an int64 column) take a fractional runtime where the request is missing."""
    text = HEADER + "\n".join([line(1, 0, -1, 10.5, 2, -1, -1, 2, -1), line(2, 1, -1, 30, 1, -1, -1, 1, 40)]) + "\n"
    fast, slow = _both(monkeypatch, lambda: swf.parse_swf(text, source="t.swf", cleaning=cleaning))
    _same(fast, slow)
    assert [job.walltime for job in fast.jobs] == [10.5, 40] and fast.cleaning["walltime_from_runtime"] == 1


def test_replaced_values_keep_an_int_column_compact_where_they_fit():
    column = array("q", [1, -1, 3])
    assert _replaced(column, {1}, 7) == array("q", [1, 7, 3]) and column[1] == -1  # a copy
    mixed = _replaced(column, {1}, [0, 2.5, 0])
    assert mixed == [1, 2.5, 3] and type(mixed) is list
    assert _replaced(column, {0, 1, 2}, [4, 5, 6]) == [4, 5, 6]
    assert _replaced(column, set(), [4, 5, 6]) is column
