"""How good a small/large classifier is: the confusion metrics and which jobs it gets wrong.

The metrics: docs/semantics/scheduling.md#metrics.
"""

from __future__ import annotations

import numpy as np


def confusion_metrics(tp: int, fp: int, tn: int, fn: int) -> dict:
    """The classifier metrics (docs/semantics/scheduling.md#metrics) of one confusion matrix ("small" = positive).

    Ratios with a zero denominator are ``None``.
    """

    def ratio(a: int, b: int):
        return a / b if b else None

    n = tp + fp + tn + fn
    return {
        "n": n,
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
        "accuracy": ratio(tp + tn, n),
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "false_small_rate": ratio(fp, fp + tn),
        "false_large_rate": ratio(fn, fn + tp),
    }


def quartiles(values: np.ndarray) -> list[float] | None:
    """The first, second and third quartiles of ``values``, or None if there are none."""
    return [float(v) for v in np.percentile(values, [25, 50, 75])] if len(values) else None


def error_runtimes(state: np.ndarray, pred: np.ndarray, runtime: np.ndarray, divider: np.ndarray) -> dict:
    """Which jobs the classifier gets wrong, not only how many: the runtimes of its false large jobs
    (truly small, predicted large: they wait in the large queue) and false small ones (truly large,
    predicted small: the safeguard kills them), in seconds and as a share of the divider at their
    classification.  Two classifiers with the same error rates cost a schedule very differently if one
    errs on jobs of a few seconds and the other on jobs just under the divider.

    ``state``: per job 1 (truly small), 0 (truly large) or negative (no label); ``pred``: predicted small.
    """
    out = {}
    for name, mask in (("false_large", (state == 1) & ~pred), ("false_small", (state == 0) & pred)):
        p = runtime[mask]
        out[name] = {"n": int(mask.sum()), "runtime_quartiles": quartiles(p),
                     "runtime_over_divider_quartiles": quartiles(p / divider[mask]),
                     "shorter_than_60s": float(np.mean(p < 60.0)) if len(p) else None}
    return out
