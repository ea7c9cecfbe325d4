"""Weighted least squares of the score distribution on the polynomial families of
docs/semantics/learning.md#learned-index-policies.

``fit(rows, family)`` minimises ``sum_j [(p_j q_j) (f(theta, x_j) - score_j)]^2``
(the contract's weighted criterion): ordinary least squares on the rows scaled
by ``p q``.  The columns span 30 orders of magnitude (1 to p^4 ~ 1e20), so
each is divided by its norm before the SVD-based solve and the coefficients
are scaled back: same minimiser, no loss of precision.

MAE is the unweighted mean |f - score|.  The variance
inflation factor of a feature is ``1 / (1 - R^2)`` of the (unweighted) least
squares regression of that feature on all the others with an intercept, the
usual definition (statsmodels' ``variance_inflation_factor`` on the design
with its constant); it is computed here as the diagonal of the inverse of the
features' correlation matrix, which is the same number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bftune.schedulers.core.polynomial import FAMILIES, FORMAT, family_features, parse_feature


def design(p: np.ndarray, q: np.ndarray, r: np.ndarray, features: tuple[str, ...]) -> np.ndarray:
    """The feature matrix (rows x features) of the monomials named in ``features``."""
    cols = []
    for feat in features:
        a, b, c = parse_feature(feat)
        cols.append(np.power(p, a) * np.power(q, b) * np.power(r, c))
    return np.column_stack(cols).astype(np.float64)


def weighted_lstsq(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """theta minimising sum (weight * (x theta - y))^2, with column scaling for conditioning."""
    xw = x * weight[:, None]
    yw = y * weight
    norms = np.linalg.norm(xw, axis=0)
    norms[norms == 0] = 1.0
    theta, *_ = np.linalg.lstsq(xw / norms, yw, rcond=None)
    return theta / norms


def vif(x: np.ndarray) -> np.ndarray:
    """Variance inflation factor of every column of ``x`` (no constant column in ``x``)."""
    if x.shape[1] == 1:
        return np.ones(1)
    corr = np.corrcoef(x, rowvar=False)
    return np.diag(np.linalg.pinv(corr, hermitian=True))


@dataclass
class Fit:
    family: str
    features: tuple[str, ...]
    coefficients: np.ndarray
    mae: float
    weighted_rss: float
    vif: dict[str, float]  # features but the constant
    rows: int
    meta: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The plain-JSON index function (``learned:FILE.json``): coefficients plus provenance."""
        return {
            "format": FORMAT,
            "name": self.family,
            "features": list(self.features),
            "coefficients": {f: float(c) for f, c in zip(self.features, self.coefficients)},
            "fit": {
                "method": "weighted least squares, weights p*q on the residuals (docs/semantics/learning.md#learned-index-policies)",
                "variables": {"p": "actual runtime in training; p~ (the planning estimate) online",
                              "q": "processors",
                              "r": "submission time: relative to the first arrival of Q in training; "
                                   "the workload's clock online (as F1-F4)"},
                "rows": self.rows, "mae": self.mae, "weighted_rss": self.weighted_rss,
                "vif": self.vif, **self.meta,
            },
        }


def fit(p: np.ndarray, q: np.ndarray, r: np.ndarray, score: np.ndarray, family: str, meta: dict | None = None) -> Fit:
    features = family_features(family)
    x = design(p, q, r, features)
    weight = p * q
    theta = weighted_lstsq(x, score, weight)
    pred = x @ theta
    mae = float(np.mean(np.abs(pred - score)))
    rss = float(np.sum((weight * (pred - score)) ** 2))
    non_const = [i for i, f in enumerate(features) if f != "1"]
    v = vif(x[:, non_const])
    return Fit(family, features, theta, mae, rss, {features[i]: float(v[k]) for k, i in enumerate(non_const)},
               len(score), dict(meta or {}))


def fit_all(p, q, r, score, meta: dict | None = None) -> list[Fit]:
    return [fit(p, q, r, score, family, meta) for family in FAMILIES]


def format_number(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    return f"{x:.3g}" if x == 0 or 1e-3 <= abs(x) < 1e4 else f"{x:.2e}"
