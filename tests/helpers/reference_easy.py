"""A deliberately slow, literal EASY(Pr, Pb, Theta) written from docs/semantics/scheduling.md#easy alone.

This is test evidence, not production code: it is independent of
``bftune.schedulers`` (it imports nothing from the package) and favours being
obviously correct over being fast.  Every pass recomputes everything from
plain lists; nothing is cached or updated incrementally.

Semantics (docs/semantics/scheduling.md#easy and #batsim-semantics), each rule in one place below:

* time advances from event timestamp to event timestamp (submissions and
  completions); at each timestamp all completions are applied, then all
  submissions, then exactly ONE scheduling pass;
* a job of runtime p and walltime w started at t ends at t + min(p, w); it
  ends COMPLETED_WALLTIME_REACHED when p >= w;
* a pass: sort the waiting jobs by the primary policy (ties: r_j, then id),
  move jobs with now - r_j > Theta to the head ordered by (r_j, id), start
  jobs in that order while they fit; the first job h that does not fit is
  reserved (shadow time s from running jobs' start + walltime, extra = free
  at s minus q_h); then the other waiting jobs are walked in backfill-policy
  order (same threshold rule) and started if they fit now and either end by
  s (now + p~ <= s) or fit in extra; a job running past s consumes extra;
* strict mode (backfill off): start in order while the head fits, no
  reservation, no backfilling;
* count reservation model: processors are interchangeable; every started job
  takes the lowest-numbered free machines (in the order jobs are started
  within a pass), so the reference also predicts allocations.

Policy keys (ascending = first), with wait = now - r_j and p~ = walltime.
Keys that are rational functions of the (integer or float) inputs are
computed with exact ``Fraction`` arithmetic so that mathematical ties really
are ties and fall to the (r_j, id) tie-break, as the contract says.  Keys with
log or sqrt are computed in floating point.  Guards: UNICEF uses
log2(max(q, 2)); F1-F4 use log10(max(r, 1)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

POLICIES = (
    "FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF",
    "LAF", "SAF", "WFP3", "UNICEF", "F1", "F2", "F3", "F4",
)
# Policies whose key changes with time (they use wait).
DYNAMIC_POLICIES = ("LEXP", "SEXP", "WFP3", "UNICEF")

SUCCESS = "COMPLETED_SUCCESSFULLY"
WALLTIME = "COMPLETED_WALLTIME_REACHED"


@dataclass(frozen=True)
class RefJob:
    id: int
    submit: float  # r_j
    procs: int  # q_j
    runtime: float  # p_j
    walltime: float  # p~_j


def _exact(x) -> Fraction:
    return Fraction(x)  # exact for ints and for floats alike


def policy_key(policy: str, job: RefJob, now):
    """The policy table of docs/semantics/scheduling.md#easy, literally.  Ascending key = scheduled first."""
    r = _exact(job.submit)
    q = job.procs
    pt = _exact(job.walltime)  # p~
    wait = _exact(now) - r
    if policy == "FCFS":
        return r
    if policy == "LCFS":
        return -r
    if policy == "SPF":
        return pt
    if policy == "LPF":
        return -pt
    if policy == "SQF":
        return Fraction(q)
    if policy == "LQF":
        return Fraction(-q)
    if policy == "LEXP":
        return -(wait + pt) / pt
    if policy == "SEXP":
        return (wait + pt) / pt
    if policy == "LRF":
        return -pt / q
    if policy == "SRF":
        return pt / q
    if policy == "LAF":
        return -pt * q
    if policy == "SAF":
        return pt * q
    if policy == "WFP3":
        return -((wait / pt) ** 3) * q
    # Non-rational keys: floating point.
    rf = float(job.submit)
    pf = float(job.walltime)
    wf = float(now) - rf
    if policy == "UNICEF":
        return -wf / (math.log2(max(q, 2)) * pf)
    if policy == "F1":
        return math.log10(pf) * q + 870 * math.log10(max(rf, 1))
    if policy == "F2":
        return math.sqrt(pf) * q + 25600 * math.log10(max(rf, 1))
    if policy == "F3":
        return pf * q + 6.86e6 * math.log10(max(rf, 1))
    if policy == "F4":
        return pf * math.sqrt(q) + 5.3e5 * math.log10(max(rf, 1))
    raise ValueError(f"unknown policy {policy!r}")


def order_queue(waiting: list[RefJob], policy: str, theta: float, now) -> list[RefJob]:
    """Steps 1 and 2 of docs/semantics/scheduling.md#easy: policy order, then threshold promotion."""
    by_policy = sorted(waiting, key=lambda j: (policy_key(policy, j, now), j.submit, j.id))
    if math.isinf(theta):
        return by_policy
    promoted = [j for j in by_policy if _exact(now) - _exact(j.submit) > _exact(theta)]
    promoted.sort(key=lambda j: (j.submit, j.id))
    rest = [j for j in by_policy if not (_exact(now) - _exact(j.submit) > _exact(theta))]
    return promoted + rest


