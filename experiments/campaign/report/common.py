"""What every campaign report section uses: table reading, ratios, markdown tables, plot files.

matplotlib is imported on the first plot only (:func:`pyplot`): the kinds
import their report sections, and neither the worker processes nor a
campaign without a report should pay its import (0.4 to 0.7 s on the
project machine, measured with ``python -X importtime``).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.support.files import atomic_write_chunks

DECILES = [f"d{i}" for i in range(1, 10)]
HOUR = 3600.0


def read_table(out: Path, name: str) -> pd.DataFrame | None:
    """``<name>.csv`` of a campaign directory (empty cells are NaN, nothing else is), None if absent."""
    path = out / f"{name}.csv"
    if not path.exists():
        return None
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def section(out: Path, name: str, lines: list[str], heading: str, intro: str) -> pd.DataFrame | None:
    """Table ``name`` with its section started in ``lines`` (heading, introduction); None if it has no row."""
    df = read_table(out, name)
    if df is None or df.empty:
        return None
    lines.append(f"## {heading}\n")
    lines.append(intro + "\n")
    return df


def runs_or_note(out: Path, name: str, lines: list[str]) -> pd.DataFrame | None:
    """The table a report starts from; None, with a note in ``lines``, when no run is stored yet."""
    df = read_table(out, name)
    if df is None or df.empty:
        lines.append("No finished run yet: nothing to report.")
        return None
    return df


def ratio(a: pd.Series, b: pd.Series) -> pd.Series:
    a = a.astype(float)
    b = b.astype(float)
    r = a / b.where(b > 0)
    return r.mask((b == 0) & (a == 0), 1.0)


# --- markdown -------------------------------------------------------------------------------


def fmt(v, spec: str = "{:.3f}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else ""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return spec.format(float(v))
    return str(v)


def md_table(df: pd.DataFrame, formats: dict[str, str] | None = None) -> str:
    formats = formats or {}
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(fmt(row[c], formats.get(c, "{:.3f}")) for c in cols) + " |")
    return "\n".join(lines)


def slug(text: str) -> str:
    """``text`` made safe for a file name."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in str(text))


# --- plots ----------------------------------------------------------------------------------


def pyplot():
    """matplotlib.pyplot on the Agg backend (PNG files, no display), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def panels(n: int, ncol: int, width: float, height: float, extra: float):
    """``(plt, fig, axes)``: a grid of ``n`` panels, ``ncol`` a row, the unused ones hidden."""
    plt = pyplot()
    ncol = min(ncol, n)
    nrow = math.ceil(n / ncol)
    fig, grid = plt.subplots(nrow, ncol, figsize=(width * ncol, height * nrow + extra), squeeze=False,
                             constrained_layout=True)
    for ax in grid.flat[n:]:
        ax.axis("off")
    return plt, fig, list(grid.flat[:n])


def save(fig, path: Path) -> None:
    """Write ``fig`` as a PNG atomically (no timestamp in it: the same figure gives the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    atomic_write_chunks(path, [image.getvalue()])
    fig.clf()
    pyplot().close(fig)
