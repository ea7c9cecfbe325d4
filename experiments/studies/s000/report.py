"""Study 000's report: Tables 1-2 (:mod:`.tables12`), the learned pair of Section 7.4, and the gaps explained."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.report.offline import offline_relative
from bftune.experiments.reproduce.markdown import diff, listed, num, table
from bftune.experiments.studies.s000 import tables12
from bftune.experiments.studies.s000.plan import PUBLISHED, TRACES
from bftune.workloads.archive import Archive

#: Section 7.4: AvgWait diminution (%) of the best training policy (T = 20 h) on the testing logs.
SECTION74: dict[str, int] = PUBLISHED["section74"]


def report(out: Path, scale: str, archive: Archive) -> str:
    return "\n\n".join([tables12.section(out), _section74(out), _gaps(out)])


def _section74(out: Path) -> str:
    rows, gaps = [], []
    for name in TRACES:
        path = out / "campaigns" / name / "summary_best.csv"
        if not path.exists():
            rows.append([name, "-", "-", "-", "-", SECTION74[name], "-"])
            continue
        best = pd.read_csv(path)
        best = best[best["criterion"] == "lowest mean rel. AvgWait"]
        test = best[best["split"] == "test"]
        if test.empty:
            continue
        t = test.iloc[0]
        ours = 100.0 * (1.0 - float(t["rel_avg_wait_mean"]))
        half = _half_width(out / "campaigns" / name / "weeks.csv", str(t["config"]))
        rows.append([name, t["config"], int(t["weeks"]), num(ours),
                     f"[{ours - half:.1f}, {ours + half:.1f}]" if half is not None else "-", SECTION74[name],
                     diff(ours, SECTION74[name])])
        gaps.append((name, ours - SECTION74[name], half is not None and abs(ours - SECTION74[name]) <= half))
    return ("## Learned policy on the testing half, threshold 20 h (Section 7.4)\n\n"
            "The pair with the lowest mean relative AvgWait on the training half's resampled weeks, and its mean "
            "AvgWait diminution against EASY-FCFS-FCFS on the testing half's weeks, with a 95 % interval of that "
            "mean (1.96 standard errors of the mean over the testing half's resampled weeks: how far another draw "
            "of the same number of weeks would move it; the choice of the pair on the training half is not "
            "redrawn).\n\n"
            + table(["trace", "best training pair", "weeks per half", "ours (%)", "95 % interval", "theirs (%)",
                     "diff"], rows)
            + ("\n\n" + _gap_sentence(gaps) if gaps else ""))


def _half_width(weeks_csv: Path, config: str) -> float | None:
    """1.96 standard errors (in points of %) of the mean relative AvgWait of ``config`` on the testing half."""
    if not weeks_csv.exists():
        return None
    rel = offline_relative(pd.read_csv(weeks_csv))
    values = rel[(rel["split"] == "test") & (rel["config"] == config)]["rel_avg_wait"].dropna().to_numpy(dtype=float)
    if len(values) < 2:
        return None
    return 100.0 * 1.96 * float(values.std(ddof=1)) / math.sqrt(len(values))


def _gap_sentence(gaps: list[tuple[str, float, bool]]) -> str:
    """Range, direction and the intervals' verdict of Section 7.4's differences, from the rows above."""
    sizes = [abs(d) for _, d, _ in gaps]
    below = [n for n, d, _ in gaps if d < 0]
    above = [n for n, d, _ in gaps if d > 0]
    inside = [n for n, _, ok in gaps if ok]
    parts = [f"Ours lie {min(sizes):.1f} to {max(sizes):.1f} points from the study's"
             if len(gaps) > 1 else f"Ours lies {sizes[0]:.1f} points from the study's"]
    if below:
        parts.append(f"below it on {listed(below)}")
    if above:
        parts.append(f"above it on {listed(above)}")
    text = ", ".join(parts) + "."
    if inside and len(inside) == len(gaps):
        text += (f" The published value lies inside our 95 % interval on {'all ' + str(len(gaps)) if len(gaps) > 1 else 'it'}"
                 ": resampling alone can account for the difference" + ("s." if len(gaps) > 1 else "."))
    elif inside:
        text += (f" The published value lies inside our 95 % interval on {listed(inside)} only ({len(inside)} of "
                 f"{len(gaps)}): elsewhere resampling alone does not account for the difference.")
    else:
        text += (f" The published value lies outside our 95 % interval on all {len(gaps)}: resampling alone does "
                 "not account for the differences.")
    return text


def _gaps(out: Path) -> str:
    return f"""## Differences, and why

- **CEA-Curie**: the shared file says MaxProcs 93,312; the study ran 80,640 processors (its Table 3), which
  the paper campaign uses (jobs wider than that are dropped and counted). The shared file spans 36 whole
  weeks (February to October 2012; the study's table lists 3 months beside the file's 312k jobs), so each
  half has 18 weeks to draw its 250 resampled weeks from.
- **Resampling**: same method, another random generator; how far another draw moves each mean is the
  interval in the table above.
- **Simulator**: two differences from the study's simulator (ocst) are known: their tie rules, and ocst's
  thresholded orders, which give a job above the threshold the criterion 9,999,999 + wait (bftune: such jobs go
  first, by r; this bears on Section 7.4's 20 h pairs, not on Tables 1-2). Ours against ocst on Tables 1-2:
  {tables12.spread(out) or "not measured here (ocs-obps not installed)"}, not checked job by job."""
