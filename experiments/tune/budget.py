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

At every stage boundary the rest is re-planned from the same estimates
(:func:`next_stage`): without halving, every survivor goes on while the rest
fits; with halving, the better half goes on and what the racing test saved
buys more weeks (N grows, up to ``--weeks``): a near tie between the last
candidates is settled on as many weeks as the budget allows, rather than kept
undecided among many candidates.  The estimates are frozen in ``tune.json``
(re-measured once, on the first stage's tasks), so a resumed run makes exactly
the decisions the interrupted one would have: wall-clock time never enters a
decision.  The testing half runs the F finalists and the baseline on N weeks.
"""

from __future__ import annotations

import math
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
    """Measured costs (module docstring); JSON-able, frozen in ``tune.json`` for resumes."""

    seconds_per_job: dict[str, float]  # family -> wall seconds per simulated job, one process
    jobs_per_week: dict[str, float]  # half -> mean jobs per resampled week
    workers: int
    read_s: float  # a worker's reading and splitting of the trace
    resample_s_per_week: float  # a worker's resampling, per week of both halves

    def week(self, family: str, warmup: int, split: str) -> float:
        """Worker-seconds of one week of a candidate of ``family`` (``warmup`` weeks simulated before it)."""
        return self.seconds_per_job[family] * self.jobs_per_week[split] * (1 + warmup)

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

    def to_dict(self) -> dict:
        return asdict(self)


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
              setup_s: float = 0.0) -> Plan:
    """The plan of the module docstring (``week_costs_*``: each candidate's week, worker-seconds).

    ``at_least``: when even the smallest judgement does not fit, plan it anyway (with a note) instead of
    raising :class:`BudgetError` - after the first stage, when the work has started.
    """
    k = len(week_costs_train)
    train = sum(week_costs_train) / k
    test = sum(week_costs_test) / k
    finalists = min(finalists, k)

    def estimate(weeks: int, halve: bool) -> float:
        return setup_s + _estimate(model, weeks, k, finalists, halve, train, test, base_train, base_test)

    def plan_of(weeks: int, halve: bool, notes: list[str] | None = None) -> Plan:
        return Plan(weeks, stages_for(weeks), halve, finalists=finalists, estimate_s=estimate(weeks, halve),
                    budget_s=budget_s, setup_s=setup_s, max_weeks=max_weeks, candidates=k, week_cost_train=train, week_cost_test=test,
                    baseline_train=base_train, baseline_test=base_test, notes=notes or [])

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


def next_stage(model: CostModel, plan: Plan, done: int, ranked_costs: list[float], spent_s: float) -> tuple[int, int]:
    """``(candidates, weeks)``: how many of the ranked survivors go on after the stage that ended at ``done``
    weeks, and the weeks per half the plan now reaches (module docstring).

    Without halving (the budget took every candidate to the end), all go on while the rest still fits.
    Otherwise successive halving: the better half goes on (at least the finalists), and what the racing
    test saved buys weeks - the plan reaches the most weeks (up to ``--weeks``) that the estimate fits;
    if no further stage fits even for the finalists, training stops at ``done`` weeks.
    ``ranked_costs``: each survivor's training week cost, best first; ``spent_s``: the estimated wall
    seconds of what the plan has run so far (setup included).
    """
    count = len(ranked_costs)
    floor = min(plan.finalists, count)
    left = plan.budget_s - spent_s
    startup = model.read_s

    def fits(m: int, weeks: int, halve: bool) -> bool:
        if m == 0:
            return True
        train = sum(ranked_costs[:m]) / m
        rest = _estimate(model, weeks, m, plan.finalists, halve, train, plan.week_cost_test, plan.baseline_train,
                         plan.baseline_test, done=done)
        return rest - startup - model.resample_s_per_week * weeks <= left

    if not plan.halving and fits(count, plan.weeks, False):
        return count, plan.weeks
    ceiling = max(plan.weeks, plan.max_weeks)
    for m in dict.fromkeys((halving(count, floor, 1), floor)):
        low, high = done + 1, ceiling
        if low > high or not fits(m, low, True):
            continue
        while low < high:  # the most weeks that fit (the estimate grows with the weeks)
            mid = (low + high + 1) // 2
            if fits(m, mid, True):
                low = mid
            else:
                high = mid - 1
        return m, low
    return floor, done


def _fmt(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2g}s"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
