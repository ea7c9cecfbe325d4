"""Categorical features for the classifier's forest: each level replaced by its share of small jobs.

scikit-learn's trees split every feature as a number (``x <= threshold``).
A factor - a requested runtime p~ that users pick from a few round values, a
processor count - is a set of levels with no order that means anything to
the class.  The classical way to give such a feature to binary trees is to
order its levels by the share of the positive class among the training rows
of each level and split on that order: for two classes and the Gini
impurity, the best split of a factor into two sets of levels is one of the
splits of the levels sorted that way (Breiman et al., *Classification and
Regression Trees*, 1984, section 9.4), and random forest implementations
offer it as their factor mode (ranger's ``respect.unordered.factors =
"order"``, which, like this module, orders the levels once on the whole
training set before growing the trees).

:class:`LevelShares` is fitted at each retraining on the training rows and
their labels: every categorical column's level becomes the share of small
jobs among the training rows of that level.  A level absent from the
training rows (a new walltime value) gets the training set's overall share
of small jobs, which places it between the levels that lean small and those
that lean large.  The same mapping encodes the training matrix and every row
classified until the next retraining, so a row's encoding, and hence its
prediction, changes only at retrainings, as the forest does.
"""

from __future__ import annotations

import numpy as np

from bftune.learning.features import CATEGORICAL_SETS, FEATURE_NAMES


def categorical_columns(name: str) -> tuple[int, ...]:
    """The feature columns option value ``name`` makes categorical (:data:`CATEGORICAL_SETS`)."""
    if name not in CATEGORICAL_SETS:
        raise ValueError(f"categorical features must be one of {', '.join(CATEGORICAL_SETS)}, not {name!r}")
    return tuple(FEATURE_NAMES.index(f) for f in CATEGORICAL_SETS[name])


class LevelShares:
    """The level -> share-of-small mapping of some columns, fitted on one training set (module docstring)."""

    __slots__ = ("columns", "prior", "_maps")

    def __init__(self, columns: tuple[int, ...], X: np.ndarray, y: np.ndarray) -> None:
        self.columns = columns
        self.prior = np.float32(float(np.mean(y)) if len(y) else 0.5)
        self._maps: list[dict[float, np.float32]] = []
        for c in columns:
            levels, inverse = np.unique(X[:, c], return_inverse=True)
            shares = np.bincount(inverse, weights=y.astype(np.float64)) / np.bincount(inverse)
            self._maps.append(dict(zip(levels.tolist(), shares.astype(np.float32).tolist())))

    def encode(self, X: np.ndarray) -> np.ndarray:
        """A copy of the rows ``X`` (a matrix) with each categorical level replaced by its share (unseen: the
        prior)."""
        out = np.array(X, dtype=np.float32, copy=True)
        for c, shares in zip(self.columns, self._maps):
            out[:, c] = [shares.get(v, self.prior) for v in X[:, c].tolist()]
        return out

    def encode_row(self, row: np.ndarray) -> np.ndarray:
        """:meth:`encode` of one row (a vector)."""
        out = np.array(row, dtype=np.float32, copy=True)
        for c, shares in zip(self.columns, self._maps):
            out[c] = shares.get(float(row[c]), self.prior)
        return out
