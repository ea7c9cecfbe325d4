"""Study 001's claims about policy selection (its Section 6), tested on our Table 4 and on the study's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.experiments.reproduce.markdown import num, table
from bftune.experiments.studies.s001.tables import TABLE4, TABLE4_COLUMNS, table4_values


def _near_best(v: dict) -> float:
    """How far the full and noisy selectors stay from the best fixed policy, at worst (points)."""
    return max(v[c] for c in ("full/1w", "full/1d", "noisy/1w", "noisy/1d")) - v["best"]


@dataclass(frozen=True)
class Claim:
    """A claim of the study's Section 6: every ``(a, b)`` of ``less`` has a lower Table 4 value than b."""

    text: str
    less: tuple[tuple[str, str], ...]

    def holds(self, v: dict) -> bool:
        return all(v[a] < v[b] for a, b in self.less)

    def shows(self, v: dict) -> str:
        return "; ".join(f"{v[a]:.1f} {'<' if v[a] < v[b] else '>='} {v[b]:.1f}" for a, b in self.less)


#: The study's qualitative claims about Table 4 (Section 6), each a test on a row of Table 4's values.
CLAIMS = tuple(
    [Claim(f"bandit between full feedback and random, {word} periods",
           ((f"full/{p}", f"bandit/{p}"), (f"bandit/{p}", f"random/{p}"))) for p, word in (("1w", "weekly"),
                                                                                           ("1d", "daily"))]
    + [Claim(f"daily periods better than weekly for {who}", ((f"{s}/1d", f"{s}/1w"),))
       for s, who in (("random", "random"), ("bandit", "the bandit"))])
BOOTSTRAP_DRAWS = 2000


def _recovered(v: dict, period: str) -> float | None:
    """The share of the gap between random and full feedback that the bandit recovers: (random - bandit) /
    (random - full), with one period (the study: "recovering between a quarter to the whole gap")."""
    gap = v[f"random/{period}"] - v[f"full/{period}"]
    return None if gap == 0 else (v[f"random/{period}"] - v[f"bandit/{period}"]) / gap


def _share(x: float | None) -> str:
    return "no gap" if x is None else f"{x:.2f} of the gap"


def margins(runs: pd.DataFrame | None, claim: Claim) -> str:
    """95 % bootstrap intervals (over resamples, paired) of each ``a - b`` of ``claim``, in points of Table 4.

    Table 4's value of a strategy is its total waiting time over the resamples against FCFS's; drawing the
    resamples with replacement (the same draw for every strategy) shows whether 60 of them settle the sign.
    """
    if runs is None:
        return "-"
    wait = runs.pivot_table(index="resample", columns="strategy", values="total_wait", aggfunc="sum")
    needed = {"FCFS", *(x for pair in claim.less for x in pair)}
    if not needed <= set(wait.columns):
        return "-"
    wait = wait.dropna()
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(wait), size=(BOOTSTRAP_DRAWS, len(wait)))
    base = wait["FCFS"].to_numpy()[draws].sum(axis=1)
    out = []
    for a, b in claim.less:
        d = 100.0 * (wait[a].to_numpy()[draws].sum(axis=1) - wait[b].to_numpy()[draws].sum(axis=1)) / base
        lo, hi = np.percentile(d, [2.5, 97.5])
        out.append(f"[{lo:+.1f}, {hi:+.1f}]")
    return "; ".join(out)


def section(out: Path, summaries: dict, done: list[str]) -> str:
    rows, agree, total = [], 0, 0
    for name in done:
        values = table4_values(summaries[name])
        ours = {k: v for k, v in values.items() if v is not None}
        if len(ours) < len(values):
            continue
        theirs = dict(zip(TABLE4_COLUMNS, TABLE4[name]))
        runs_path = out / "campaigns" / name / "runs.csv"
        runs = pd.read_csv(runs_path) if runs_path.exists() else None
        rows.append([name, "full and noisy feedback: worst gap to the best fixed policy (points)",
                     num(_near_best(ours)), "-", num(_near_best(theirs)), "-"])
        rows.append([name, "full feedback, weekly against daily periods: difference (points; the study: \"the "
                     "value of Δ has no impact\")", num(abs(ours["full/1w"] - ours["full/1d"])), "-",
                     num(abs(theirs["full/1w"] - theirs["full/1d"])), "-"])
        for p, word in (("1w", "weekly"), ("1d", "daily")):
            a, b = _recovered(ours, p), _recovered(theirs, p)
            ok_a, ok_b = (x is not None and 0.25 <= x <= 1.0 for x in (a, b))
            total += 1
            agree += ok_a == ok_b
            rows.append([name, f"bandit recovers a quarter to the whole of the random-to-full gap, {word} periods",
                         f"{'yes' if ok_a else 'no'} ({_share(a)})", "-", f"{'yes' if ok_b else 'no'} ({_share(b)})",
                         "yes" if ok_a == ok_b else "**no**"])
        for claim in CLAIMS:
            a, b = claim.holds(ours), claim.holds(theirs)
            total += 1
            agree += a == b
            rows.append([name, claim.text, f"{'yes' if a else 'no'} ({claim.shows(ours)})", margins(runs, claim),
                         f"{'yes' if b else 'no'} ({claim.shows(theirs)})", "yes" if a == b else "**no**"])
    if not rows:
        return "## The study's claims about policy selection\n\nNo trace has all of Table 4's strategies yet."
    return ("## The study's claims about policy selection\n\n"
            "The study's claims about Table 4 (its Section 6), tested on our Table 4 and on the study's (values in %, "
            f"as Table 4); the two agree on {agree} of the {total} yes/no tests. The interval is the 95 % paired bootstrap interval of each "
            "difference over our resamples: one that contains 0 means our resamples do not settle that "
            "comparison.\n\n"
            + table(["trace", "claim", "ours", "ours: 95 % interval of the difference (points)", "study's table",
                     "agree"], rows))
