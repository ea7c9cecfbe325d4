"""Properties of our simulator checked at every scheduling pass (hypothesis).

An observer hooked on ``Simulator(on_pass=...)`` inspects the decision core
after every pass and checks, independently of the scheduler code:

- no processor over-subscription at any instant; running allocations are
  disjoint sets of machine ids within 0..m-1, each of exactly q_j machines,
  and the free count is m minus the busy ones;
- every start decided by a pass is at that pass's time, at or after r_j;
- after every pass the first waiting job in the primary order (computed here
  with the reference's literal policy keys) does not fit: EASY and the strict
  mode both start jobs in order while they fit;
- EASY-FCFS, Theta = infinity: the reserved head never starts after its
  reservation (see ``test_fcfs_head_never_starts_after_its_reservation``);
- every job ends, once, at start + min(p, p~) with the right final state; with
  kill_after, the kill/requeue contract holds for every job.
"""

from __future__ import annotations

import pytest

import math

import easy_support as H
import reference_easy as REF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SUCCESS = "COMPLETED_SUCCESSFULLY"
WALLTIME = "COMPLETED_WALLTIME_REACHED"
KILLED = "COMPLETED_KILLED"


@st.composite
def workloads(draw, max_m=32, max_jobs=40):
    m = draw(st.integers(1, max_m))
    n = draw(st.integers(1, max_jobs))
    horizon = draw(st.sampled_from([0, 10, 60, 300]))
    jobs = []
    for jid in range(1, n + 1):
        walltime = draw(st.integers(1, 80))
        kind = draw(st.sampled_from(["below", "below", "equal", "above"]))
        runtime = {"below": draw(st.integers(1, walltime)), "equal": walltime,
                   "above": walltime + draw(st.integers(1, 30))}[kind]
        jobs.append((jid, draw(st.integers(0, horizon)), draw(st.integers(1, m)), runtime, walltime))
    return m, jobs


class Observer:
    """Checks the core's state after every pass and records FCFS reservations."""

    def __init__(self, m, policy, theta, check_head=True):
        self.m = m
        self.policy = policy
        self.theta = theta
        self.check_head = check_head
        self.core = None
        self.passes = 0
        self.shadows: dict[str, list[float]] = {}  # head run id -> shadow time at each blocked pass
        self.start_times: set[float] = set()

    def __call__(self, now, decisions):
        core, m = self.core, self.m
        self.passes += 1
        running = list(core.machine.running.values())
        # -- machines: disjoint, in range, right sizes, no over-subscription
        seen: set[int] = set()
        for job in running:
            ids = H.machine_ids(job.alloc)
            assert len(ids) == len(set(ids)) == job.procs, f"{job.id}: alloc {job.alloc} for q={job.procs}"
            assert all(0 <= i < m for i in ids), f"{job.id}: alloc {job.alloc} outside 0..{m - 1}"
            assert not seen & set(ids), f"t={now}: {job.id} shares machines {sorted(seen & set(ids))}"
            seen |= set(ids)
        used = sum(job.procs for job in running)
        assert used == len(seen) <= m, f"t={now}: {used} processors busy on {m}"
        assert core.machine.free.size == m - used
        # -- starts of this pass
        for job in decisions.starts:
            assert job.id in core.machine.running, f"{job.id} started but not running"
            assert job.start == now, f"{job.id} started at {job.start} during the pass at {now}"
            assert job.start >= job.submit, f"{job.id} starts at {job.start} before r_j={job.submit}"
            self.start_times.add(now)
        # -- the primary head does not fit after the pass
        waiting = list(core.queue.jobs.values())
        if not waiting:
            return
        refjobs = {REF.RefJob(j.seq, j.submit, j.procs, 0, j.walltime): j for j in waiting}
        head_ref = REF.order_queue(list(refjobs), self.policy, self.theta, now)[0]
        head = refjobs[head_ref]
        free = m - used
        if self.check_head:
            assert head.procs > free, (
                f"t={now}: head {head.id} (q={head.procs}) fits in {free} free processors but waits")
        # -- reservation of the head, computed here from start + walltime
        if head.procs > free:
            self.shadows.setdefault(head.id, []).append(shadow_time(running, free, head.procs))


def shadow_time(running, free_now, q):
    """Earliest expected end at which q processors are free (count model)."""
    avail = free_now
    for end in sorted({j.start + j.walltime for j in running}):
        avail = free_now + sum(j.procs for j in running if j.start + j.walltime <= end)
        if avail >= q:
            return end
    raise AssertionError(f"head of {q} processors can never fit ({avail} at most)")


def observe(jobs, m, policy="FCFS", backfill_policy=None, theta=math.inf, backfill=True,
            kill_after=None, check_head=True):
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import Simulator

    # Without backfilling there is no backfilling order to give.
    cfg = SchedulerConfig(policy=policy, backfill_policy=backfill_policy if backfill else None, threshold=theta,
                          backfill=backfill, kill_after=kill_after)
    obs = Observer(m, policy, theta, check_head)
    core = cfg.build(m)
    obs.core = core
    res = Simulator(H.to_records(jobs), m, core, on_pass=obs).run()
    return res, obs


