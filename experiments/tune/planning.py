"""How tune's plan is made, re-measured and kept: the glue between the race (``engine.py``) and the cost
model (``budget.py``).

The plan is made once from the pilot's costs and the time already spent; re-made once after the first
stage from what the workers really took (:func:`calibrate`); and at each later stage boundary the next step
(how many go on, for how many weeks) is decided on the run's own clock (:func:`stage_decision`).  Every
decision is saved in ``tune.json`` as it is made, so a resumed run repeats the interrupted run's decisions
and decides on its own clock only the stages it had not reached.
"""

from __future__ import annotations

import time
from pathlib import Path

from bftune.experiments.tune import budget as bud
from bftune.experiments.tune.candidates import Candidate
from bftune.experiments.tune.store import TUNE, data_identity
from bftune.support.store import Store

#: Wall seconds the outputs take after the race (the analysis, the report's plots, the files): 2-3 s on the
#: archive traces (``benchmarks/tune_coverage.py``: the whole command's time minus the race's, KTH-SP2).
OUTPUTS_S = 3.0
#: Seconds per job of the validation's continuous simulations over those of a resampled week: a whole log
#: as it happened keeps longer queues than a week started empty (CEA-Curie: 12.4 s after the race, about
#: 2.2 times the resampled weeks' rate; ``benchmarks/tune_coverage.py``).
VALIDATION_SCALE = 2.0


def finish_estimate(settings, model: bud.CostModel, data: dict) -> float:
    """Wall seconds after the race: the validation's simulations (the candidate and the baseline on the whole
    log, then on its held-out part, in the coordinator) and the outputs."""
    holdout = settings.source.holdout or 0.0
    if not holdout:
        return OUTPUTS_S
    per_job = max(model.seconds_per_job.values()) * VALIDATION_SCALE
    return OUTPUTS_S + per_job * data["jobs"] * 2 * (1 + holdout)


def make_plan(settings, model: bud.CostModel, candidates: list[Candidate], bases: dict[int, Candidate], data: dict,
              setup_s: float, at_least: bool = False) -> bud.Plan:
    """The plan for ``candidates`` (``budget.make_plan``) from the cost model's week costs."""
    train = [model.week(c.family, c.warmup, "train") for c in candidates]
    test = [model.week(c.family, c.warmup, "test") for c in candidates]
    base_train = sum(model.week("baseline", w, "train") for w in bases)
    base_test = sum(model.week("baseline", w, "test") for w in bases)
    return bud.make_plan(model, train, test, base_train, base_test, settings.budget_s, settings.max_weeks,
                         settings.finalists, at_least=at_least, setup_s=setup_s,
                         finish_s=finish_estimate(settings, model, data))


def save(race_) -> None:
    """The cost model, the plan and the decisions made so far, in ``tune.json`` (at once: a resume keeps them)."""
    s = race_.settings
    Store(Path(s.out), TUNE).write_identity({
        "identity": s.identity(), "data": data_identity(s.source), "cost_model": race_.model.to_dict(),
        "plan": race_.plan.to_dict(), "calibrated": race_.calibrated, "decisions": race_.decisions})


def calibrate(race_, costs: list[dict]) -> None:
    """After the first stage: the cost model re-measured on what its tasks cost the workers (``costs``), and
    the plan made again from it (the first stage, 8 weeks, is every plan's).  The pilot ran alone in the
    coordinator; the workers run side by side, on a machine others may share: their seconds per job
    are what the rest will cost."""
    if race_.calibrated:
        return
    sums: dict[str, list[float]] = {}
    for cost in costs:
        acc = sums.setdefault(cost["family"], [0.0, 0.0])
        acc[0] += cost["seconds"]
        acc[1] += cost["jobs"]
    for family, (seconds, jobs) in sums.items():
        if jobs and family in race_.model.seconds_per_job:
            race_.model.seconds_per_job[family] = seconds / jobs
    race_.plan = make_plan(race_.settings, race_.model, race_.candidates, race_.baselines, race_.data,
                           setup_s=race_.plan.setup_s, at_least=True)
    race_.calibrated = True
    save(race_)


def stage_decision(race_, stage: int, done: int, ranked_costs: list[float], pace: float) -> dict:
    """How many of the ranked survivors go on after stage ``stage`` (0-based), which ended at ``done`` weeks,
    and the weeks per half the plan now reaches: the stored decision on a resume, else decided now from the
    wall time elapsed and ``pace`` (``budget.pace``: the wall seconds the stages after the first took per
    second the model estimated for them; 1 after the first stage) by ``budget.next_stage``, and saved."""
    if stage < len(race_.decisions):
        return race_.decisions[stage]
    plan = race_.plan
    elapsed = time.perf_counter() - race_.timings["started"]
    keep, weeks = bud.next_stage(race_.model, plan, done, ranked_costs, elapsed, pace)
    decision = {"stage": stage + 1, "keep": keep, "weeks": weeks, "elapsed_s": round(elapsed, 3),
                "pace": round(pace, 3)}
    race_.decisions.append(decision)
    save(race_)
    return decision
