"""The classifier's forest: the flat-array prediction equals scikit-learn's, the bagging its model."""

from __future__ import annotations

import numpy as np
import pytest
from bftune.learning.features import FEATURE_NAMES
from bftune.learning.forest import CompiledForest, fit_forest, forest_importances
from sklearn.ensemble import RandomForestClassifier


def test_compiled_forest_equals_sklearn_predict_proba():
    rng = np.random.default_rng(0)
    X = rng.integers(-1, 30, size=(3000, len(FEATURE_NAMES))).astype(np.float32)
    X[:, 0] = rng.uniform(0, 1e5, 3000).astype(np.float32)
    y = ((X[:, 0] > 4e4) ^ (X[:, 3] > 20) ^ (rng.random(3000) < 0.1)).astype(np.int8)
    rf = RandomForestClassifier(n_estimators=25, random_state=1, n_jobs=1).fit(X, y)
    compiled = CompiledForest(rf.estimators_)
    Xt = rng.integers(-1, 30, size=(500, len(FEATURE_NAMES))).astype(np.float32)
    Xt[:, 0] = rng.uniform(0, 1e5, 500).astype(np.float32)
    Xt[:50] = X[:50]  # rows sitting exactly on thresholds' sides
    assert np.array_equal(compiled.proba_many(Xt), rf.predict_proba(Xt)[:, 1])

    trees = fit_forest(X, y, n_estimators=15, seed=3, max_depth=8, min_samples_leaf=2, max_samples=1000)
    compiled = CompiledForest(trees)
    expect = np.mean([t.predict_proba(Xt)[:, 1] for t in trees], axis=0)
    np.testing.assert_allclose(compiled.proba_many(Xt), expect, rtol=0, atol=1e-12)
    imp = forest_importances(trees)
    assert imp.shape == (len(FEATURE_NAMES),) and imp.sum() == pytest.approx(1.0)


def test_threads_grow_the_same_forest(monkeypatch):
    """Every draw is made first, in tree order: the forest does not depend on how many threads grow it."""
    from bftune.learning import forest

    rng = np.random.default_rng(5)
    X = rng.uniform(0, 100, size=(4000, len(FEATURE_NAMES))).astype(np.float32)
    y = (X[:, 1] + rng.normal(0, 20, 4000) > 50).astype(np.int8)
    Xt = rng.uniform(0, 100, size=(300, len(FEATURE_NAMES))).astype(np.float32)
    forests = []
    for threads in (1, 3):
        monkeypatch.setattr(forest, "FIT_THREADS", threads)
        trees = fit_forest(X, y, n_estimators=12, seed=7, max_depth=6, min_samples_leaf=3, max_samples=1500)
        forests.append((CompiledForest(trees).proba_many(Xt), [t.tree_.node_count for t in trees]))
    assert np.array_equal(forests[0][0], forests[1][0]) and forests[0][1] == forests[1][1]
