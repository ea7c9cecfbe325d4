"""How much of the classifier's retraining a fit in the background could hide inside Batsim.

The forest retrained at a week boundary is needed by the first job submitted
after it, no sooner: a fit started on another thread when the boundary is
crossed, and waited for at that submission, would keep every decision
identical.  Batsim simulates meanwhile only the instants between the two,
one message (and our reply) each; a rerun's submission needs no
forest (a rerun is requeued as large).  This script counts those instants in a
finished run (``out_jobs.csv`` of ``bftune simulate`` or ``bftune batsim``
with ``--classifier``; both backends agree job by job) and turns them into
Batsim seconds with Batsim's own time per message, measured by
``benchmarks/batsim.py`` (its wall time less bftune's scheduler time, over
its message count):

    uv run bftune simulate --trace ../shared/workloads/SDSC-SP2-1998-4.2-cln.swf.gz \\
        --reservation machines --policy SAF --classifier rf --out /tmp/rf
    uv run python benchmarks/background_fit.py /tmp/rf --batsim-seconds 37.3 --messages 127164

Two triggers are counted: the retraining as it runs today (at the first
event at or after the boundary) and at a wake-up asked for the boundary
itself (one more instant when the first event is a completion).  The
origin of the weeks is the first submission, as the classifier's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.workloads.model import WEEK


def windows(out_jobs: pd.DataFrame, week: float = WEEK) -> pd.DataFrame:
    """One row per week boundary: whether its first event is a submission, and the instants Batsim simulates
    between the retraining's trigger and the first classified submission after the boundary."""
    all_submits = out_jobs["submission_time"].to_numpy(dtype=float)
    # a rerun (id "<origin>#<n>") is requeued as large, not classified: its submission needs no forest
    classified = ~out_jobs["job_id"].astype(str).str.contains("#", regex=False).to_numpy()
    submits = np.unique(all_submits[classified])
    finishes = out_jobs["finish_time"].to_numpy(dtype=float)
    instants = np.unique(np.concatenate([all_submits, finishes]))
    origin = submits[0]
    rows = []
    k = 1
    while origin + k * week <= instants[-1]:
        boundary = origin + k * week
        first = instants[np.searchsorted(instants, boundary, "left")]
        i = np.searchsorted(submits, boundary, "left")
        next_submit = submits[i] if i < len(submits) else np.inf
        after_first = int(np.count_nonzero((instants > first) & (instants < next_submit)))
        from_boundary = after_first + int(first < next_submit)
        rows.append((k, bool(first == next_submit), after_first, from_boundary))
        k += 1
    return pd.DataFrame(rows, columns=["week", "first_event_is_submission", "instants_after_trigger",
                                       "instants_after_boundary"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run directory (out_jobs.csv, summary.json) made with --classifier")
    parser.add_argument("--batsim-seconds", type=float, required=True,
                        help="Batsim's own seconds in a whole run (benchmarks/batsim.py: wall less scheduler time)")
    parser.add_argument("--messages", type=int, required=True, help="the messages of that run (its progress line)")
    args = parser.parse_args(argv)
    out_jobs = args.run / "out_jobs.csv"
    if not out_jobs.is_file():
        print(f"{out_jobs}: no such file", file=sys.stderr)
        return 2
    table = windows(pd.read_csv(out_jobs, usecols=["job_id", "submission_time", "finish_time"]))
    per_message = args.batsim_seconds / args.messages
    retrain = None
    summary = args.run / "summary.json"
    if summary.is_file():
        retrain = (json.loads(summary.read_text()).get("classification") or {}).get("retrain_seconds", {}).get("total")
    print(f"{len(table)} week boundaries; the first event after the boundary is a submission at "
          f"{int(table.first_event_is_submission.sum())}")
    for column, label in (("instants_after_trigger", "retraining where it runs now"),
                          ("instants_after_boundary", "a wake-up at each boundary")):
        n = int(table[column].sum())
        print(f"fit started at {label}: {n} instants before the next submissions in all (max {int(table[column].max())} "
              f"at one boundary): at most {n * per_message:.3f} s of Batsim's time to hide it behind "
              f"({per_message * 1e3:.3f} ms a message)")
    if retrain is not None:
        print(f"the run's retraining: {retrain:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
