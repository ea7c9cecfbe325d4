"""Online, leakage-free small/large runtime classifier (docs/semantics/learning.md#classification, learning half).

The scheduler drives one :class:`RuntimeClassifier` per run, in time order::

    clf = RuntimeClassifier(trace.unix_start_time, trace.timezone, features="weekly")
    clf.advance(now)                              # first thing at every instant
    d = clf.divider(now)                          # rolling median runtime, or None
    small, prob = clf.classify(job_id, user, procs, walltime, submit, now)   # once per job
    clf.finished(job_id, runtime, end)            # when its final run ends
    clf.report()                                  # JSON-able metrics and warnings

Semantics and the choices made where the contract leaves them open (docs/semantics/learning.md#classification)
-----------------------------------------------------------------------------------------------------------

**Clock.**  Every method takes the current time (``now``, or ``end`` for
:meth:`~RuntimeClassifier.finished`) and first runs :meth:`advance` on it, so
week boundaries are processed even if the caller forgets ``advance``.  Time
must not go backwards (more than 1 us: ``ValueError``).

**Weeks** are counted from the *first submission*: the ``submit`` of the first
:meth:`classify` call is the origin t0 (as the resampling of docs/semantics/workloads.md#resampling);
``advance`` before any classification does nothing.  Week k is
[t0 + k*week, t0 + (k+1)*week); boundary k >= 1 is t0 + k*week.  A job's week
is that of its ``submit``.

**Boundary order.**  ``advance(T)`` handles boundary T before anything else at
T, so the model trained at T (and, in weekly mode, the histories frozen at T)
contain exactly the jobs whose ``finished`` was reported with ``end < T``; a
job ending at T belongs to the next week's data.

**Divider** (:meth:`divider`): median actual runtime of the jobs whose
``finished`` was reported with ``end`` in ``(now - divider_window, now]``
(median of an even count = mean of the two middle values, as numpy).  It
counts every finished job, labelled or not, and only final runs (a run
killed by the safeguard never reaches ``finished``).  ``None`` when the window
is empty.

**True class** of a job = small iff its actual runtime < the divider in force
*at its classification* (stored with the job then).  A job classified while
no divider existed (nothing finished in the last window, e.g. the very first
jobs of a trace) has **no label**: it is excluded from training, from the
category histories and from the metrics (counted under ``unlabelled``).

**Features** (``bftune.learning.features``) are computed once, in
:meth:`classify`, and the row is stored with the job; training later uses the
stored rows with the labels learned at ``finished``.  The category histories
they read hold only jobs already finished: in ``"live"`` mode every job whose
``finished`` was called before this ``classify``; in ``"weekly"`` mode (the
default) only those finished before the last week boundary (the histories are
updated at boundaries, in finish order).  A job therefore never sees itself,
nor any job still waiting or running, nor (weekly) any job that finished after
the last retraining.

**Retraining** at each boundary, on *all* labelled finished jobs so far:

- none yet: no model, every job is large (``(False, 0.0)``) - the first week
  always, and later weeks while nothing labelled has finished;
- no new labelled job since the previous boundary: the previous model is kept
  (retraining on the same rows with the same seed would give the same forest),
  with a warning;
- one class only: no forest; a constant model predicting that class with
  probability 1 (small) or 0 (large), with a warning;
- otherwise a random forest: ``n_estimators`` scikit-learn decision trees
  (``max_features="sqrt"``), each on a bootstrap of all labelled finished
  jobs, seeded by ``seed``, single-threaded (:func:`fit_forest`: the model of
  ``RandomForestClassifier(n_estimators, random_state=seed, n_jobs=1,
  max_depth, min_samples_leaf, max_samples)``, bagged by us for speed).

**Options of the learning** (each default is the rule above): ``relabel =
"last-week-median"`` gives the forest, at each retraining, every training
job's label against the median runtime of the jobs finished in the week
that just ended (a week without finished jobs brings no new label, so the
model is kept), instead of each job's label against the divider at its
classification; the labels of the metrics and of the category histories
stay the jobs' own.  ``categorical`` makes some features factors
(:mod:`bftune.learning.categorical`); ``aggregate_classes = "predicted"``
makes the aggregate features count the classes predicted at submission
(:mod:`bftune.learning.features`).

**Prediction**: small iff P(small) >= 0.5 (a tie goes to *small*, whereas
scikit-learn's ``predict`` would give the first class, large).  P(small) is
scikit-learn's ``predict_proba`` (mean over trees of the leaf's class share),
computed by :class:`CompiledForest`, a numpy traversal of all trees at once
that returns the same number (same summation order) at a fraction of the
per-call cost of ``predict_proba`` on one row.  Identical rows within a week
share a cached probability.

**Speed defaults** (measured with ``benchmarks/classifier.py``, which
replays a trace through the classifier alone, jobs starting at submission).
scikit-learn's defaults (full-depth trees, each on a bootstrap of *all* n
rows) miss the 2 s budget well before CEA-Curie's ~290k jobs (3.7 s at 28k
rows on KTH-SP2, 6.6 s at 50k on SDSC-SP2, 13 s at 58k on CTC-SP2), and
``RandomForestClassifier``'s own ``max_samples`` does not help much because
it still costs O(n) per tree (see :func:`fit_forest`).  So each tree is grown
on a bootstrap of at most :data:`DEFAULT_MAX_SAMPLES` rows drawn from *all*
labelled finished jobs, to depth :data:`DEFAULT_MAX_DEPTH` with leaves of at
least :data:`DEFAULT_MIN_SAMPLES_LEAF` rows.  On CEA-Curie that retrains in
at most 0.44 s a week with weekly features (mean 0.37 s) and 0.85 s with live
ones (mean 0.53 s), on a 2-core machine shared with other work; the bounded
depth also keeps a prediction to 10 numpy steps (advance + classify +
finished: 16-33 us per job, against 80-105 us with full-depth trees).
Accuracy impact, measured online over whole traces (weekly features): none,
or slightly positive as the smaller trees overfit less - KTH-SP2 0.798 vs
0.785 with scikit-learn's defaults, SDSC-SP2 0.746 vs 0.733, CTC-SP2 0.800
vs 0.790; on CEA-Curie, where the full forest is too slow to run every week,
0.778 vs 0.776 on 4 sampled weeks evaluated offline, and bigger settings
(depth 12-16, 8-20k rows per tree) moved its accuracy by less than 0.002.
``max_samples=None, max_depth=None, min_samples_leaf=1`` give scikit-learn's
defaults back.

**Determinism**: given the seed and the same sequence of calls, every model,
prediction and report is identical.

**Metrics** (:meth:`report`, docs/semantics/scheduling.md#metrics), on labelled finished jobs,
overall and per week of submission, with "small" as the positive class:
accuracy = (TP+TN)/n, precision = TP/(TP+FP), recall = TP/(TP+FN),
false_small_rate = FP/(FP+TN) (share of truly large jobs classified small:
the ones the safeguard will kill), false_large_rate = FN/(FN+TP) (share of
truly small jobs classified large); ``None`` (JSON null) where the
denominator is 0.  The confusion counts are reported too.  Per-week feature
importances (scikit-learn's impurity-based ``feature_importances_``) are those
of the model in force during that week.

**Bad input** never crashes: a user < 0 is the sentinel user -1, a walltime
<= 0 or not finite and procs <= 0 are the sentinel -1; the report warns with
counts (all jobs without a user: "no user ids").  Misuse of the API does
raise ``ValueError``: a job classified twice, ``finished`` for a job never
classified or finished twice, time going backwards.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bftune.learning.categorical import LevelShares, categorical_columns
from bftune.learning.features import (AGGREGATE_CLASSES, FEATURE_MODES, FEATURE_NAMES, N_FEATURES, RELABEL_MODES,
                                      Calendar, FeatureExtractor)
from bftune.learning.forest import CompiledForest, fit_forest, forest_importances
from bftune.learning.median import RollingMedian
from bftune.learning.quality import confusion_metrics, error_runtimes
from bftune.workloads.model import WEEK

__all__ = ["RuntimeClassifier", "confusion_metrics"]


#: Forest defaults chosen so that retraining stays under 2 s per week on the
#: largest trace (CEA-Curie, ~290k jobs); see the module docstring.
DEFAULT_MAX_SAMPLES = 5000
DEFAULT_MAX_DEPTH = 10
DEFAULT_MIN_SAMPLES_LEAF = 5

_TIME_EPS = 1e-6
_NOT_FINISHED = -2  # job states (labels are 0 = large, 1 = small)
_UNLABELLED = -1


class RuntimeClassifier:
    """Online small/large classifier; see the module docstring for the semantics."""

    #: Whether :meth:`classify` needs the job's true runtime (only learning from the workload log does).
    needs_runtime = False

    def __init__(
        self,
        unix_start_time: int | None,
        timezone: str | None,
        features: str = "weekly",
        seed: int = 0,
        n_estimators: int = 100,
        week: float = float(WEEK),
        divider_window: float = float(WEEK),
        *,
        max_depth: int | None = DEFAULT_MAX_DEPTH,
        min_samples_leaf: int = DEFAULT_MIN_SAMPLES_LEAF,
        max_samples: int | None = DEFAULT_MAX_SAMPLES,
        train: bool = True,
        aggregate_classes: str = "true",
        categorical: str = "none",
        relabel: str = "none",
    ) -> None:
        if features not in FEATURE_MODES:
            raise ValueError(f"features must be one of {', '.join(FEATURE_MODES)}, not {features!r}")
        if aggregate_classes not in AGGREGATE_CLASSES:
            raise ValueError(f"aggregate_classes must be one of {', '.join(AGGREGATE_CLASSES)}, "
                             f"not {aggregate_classes!r}")
        if relabel not in RELABEL_MODES:
            raise ValueError(f"relabel must be one of {', '.join(RELABEL_MODES)}, not {relabel!r}")
        self.aggregate_classes = aggregate_classes
        self.categorical = categorical
        self._categorical = categorical_columns(categorical)
        self._encoder: LevelShares | None = None  # the level shares of the model in force (categorical only)
        self.relabel = relabel
        self._week_runtimes: list[float] = []  # runtimes of the jobs finished since the last boundary (relabel)
        self._relabel_divider: float | None = None
        if not week > 0:
            raise ValueError(f"week must be > 0, got {week}")
        if not divider_window > 0:
            raise ValueError(f"divider_window must be > 0, got {divider_window}")
        if n_estimators < 1:
            raise ValueError(f"n_estimators must be >= 1, got {n_estimators}")
        self.features = features
        self.live = features == "live"
        self.seed = seed
        self.train = train
        self.n_estimators = n_estimators
        self.week = float(week)
        self.divider_window = float(divider_window)
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_samples = max_samples
        self.calendar = Calendar(unix_start_time, timezone)
        self._fx = FeatureExtractor(self.calendar)

        self._now = -np.inf
        self._origin: float | None = None
        self._next_k = 1  # index of the next boundary to process
        self._next_boundary = np.inf

        # Per job, by classification order i.
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        self._X = np.empty((1024, N_FEATURES), dtype=np.float32)
        self._keys: list[tuple] = []
        self._divider_at: list[float | None] = []
        self._week_of: list[int] = []
        self._pred: list[bool] = []
        self._prob: list[float] = []
        self._state: list[int] = []  # -2 not finished, -1 finished unlabelled, 0 large, 1 small
        self._final_runtime: list[float] = []  # the final run's runtime, once finished (nan before)

        # Divider: runtimes of the jobs finished in (now - divider_window, now].
        self._divider = RollingMedian(self.divider_window)

        # Training set: rows of labelled finished jobs and their labels.
        self._train_rows: list[int] = []
        self._train_y: list[int] = []
        self._pending: list[tuple[tuple, bool, bool]] = []  # weekly mode: (keys, class, counted) at the next boundary
        self._finished_this_week = 0
        self._labelled_at_last_fit = 0

        # Model in force: None (all large), float (constant P(small)) or CompiledForest.
        self._model: CompiledForest | float | None = None
        self._cache: dict[bytes, float] = {}
        self._models: list[dict] = [{"week": 0, "kind": "none", "reason": "first week: no model",
                                     "train_size": 0, "train_small": 0, "retrain_seconds": 0.0,
                                     "importances": None}]
        self._week_warnings: dict[int, list[str]] = {}

    # ------------------------------------------------------------------ clock

    def advance(self, now: float) -> None:
        """Process every week boundary <= now not processed yet (retraining)."""
        if now < self._now:
            if now < self._now - _TIME_EPS:
                raise ValueError(f"time went backwards: {now} after {self._now}")
            return
        self._now = now
        if now >= self._next_boundary:
            self._process_boundaries(now)

    def _process_boundaries(self, now: float) -> None:
        origin = self._origin
        assert origin is not None, "boundaries are set from the first submission"
        while True:
            k = self._next_k
            boundary = origin + k * self.week
            if boundary > now:
                self._next_boundary = boundary
                return
            self._retrain(k)
            self._next_k = k + 1

    # ---------------------------------------------------------------- divider

    def divider(self, now: float) -> float | None:
        """Median runtime of jobs finished in (now - divider_window, now]; None if none."""
        self.advance(now)
        return self._divider_now()

    def _divider_now(self) -> float | None:
        return self._divider.median(self._now)

    # ------------------------------------------------------------- per job

    def classify(self, job_id: str, user: int, procs: int, walltime: float, submit: float,
                 now: float, runtime: float | None = None) -> tuple[bool, float]:
        """Classify a job at its submission: (small?, P(small)).

        Stores the job's feature row and the divider in force now (its label
        threshold).  Before the first model (first week): (False, 0.0).
        ``runtime`` is for classifiers that ``needs_runtime``; this one never
        reads it (it learns a runtime when the job finishes).
        """
        if self._origin is None:
            self._origin = float(submit)
            self._next_boundary = self._origin + self.week
        self.advance(now)
        if job_id in self._index:
            raise ValueError(f"job {job_id!r} classified twice")
        i = len(self._ids)
        values, keys = self._fx.row(user, procs, walltime, submit)
        if i == len(self._X):
            grown = np.empty((2 * i, N_FEATURES), dtype=np.float32)
            grown[:i] = self._X
            self._X = grown
        row = self._X[i]
        row[:] = values

        model = self._model
        if model is None:
            prob = 0.0
        elif isinstance(model, float):
            prob = model
        else:
            key = row.tobytes()
            cached = self._cache.get(key)
            if cached is None:
                encoder = self._encoder
                cached = self._cache[key] = model.proba(row if encoder is None else encoder.encode_row(row))
            prob = cached
        small = prob >= 0.5

        self._index[job_id] = i
        self._ids.append(job_id)
        self._keys.append(keys)
        self._divider_at.append(self._divider_now())
        wk = int((submit - self._origin) // self.week)
        self._week_of.append(wk if wk > 0 else 0)
        self._pred.append(small)
        self._prob.append(prob)
        self._state.append(_NOT_FINISHED)
        self._final_runtime.append(np.nan)
        return small, prob

    def _classified_index(self, job_id: str) -> int:
        """The row of a classified job; a rerun's id ``<origin>#<n>`` names its origin's row."""
        i = self._index.get(job_id)
        if i is None and "#" in job_id:
            i = self._index.get(job_id.split("#", 1)[0])
        if i is None:
            raise ValueError(f"finished() for job {job_id!r}, which was never classified")
        return i

    def finished(self, job_id: str, runtime: float, end: float) -> None:
        """The job's final run ended at ``end`` after ``runtime`` seconds.

        A rerun's id ``<origin>#<n>`` is accepted for its origin's id.
        """
        self.advance(end)
        i = self._classified_index(job_id)
        if self._state[i] != _NOT_FINISHED:
            raise ValueError(f"finished() twice for job {job_id!r}")
        self._divider.add(self._now, runtime)
        self._finished_this_week += 1
        self._week_runtimes.append(runtime)
        self._final_runtime[i] = runtime
        d = self._divider_at[i]
        if d is None:
            self._state[i] = _UNLABELLED
            return
        small = runtime < d
        self._state[i] = int(small)
        self._train_rows.append(i)
        self._train_y.append(int(small))
        self._remember(i, small)

    def _remember(self, i: int, small: bool) -> None:
        """Job ``i``'s class (and the class its aggregates count) into the category histories: now (live) or at
        the next boundary (weekly)."""
        counted = self._pred[i] if self.aggregate_classes == "predicted" else small
        if self.live:
            self._fx.record(self._keys[i], small, counted)
        else:
            self._pending.append((self._keys[i], small, counted))

    # ------------------------------------------------------------- training

    def _warn_week(self, week: int, message: str) -> None:
        self._week_warnings.setdefault(week, []).append(message)

    def _retrain(self, k: int) -> None:
        """Boundary k: week k - 1 ends, the model of week k is fitted."""
        t0 = time.perf_counter()
        if self._pending:  # weekly mode: histories now include jobs finished before the boundary
            for keys, small, counted in self._pending:
                self._fx.record(keys, small, counted)
            self._pending.clear()
        if self._finished_this_week == 0:
            self._warn_week(k - 1, f"week {k - 1}: no job finished")
        self._finished_this_week = 0

        y_train = self._labels()
        n = len(self._train_rows)
        n_small = int(y_train.sum())
        info: dict[str, Any] = {"week": k, "train_size": n, "train_small": n_small, "retrain_seconds": 0.0,
                                "importances": None}
        if not self.train:
            self._model = None
            info.update(kind="none", reason="training disabled (a clairvoyant baseline only needs the divider)")
        elif n == 0:
            self._model = None
            info.update(kind="none", reason="no labelled finished job yet: every job large")
            self._warn_week(k, f"week {k}: no labelled finished job to train on: every job classified large")
        elif n == self._labelled_at_last_fit:
            prev = self._models[-1]
            info.update(kind=prev["kind"], reason=f"no new labelled finished job: model of week {prev['week']} kept",
                        importances=prev["importances"], kept_from=prev.get("kept_from", prev["week"]))
            self._warn_week(k, f"week {k}: no new labelled finished job since the last retraining: previous model kept")
        elif n_small == 0 or n_small == n:
            self._model = 1.0 if n_small else 0.0
            cls = "small" if n_small else "large"
            info.update(kind="constant", reason=f"single-class training set: every job {cls}")
            self._warn_week(k, f"week {k}: single-class training set ({n} jobs, all {cls}): "
                               f"constant model, every job classified {cls}")
            self._labelled_at_last_fit = n
        else:
            rows = np.asarray(self._train_rows, dtype=np.int64)
            X = self._X[rows]
            y = y_train
            if self._categorical:
                self._encoder = LevelShares(self._categorical, X, y)
                X = self._encoder.encode(X)
            trees = fit_forest(X, y, n_estimators=self.n_estimators, seed=self.seed, max_depth=self.max_depth,
                               min_samples_leaf=self.min_samples_leaf, max_samples=self.max_samples)
            self._model = CompiledForest(trees, small_class=1)
            info.update(kind="forest", reason="",
                        importances={name: float(v) for name, v in zip(FEATURE_NAMES, forest_importances(trees))})
            self._labelled_at_last_fit = n
        self._cache = {}
        info["retrain_seconds"] = time.perf_counter() - t0
        self._models.append(info)

    def _labels(self) -> np.ndarray:
        """The training labels of this retraining: the jobs' own, or relabelled against the median runtime of the
        jobs finished in the week that just ended (``relabel``; the module docstring)."""
        if self.relabel == "last-week-median" and self._week_runtimes:
            self._relabel_divider = float(np.median(self._week_runtimes))
        self._week_runtimes = []
        if self._relabel_divider is None:
            return np.asarray(self._train_y, dtype=np.int8)
        runtimes = np.asarray(self._final_runtime, dtype=float)[np.asarray(self._train_rows, dtype=np.int64)]
        return (runtimes < self._relabel_divider).astype(np.int8)

    # ------------------------------------------------------------- inspection

    @property
    def feature_names(self) -> tuple[str, ...]:
        return FEATURE_NAMES

    def job(self, job_id: str) -> dict:
        """What the classifier stored about a job (for tests and diagnostics)."""
        i = self._index[job_id]
        state = self._state[i]
        return {
            "features": dict(zip(FEATURE_NAMES, self._X[i].tolist())),
            "row": self._X[i].copy(),
            "divider": self._divider_at[i],
            "week": self._week_of[i],
            "small": self._pred[i],
            "prob": self._prob[i],
            "finished": state != _NOT_FINISHED,
            "label": None if state < 0 else state,
        }

    def _errors(self, state: np.ndarray, pred: np.ndarray) -> dict:
        """Which jobs the classifier gets wrong (:func:`~bftune.learning.quality.error_runtimes`)."""
        divider = np.asarray([np.nan if d is None else d for d in self._divider_at], dtype=float)
        return error_runtimes(state, pred, np.asarray(self._final_runtime, dtype=float), divider)

    def report(self) -> dict:
        """JSON-able summary: counts, metrics overall and per week, models, warnings."""
        n = len(self._ids)
        state = np.asarray(self._state, dtype=np.int8)
        pred = np.asarray(self._pred, dtype=bool)
        labelled = state >= 0
        weeks = self._week_rows(state, pred, labelled)
        fitted = [mdl["retrain_seconds"] for mdl in self._models[1:]]
        return {
            "config": self._config(),
            "counts": {
                "classified": n,
                "finished": int(np.sum(state != _NOT_FINISHED)),
                "evaluated": int(labelled.sum()),
                "unlabelled": int(np.sum(state == _UNLABELLED)),
                "unfinished": int(np.sum(state == _NOT_FINISHED)),
                "predicted_small": int(pred.sum()),
                "truly_small": int(np.sum(state == 1)),
                "retrainings": len(fitted),
                "forests": sum(1 for mdl in self._models if mdl["kind"] == "forest"
                               and "kept_from" not in mdl),
            },
            "overall": _confusion(state, pred, labelled),
            "errors": self._errors(state, pred),
            "retrain_seconds": {
                "max": max(fitted) if fitted else 0.0,
                "mean": sum(fitted) / len(fitted) if fitted else 0.0,
                "total": sum(fitted),
            },
            "weeks": weeks,
            "warnings": self._warnings(n, weeks),
            "calendar_warnings": list(self.calendar.warnings),  # also in warnings; apart for the run tables
        }

    def _week_rows(self, state: np.ndarray, pred: np.ndarray, labelled: np.ndarray) -> list[dict]:
        """One row per week from the first submission on: its jobs, the confusion of its evaluated jobs, the
        model in force, and what makes its rates undefined (no job, a single class)."""
        week_of = np.asarray(self._week_of, dtype=np.int64)
        n = len(self._ids)
        # weeks exist from the first submission on; before it, none
        n_weeks = 0 if self._origin is None else max(int(week_of.max()) + 1 if n else 0, len(self._models))
        weeks = []
        for k in range(n_weeks):
            in_week = week_of == k
            m = _confusion(state, pred, in_week & labelled)
            model = self._models[k] if k < len(self._models) else self._models[-1]
            warnings = list(self._week_warnings.get(k, []))
            submitted = int(in_week.sum())
            if submitted == 0:
                warnings.append(f"week {k}: no job submitted")
            elif m["n"] and (m["tp"] + m["fn"] in (0, m["n"])):
                cls = "small" if m["tp"] + m["fn"] else "large"
                warnings.append(f"week {k}: single-class week (all {m['n']} evaluated jobs truly {cls}): "
                                f"some rates undefined")
            weeks.append({
                "week": k,
                "start": None if self._origin is None else self._origin + k * self.week,
                "submitted": submitted,
                "evaluated": m["n"],
                "unlabelled": int(np.sum(in_week & (state == _UNLABELLED))),
                "unfinished": int(np.sum(in_week & (state == _NOT_FINISHED))),
                "predicted_small": int(np.sum(in_week & pred)),
                "metrics": m,
                "model": {key: model.get(key) for key in
                          ("week", "kind", "reason", "train_size", "train_small", "retrain_seconds", "kept_from")},
                "importances": model["importances"],
                "warnings": warnings,
            })
        return weeks

    def _warnings(self, n: int, weeks: list[dict]) -> list[str]:
        """Every warning of the run: the calendar's, missing fields (sentinels used), then each week's."""
        warnings = list(self.calendar.warnings)
        fx = self._fx
        for count, what in ((fx.n_missing_user, "user id"), (fx.n_missing_walltime, "walltime"),
                            (fx.n_missing_procs, "processor count")):
            if count and count == n:
                warnings.append(f"no {what}s: every job uses the sentinel -1 "
                                + ("(categories are per procs / walltime / day across all users)"
                                   if what == "user id" else "(feature uninformative)"))
            elif count:
                warnings.append(f"{count} of {n} jobs without a {what}: sentinel -1 used")
        for w in weeks:
            warnings.extend(w["warnings"])
        return warnings

    def _config(self) -> dict:
        """The settings that made this classifier's decisions, as the report records them."""
        return {
            "features": self.features,
            "seed": self.seed,
            "n_estimators": self.n_estimators,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "max_samples": self.max_samples,
            "week": self.week,
            "divider_window": self.divider_window,
            "aggregate_classes": self.aggregate_classes,
            "categorical": self.categorical,
            "relabel": self.relabel,
            "origin": self._origin,
            "unix_start_time": self.calendar.unix_start_time,
            "timezone": self.calendar.tz_name,
            "feature_names": list(FEATURE_NAMES),
            "decision": "small iff P(small) >= 0.5",
        }


def _confusion(state: np.ndarray, pred: np.ndarray, mask: np.ndarray) -> dict:
    """The confusion metrics of the jobs of ``mask`` (small = the positive class; state 1 = truly small)."""
    truth = state[mask] == 1
    p = pred[mask]
    return confusion_metrics(int(np.sum(truth & p)), int(np.sum(~truth & p)),
                             int(np.sum(~truth & ~p)), int(np.sum(truth & ~p)))
