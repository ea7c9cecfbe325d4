"""Per-user week resampling and the train/test split (bftune.workloads.resample)."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.resample import (
    WEEK,
    resample,
    split_halves,
    week_picks,
    whole_weeks,
)
from bftune.workloads.swf import read_swf
from bftune.workloads.swf_write import write_swf
from locations import KTH

T0 = 1000
N_ORIG_WEEKS = 4
USERS = (1, 2, 3, -1)


def make_trace() -> Trace:
    """4 whole weeks + a trailing partial week; every (user, week) has a unique runtime signature.

    User 3 has no job in week 2, so some new weeks lack user 3 by design.
    """
    jobs: list[JobRecord] = []
    jid = 1
    for week in range(N_ORIG_WEEKS):
        for user in USERS:
            if user == 3 and week == 2:
                continue
            for n in range(1 + (user % 3) + week):
                offset = (n * 7919 + user * 104729 + week * 3571) % WEEK
                jobs.append(
                    JobRecord(
                        id=jid,
                        submit=T0 + week * WEEK + offset,
                        procs=1 + n % 4,
                        runtime=100 * (week + 1) + 10 * (user + 1) + n,  # identifies (week, user)
                        walltime=10_000,
                        user=user,
                        queue=week,
                    )
                )
                jid += 1
    # the first submission is exactly T0, so weeks start at T0
    jobs.append(JobRecord(id=jid, submit=T0, procs=2, runtime=100 + 20 + 50, walltime=10_000, user=1, queue=0))
    jid += 1
    # the last job defines the end: the 5th week is partial and must never be copied
    jobs.append(JobRecord(id=jid, submit=T0 + 4 * WEEK + 500, procs=1, runtime=99_999, walltime=99_999, user=1))
    return Trace(jobs=[], max_procs=8, name="toy", header_lines=("; MaxProcs: 8",)).with_jobs(jobs)


def origin_of(job: JobRecord) -> tuple[int | float, int]:
    """(original week, user) of a copied job, from its runtime signature."""
    return job.runtime // 100 - 1, job.user


def test_whole_weeks_ignores_trailing_partial_week():
    trace = make_trace()
    assert trace.jobs[0].submit == T0
    assert whole_weeks(trace) == N_ORIG_WEEKS
    res = resample(trace, n_weeks=20, seed=1)
    assert all(j.runtime != 99_999 for j in res.jobs)


def test_each_user_week_is_one_original_user_week_at_same_offset():
    trace = make_trace()
    n_weeks = 12
    res = resample(trace, n_weeks=n_weeks, seed=42)
    users, picks = week_picks(trace, n_weeks, seed=42)
    assert users == sorted(USERS)

    original: dict[tuple[int, int], Counter] = defaultdict(Counter)
    for job in trace.jobs:
        week = (job.submit - T0) // WEEK
        original[(week, job.user)][(job.submit - T0 - week * WEEK, job.procs, job.runtime, job.walltime)] += 1

    copied: dict[tuple[int, int], Counter] = defaultdict(Counter)
    sources: dict[tuple[int, int], set] = defaultdict(set)
    for job in res.jobs:
        week = (job.submit - T0) // WEEK
        assert 0 <= week < n_weeks
        copied[(week, job.user)][(job.submit - T0 - week * WEEK, job.procs, job.runtime, job.walltime)] += 1
        src_week, user = origin_of(job)
        sources[(week, user)].add(src_week)
        assert job.queue == src_week  # other fields are copied from the source job

    for w in range(n_weeks):
        for i, user in enumerate(users):
            k = int(picks[w, i])
            # exactly the user's jobs of the picked week, same offsets, nothing else
            assert copied.get((w, user), Counter()) == original.get((k, user), Counter())
            if (k, user) in original:
                assert sources[(w, user)] == {k}
            else:
                assert (w, user) not in sources  # no job that week: contributes nothing

    # every user that has jobs in every week appears in every new week
    for user in (1, 2, -1):
        assert all((w, user) in copied for w in range(n_weeks))


def test_ids_renumbered_in_submit_then_original_id_order():
    res = resample(make_trace(), n_weeks=6, seed=3)
    assert [j.id for j in res.jobs] == list(range(1, len(res) + 1))
    assert all(a.submit <= b.submit for a, b in zip(res.jobs, res.jobs[1:]))
    assert res.max_procs == 8
    assert res.header_lines[0] == "; MaxProcs: 8"
    assert "per-user week resampling of toy: 6 weeks" in res.header_lines[-1]


def test_tie_on_submit_is_broken_by_original_id():
    jobs = [
        JobRecord(id=7, submit=0, procs=1, runtime=1, walltime=1, user=1),
        JobRecord(id=3, submit=0, procs=1, runtime=2, walltime=2, user=2),
        JobRecord(id=9, submit=WEEK, procs=1, runtime=3, walltime=3, user=1),
    ]
    trace = Trace(jobs=[], max_procs=1).with_jobs(jobs)
    res = resample(trace, n_weeks=1, seed=0)  # K = 1: week 0 is copied as is
    assert [(j.id, j.submit, j.runtime) for j in res.jobs] == [(1, 0, 2), (2, 0, 1)]


def test_same_seed_same_output_different_seed_differs():
    trace = make_trace()
    a = resample(trace, n_weeks=10, seed=7)
    b = resample(trace, n_weeks=10, seed=7)
    c = resample(trace, n_weeks=10, seed=8)
    assert a.jobs == b.jobs
    assert a.jobs != c.jobs
    assert a.name == "toy-resampled-10w-s7"


def test_default_length_is_the_number_of_whole_weeks():
    res = resample(make_trace(), seed=0)
    assert max((j.submit - T0) // WEEK for j in res.jobs) <= N_ORIG_WEEKS - 1


def test_too_short_or_bad_arguments():
    short = Trace(jobs=[JobRecord(id=1, submit=0, procs=1, runtime=1, walltime=1)], max_procs=1)
    with pytest.raises(WorkloadError, match="at least one whole week"):
        resample(short, seed=0)
    with pytest.raises(WorkloadError, match="n_weeks"):
        resample(make_trace(), n_weeks=0, seed=0)


def test_split_halves_at_temporal_midpoint():
    trace = make_trace()
    train, test = split_halves(trace)
    first, last = trace.jobs[0].submit, trace.jobs[-1].submit
    mid = (first + last) / 2
    assert all(j.submit < mid for j in train.jobs)
    assert all(j.submit >= mid for j in test.jobs)
    assert len(train) + len(test) == len(trace)
    assert sorted(j.id for j in train.jobs + test.jobs) == sorted(j.id for j in trace.jobs)
    assert (train.name, test.name) == ("toy-train", "toy-test")
    assert train.max_procs == test.max_procs == trace.max_procs
    one_time = Trace(jobs=[JobRecord(id=i, submit=5, procs=1, runtime=1, walltime=1) for i in (1, 2)], max_procs=1)
    with pytest.raises(WorkloadError):
        split_halves(one_time)


def test_resampled_trace_writes_and_reads_back(tmp_path):
    res = resample(make_trace(), n_weeks=3, seed=5)
    back = read_swf(write_swf(res, tmp_path / "r.swf"))
    assert [(j.id, j.submit, j.procs, j.runtime, j.walltime, j.user) for j in back.jobs] == [
        (j.id, j.submit, j.procs, j.runtime, j.walltime, j.user) for j in res.jobs
    ]
    assert "per-user week resampling" in back.header["Note"]


def test_kth_halves_resample():
    if not KTH.exists():
        pytest.skip(f"shared trace {KTH} is not available (the ../shared checkout is missing)")
    trace = read_swf(KTH)
    train, test = split_halves(trace)
    assert whole_weeks(train) >= 20 and whole_weeks(test) >= 20
    res = resample(train, n_weeks=10, seed=1)
    assert 0 < len(res)
    assert all(1 <= j.procs <= 100 and j.runtime <= j.walltime for j in res.jobs)
    assert res.jobs[-1].submit < train.jobs[0].submit + 10 * WEEK
