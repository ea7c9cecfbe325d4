"""Per-user week resampling and the train/test split (docs/semantics/workloads.md#resampling).

Why resample: one archive trace is one sample of a workload; schedulers tuned
on it overfit its particular bursts.  Resampling whole user-weeks keeps what
matters for scheduling - each user's behaviour within a week (bursts,
sessions, daily cycle, job mix) and the weekly rhythm - while producing as
many different, equally plausible traces as we want (Zakay & Feitelson's
"workload resampling").

The model, exactly:

- The trace is cut into weeks of 7 x 86400 s starting at its first
  submission t0.  Only *whole* weeks are used: with t_last the last
  submission, K = floor((t_last - t0) / week) weeks, and jobs submitted at or
  after t0 + K weeks (the trailing partial week) are never copied.  A trace
  spanning less than one week cannot be resampled.
- The users are all distinct ``user`` values of the trace (-1, "unknown", is
  one pseudo-user: a trace without user ids is resampled by whole weeks).
- New week w (0 <= w < N) is built independently for every user u: one
  original week k is picked uniformly at random among the K, and u's jobs of
  week k are copied into week w at the same offset within the week:
  ``new submit = t0 + w*week + (submit - (t0 + k*week))``.  A user with no
  job in the picked week contributes nothing to week w - that is the model,
  it keeps the users' activity rates.
- Picks come from ``numpy.random.default_rng(seed)``: one
  ``integers(0, K, size=(N, n_users))`` draw, users in ascending id order, so
  the same trace and seed always give the same result.
- The copies get new ids 1..n in (new submit, original id) order.  All other
  job fields are kept.  The time origin t0 is kept, so ``UnixStartTime``
  still gives the calendar (the day of week of every job is preserved).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import WEEK, JobRecord, Trace, sort_jobs



def whole_weeks(trace: Trace) -> int:
    """Number K of whole weeks between the first and the last submission of ``trace``."""
    if not trace.jobs:
        return 0
    first = min(job.submit for job in trace.jobs)
    last = max(job.submit for job in trace.jobs)
    return int((last - first) // WEEK)


def week_picks(trace: Trace, n_weeks: int, seed: int | np.random.Generator) -> tuple[list[int], np.ndarray]:
    """The random choices behind :func:`resample`: ``(users, picks)``.

    ``users`` is the sorted list of user ids; ``picks[w, i]`` is the original
    week whose jobs of ``users[i]`` fill new week ``w``.  Exposed so that
    callers (and tests) can see where every resampled job came from.
    """
    k = whole_weeks(trace)
    if k < 1:
        raise WorkloadError(
            f"{trace.name}: resampling needs at least one whole week of submissions "
            f"(the trace spans {_span(trace):.0f} s < {WEEK} s)"
        )
    limits.weeks(n_weeks, "n_weeks")
    if not isinstance(seed, np.random.Generator):
        limits.seed(seed, "seed")
    t0 = min(job.submit for job in trace.jobs)
    copied = sum(1 for job in trace.jobs if job.submit - t0 < k * WEEK)  # the jobs of the K whole weeks
    expected = n_weeks * copied / k
    if expected > limits.MAX_JOBS:
        raise WorkloadError(f"{trace.name}: {n_weeks} weeks of about {copied / k:.0f} jobs each would be "
                            f"{expected:,.0f} jobs, more than bftune accepts ({limits.MAX_JOBS:,})")
    users = sorted({job.user for job in trace.jobs})
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    picks = rng.integers(0, k, size=(int(n_weeks), len(users)))
    return users, picks


def resample(
    trace: Trace,
    n_weeks: int | None = None,
    seed: int | np.random.Generator = 0,
    *,
    name: str | None = None,
) -> Trace:
    """A per-user week resampling of ``trace``, ``n_weeks`` long (default: K, as long as the original).

    Deterministic for an integer ``seed``.  The result keeps the machine size,
    header and cleaning counts of ``trace``; one ``; Note:`` line recording
    the resampling is appended to ``header_lines`` (so :func:`write_swf`
    writes it).  Raises :class:`WorkloadError` if the trace is shorter than a
    week or the resampled trace would be empty.
    """
    k = whole_weeks(trace)
    if n_weeks is None:
        n_weeks = max(k, 1)
    users, picks = week_picks(trace, n_weeks, seed)
    t0 = min(job.submit for job in trace.jobs)
    by_user_week: dict[tuple[int, int], list[JobRecord]] = defaultdict(list)
    for job in trace.jobs:
        week = int((job.submit - t0) // WEEK)
        if week < k:  # the trailing partial week is never copied
            by_user_week[(job.user, week)].append(job)

    copies: list[tuple[int | float, int, JobRecord]] = []
    for w in range(n_weeks):
        shift = (w - picks[w]) * WEEK  # per user: new week start - original week start
        for i, user in enumerate(users):
            source = by_user_week.get((user, int(picks[w, i])))
            if not source:
                continue
            delta = int(shift[i])
            for job in source:
                copies.append((job.submit + delta, job.id, job))
    if not copies:
        raise WorkloadError(f"{trace.name}: the resampled trace is empty (seed {seed!r}, {n_weeks} weeks)")
    copies.sort(key=lambda c: (c[0], c[1]))
    jobs = [
        dataclasses.replace(job, id=new_id, submit=submit, wait=-1)  # its logged wait was in another schedule
        for new_id, (submit, _old_id, job) in enumerate(copies, start=1)
    ]
    seed_text = "a numpy Generator" if isinstance(seed, np.random.Generator) else f"seed {seed}"
    note = (
        f"; Note: bftune per-user week resampling of {trace.name}: {n_weeks} weeks "
        f"from {k} whole weeks, {len(users)} users, {seed_text}"
    )
    return dataclasses.replace(
        trace,
        jobs=jobs,
        name=name if name is not None else f"{trace.name}-resampled-{n_weeks}w-s{seed if isinstance(seed, int) else 'rng'}",
        header=dict(trace.header),
        cleaning=dict(trace.cleaning),
        header_lines=tuple(trace.header_lines) + (note,),
    )


def split_halves(trace: Trace) -> tuple[Trace, Trace]:
    """Split ``trace`` at the temporal midpoint of its submissions: ``(train, test)``.

    midpoint = (first + last submission) / 2; train holds the jobs submitted
    strictly before it, test the others.  Jobs keep their ids and submission
    times (no shift), so results stay comparable with the full trace; each
    half is then resampled on its own (docs/semantics/workloads.md#resampling).  Both halves must be
    non-empty.
    """
    if not trace.jobs:
        raise WorkloadError(f"{trace.name}: cannot split an empty trace")
    first = min(job.submit for job in trace.jobs)
    last = max(job.submit for job in trace.jobs)
    mid = (first + last) / 2
    train = [job for job in trace.jobs if job.submit < mid]
    test = [job for job in trace.jobs if job.submit >= mid]
    if not train or not test:
        raise WorkloadError(f"{trace.name}: all submissions are at one time; cannot split it in two halves")
    note = f"; Note: bftune split of {trace.name} at submit time {mid:g}"
    halves = []
    for part, jobs in (("train", train), ("test", test)):
        halves.append(
            dataclasses.replace(
                trace,
                jobs=sort_jobs(jobs),
                name=f"{trace.name}-{part}",
                header=dict(trace.header),
                cleaning=dict(trace.cleaning),
                header_lines=tuple(trace.header_lines) + (f"{note} ({part} half)",),
            )
        )
    return halves[0], halves[1]


def _span(trace: Trace) -> float:
    if not trace.jobs:
        return 0.0
    return max(j.submit for j in trace.jobs) - min(j.submit for j in trace.jobs)
