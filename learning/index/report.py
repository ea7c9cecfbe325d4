"""Tables and plots of a score collection and its fits.

``write_fits(out, scores)`` fits the four families on ``scores.csv``'s rows,
writes ``fits/<Family>.json`` (the index functions), ``coefficients.csv``
(one row per feature: coefficient and VIF of every family), ``fits.csv``
(one row per family: MAE, weighted RSS, rows) and ``fits.md`` (the same as
markdown), and plots.  Setting published figures beside these is a
reproduction's business: it reads the stored ``fits/*.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.support.files import atomic_write_text
from bftune.learning.index.regression import Fit, fit_all, format_number
from bftune.schedulers.core.polynomial import FAMILIES, family_features


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
        coef_rows.append(row)
    summary = pd.DataFrame([{"family": f.family, "features": len(f.features), "rows": f.rows, "mae": f.mae,
                             "weighted_rss": f.weighted_rss, "max_vif": max(f.vif.values()) if f.vif else np.nan}
                            for f in fits])
    return pd.DataFrame(coef_rows), summary


#: How the fits are made, for every table of them.
METHOD = ("Weighted least squares, weights p*q on the residuals (docs/semantics/learning.md#learned-index-policies). MAE: mean |f - score|.\n"
          "VIF: 1/(1 - R^2) of each feature regressed on the others (unweighted, with an intercept).")
TITLE = "# Index functions learned by regression"


def describe_collection(collection: dict) -> str:
    """The score collection's settings in words (the meta of ``collection.json``, as stored in each fit)."""
    s = collection
    return (f"Score collection: source {s.get('source')}, {s.get('windows')} windows of |S| = {s.get('warmup')} + "
            f"|Q| = {s.get('queue')} jobs, {s.get('trials')} trials each, m = {s.get('procs')}, "
            f"tau = {s.get('tau')} s, seed {s.get('seed')}")


def markdown(fits: list[Fit], collection: dict | None = None) -> str:
    coef, summary = tables(fits)
    lines = [TITLE, ""]
    if collection:
        lines += [f"{describe_collection(collection)}; {fits[0].rows} rows.", ""]
    lines += [METHOD, "", "| family | features | MAE | max VIF |", "|---|---|---|---|"]
    for _, row in summary.iterrows():
        lines.append(f"| {row['family']} | {row['features']} | {row['mae']:.3e} | {format_number(row['max_vif'])} |")
    lines += ["", "Coefficients theta and VIF:", "",
              "| feature | " + " | ".join(f"{f} theta" for f in FAMILIES) + " | "
              + " | ".join(f"{f} VIF" for f in FAMILIES) + " |",
              "|---" * (1 + 2 * len(FAMILIES)) + "|"]
    for _, row in coef.iterrows():
        cells = ["–" if pd.isna(row.get(f"coef_{fam}", np.nan)) else f"{row[f'coef_{fam}']:.3g}" for fam in FAMILIES]
        cells += ["–" if pd.isna(row.get(f"vif_{fam}", np.nan)) else format_number(row[f"vif_{fam}"])
                  for fam in FAMILIES]
        lines.append(f"| {row['feature']} | " + " | ".join(cells) + " |")
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
