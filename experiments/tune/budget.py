"""How much ``bftune tune`` runs within ``--budget``: a measured cost model and the plan made from it.

**Cost model** (:class:`CostModel`).  Before planning, the coordinator
simulates the baseline and one candidate of each family on the first training
weeks and times them (wall-clock seconds per simulated job, in one process:
under load this time grows, and the plan shrinks with it).  A week of candidate
c then costs ``seconds_per_job[family] x jobs_per_week x (1 + warmup)``; a
worker process first prepares the two halves (reading, splitting, resampling:
timed too), and each task costs a small overhead.  With P workers (local
processes, or the threads of a Dask cluster) the wall time of W
worker-seconds is ``startup + W / P``.

**Plan** (:func:`make_plan`).  Weeks are run in stages, n = 8, 16, 32, ...
up to N weeks per half; after each stage the racing test drops clearly worse
candidates (``stats.py``).  N and the survivors are chosen so that the
*estimated* time fits the budget:

1. if every candidate can run all ``--weeks`` weeks (no candidate dropped by
   the budget, only by the tests), that is the plan;
2. otherwise successive halving: after stage s at most max(F, ceil(K / 2^s))
   candidates go on (the best by mean ratio; F = ``--finalists``), and N is the
   largest number of weeks for which the estimate fits;
3. if even that does not fit N = 8 weeks (all K candidates on 8 training
   weeks, F finalists and the baseline on 8 testing weeks), the budget is too
   small to judge anything: an error saying how much would do.

The plan also keeps aside what runs after the race (``finish_s``: the
validation's simulations of the whole log and of its held-out part, the
outputs), so that the whole command, not only the race, aims at the budget.

At every stage boundary the rest is re-planned (:func:`next_stage`) from what
the run has really taken: the wall time elapsed so far, and the *pace* (the
wall seconds the stages after the first took per second the model estimated
for them: a busy machine, idle workers at a stage's end, a cost model that
over- or under-estimates are in it; 1 at the first stage's end, whose worker
seconds the model has just been calibrated on, and whose wall time holds the
workers' preparation).  When every survivor can run every remaining week within what is left,
all go on (the racing test may have saved what halving was planned for);
when more than half of them can, the most that can go on, to the last week
(rather than half, which left the time unspent when the pace turned out
faster); otherwise the better half goes on and what the racing test saved buys more
weeks (N grows, up to ``--weeks``): a near tie between the last candidates is
settled on as many weeks as the budget allows, rather than kept undecided
among many candidates.  Each stage's decision is saved in ``tune.json`` as it
is made, so a resumed run makes exactly the decisions the interrupted one
made; only the stages it had not reached are decided on its own clock.  The
testing half runs the F finalists and the baseline on N weeks.  How close the
whole command comes to the budget on the archive traces is measured by
``benchmarks/tune_coverage.py`` (docs/guides/tune.md, "Is the budget kept?").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

#: Weeks of the first stage, and the fewest weeks any judgement uses.
FIRST_STAGE = 8
#: Worker-seconds a task costs beyond its simulations (pickling, storing its rows).
TASK_OVERHEAD_S = 0.05
#: Work per task the coordinator aims at (seconds): enough tasks to balance the workers, few enough to be cheap.
TASK_TARGET_S = (0.2, 2.0)
#: Wall seconds a stage loses at its end (the last tasks finishing while other workers wait, the tests).
STAGE_OVERHEAD_S = 1.0


class BudgetError(ValueError):
    """The budget cannot cover the smallest judgement; the message says what would."""


@dataclass
class CostModel:
    """Measured costs (module docstring); JSON-able, stored in ``tune.json`` for resumes."""

    seconds_per_job: dict[str, float]  # family -> wall seconds per simulated job, one process
    jobs_per_week: dict[str, float]  # half -> mean jobs per resampled week
    workers: int
    read_s: float  # a worker's reading and splitting of the trace
    resample_s_per_week: float  # a worker's resampling, per week of both halves
    # seconds per job on a testing week over those on a training week (the halves' weeks differ in size, and a
    # longer queue costs more per job); measured on the baseline by the pilot, 1 in plans stored before it
    test_scale: float = 1.0

    def week(self, family: str, warmup: int, split: str) -> float:
        """Worker-seconds of one week of a candidate of ``family`` (``warmup`` weeks simulated before it)."""
        scale = self.test_scale if split == "test" else 1.0
        return self.seconds_per_job[family] * scale * self.jobs_per_week[split] * (1 + warmup)

    def wall(self, work_s: float, weeks: int, stages: int = 0) -> float:
        """Wall seconds of ``work_s`` worker-seconds on the workers, after each prepares ``weeks`` weeks a half,
        in ``stages`` stages."""
        tasks = work_s / TASK_TARGET_S[1] + stages * 2 * self.workers
        return (self.read_s + self.resample_s_per_week * weeks + stages * STAGE_OVERHEAD_S
                + (work_s + tasks * TASK_OVERHEAD_S) / self.workers)

    def to_dict(self) -> dict:
        return asdict(self)


def stages_for(weeks: int) -> list[int]:
    """Cumulative weeks per stage: 8, 16, 32, ... then ``weeks`` (``[weeks]`` when it is at most 8)."""
    out, n = [], FIRST_STAGE
    while n < weeks:
        out.append(n)
        n *= 2
    out.append(weeks)
    return out


def halving(count: int, finalists: int, steps: int) -> int:
    """Candidates left after ``steps`` halvings of ``count``, never fewer than the finalists (or all, if fewer)."""
    return min(count, max(finalists, math.ceil(count / 2 ** steps)))


@dataclass
class Plan:
    """What the budget covers: N weeks per half, the stages, and whether the budget halves the candidates."""

    weeks: int
    stages: list[int]
    halving: bool
    finalists: int
    estimate_s: float  # the estimated wall time of the whole plan (setup included)
    budget_s: float
    setup_s: float  # wall seconds before the plan (reading the trace, the pilot): spent from the budget
    max_weeks: int  # --weeks: the most the plan may reach
    candidates: int
    week_cost_train: float  # mean worker-seconds of a candidate's training week
    week_cost_test: float
    baseline_train: float  # worker-seconds of the baselines' week, per half
    baseline_test: float
    notes: list[str] = field(default_factory=list)
    finish_s: float = 0.0  # estimated wall seconds after the race (validation, outputs): kept aside

    def to_dict(self) -> dict:
        return asdict(self)


#: Bounds of the pace (measured per estimated worker-second) a re-plan trusts: a stage measured under a
#: passing burst of load neither stops the race nor buys unbounded weeks.
PACE_BOUNDS = (0.5, 4.0)


def pace(measured_s: float, estimated_s: float) -> float:
    """Wall seconds the stages took per second the model estimated for them, within
    :data:`PACE_BOUNDS` (1 when nothing was simulated: a resume that took every week from the store)."""
    if estimated_s <= 0 or measured_s <= 0:
        return 1.0
    return min(max(measured_s / estimated_s, PACE_BOUNDS[0]), PACE_BOUNDS[1])


def _estimate(model: CostModel, weeks: int, count: int, finalists: int, halve: bool, train: float, test: float,
              base_train: float, base_test: float, done: int = 0) -> float:
    """Estimated wall seconds of the plan's rest: the stages after ``done`` weeks, ``count`` candidates in the
    first of them (halved at each later one if ``halve``), then the testing half."""
    work, previous, k = 0.0, done, 0
    for n in stages_for(weeks):
        if n <= done:
            continue
        alive = halving(count, finalists, k) if halve else count
        work += (alive * train + base_train) * (n - previous)
        previous = n
        k += 1
    work += (min(finalists, count) * test + base_test) * weeks
    return model.wall(work, weeks, k + 1)


def make_plan(model: CostModel, week_costs_train: list[float], week_costs_test: list[float], base_train: float,
              base_test: float, budget_s: float, max_weeks: int, finalists: int, at_least: bool = False,
              setup_s: float = 0.0, finish_s: float = 0.0) -> Plan:
    """The plan of the module docstring (``week_costs_*``: each candidate's week, worker-seconds).

    ``at_least``: when even the smallest judgement does not fit, plan it anyway (with a note) instead of
    raising :class:`BudgetError` - after the first stage, when the work has started.  ``setup_s`` (spent
    before the plan) and ``finish_s`` (after the race) count against the budget.
    """
    k = len(week_costs_train)
    train = sum(week_costs_train) / k
    test = sum(week_costs_test) / k
    finalists = min(finalists, k)

    def estimate(weeks: int, halve: bool) -> float:
        return setup_s + finish_s + _estimate(model, weeks, k, finalists, halve, train, test, base_train, base_test)

    def plan_of(weeks: int, halve: bool, notes: list[str] | None = None) -> Plan:
        return Plan(weeks, stages_for(weeks), halve, finalists=finalists, estimate_s=estimate(weeks, halve),
                    budget_s=budget_s, setup_s=setup_s, max_weeks=max_weeks, candidates=k, week_cost_train=train, week_cost_test=test,
                    baseline_train=base_train, baseline_test=base_test, notes=notes or [], finish_s=finish_s)

    first = min(FIRST_STAGE, max_weeks)
    if estimate(max_weeks, False) <= budget_s:
        return plan_of(max_weeks, False)
    halve = k > finalists
    low, high = first, max_weeks
    if estimate(low, halve) > budget_s:
        need = estimate(low, halve)
        if at_least:
            return plan_of(low, halve, [f"the smallest judgement needs about {_fmt(need)}, more than the budget: "
                                        "it runs anyway"])
        raise BudgetError(
            f"--budget {_fmt(budget_s)} is too small to judge anything: all {k} candidates on {first} training "
            f"weeks and {finalists} finalists with the baseline on {first} testing weeks need about {_fmt(need)} "
            f"here (measured {_fmt(train)} per candidate-week on {model.workers} worker(s)); give --budget "
            f"{_fmt(need * 1.2)} or more, or fewer candidates")
    while low < high:  # the largest N that fits (the estimate grows with N)
        mid = (low + high + 1) // 2
        if estimate(mid, halve) <= budget_s:
            low = mid
        else:
            high = mid - 1
    return plan_of(low, halve)


def next_stage(model: CostModel, plan: Plan, done: int, ranked_costs: list[float], spent_s: float,
               pace_now: float = 1.0) -> tuple[int, int]:
    """``(candidates, weeks)``: how many of the ranked survivors go on after the stage that ended at ``done``
    weeks, and the weeks per half the plan now reaches (module docstring).

    When every survivor fits every week up to ``--weeks`` in what is left, all go on; when at least the
    better half does, the most that fit go on, with no further halving.  Otherwise
    successive halving: the better half goes on (at least the finalists), and what the racing test saved
    buys weeks - the plan reaches the most weeks (up to ``--weeks``) that fit; if no further stage fits even
    for the finalists, training stops at ``done`` weeks.  ``ranked_costs``: each survivor's training week
    cost, best first; ``spent_s``: the wall seconds the run has taken so far (setup included);
    ``pace_now``: wall seconds per estimated second so far (:func:`pace`), applied to the rest.
    """
    count = len(ranked_costs)
    floor = min(plan.finalists, count)
    left = plan.budget_s - plan.finish_s - spent_s
    startup = model.read_s

    def fits(m: int, weeks: int, halve: bool) -> bool:
        if m == 0:
            return True
        train = sum(ranked_costs[:m]) / m
        rest = _estimate(model, weeks, m, plan.finalists, halve, train, plan.week_cost_test, plan.baseline_train,
                         plan.baseline_test, done=done)
        return (rest - startup - model.resample_s_per_week * weeks) * pace_now <= left

    ceiling = max(plan.weeks, plan.max_weeks)
    if fits(count, ceiling, False):
        return count, ceiling
    if not plan.halving and fits(count, plan.weeks, False):
        return count, plan.weeks
    half = halving(count, floor, 1)
    if half < count and fits(half, ceiling, False):  # more than half fit every week: the most that do
        # the estimate grows with the candidates kept (their costs, best first, summed)
        return _most(half, count - 1, lambda m: fits(m, ceiling, False)), ceiling
    for m in dict.fromkeys((half, floor)):
        if done + 1 > ceiling or not fits(m, done + 1, True):
            continue
        return m, _most(done + 1, ceiling, lambda weeks: fits(m, weeks, True))  # the estimate grows with the weeks
    return floor, done


def _most(low: int, high: int, ok: Callable[[int], bool]) -> int:
    """The largest n in [low, high] with ``ok(n)``, ``ok`` true at ``low`` and monotone (true, then false)."""
    while low < high:
        mid = (low + high + 1) // 2
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _fmt(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2g}s"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
