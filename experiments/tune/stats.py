"""The statistics of ``bftune tune``: per-week ratios, the racing test, bootstrap intervals.

**Ratios.**  Every candidate is judged week by week against EASY-FCFS-FCFS on
the *same* resampled week: r = objective(candidate) / objective(baseline), as
the offline campaign does (a week where the baseline's value is 0 counts 1 if the
candidate's is 0 too, else it has no ratio and is left out).  The mean of r over
weeks is what a candidate is ranked by; gain = 1 - mean(r).

**Racing** (:func:`race`, after each stage of weeks).  All candidates still in
the race ran the same weeks, so comparisons are *paired*: for candidate c and
the current leader L (the lowest mean ratio among the candidates that meet the
MaxWait limit), d_w = r_c,w - r_L,w.  c is dropped when a one-sided paired
t-test says mean(d) > 0 at level alpha / (k - 1) (Bonferroni over the k - 1
comparisons of the stage; alpha = 0.05).  Why this test: the ranking is by the
*mean* ratio (offline tuning's criterion), so the test is on the mean of the paired
differences; a rank test (Wilcoxon) would test the median difference, which can
disagree with the mean on skewed weekly ratios.  Pairing removes the week's own
difficulty (a busy week is busy for every candidate), which is most of the
variance.  The t-test's normality is approximate for small n (every stage has at
least 8 weeks); Bonferroni and testing only against the leader make dropping
conservative, but the leader is chosen by the same data (the best of k looks
better than it is), so a candidate within noise of the leader is kept, not
dropped.  With a MaxWait limit (``--max-wait-increase x``) a candidate is also
dropped when a one-sided t-test says its mean MaxWait ratio exceeds 1 + x at the
same level.

**Intervals** (:func:`bootstrap_ci`): the percentile bootstrap of the mean ratio
over weeks, resampling whole weeks with replacement (10,000 resamples for the
recommendation, 2,000 for the ranking table), seeded.  Because each week's ratio
already pairs the candidate with the baseline on that week, resampling weeks is
a paired bootstrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
RANKING_RESAMPLES = 2_000
RECOMMENDATION_RESAMPLES = 10_000
LEVEL = 0.95


def ratio(values: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Week-by-week ``values / baseline``: 0/0 is 1, x/0 is undefined (NaN), as in the offline campaign's tables."""
    values = np.asarray(values, dtype=float)
    baseline = np.asarray(baseline, dtype=float)
    out = np.full(values.shape, math.nan)
    positive = baseline > 0
    out[positive] = values[positive] / baseline[positive]
    both_zero = (baseline == 0) & (values == 0)
    out[both_zero] = 1.0
    return out


def nanmean(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else math.nan


def one_sided_p(differences: np.ndarray) -> float:
    """p-value of the one-sided t-test ``mean(differences) > 0`` (NaNs left out); 1 with fewer than 2 values."""
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    n = len(d)
    if n < 2:
        return 1.0
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean > 0 else 1.0
    return student_sf(mean / (sd / math.sqrt(n)), n - 1)


def student_sf(t: float, df: int) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom: I_x(df/2, 1/2) / 2 with x = df / (df + t^2).

    Written here rather than imported from scipy.stats, whose import costs more than a whole tune run of
    a small trace spends on statistics (about a second).
    """
    x = df / (df + t * t)
    tail = 0.5 * _incomplete_beta(0.5 * df, 0.5, x)
    return tail if t > 0 else 1.0 - tail


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) (continued fraction, Lentz's method)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast below this point: use the symmetry
        return 1.0 - _incomplete_beta(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return front * h / a


@dataclass(frozen=True)
class Verdict:
    """Why a candidate left the race at a stage."""

    reason: str  # "worse" (than the leader) or "max_wait" (over the limit)
    p: float
    level: float
    leader: str  # the leader's key


def race(ratios: dict[str, np.ndarray], max_ratios: dict[str, np.ndarray], limit: float | None,
         alpha: float = ALPHA) -> tuple[str, dict[str, Verdict]]:
    """``(leader, dropped)``: the stage's leader and the candidates the tests drop (module docstring).

    ``ratios`` / ``max_ratios``: per candidate key (in ranking-tie order), its objective and MaxWait
    ratios on the stage's weeks (the same weeks for all).
    """
    keys = list(ratios)
    means = {k: nanmean(ratios[k]) for k in keys}
    fit = [k for k in keys if limit is None or nanmean(max_ratios[k]) <= 1 + limit]
    pool = fit or keys

    def rank(k: str) -> tuple[float, int]:
        return _key_mean(means[k]), keys.index(k)

    leader = min(pool, key=rank)
    level = alpha / max(len(keys) - 1, 1)
    dropped: dict[str, Verdict] = {}
    for k in keys:
        if k == leader:
            continue
        p = one_sided_p(ratios[k] - ratios[leader])
        if p < level:
            dropped[k] = Verdict("worse", p, level, leader)
            continue
        if limit is not None:
            p = one_sided_p(max_ratios[k] - (1 + limit))
            if p < level:
                dropped[k] = Verdict("max_wait", p, level, leader)
    return leader, dropped


def _key_mean(mean: float) -> float:
    return math.inf if math.isnan(mean) else mean


def bootstrap_ci(values: np.ndarray, seed: int, resamples: int = RANKING_RESAMPLES,
                 level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (NaNs left out), weeks resampled with replacement."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return math.nan, math.nan
    if len(v) == 1:
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // len(v))  # resamples drawn a block at a time: bounded memory
    for lo in range(0, resamples, chunk):
        hi = min(resamples, lo + chunk)
        means[lo:hi] = v[rng.integers(0, len(v), size=(hi - lo, len(v)))].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)
