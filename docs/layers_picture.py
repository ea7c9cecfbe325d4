"""The architecture page's picture of the layers, drawn from the import graph at every build (docs/hooks.py).

Apart from the hooks because it is a small layout algorithm of its own: rows by height, the transitive
reduction of the arrows, rows ordered to shorten arrows.
"""

from __future__ import annotations

import io
import re
from types import ModuleType


def _ranks(arrows: set[tuple[str, str]], names: set[str]) -> dict[str, int]:
    """Each layer's height: 0 for a layer that imports none, else one above the highest layer it imports."""
    rank: dict[str, int] = {}

    def height(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name not in rank:
            below = [b for a, b in arrows if a == name and b not in seen]
            rank[name] = 1 + max((height(b, seen | {name}) for b in below), default=-1)
        return rank[name]

    for name in names:
        height(name)
    return rank


def _reduced(arrows: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The arrows no longer path implies (the transitive reduction): the picture stays readable."""
    def reaches(a: str, b: str, skip: tuple[str, str]) -> bool:
        seen, todo = {a}, [a]
        while todo:
            x = todo.pop()
            for s, d in arrows:
                if s == x and (s, d) != skip and d not in seen:
                    if d == b:
                        return True
                    seen.add(d)
                    todo.append(d)
        return False
    return {arrow for arrow in arrows if not reaches(*arrow, skip=arrow)}


def _order_rows(rows: dict[int, list[str]], arrows: set[tuple[str, str]]) -> None:
    """Order each row by the mean position of its neighbours (a few barycentre sweeps): fewer crossings."""
    for _ in range(4):
        for level in sorted(rows):
            index = {n: i / max(len(r) - 1, 1) for r in rows.values() for i, n in enumerate(r)}
            def centre(name: str) -> float:
                near = [index[b] for a, b in arrows if a == name] + [index[a] for a, b in arrows if b == name]
                return sum(near) / len(near) if near else index[name]
            rows[level].sort(key=centre)


def picture(layers: ModuleType) -> str:
    """The layers as the code imports them today (not as allowed): an inline SVG drawn from the import graph.

    One box per layer, in rows by height (a layer sits above every layer it imports), and one arrow per
    pair of layers with module imports between them, less those another path already implies (the
    transitive reduction: ``runs -> core`` is not drawn when ``runs -> config -> core`` is).  Drawn at
    every build, so the picture is the code's, never a hand-drawn diagram that drifts.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arrows = set(layers.layer_arrows(layers.graph()))
    names = {n for pair in arrows for n in pair}
    rank = _ranks(arrows, names)
    drawn = _reduced(arrows)
    rows: dict[int, list[str]] = {}
    for name in sorted(names):
        rows.setdefault(rank[name], []).append(name)
    _order_rows(rows, drawn)
    width = max(len(r) for r in rows.values())
    pos = {name: ((i + 0.5) * width / len(members), level)
           for level, members in rows.items() for i, name in enumerate(members)}
    fig, ax = plt.subplots(figsize=(2.0 * width, 0.9 * len(rows)))
    for a, b in sorted(drawn):
        (xa, ya), (xb, yb) = pos[a], pos[b]
        ax.annotate("", xy=(xb, yb + 0.2), xytext=(xa, ya - 0.2),
                    arrowprops={"arrowstyle": "->", "color": "#777777", "lw": 0.9})
    for name, (x, y) in pos.items():
        ax.text(x, y, name, ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.35", "fc": "#eef3fb", "ec": "#4a6fa5"})
    ax.set_xlim(-0.1, width + 0.1)
    ax.set_ylim(-0.5, len(rows) - 0.5)
    ax.axis("off")
    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "bftune-layers"}):  # text as text; stable ids
        fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = out.getvalue()
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg[svg.index("<svg"):], flags=re.DOTALL)
    # one line in a <div>: Markdown would break a multi-line block at its blank lines into paragraphs
    return '<div class="layers-picture">' + " ".join(svg.split()) + "</div>"
