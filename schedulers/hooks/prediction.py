"""Runtime predictions as planning estimates: a core hook around a ``learning.predictors`` predictor.

At submission a job's estimate becomes the predictor's value clamped to
[``MIN_PREDICTION``, walltime] (a prediction above the walltime means nothing:
the job is killed there).  The walltime stays the kill time, and a job still
running past its prediction is planned to its walltime by the core
(``MachineState.refresh_overdue``).  Finished runs (ended by themselves or at
their walltime, never by a scheduler kill) are fed back to the predictor.

The report says how good the predictions were on the runs that finished:
mean absolute relative error |estimate - p| / p (p > 0) and the share of
under-predictions.
"""

from __future__ import annotations

from typing import Any

from bftune.learning.predictors import MIN_PREDICTION, PREDICTORS, Predictor, PredictorError, make_predictor, \
    parse_predictor
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues
from bftune.schedulers.option import BACKFILLING, NOT_SLURM, ConfigError, Option, Requirement, is_unset


class Prediction(Hook):
    def __init__(self, predictor: Predictor) -> None:
        self.predictor = predictor
        self._abs_error = 0.0
        self._scored = 0
        self._under = 0

    def on_submit(self, core: Core, job: Job, now: float) -> None:
        predictor = self.predictor
        runtime = core.true_runtime(job, f"predictor {predictor.name}") if predictor.clairvoyant else 0.0
        value = predictor.predict(job.seq, job.user, job.walltime, runtime, now)
        job.estimate = min(max(value, MIN_PREDICTION), job.walltime)

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        if state is EndState.COMPLETED_KILLED:
            return
        ran = now - job.start
        self.predictor.observe(job.seq, job.user, ran, job.walltime, now)
        if ran > 0:
            self._abs_error += abs(job.estimate - ran) / ran
            self._scored += 1
            self._under += job.estimate < ran

    def report(self) -> dict:
        out = {"name": self.predictor.name, **self.predictor.report()}
        if self._scored:
            out["mean_abs_relative_error"] = self._abs_error / self._scored
            out["under_predicted_share"] = self._under / self._scored
        return {"predictor": out}


# --- the hook's options and how it builds itself -----------------------------------------------


def predictor(value: Any, where: str) -> str:
    try:
        return parse_predictor(value)
    except PredictorError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _predicts(values: OptionValues) -> bool:
    """Predictions plan only where something is planned: with backfilling, and not the walltime."""
    return values["predictor"] != "walltime" and values["backfill"]


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    return Prediction(make_predictor(values["predictor"], values["seed"])) if _predicts(values) else None


def suffix(values: OptionValues) -> str:
    if not _predicts(values):
        return ""
    kept = " overrun_estimate=expired" if values["overrun_estimate"] == "expired" else ""
    return f" predictor={values['predictor']}{kept}"


HOOK = HookSpec(
    name="prediction",
    options=(
        Option("predictor", predictor, "walltime",
               "runtime prediction EASY and PV-EASY plan with (the walltime stays the kill time): the user's "
               "walltime, last (Last Model), avg2 (EASY++'s: mean of the user's last two runtimes), exact (true "
               "runtime), virtual:X (p(1+U(-X,X)), X in [0, 1), seeded) "
               f"({' | '.join(PREDICTORS)})",
               "scheduler", cli="--predictor", metavar="P",
               requires=(BACKFILLING, Requirement("classifier", is_unset, "no --classifier"), NOT_SLURM)),
    ),
    build=build, suffix=suffix)
