"""The classifier's random forest: fitted by bagging decision trees, predicted from flat arrays.

Kept apart from the classifier's semantics (:mod:`bftune.learning.classifier`):
these functions are the model, equal to scikit-learn's
``RandomForestClassifier`` in what it predicts, and faster where the
scheduler calls it (one row at a time, and retraining on large traces).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from bftune.learning.features import N_FEATURES

if TYPE_CHECKING:
    from sklearn.tree import DecisionTreeClassifier


def fit_forest(X: np.ndarray, y: np.ndarray, *, n_estimators: int, seed: int, max_depth: int | None,
               min_samples_leaf: int, max_samples: int | None) -> list[DecisionTreeClassifier]:
    """A random forest on all rows of (X, y), bagged here rather than by scikit-learn.

    Same model as ``RandomForestClassifier(n_estimators, max_depth=...,
    min_samples_leaf=..., max_samples=..., random_state=seed)``: tree i is a
    ``DecisionTreeClassifier(max_features="sqrt")`` grown on a bootstrap of
    ``min(n, max_samples)`` rows drawn with replacement from *all* n rows.
    The bootstrap rows are passed as a (duplicated) sub-matrix instead of
    scikit-learn's "full matrix + bootstrap counts as weights", because the
    latter costs O(n) per tree whatever ``max_samples`` is (``np.unique`` of y,
    weight and splitter set-up over all rows): about 1.8 s for 100 trees at
    n = 290k (CEA-Curie), the whole retraining budget.  The only behavioural
    difference: ``min_samples_leaf`` counts duplicated rows.  All randomness
    comes from ``numpy.random.default_rng(seed)``, drawn in tree order.

    The trees are then grown on :data:`FIT_THREADS` threads: every draw is
    made first, in tree order, so each tree gets the rows and the seed it
    would get alone, and the forest is the same whatever the threads
    (scikit-learn grows a tree without the GIL).  Inside Batsim the run waits
    for the scheduler while it retrains, so both cores are free then.
    """
    # scikit-learn takes 1.6-3.6 s to import on the project machine (python -X importtime):
    # every scheduler configuration is built with this module imported, so the forest's
    # engine is imported at the first retraining only, not at start-up.
    from sklearn import config_context
    from sklearn.tree import DecisionTreeClassifier

    n = len(y)
    size = n if max_samples is None else min(n, max_samples)
    rng = np.random.default_rng(seed)
    draws = [(rng.integers(0, n, size), int(rng.integers(0, 2**31 - 1))) for _ in range(n_estimators)]

    def grow(draw: tuple[np.ndarray, int]) -> DecisionTreeClassifier:
        idx, state = draw
        tree = DecisionTreeClassifier(max_features="sqrt", max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                                      random_state=state)
        # The parameters are ours and the rows finite floats: scikit-learn's checks of both, a third of a small
        # tree's time, are skipped (its configuration is per thread, hence here).
        with config_context(skip_parameter_validation=True, assume_finite=True):
            return tree.fit(X[idx], y[idx], check_input=False)  # X: float32, C-contiguous (indexing copies)

    if FIT_THREADS <= 1 or n_estimators <= 1:
        return [grow(draw) for draw in draws]
    return list(_pool().map(grow, draws))  # map keeps tree order


#: Threads that grow a forest's trees (the machine's cores, at most 8); 1 grows them in the caller's thread.
FIT_THREADS = min(8, os.cpu_count() or 1)
_POOL: list[ThreadPoolExecutor] = []


def _pool() -> ThreadPoolExecutor:
    """One pool for the process, made at the first retraining (daemon threads: they never hold an exit up)."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(FIT_THREADS, thread_name_prefix="bftune-forest"))
    return _POOL[0]


def forest_importances(trees: list[DecisionTreeClassifier]) -> np.ndarray:
    """Impurity-based importances as ``RandomForestClassifier.feature_importances_`` computes them."""
    per_tree = [t.feature_importances_ for t in trees if t.tree_.node_count > 1]
    if not per_tree:
        return np.zeros(trees[0].n_features_in_ if trees else N_FEATURES)
    mean = np.asarray(np.mean(per_tree, axis=0, dtype=np.float64))
    total = mean.sum()
    return mean / total if total > 0 else mean


class CompiledForest:
    """Fitted trees flattened for fast one-row ``P(small)``.

    All trees' nodes are laid end to end; ``_child[2n]`` / ``_child[2n+1]`` are
    the left / right child of node n (a leaf is its own children), so one numpy
    step moves every tree one level down, and ``max depth`` steps reach every
    leaf.  Like scikit-learn, a row goes left iff ``x[feature] <= threshold``
    with the float32 feature compared to the float64 threshold; the per-tree
    probabilities are summed in tree order and divided by the number of
    trees, as ``RandomForestClassifier.predict_proba`` does, so the result is
    the forest's ``predict_proba`` for the small class.  A tree whose
    bootstrap held one class only predicts that class with probability 1.
    """

    __slots__ = ("_roots", "_feat", "_thr", "_child", "_leafp", "_depth", "_n")

    def __init__(self, trees, small_class=1) -> None:
        roots, feats, thrs, childs, leafps = [], [], [], [], []
        offset = 0
        depth = 0
        for est in trees:
            t = est.tree_
            n = t.node_count
            left = t.children_left.astype(np.int64)
            right = t.children_right.astype(np.int64)
            leaf = left < 0
            own = np.arange(offset, offset + n, dtype=np.int64)
            child = np.empty(2 * n, dtype=np.int64)
            child[0::2] = np.where(leaf, own, left + offset)
            child[1::2] = np.where(leaf, own, right + offset)
            feat = np.where(leaf, 0, t.feature).astype(np.int64)
            thr = np.where(leaf, 0.0, t.threshold)
            classes = list(est.classes_)
            value = t.value[:, 0, :]
            total = value.sum(axis=1)
            total[total == 0.0] = 1.0
            if small_class in classes:
                leafp = value[:, classes.index(small_class)] / total
            else:
                leafp = np.zeros(n)
            roots.append(offset)
            feats.append(feat)
            thrs.append(thr)
            childs.append(child)
            leafps.append(leafp)
            depth = max(depth, t.max_depth)
            offset += n
        self._roots = np.asarray(roots, dtype=np.int64)
        self._feat = np.concatenate(feats)
        self._thr = np.concatenate(thrs)
        self._child = np.concatenate(childs)
        self._leafp = np.concatenate(leafps)
        self._depth = int(depth)
        self._n = len(roots)

    def proba(self, x: np.ndarray) -> float:
        """P(small) of one float32 feature row."""
        nodes = self._roots
        feat, thr, child = self._feat, self._thr, self._child
        for _ in range(self._depth):
            nodes = child[(nodes << 1) + (x[feat[nodes]] > thr[nodes])]
        return sum(self._leafp[nodes].tolist()) / self._n

    def proba_many(self, X: np.ndarray) -> np.ndarray:
        """P(small) of each row of a float32 matrix (same arithmetic as :meth:`proba`)."""
        return np.array([self.proba(x) for x in X], dtype=np.float64)
