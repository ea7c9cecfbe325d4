"""Study 004's readings that issue 30 found never measured, each run on the cells that miss, beside the miss.

A *miss* is a cell where the preset's learned classifier (``rf``, the main campaigns) is out of the published
value: Table 7's FCFS-CI beyond :data:`~.table7.TABLE7_TOLERANCE` (CTC-SP2, SDSC-SP2; KTH-SP2 runs beside them
as a control) or Section 6.1's range of the improvement over the same base policy (SAF on the three main traces,
SPF on SDSC-BLUE; "improvements for all ... traces" too).  Each reading is one documented sentence of the study
read another way than the preset does (one option or config line, :data:`~.plan.ABLATION`), run on those cells
(:data:`~.plan.MISS_READINGS`); EASY++ as the study's text describes it (the mean of the user's two previous
runtimes, without Tsafrir et al.'s shortest-first backfilling) sits beside Table 7's EASY++ column.  A reading
*meets* a cell when its value lies within the tolerance (Table 7) or within the range (Section 6.1); the report
says for each reading which misses it closes and which cells it opens.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bftune.experiments.reproduce.markdown import num, table
from bftune.experiments.studies.s004 import published as pub
from bftune.experiments.studies.s004 import stored
from bftune.experiments.studies.s004.plan import ABLATION, MISS_READINGS, cells
from bftune.experiments.studies.s004.table7 import EASY_PLUS_PLUS, TABLE7_TOLERANCE
from bftune.support.checkout import command

#: The command that runs one reading's campaign (and the report after it).
COMMAND = command("reproduce 004 --scale paper --out DIR --only {name}")
EASYPP_STUDY_SET = EASY_PLUS_PLUS[0][0]  # EASY++ on the study's job set (the converter's)


def published_cell(trace_: str, policy: str) -> tuple[str, tuple[float, float]] | None:
    """What the study publishes for rf on (trace, policy) and the interval of values that meet it: Table 7's
    FCFS-CI within the tolerance, else Section 6.1's range over the same base policy (None: nothing published)."""
    if policy == "FCFS" and trace_ in pub.TABLE7:
        theirs = pub.TABLE7[trace_][0]
        return f"Table 7 FCFS-CI {theirs}", (theirs - TABLE7_TOLERANCE, theirs + TABLE7_TOLERANCE)
    if policy in pub.SECTION61_RANGES:
        low, high = pub.SECTION61_RANGES[policy]
        return f"Section 6.1 {policy} {low}-{high}", (float(low), float(high))
    return None


def meets(value: float | None, interval: tuple[float, float]) -> bool | None:
    return None if value is None else interval[0] <= value <= interval[1]


def _accuracy(quality: pd.DataFrame | None, trace_: str, policy: str) -> float | None:
    if quality is None:
        return None
    sel = quality[(quality["trace"] == trace_) & (quality["policy"] == policy) & (quality["variant"] == "rf")]
    return 100.0 * float(sel["accuracy"].iloc[0]) if len(sel) else None


