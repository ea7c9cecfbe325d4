"""Study 002's Table 2 beside our fits: read from the stored fits of the collection (``learn/fits/*.json``).

``bftune learn-index`` writes the fits without any study's figures (``fits.md`` is a product output); the
reproduction sets the study's coefficients, VIF, MAE and row count (``published.toml``) beside the stored ones.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from bftune.experiments.reproduce.study import published
from bftune.learning.index.regression import format_number
from bftune.learning.index.report import METHOD, TITLE, describe_collection
from bftune.schedulers.core.polynomial import FAMILIES, family_features

PUBLISHED = published(__file__)
#: The study's Table 2: family -> feature -> coefficient theta; its VIF (no constant); its MAE; its rows.
COEFFICIENTS: dict[str, dict[str, float]] = PUBLISHED["coefficients"]
VIF: dict[str, dict[str, float]] = PUBLISHED["vif"]
MAE: dict[str, float] = PUBLISHED["mae"]
ROWS: int = PUBLISHED["rows"]


@dataclass(frozen=True)
class StoredFit:
    """One family's fit as ``bftune learn-index`` stored it (``fits/<Family>.json``)."""

    family: str
    coefficients: dict[str, float]
    vif: dict[str, float]
    mae: float
    rows: int
    collection: dict


def load(learn: Path) -> list[StoredFit] | None:
    """The four families' stored fits under ``learn/fits/`` (None until the collection has written all of them)."""
    paths = [learn / "fits" / f"{family}.json" for family in FAMILIES]
    if not all(p.exists() for p in paths):
        return None
    fits = []
    for family, path in zip(FAMILIES, paths):
        data = json.loads(path.read_text())
        fit = data["fit"]
        fits.append(StoredFit(family, data["coefficients"], fit["vif"], fit["mae"], fit["rows"],
                              fit.get("collection") or {}))
    return fits


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _sign_agreement(f: StoredFit) -> str:
    study = COEFFICIENTS[f.family]
    same = sum(1 for feat, c in f.coefficients.items() if _sign(c) == _sign(study[feat]))
    return f"{same}/{len(f.coefficients)}"


def _known(values: dict[str, float], feat: str) -> bool:
    return feat in values and not math.isnan(values[feat])


def markdown(fits: list[StoredFit]) -> str:
    """Our fits beside the study's Table 2 (coefficients, VIF, MAE, signs)."""
    lines = [TITLE, ""]
    if fits[0].collection:
        lines += [f"{describe_collection(fits[0].collection)}; {fits[0].rows} rows (the study: {ROWS}).", ""]
    lines += [METHOD, "",
              "| family | features | MAE (ours) | MAE (study) | max VIF | coefficient signs equal to the study's |",
              "|---|---|---|---|---|---|"]
    for f in fits:
        max_vif = max(f.vif.values()) if f.vif else math.nan
        lines.append(f"| {f.family} | {len(f.coefficients)} | {f.mae:.3e} | {MAE[f.family]:.3e} | "
                     f"{format_number(max_vif)} | {_sign_agreement(f)} |")
    lines += ["", "Coefficients theta (ours / the study's Table 2) and VIF (ours / the study's):", "",
              "| feature | " + " | ".join(f"{f} theta" for f in FAMILIES) + " | "
              + " | ".join(f"{f} VIF" for f in FAMILIES) + " |",
              "|---" * (1 + 2 * len(FAMILIES)) + "|"]
    for feat in family_features(FAMILIES[-1]):
        cells = [f"{f.coefficients[feat]:.3g} / {COEFFICIENTS[f.family][feat]:.3g}" if _known(f.coefficients, feat)
                 else "–" for f in fits]
        cells += [f"{format_number(f.vif[feat])} / {VIF[f.family][feat]:g}" if _known(f.vif, feat) else "–"
                  for f in fits]
        lines.append(f"| {feat} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
