"""Tables and plots of a score collection and its fits (the study's Table 2, side by side).

``write_fits(out, scores)`` fits the four families on ``scores.csv``'s rows,
writes ``fits/<Family>.json`` (the index functions), ``coefficients.csv``
(one row per feature: coefficient and VIF of every family), ``fits.csv``
(one row per family: MAE, weighted RSS, rows) and ``fits.md`` (the same as
markdown, with the study's published values beside ours), and plots.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.files import atomic_write_text
from bftune.learning.index.regression import Fit, fit_all, format_number
from bftune.schedulers.core.polynomial import FAMILIES, family_features

#: The study's Table 2 (coefficients theta) and its MAE, for the side-by-side table.
STUDY_COEFFICIENTS: dict[str, dict[str, float]] = {
    "Lin": {"1": 3.24e-2, "p": 1.15e-7, "q": 2.61e-5, "r": -1.57e-7},
    "Qdr": {"1": 3.70e-2, "p": 2.65e-7, "q": -3.05e-5, "r": -3.96e-7, "p^2": -3.04e-12, "q^2": 1.17e-7,
            "r^2": 2.75e-12, "p*q": 6.77e-10},
    "Cub": {"1": 3.33e-2, "p": 2.83e-7, "q": 8.71e-5, "r": -5.83e-7, "p^2": -6.33e-14, "q^2": -5.06e-7,
            "r^2": 6.78e-12, "p*q": -6.02e-10, "p^3": -7.55e-18, "q^3": 7.05e-10, "r^3": -2.14e-17,
            "p^2*q": -2.72e-14, "p*q^2": 9.52e-12},
    "Qua": {"1": 4.83e-2, "p": -6.42e-7, "q": -2.40e-4, "r": -6.50e-7, "p^2": 1.66e-11, "q^2": 2.41e-6,
            "r^2": 8.81e-12, "p*q": 1.14e-8, "p^3": -2.03e-16, "q^3": -9.52e-9, "r^3": -4.67e-17,
            "p^2*q": 9.29e-15, "p*q^2": -7.94e-11, "p^4": 9.34e-22, "q^4": 1.36e-11, "r^4": 9.84e-23,
            "p^3*q": -9.07e-19, "p^2*q^2": 1.89e-16, "p*q^3": 1.55e-13},
}
STUDY_VIF: dict[str, dict[str, float]] = {
    "Lin": {"p": 1.3, "q": 1.3, "r": 1.2},
    "Qdr": {"p": 3.7, "q": 9.6, "r": 6.0, "p^2": 2.6, "q^2": 8.3, "r^2": 4.8, "p*q": 3.9},
    "Cub": {"p": 12.1, "q": 35.5, "r": 21.8, "p^2": 41.8, "q^2": 275.0, "r^2": 82.1, "p*q": 49.4, "p^3": 20.8,
            "q^3": 147.3, "r^3": 34.6, "p^2*q": 9.8, "p*q^2": 30.1},
    "Qua": {"p": 36.1, "q": 99.0, "r": 58.6, "p^2": 338.5, "q^2": 2835.5, "r^2": 620.8, "p*q": 295.3,
            "p^3": 961.6, "q^3": 10491.8, "r^3": 1387.1, "p^2*q": 393.1, "p*q^2": 1032.9, "p^4": 322.7,
            "q^4": 3572.5, "r^4": 373.6, "p^3*q": 63.8, "p^2*q^2": 125.0, "p*q^3": 457.2},
}
STUDY_MAE = {"Lin": 4.48e-3, "Qdr": 4.66e-3, "Cub": 10.5e-3, "Qua": 6.42e-3}
STUDY_ROWS = 14_081


def fits_from_scores(scores: pd.DataFrame, meta: dict | None = None) -> list[Fit]:
    p, q, r, s = (scores[c].to_numpy(dtype=np.float64) for c in ("p", "q", "r", "score"))
    return fit_all(p, q, r, s, meta)


def tables(fits: list[Fit]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(coefficients: feature x family with VIF, summary: family -> MAE...)."""
    features = family_features(FAMILIES[-1])
    coef_rows = []
    for feat in features:
        row: dict = {"feature": feat}
        for f in fits:
            c = dict(zip(f.features, f.coefficients))
            row[f"coef_{f.family}"] = c.get(feat, np.nan)
        for f in fits:
            row[f"vif_{f.family}"] = f.vif.get(feat, np.nan)
        for fam in FAMILIES:
            row[f"study_coef_{fam}"] = STUDY_COEFFICIENTS[fam].get(feat, np.nan)
        coef_rows.append(row)
    summary = pd.DataFrame([{"family": f.family, "features": len(f.features), "rows": f.rows, "mae": f.mae,
                             "study_mae": STUDY_MAE[f.family], "weighted_rss": f.weighted_rss,
                             "max_vif": max(f.vif.values()) if f.vif else np.nan,
                             "sign_agreement_with_study": _sign_agreement(f)} for f in fits])
    return pd.DataFrame(coef_rows), summary