def _mark(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def outcomes(out: Path) -> dict[str, dict[tuple[str, str], tuple[float | None, float | None]]]:
    """Per reading campaign, per cell: (rf's improvement with the preset, with the reading), over the same base
    policy of the same campaign."""
    main = stored.both(stored.runs, out)
    got = {}
    for name in MISS_READINGS:
        runs = stored.runs(out, name)
        got[name] = {(t, p): (stored.improvement(main, t, p, "rf", base_policy=p),
                              stored.improvement(runs, t, p, "rf", base_policy=p)) for t, p in cells(name)}
    return got


def closing(out: Path, gain_only: bool = False) -> dict[tuple[str, str], list[str]]:
    """Per missing cell that some reading ran (the preset out of the published interval; ``gain_only``: rf no
    better than its base), the readings that bring it in (``gain_only``: that make rf improve on its base)."""
    found: dict[tuple[str, str], list[str]] = {}
    for name, by_cell in outcomes(out).items():
        for (t, p), (before, after) in by_cell.items():
            cell = published_cell(t, p)
            if before is None or after is None or cell is None:
                continue
            if gain_only:
                missed, fixed = before <= 0, after > 0
            else:
                missed, fixed = not meets(before, cell[1]), bool(meets(after, cell[1]))
            if missed:
                found.setdefault((t, p), [])
                if fixed:
                    found[(t, p)].append(name)
    return found


def section(out: Path) -> str:
    """The readings' table: every reading on every cell it ran, beside the published value and the preset."""
    what = {name: text for name, text, _, _ in ABLATION}
    main, mq = stored.both(stored.runs, out), stored.both(stored.quality, out)
    rows, verdicts = [], []
    for name in MISS_READINGS:
        runs, quality = stored.runs(out, name), stored.quality(out, name)
        closed, opened, measured = [], [], 0
        for k, (t, p) in enumerate(cells(name)):
            cell = published_cell(t, p)
            before = stored.improvement(main, t, p, "rf", base_policy=p)
            after = stored.improvement(runs, t, p, "rf", base_policy=p)
            cc = stored.improvement(runs, t, p, "class-clairvoyant", base_policy=p)
            label, interval = cell if cell is not None else ("-", (float("-inf"), float("inf")))
            ok_before, ok_after = meets(before, interval), meets(after, interval)
            if after is not None and before is not None:
                measured += 1
                if ok_before is False and ok_after:
                    closed.append(f"{t} {p}")
                if ok_before and ok_after is False:
                    opened.append(f"{t} {p}")
            acc = (_accuracy(mq, t, p), _accuracy(quality, t, p))
            rows.append([f"{what[name]}: `{COMMAND.format(name=name)}`" if k == 0 else "", t, p, label,
                         num(before), num(after), num(None if before is None or after is None else after - before,
                                                          sign=True),
                         f"{_mark(ok_before)} -> {_mark(ok_after)}", num(cc),
                         f"{num(acc[0])} -> {num(acc[1])}"])
        if measured:
            verdicts.append(f"`{name}` closes {len(closed)} of the misses it ran"
                            + (f" ({', '.join(closed)})" if closed else "")
                            + (f" and opens {', '.join(opened)}" if opened else ""))
        else:
            verdicts.append(f"`{name}` not stored")
    easypp_rows, easypp_verdict = _easy_plus_plus_rows(out)
    rows += easypp_rows
    verdicts.append(easypp_verdict)
    head = ("## Readings on the cells that miss\n\n"
            "Documented sentences of the study that the preset reads one way, each read the other way (one option "
            "of the classifier or of EASY, a line of the campaign's config) and run on the cells where the preset "
            "misses the published value: Table 7's FCFS-CI on CTC-SP2 and SDSC-SP2 (KTH-SP2, within tolerance, as "
            "a control), Section 6.1's range with SAF on the three main traces and with SPF on SDSC-BLUE. `rf`'s "
            "improvement (%) over plain EASY with the same policy *of the same campaign* (for the threshold, EASY "
            f"with the threshold), before (the preset, main campaigns) and with the reading; \"meets\": within "
            f"{TABLE7_TOLERANCE:.0f} points of Table 7, or within Section 6.1's range. Last rows: EASY++ as the "
            "text describes it, without Tsafrir et al.'s shortest-first backfilling (`avg2`, campaign "
            f"`{EASYPP_STUDY_SET}`, the study's job set), beside our EASY++ and Table 7's EASY++ column.\n\n")
    return (head + table(["reading: command", "trace", "policy", "published", "before (%)", "with the reading (%)",
                          "change", "meets: before -> with", "class-clairvoyant with it (%)",
                          "accuracy: before -> with"], rows)
            + "\n\n" + "; ".join(verdicts) + ".")


def _easy_plus_plus_rows(out: Path) -> tuple[list[list[str]], str]:
    """EASY++ with and without its shortest-first backfilling beside Table 7's EASY++ column, and what it says."""
    runs = stored.runs(out, EASYPP_STUDY_SET)
    rows, within, measured = [], [], []
    for k, (t, theirs) in enumerate(pub.TABLE7_EASY_PLUS_PLUS.items()):
        interval = (theirs - TABLE7_TOLERANCE, theirs + TABLE7_TOLERANCE)
        before = stored.improvement(runs, t, "FCFS", "easy++")
        after = stored.improvement(runs, t, "FCFS", "avg2")
        if after is not None:
            measured.append(f"{t} {after:.1f} against {theirs} %")
            if meets(after, interval):
                within.append(t)
        rows.append([("EASY++ as the text describes it: the user's last two runtimes, FCFS backfilling: `"
                      + COMMAND.format(name=EASYPP_STUDY_SET) + "`") if k == 0 else "", t, "FCFS",
                     f"Table 7 EASY++ {theirs}", num(before), num(after),
                     num(None if before is None or after is None else after - before, sign=True),
                     f"{_mark(meets(before, interval))} -> {_mark(meets(after, interval))}", "-", "-"])
    if not measured:
        return rows, "EASY++ without its shortest-first backfilling not stored"
    return rows, (f"EASY++ without its shortest-first backfilling lies within {TABLE7_TOLERANCE:.0f} points of Table "
                  f"7's EASY++ on {len(within)} of {len(measured)} traces ({', '.join(measured)})")
