"""How far the gain of a later period moves from what the log's own weeks suggest: the drift factors of
tune's later-period interval, measured on the archive traces (issue 39; docs/guides/tune.md#validation).

A block bootstrap of the log's real weeks (``experiments/tune/validation.py``) says how much the gain of a
later period varies *if the coming weeks are like the past ones*.  On the archive traces they are not: busy
and quiet years alternate, and the gain of the months after a cut moves further than the past weeks'
variety suggests.  This benchmark measures by how much, so that tune can state an interval for what the
coming weeks bring, not only for weeks like the past ones:

1. each archive trace of ``../shared/workloads`` is simulated as it happened, from its first job to its
   last, under EASY-FCFS and under each candidate of :data:`CANDIDATES` (the orders tune recommends most), and
   each real week's sums kept (:func:`bftune.experiments.tune.validation.week_sums`);
2. at every cut (every :data:`STEP_WEEKS` weeks, at least :data:`MIN_PAST_WEEKS` weeks after the start),
   the weeks before the cut play the log: tune's bootstrap interval for a later period of L weeks is
   computed from them (:func:`bftune.experiments.tune.validation.bootstrap_offsets`), and the L weeks after
   the cut are the later period, whose realized gain is compared with it;
3. the *drift score* of a cut is how far the realized gain lies from the log's gain, in units of the
   bootstrap interval's half on that side (1: on its edge); the drift factor of L is the
   :data:`~bftune.experiments.tune.validation.LEVEL` quantile of the scores over every trace, cut and
   candidate, each trace weighing the same (a long trace has more cuts, not more say: each is one machine):
   widened by it, the interval would have held that share of the later periods seen here.

It writes the factors to ``experiments/tune/drift.json`` (``--write``), read by tune, and prints for each
horizon: the factor, the coverage of the plain bootstrap interval, and the coverage of the widened one
*leave-one-trace-out* (each trace judged with the factor measured on the five others: what a log that is
not among the archive traces can expect).  The cuts of one trace overlap and share its history: the
coverage per trace is printed too, and six traces are few.

    uv run python benchmarks/later_drift.py [--write] [--rows scores.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from pathlib import Path

import numpy as np

from bftune.experiments.tune.validation import (DRIFT_FILE, LEVEL, bootstrap_offsets, period_objective_gain,
                                                period_total, week_sums)
from bftune.experiments.tune.weeks import OBJECTIVES
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import WEEK
from bftune.workloads.read import read_workload

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "workloads"
TRACES = ("KTH-SP2-1996-2.1-cln", "CTC-SP2-1996-3.1-cln", "SDSC-SP2-1998-4.2-cln", "SDSC-BLUE-2000-4.2-cln",
          "HPC2N-2002-2.2-cln", "CEA-Curie-2011-2.1-cln")
#: Candidates judged at every cut: the pairs tune recommends most on these traces, and a backfilling-only change.
CANDIDATES = {"EASY-SPF-SPF 20h": {"policy": "SPF", "backfill_policy": "SPF", "threshold": "20h"},
              "EASY-SQF-SQF 20h": {"policy": "SQF", "backfill_policy": "SQF", "threshold": "20h"},
              "EASY-SQF-LEXP 20h": {"policy": "SQF", "backfill_policy": "LEXP", "threshold": "20h"},
              "EASY-FCFS-SPF 20h": {"policy": "FCFS", "backfill_policy": "SPF", "threshold": "20h"}}
HORIZONS = (4, 13, 26, 52)
STEP_WEEKS = 4
MIN_PAST_WEEKS = 12
TAU = 10.0


def simulate(name: str) -> dict[str, np.ndarray]:
    """Each configuration's week sums over the whole trace, simulated as it happened."""
    trace = read_workload(SHARED / f"{name}.swf.gz")
    first = min(j.submit for j in trace.jobs)
    weeks = int((max(j.submit for j in trace.jobs) - first) // WEEK) + 1
    configs = {"EASY-FCFS": {}, **CANDIDATES}
    return {label: week_sums(trace, SchedulerConfig.from_options(options), TAU, first, weeks)
            for label, options in configs.items()}


def scores(name: str, sums: dict[str, np.ndarray], objective: str) -> list[dict]:
    """The drift score of ``objective`` at every cut, candidate and horizon of one trace (module docstring)."""
    base = sums["EASY-FCFS"]
    out = []
    for label in CANDIDATES:
        cand = sums[label]
        for cut in range(MIN_PAST_WEEKS, len(base), STEP_WEEKS):
            for horizon in HORIZONS:
                if cut + horizon > len(base):
                    continue
                past_c, past_b = cand[:cut], base[:cut]
                estimate = period_objective_gain(period_total(past_c), period_total(past_b), objective)
                low, high = bootstrap_offsets(past_c, past_b, objective, horizon, seed=cut)
                realized = period_objective_gain(period_total(cand[cut:cut + horizon]),
                                                 period_total(base[cut:cut + horizon]), objective)
                if not (np.isfinite(estimate) and np.isfinite(realized)) or high <= 0 or low >= 0:
                    continue
                moved = realized - estimate
                score = moved / high if moved >= 0 else moved / low
                out.append({"trace": name, "objective": objective, "candidate": label, "cut": cut,
                            "horizon": horizon, "estimate": float(estimate), "realized": float(realized),
                            "low": float(estimate + low), "high": float(estimate + high), "score": float(score)})
    return out


def trace_quantile(rows: list[dict], level: float) -> float:
    """The ``level`` quantile of the rows' scores, each trace's rows weighing 1 in all (module docstring)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["trace"]] = counts.get(r["trace"], 0) + 1
    values = np.array([r["score"] for r in rows])
    weights = np.array([1.0 / counts[r["trace"]] for r in rows])
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order]) / weights.sum()
    at = min(int(np.searchsorted(cumulative, level)), len(values) - 1)
    return float(values[order][at])


def one(name: str) -> list[dict]:
    sums = simulate(name)
    return [row for objective in OBJECTIVES for row in scores(name, sums, objective)]


def table(rows: list[dict]) -> dict[int, float]:
    """Print the coverage table of one objective's rows; its drift factor for each horizon."""
    factors = {}
    print("| later period | cuts x candidates | plain bootstrap held | drift factor | widened held, "
          "leave-one-trace-out | per trace (leave-one-out) |")
    print("|---|---|---|---|---|---|")
    for horizon in HORIZONS:
        mine = [r for r in rows if r["horizon"] == horizon]
        if not mine:
            continue
        all_scores = np.array([r["score"] for r in mine])
        factors[horizon] = trace_quantile(mine, LEVEL)
        plain = int((all_scores <= 1).sum())
        held, per_trace, trace_shares = 0, [], []
        for name in TRACES:
            own = np.array([r["score"] for r in mine if r["trace"] == name])
            others = [r for r in mine if r["trace"] != name]
            if not len(own) or not others:
                continue
            factor = trace_quantile(others, LEVEL)
            held += int((own <= factor).sum())
            trace_shares.append(float((own <= factor).mean()))
            per_trace.append(f"{name.split('-')[0]}-{name.split('-')[1]} {int((own <= factor).sum())}/{len(own)}")
        print(f"| {horizon} weeks | {len(mine)} | {plain}/{len(mine)} ({plain / len(mine):.0%}) | "
              f"{factors[horizon]:.2f} | {held}/{len(mine)} ({held / len(mine):.0%}; traces alike "
              f"{np.mean(trace_shares):.0%}) | {', '.join(per_trace)} |")
    return factors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write experiments/tune/drift.json")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rows", type=Path, help="the scores as JSON lines: read if the file exists (no "
                                                  "simulation), else written after simulating")
    args = parser.parse_args()
    if args.rows is not None and args.rows.exists():
        rows = [json.loads(line) for line in args.rows.read_text().splitlines()]
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            rows = [row for rows in pool.map(one, TRACES) for row in rows]
        if args.rows is not None:
            args.rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
    measured = {}
    for objective in OBJECTIVES:
        mine = [r for r in rows if r.get("objective", "avg_wait") == objective]
        print(f"\ndrift of the later-period gain on {len(TRACES)} archive traces, objective {objective}, "
              f"level {LEVEL:.0%}\n")
        factors = table(mine)
        if len(factors) < len(HORIZONS):
            sys.exit(f"later_drift: {objective} has no score at some horizon: rerun without --rows")
        measured[objective] = {"factors": [round(factors[h], 3) for h in HORIZONS], "scores": len(mine)}
    if args.write:
        record = {"level": LEVEL, "horizons_weeks": list(HORIZONS), "objectives": measured,
                  "traces": list(TRACES), "candidates": list(CANDIDATES), "step_weeks": STEP_WEEKS,
                  "min_past_weeks": MIN_PAST_WEEKS, "measured": date.today().isoformat(),
                  "command": "uv run python benchmarks/later_drift.py --write"}
        DRIFT_FILE.write_text(json.dumps(record, indent=1) + "\n")
        print(f"\nwrote {DRIFT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
