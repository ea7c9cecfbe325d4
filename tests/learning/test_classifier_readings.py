"""The classifier's learning options beyond the contract's defaults: aggregates of predicted classes, categorical
features, labels against last week's median (each on a few hand-made jobs)."""

from __future__ import annotations

import numpy as np
import pytest
from bftune.learning.categorical import LevelShares, categorical_columns
from bftune.learning.classifier import RuntimeClassifier
from bftune.learning.features import FEATURE_NAMES


@pytest.mark.parametrize("counted, small_frac", [("true", 1.0), ("predicted", 0.0)])
def test_the_aggregates_count_true_or_predicted_classes_and_the_lags_stay_true(counted, small_frac):
    clf = RuntimeClassifier(0, "UTC", features="live", week=1e9, aggregate_classes=counted)
    clf.classify("P", 2, 1, 100, 0, 0)
    clf.finished("P", 50, 50)  # divider 50
    clf.classify("A", 1, 4, 100, 60, 60)  # no model in the first week: predicted large
    clf.finished("A", 10, 70)  # truly small (10 < 50)
    clf.classify("B", 1, 4, 100, 80, 80)
    f = clf.job("B")["features"]
    assert (f["up_last1"], f["uw_last1"]) == (1.0, 1.0)  # the lag: A's true class either way
    assert (f["up_small_frac"], f["uw_small_frac"]) == (small_frac, small_frac)
    assert clf.report()["config"]["aggregate_classes"] == counted


def test_level_shares_order_a_factor_by_its_share_of_small_jobs():
    X = np.array([[100, 1], [100, 1], [200, 1], [300, 2], [300, 2], [300, 2]], dtype=np.float32)
    y = np.array([1, 0, 0, 1, 1, 0], dtype=np.int8)
    enc = LevelShares((0,), X, y)
    got = enc.encode(X)
    assert got[:, 0].tolist() == pytest.approx([0.5, 0.5, 0.0, 2 / 3, 2 / 3, 2 / 3])
    assert got[:, 1].tolist() == X[:, 1].tolist()  # not a categorical column: untouched
    assert enc.encode_row(np.array([400, 1], dtype=np.float32))[0] == pytest.approx(0.5)  # unseen: overall share
    assert enc.encode_row(X[2]).tolist() == got[2].tolist()
    assert categorical_columns("request") == (FEATURE_NAMES.index("walltime"), FEATURE_NAMES.index("procs"))
    assert categorical_columns("none") == ()


def _walltime_pattern(categorical: str) -> float:
    """P(small) of a walltime-200 job after a week in which walltimes 100 and 300 were small and 200 large.

    Every training job has its own user (no lag/aggregate history) and all share one hour, so the walltime is the
    only feature that varies: stumps on the number cannot set 200 apart from 100 and 300; on the factor they can.
    """
    clf = RuntimeClassifier(0, "UTC", week=1e5, categorical=categorical, max_depth=1, min_samples_leaf=1)
    clf.classify("P", 1000, 1, 500, 0, 0)
    clf.finished("P", 500, 500)  # divider 500
    jobs = [(w, r) for w, r, n in ((100, 10, 10), (200, 1000, 10), (300, 10, 12)) for _ in range(n)]
    for i, (walltime, _) in enumerate(jobs):
        clf.classify(f"J{i}", i, 1, walltime, 501 + i, 501 + i)
    for i in sorted(range(len(jobs)), key=lambda i: jobs[i][1]):
        clf.finished(f"J{i}", jobs[i][1], 600 + jobs[i][1] + i)
    _, prob = clf.classify("X", 999, 1, 200, 1e5 + 10, 1e5 + 10)
    assert clf.report()["weeks"][1]["model"]["kind"] == "forest"
    return prob


def test_a_categorical_request_separates_levels_a_number_cannot():
    assert _walltime_pattern("request") < 0.1
    assert _walltime_pattern("none") > 0.3


@pytest.mark.parametrize("relabel, kind", [("none", "constant"), ("last-week-median", "forest")])
def test_relabelling_against_last_weeks_median_at_the_retraining(relabel, kind):
    # Divider 100 (P) when A and B are classified: both truly small (60, 90 < 100).  The week's finished runtimes
    # are P 100, A 60, B 90: median 90, against which B (90) is large.  Own labels: one class, a constant model;
    # relabelled: both classes, a forest.  The metrics keep the jobs' own labels.
    clf = RuntimeClassifier(0, "UTC", week=100, divider_window=float("inf"), relabel=relabel)
    clf.classify("P", 1, 1, 500, 0, 0)
    clf.finished("P", 100, 1)
    clf.classify("A", 2, 1, 500, 2, 2)
    clf.classify("B", 3, 1, 500, 3, 3)
    clf.finished("A", 60, 62)
    clf.finished("B", 90, 93)
    clf.advance(100)
    report = clf.report()
    assert report["weeks"][1]["model"]["kind"] == kind
    assert (clf.job("A")["label"], clf.job("B")["label"]) == (1, 1)
    assert report["config"]["relabel"] == relabel
