"""PV-EASY's guarantees on random workloads (hypothesis), checked from the simulator's own records.

The observer reads the local simulator's run records (what was submitted,
started and ended, on which machines), never the core's queue, shadow load
or reservations, and ranks jobs itself from their (r, id) or area:

- no processor is ever promised twice, kills in flight included: the runs
  started and not yet ended (a killed run holds its machines until its
  acknowledgement) use disjoint machines, at most m;
- strict fairness: after every pass that decides no kill, with no kill in
  flight, the first waiting job h (by priority) does not fit, and would not
  fit either if every running job of lower priority were gone - no waiting
  job is delayed by a job of lower priority;
- venture backfilling leaves no processor idle that a waiting job could use;
- every job ends once, successfully or at its walltime, its killed runs
  restarted from scratch with the job's r_j.
"""

from __future__ import annotations

import pytest

import random
from operator import attrgetter

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import Simulator
from bftune.workloads.model import JobRecord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KILLED = "COMPLETED_KILLED"


@st.composite
def workloads(draw, max_m=24, max_jobs=40):
    m = draw(st.integers(1, max_m))
    n = draw(st.integers(1, max_jobs))
    horizon = draw(st.sampled_from([0, 20, 100, 500]))
    jobs = []
    for jid in range(1, n + 1):
        walltime = draw(st.integers(1, 100))
        runtime = draw(st.integers(0, walltime + 20))  # zero-length jobs and overruns (killed at the walltime)
        user = draw(st.integers(-1, 3))
        jobs.append(JobRecord(jid, draw(st.integers(0, horizon)), draw(st.integers(1, m)), runtime, walltime, user=user))
    return m, jobs


def rank_fcfs(job):
    return (job.submit, job.seq, job.first_id)  # a rerun's submit is its job's original submission


def rank_saf(job):
    return (job.walltime * job.procs, job.submit, job.seq, job.first_id)


class Observer:
    def __init__(self, sim: Simulator, m: int, rank) -> None:
        self.sim, self.m, self.rank = sim, m, rank
        self.checked = 0

    def __call__(self, now, decisions):
        runs = self.sim.active_jobs()  # registered runs that have not ended (core Jobs)
        running = [r for r in runs if r.start >= 0]
        waiting = [r for r in runs if r.start < 0]
        machines = [i for r in running for a, b in r.alloc for i in range(a, b + 1)]
        assert len(machines) == len(set(machines)) == sum(r.procs for r in running) <= self.m, \
            f"t={now}: machines promised twice or over-subscribed"
        assert all(0 <= i < self.m for i in machines)
        if decisions.kills or self.sim.core.killing or not waiting:
            return
        free = self.m - len(machines)
        head = min(waiting, key=self.rank)
        lower = sum(r.procs for r in running if self.rank(r) > self.rank(head))
        assert head.procs > free, f"t={now}: {head.id} fits in {free} free processors but waits"
        assert head.procs > free + lower, (
            f"t={now}: {head.id} (q={head.procs}) waits while running jobs of lower priority hold {lower} "
            f"processors and {free} are free")
        assert all(r.procs > free for r in waiting), f"t={now}: a waiting job fits in {free} idle processors"
        self.checked += 1


def run_checked(jobs, m, options, rank):
    cfg = SchedulerConfig.from_options({"scheduler": "pv-easy", **options})
    sim = Simulator(jobs, m, cfg.build(m))
    observer = Observer(sim, m, rank)
    sim.on_pass = observer
    result = sim.run()
    by_job: dict[str, list] = {}
    for run in result.runs:
        by_job.setdefault(run.first_id, []).append(run)
    assert len(by_job) == len(jobs)
    for job_runs in by_job.values():
        *killed, final = sorted(job_runs, key=attrgetter("attempt"))
        assert all(r.state == KILLED for r in killed) and final.state != KILLED
        assert final.end - final.start == min(final.runtime, final.walltime)
        assert {r.original_submit for r in job_runs} == {job_runs[0].original_submit}
        assert [r.attempt for r in sorted(job_runs, key=attrgetter("attempt"))] == list(range(len(job_runs)))
    return result, observer


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(["walltime", "last", "exact", "virtual:0.5"]))
def test_fcfs_strict_fairness_and_no_double_booking(workload, predictor):
    m, jobs = workload
    run_checked(jobs, m, {"predictor": predictor}, rank_fcfs)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_saf_priority_strict_fairness(workload):
    m, jobs = workload
    run_checked(jobs, m, {"policy": "SAF"}, rank_saf)


def test_preemption_happens_on_a_busy_random_workload():
    """The checks above are not vacuous: on a loaded machine PV-EASY kills, and passes are checked."""
    rng = random.Random(5)
    jobs, t = [], 0
    for i in range(1, 400):
        t += rng.choice([0, 1, 10, 60])
        p = rng.choice([5, 50, 500, 2000])
        jobs.append(JobRecord(i, t, rng.randint(1, 16), p, rng.choice([p, 2 * p, 5000]), user=rng.randint(1, 6)))
    result, observer = run_checked(jobs, 16, {"predictor": "last"}, rank_fcfs)
    assert sum(r.state == KILLED for r in result.runs) > 20
    assert observer.checked > 300