@dataclass
class _Running:
    job: RefJob
    start: float
    end: float  # actual end: start + min(p, w)
    machines: list[int]


def simulate_reference(
    jobs,
    m: int,
    primary: str = "FCFS",
    backfill_policy: str | None = None,
    theta: float = math.inf,
    backfill: bool = True,
    details: bool = False,
):
    """Run EASY on ``jobs`` and return {id: (start, end)}.

    ``jobs``: dicts with keys id, submit, procs, runtime, walltime; or tuples
    (id, submit, procs, runtime, walltime); or objects with those attributes
    (e.g. ``JobRecord``).  With ``details=True`` returns
    {id: (start, end, state, sorted machine ids)} instead.
    """
    backfill_policy = backfill_policy or primary
    assert primary in POLICIES and backfill_policy in POLICIES
    todo = [_to_ref(j) for j in jobs]
    ids = [j.id for j in todo]
    assert len(set(ids)) == len(ids), "job ids must be unique"
    for j in todo:
        assert 1 <= j.procs <= m, f"job {j.id} asks {j.procs} procs on a {m}-processor machine"
        assert j.walltime > 0

    not_submitted = list(todo)
    waiting: list[RefJob] = []
    running: list[_Running] = []
    result: dict = {}
    free_machines = list(range(m))

    while not_submitted or waiting or running:
        candidates = [j.submit for j in not_submitted] + [r.end for r in running]
        if not candidates:
            raise AssertionError(f"jobs {sorted(j.id for j in waiting)} can never start")
        now = min(candidates)

        # 1. every completion at `now` frees its machines
        ended = [r for r in running if r.end == now]
        for r in ended:
            running.remove(r)
            free_machines = sorted(free_machines + r.machines)
            state = WALLTIME if r.job.runtime >= r.job.walltime else SUCCESS
            result[r.job.id] = (r.start, r.end, state, sorted(r.machines))
        # 2. every submission at `now` joins the queue
        arrived = [j for j in not_submitted if j.submit == now]
        for j in arrived:
            not_submitted.remove(j)
            waiting.append(j)
        # 3. one pass
        started = _one_pass(now, m, waiting, running, free_machines,
                            primary, backfill_policy, theta, backfill)
        for j in started:
            waiting.remove(j)

    if details:
        return result
    return {k: (v[0], v[1]) for k, v in result.items()}


def _one_pass(now, m, waiting, running, free_machines, primary, backfill_policy, theta, backfill):
    """One EASY pass at `now`; mutates running/free_machines, returns started jobs."""
    started: list[RefJob] = []

    def start(job: RefJob) -> None:
        take = free_machines[: job.procs]
        del free_machines[: job.procs]
        end = now + min(job.runtime, job.walltime)
        running.append(_Running(job, now, end, take))
        started.append(job)

    # Steps 1-3: walk the primary order while jobs fit.
    head = None
    for job in order_queue(waiting, primary, theta, now):
        if job.procs <= len(free_machines):
            start(job)
        else:
            head = job
            break
    if head is None or not backfill:
        return started

    # Step 3: the head's reservation, from expected ends (start + p~) of all
    # running jobs, those started in this pass included.
    free_now = len(free_machines)
    expected_ends = sorted({r.start + r.job.walltime for r in running})
    shadow = None
    for t in expected_ends:
        free_at_t = free_now + sum(r.job.procs for r in running if r.start + r.job.walltime <= t)
        if free_at_t >= head.procs:
            shadow = t
            extra = free_at_t - head.procs
            break
    assert shadow is not None, "the head fits on the empty machine, so some time must work"

    # Step 4: backfill the others in Pb order (threshold applied the same way).
    others = [j for j in waiting if j is not head and j not in started]
    for job in order_queue(others, backfill_policy, theta, now):
        if job.procs > len(free_machines):
            continue
        ends_by_shadow = now + job.walltime <= shadow
        if ends_by_shadow or job.procs <= extra:
            start(job)
            if not ends_by_shadow:
                extra -= job.procs
    return started


def _to_ref(j) -> RefJob:
    if isinstance(j, RefJob):
        return j
    if isinstance(j, dict):
        return RefJob(int(j["id"]), j["submit"], int(j["procs"]), j["runtime"], j["walltime"])
    if isinstance(j, (tuple, list)):
        i, r, q, p, w = j
        return RefJob(int(i), r, int(q), p, w)
    return RefJob(int(j.id), j.submit, int(j.procs), j.runtime, j.walltime)