def assert_every_job_ends_once(jobs, res):
    runs = {r.seq: r for r in res.runs}
    assert len(res.runs) == len(jobs) and set(runs) == {j[0] for j in jobs}
    for jid, submit, procs, runtime, walltime in jobs:
        run = runs[jid]
        assert run.start >= submit
        assert run.end == run.start + min(runtime, walltime)
        assert run.state == (WALLTIME if runtime >= walltime else SUCCESS)
        assert run.procs == procs and len(H.machine_ids(run.alloc)) == procs
    ends = [r.end for r in res.runs]
    assert ends == sorted(ends), "runs are reported in completion order"


POLICY = st.sampled_from(REF.POLICIES)
THETA = st.sampled_from([math.inf, math.inf, 0.0, 7.0, 50.0])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.slow
@given(w=workloads(), policy=POLICY, backfill_policy=st.one_of(st.none(), POLICY), theta=THETA,
       backfill=st.booleans())
def test_invariants_at_every_pass(w, policy, backfill_policy, theta, backfill):
    m, jobs = w
    res, obs = observe(jobs, m, policy, backfill_policy, theta, backfill)
    assert_every_job_ends_once(jobs, res)
    assert obs.passes > 0
    # every start happens at an event: a submission or a completion
    events = {float(j[1]) for j in jobs} | {r.end for r in res.runs}
    assert obs.start_times <= events


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(max_m=16), backfill_policy=st.one_of(st.none(), POLICY))
def test_fcfs_head_never_starts_after_its_reservation(w, backfill_policy):
    """EASY-FCFS (any Pb), Theta = inf, count model: start_h <= s for h's reservations.

    Claim checked: for every job h and every pass at which h is the FCFS head
    and blocked, with s the shadow time computed here from the running jobs'
    start + walltime after that pass, h's actual start is <= s; in particular
    <= the shadow time of its FIRST reservation, and the successive shadow
    times of h never increase.

    Why it must hold: after the pass that reserved h at s, the running jobs'
    expected ends leave at least q_h processors free at s (backfilled jobs
    either end by s or fit in extra).  Until h starts, nothing but
    completions and backfilling changes the machine: completions happen at
    or before their expected end (runtime = min(p, p~)), so they only free
    processors earlier; each later pass re-reserves h with s' <= s (the
    expected profile still frees q_h by s) and its backfilling respects s'.
    With FCFS and no threshold no later arrival can overtake h (it has a
    larger r_j, or the same r_j and was already queued with h), so h stays
    the head and starts at the latest at the last completion at or before
    its current shadow time.  Hence start_h <= s' <= s.
    """
    m, jobs = w
    res, obs = observe(jobs, m, "FCFS", backfill_policy)
    assert_every_job_ends_once(jobs, res)
    starts = {r.id: r.start for r in res.runs}
    for head, shadows in obs.shadows.items():
        assert starts[head] <= shadows[0], (
            f"head {head} reserved at {shadows[0]} started at {starts[head]}; shadows {shadows}")
        assert all(b <= a for a, b in zip(shadows, shadows[1:])), f"{head}: shadows grew {shadows}"
        assert starts[head] <= shadows[-1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.slow
@given(w=workloads(max_m=12, max_jobs=25), policy=POLICY, theta=THETA,
       kill_after=st.sampled_from([5.0, 20.0, 40.0]), backfill=st.booleans())
def test_kill_after_contract_and_invariants(w, policy, theta, kill_after, backfill):
    m, jobs = w
    res, obs = observe(jobs, m, policy, None, theta, backfill, kill_after=kill_after)
    by_seq: dict[int, list] = {}
    for run in res.runs:
        by_seq.setdefault(run.seq, []).append(run)
    assert set(by_seq) == {j[0] for j in jobs}
    for jid, submit, procs, runtime, walltime in jobs:
        runs = sorted(by_seq[jid], key=lambda r: r.attempt)
        first = runs[0]
        assert first.attempt == 0 and first.first_id == first.id and first.start >= submit
        assert all(r.first_id == first.id for r in runs)
        assert first.original_submit == submit and first.procs == procs
        duration = min(runtime, walltime)
        if walltime > kill_after and duration > kill_after:
            # killed at exactly start + kill_after, requeued once, never killed again
            assert len(runs) == 2, [r.id for r in runs]
            rerun = runs[1]
            assert (first.end, first.state) == (first.start + kill_after, KILLED)
            assert rerun.id == f"{first.id}#1" and rerun.attempt == 1 and rerun.seq == jid
            assert rerun.subtime == first.end and rerun.original_submit == submit
            assert rerun.start >= first.end
            assert rerun.end == rerun.start + duration  # restarted from scratch
            assert rerun.state == (WALLTIME if runtime >= walltime else SUCCESS)
        else:
            assert len(runs) == 1, [r.id for r in runs]
            assert first.end == first.start + duration
            assert first.state == (WALLTIME if runtime >= walltime else SUCCESS)
    # Every start is at an event, for every order: a submission, a completion
    # (kills included) or a requested call.  KillOnceAfter asks for a call at
    # start + kill_after for every watched run and Batsim delivers it even if
    # the run ended earlier, so those times are events too.  No pass may run
    # at the stale planned end of a killed run
    # (test_no_pass_at_the_stale_end_time_of_a_killed_run).
    events = {float(j[1]) for j in jobs} | {r.end for r in res.runs}
    events |= {r.start + kill_after for r in res.runs if r.attempt == 0 and r.walltime > kill_after}
    assert obs.start_times <= events