def _sign_agreement(f: Fit) -> str:
    study = STUDY_COEFFICIENTS[f.family]
    same = sum(1 for feat, c in zip(f.features, f.coefficients) if np.sign(c) == np.sign(study[feat]))
    return f"{same}/{len(f.features)}"


def markdown(fits: list[Fit], collection: dict | None = None) -> str:
    coef, summary = tables(fits)
    lines = ["# Index functions learned by regression", ""]
    if collection:
        s = collection
        lines += [f"Score collection: source {s.get('source')}, {s.get('windows')} windows of |S| = {s.get('warmup')} + "
                  f"|Q| = {s.get('queue')} jobs, {s.get('trials')} trials each, m = {s.get('procs')}, "
                  f"tau = {s.get('tau')} s, seed {s.get('seed')}; {fits[0].rows} rows (the study: {STUDY_ROWS}).", ""]
    lines += ["Weighted least squares, weights p*q on the residuals (SPEC 6). MAE: mean |f - score|.",
              "VIF: 1/(1 - R^2) of each feature regressed on the others (unweighted, with an intercept).", "",
              "| family | features | MAE (ours) | MAE (study) | max VIF | coefficient signs equal to the study's |",
              "|---|---|---|---|---|---|"]
    for _, row in summary.iterrows():
        lines.append(f"| {row['family']} | {row['features']} | {row['mae']:.3e} | {row['study_mae']:.3e} | "
                     f"{format_number(row['max_vif'])} | {row['sign_agreement_with_study']} |")
    lines += ["", "Coefficients theta (ours / the study's Table 2) and VIF (ours / the study's):", "",
              "| feature | " + " | ".join(f"{f} theta" for f in FAMILIES) + " | "
              + " | ".join(f"{f} VIF" for f in FAMILIES) + " |",
              "|---" * (1 + 2 * len(FAMILIES)) + "|"]
    for _, row in coef.iterrows():
        feat = row["feature"]
        cells = []
        for fam in FAMILIES:
            ours = row.get(f"coef_{fam}", np.nan)
            cells.append("–" if pd.isna(ours) else f"{ours:.3g} / {STUDY_COEFFICIENTS[fam][feat]:.3g}")
        for fam in FAMILIES:
            ours = row.get(f"vif_{fam}", np.nan)
            cells.append("–" if pd.isna(ours) else f"{format_number(ours)} / {STUDY_VIF[fam][feat]:g}")
        lines.append(f"| {feat} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_fits(out: Path, scores: pd.DataFrame, collection: dict | None = None) -> list[Fit]:
    meta = {"collection": collection} if collection else {}
    fits = fits_from_scores(scores, meta)
    (out / "fits").mkdir(parents=True, exist_ok=True)
    for f in fits:
        atomic_write_text(out / "fits" / f"{f.family}.json", json.dumps(f.to_json(), indent=1) + "\n")
    coef, summary = tables(fits)
    atomic_write_text(out / "coefficients.csv", coef.to_csv(index=False))
    atomic_write_text(out / "fits.csv", summary.to_csv(index=False))
    atomic_write_text(out / "fits.md", markdown(fits, collection))
    plot(out, scores, fits)
    return fits


def plot(out: Path, scores: pd.DataFrame, fits: list[Fit]) -> list[Path]:
    """score against p, q and r (the distribution the functions are fitted to), and fitted vs observed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bftune.learning.index.regression import design

    (out / "plots").mkdir(exist_ok=True)
    written = []
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, col, label in zip(axes, ("p", "q", "r"), ("p: runtime (s)", "q: processors", "r: release date (s)")):
        ax.scatter(scores[col], scores["score"], s=2, alpha=0.3)
        ax.set_xscale("symlog" if col == "r" else "log")
        ax.set_xlabel(label)
        ax.set_ylabel("score")
        ax.axhline(1.0 / max(1, scores.groupby("window").size().max()), color="grey", lw=0.8, ls="--")
    fig.suptitle(f"score distribution ({len(scores)} rows; dashed: 1/|Q|)")
    fig.tight_layout()
    path = out / "plots" / "scores.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    p, q, r, s = (scores[c].to_numpy(dtype=np.float64) for c in ("p", "q", "r", "score"))
    fig, axes = plt.subplots(1, len(fits), figsize=(4 * len(fits), 3.8), sharey=True)
    for ax, f in zip(np.atleast_1d(axes), fits):
        pred = design(p, q, r, f.features) @ f.coefficients
        ax.scatter(s, pred, s=2, alpha=0.3, c=np.log10(p * q), cmap="viridis")
        lo, hi = float(np.min(s)), float(np.max(s))
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
        ax.set_title(f"{f.family} (MAE {f.mae:.2e})")
        ax.set_xlabel("observed score")
    np.atleast_1d(axes)[0].set_ylabel("fitted f(p, q, r)  (colour: log10 p*q)")
    fig.tight_layout()
    path = out / "plots" / "fitted.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written
