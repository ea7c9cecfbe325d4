"""Decoupled learning: the classifier learns from the workload log, not from the schedule.

Some evaluations decouple the scheduling simulation from learning and
prediction: classes are learned and predicted from the workload log, week by
week, and the simulation only consumes the predicted classes.
:class:`DecoupledClassifier` runs that pipeline inside a run, so that the
same hook (``bftune.schedulers.hooks.classified``) drives it:

- weeks are counted from the first submission, as for
  :class:`~bftune.learning.classifier.RuntimeClassifier`;
- **divider** in force during week k (labels and safeguard) = the median
  runtime of the jobs *submitted* during week k - 1 (the log of the previous
  week), whether they have finished in the schedule or not;
- **true class** of a job = its trace runtime < the divider in force at its
  submission.  Week 0 has no previous week: its jobs are labelled with
  week 0's own median, so that week 1 has a model (every job of the first
  week is classified large);
- at the boundary that ends week k - 1, its jobs (all of them, in submission
  order) enter the training data and the category histories, with their
  trace runtimes; the forest is retrained as in the online classifier.

The runtime of a job comes from the trace at its submission (the driver's
runtime oracle): it is used only at the end of the job's submission week,
never for the job's own prediction.  Still, a live system could not do this
- a job submitted on Sunday may not have finished by Monday's retraining -
so this mode exists to evaluate classification as such evaluations did, not
to deploy.  Everything else (features, forest, prediction rule, report) is
the online classifier's.
"""

from __future__ import annotations

import numpy as np

from bftune.learning.classifier import RuntimeClassifier

_NOT_FINISHED = -2


class DecoupledClassifier(RuntimeClassifier):
    """A :class:`RuntimeClassifier` whose data come from the trace (module docstring)."""

    needs_runtime = True

    def __init__(self, *args, **kwargs) -> None:
        features = kwargs.get("features", "weekly")
        if features != "weekly":
            raise ValueError(f"decoupled learning uses weekly features (the data arrive at week boundaries), "
                             f"not {features!r}")
        super().__init__(*args, **kwargs)
        self._runtime: list[float] = []
        self._week_divider: float | None = None
        self._next_to_learn = 0  # first job (classification order) not yet in the training data
        self._done: list[bool] = []

    # The divider is weekly: the median of the previous week's submissions.
    def _divider_now(self) -> float | None:
        return self._week_divider

    def classify(self, job_id: str, user: int, procs: int, walltime: float, submit: float, now: float,
                 runtime: float | None = None) -> tuple[bool, float]:
        if runtime is None:
            raise ValueError(f"decoupled learning needs the trace runtime of job {job_id!r} at its classification")
        result = super().classify(job_id, user, procs, walltime, submit, now, runtime)
        self._runtime.append(float(runtime))
        self._final_runtime[-1] = float(runtime)  # the report's error analysis: known here from the trace
        self._done.append(False)
        return result

    def finished(self, job_id: str, runtime: float, end: float) -> None:
        """Only checked and counted: the data of a job come from the trace at its week's end."""
        self.advance(end)
        i = self._classified_index(job_id)
        if self._done[i]:
            raise ValueError(f"finished() twice for job {job_id!r}")
        self._done[i] = True
        self._finished_this_week += 1

    def _retrain(self, k: int) -> None:
        """Boundary k: week k - 1's submissions are labelled and learned, then the online retraining."""
        first = self._next_to_learn
        last = first
        while last < len(self._ids) and self._week_of[last] <= k - 1:
            last += 1
        week = self._runtime[first:last]
        if week:
            if self._week_divider is None:  # week 0 (or weeks before the first submission): own median
                own = float(np.median(week))
                for i in range(first, last):
                    if self._divider_at[i] is None:
                        self._divider_at[i] = own
            for i in range(first, last):
                divider = self._divider_at[i]
                assert divider is not None, "set above, or when the week's divider was known"
                small = self._runtime[i] < divider
                self._state[i] = int(small)
                self._train_rows.append(i)
                self._train_y.append(int(small))
                self._remember(i, small)
            self._week_divider = float(np.median(week))
        self._next_to_learn = last
        self._finished_this_week = max(self._finished_this_week, len(week))
        super()._retrain(k)

    def _label_last_week(self) -> None:
        """Label the jobs no boundary has labelled yet (the last week), for the metrics only."""
        for i in range(self._next_to_learn, len(self._ids)):
            if self._state[i] == _NOT_FINISHED:
                d = self._divider_at[i]
                if d is None:  # a trace shorter than a week: its own median
                    d = self._divider_at[i] = float(np.median(self._runtime[self._next_to_learn:]))
                self._state[i] = int(self._runtime[i] < d)

    def report(self) -> dict:
        self._label_last_week()
        out = super().report()
        out["config"]["learning"] = "decoupled"
        out["config"]["divider"] = "median runtime of the previous week's submissions (trace)"
        out["counts"]["finished"] = int(sum(self._done))
        out["counts"]["unfinished"] = len(self._done) - out["counts"]["finished"]
        return out
