"""How often tune's stated intervals hold the gain of a later period it never saw (issue 39).

For each archive trace in ``../shared/workloads``: tune on the first ``--share`` (60 %) of its submission
span (a fresh ``bftune tune`` process, its default validation period inside that part), then simulate the
candidate tune judged (the recommendation, or the best candidate when it kept EASY-FCFS) and EASY-FCFS on
the remaining part *as it happened*, from an empty machine, and compute the realized gain. It prints, per
trace, the testing half's interval (resampled weeks), the later-period interval tune states for the later
part's length (``recommendation.json`` ``later_period.later_period_interval``), the
realized gain and whether each interval holds it, then the coverage of each over the traces: a markdown
table for docs/guides/tune.md.  tune is told the later part's length (``--later-weeks``), so the
later-period interval it states is the one for that period.

    uv run python benchmarks/tune_coverage.py [--share 0.6] [--budget 2m] [--traces KTH-SP2,CTC-SP2] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bftune.experiments.cli import accelerate
from bftune.experiments.tune.validation import period_gain
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import WEEK
from bftune.workloads.read import read_workload
from bftune.workloads.swf_write import write_swf

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "workloads"
TRACES = ("KTH-SP2-1996-2.1-cln", "CTC-SP2-1996-3.1-cln", "SDSC-SP2-1998-4.2-cln", "SDSC-BLUE-2000-4.2-cln",
          "HPC2N-2002-2.2-cln", "CEA-Curie-2011-2.1-cln")


def split(trace, share: float):
    first = min(j.submit for j in trace.jobs)
    last = max(j.submit for j in trace.jobs)
    cut = first + share * (last - first)
    early = trace.with_jobs([j for j in trace.jobs if j.submit < cut])
    later = trace.with_jobs([j for j in trace.jobs if j.submit >= cut])
    return early, later


def one(name: str, share: float, budget: str, out: Path) -> dict:
    trace = read_workload(SHARED / f"{name}.swf.gz")
    early, later = split(trace, share)
    early_path = out / f"{name}-first.swf"
    write_swf(early, early_path)
    tune_dir = out / f"tune-{name}"
    weeks = round((max(j.submit for j in later.jobs) - min(j.submit for j in later.jobs)) / WEEK)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import sys; from bftune.experiments.cli.main import main; "
                           "sys.exit(main(sys.argv[1:]))", "tune", "--trace", str(early_path), "--budget", budget,
                           "--workers", "2", "--no-progress", "--later-weeks", str(weeks), "--out", str(tune_dir)],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        return {"trace": name, "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    record = json.loads((tune_dir / "recommendation.json").read_text())
    later_info = record.get("later_period") or {}
    label = later_info.get("candidate") or record["label"]
    options = _options_of(tune_dir, label) if record["keep_easy_fcfs"] else record["configuration"]
    realized = period_gain(later, SchedulerConfig.from_options(options), SchedulerConfig.from_options({}), 10.0,
                           record["objective"])
    stated = later_info.get("later_period_interval")
    length = later_info.get("later_weeks")
    test = _test_interval(tune_dir, label)
    return {"trace": name, "candidate": label, "kept_easy": record["keep_easy_fcfs"], "later_weeks": weeks,
            "interval_weeks": length, "later_interval": stated, "test_interval": test, "realized": realized,
            "in_later": stated is not None and stated[0] <= realized <= stated[1],
            "in_test": test is not None and test[0] <= realized <= test[1], "tune_wall_s": wall,
            "budget": record.get("budget", {})}


def _options_of(tune_dir: Path, label: str) -> dict:
    import csv

    for row in csv.DictReader((tune_dir / "ranking.csv").open()):
        if row["label"] == label:
            return json.loads(row["options"])
    raise KeyError(label)


def _test_interval(tune_dir: Path, label: str) -> list[float] | None:
    import csv

    for row in csv.DictReader((tune_dir / "ranking.csv").open()):
        if row["label"] == label and row["test_gain_low"]:
            return [float(row["test_gain_low"]), float(row["test_gain_high"])]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--share", type=float, default=0.6)
    parser.add_argument("--budget", default="2m")
    parser.add_argument("--traces", default=",".join(t.split("-")[0] + "-" + t.split("-")[1] for t in TRACES))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    wanted = [t for t in TRACES if any(t.startswith(w) for w in args.traces.split(","))]
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bftune-bench-coverage-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in wanted:
        row = one(name, args.share, args.budget, out)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\ntune on the first {args.share:.0%}, realized gain on the rest as it happened (budget {args.budget}; "
          f"{accelerate.status().splitlines()[0]}):\n")
    print("| trace | candidate judged | later part | testing-half interval | later-period interval (weeks) | "
          "realized | in later-period | in testing |")
    print("|---|---|---|---|---|---|---|---|")
    judged = [r for r in rows if "error" not in r]
    for r in rows:
        if "error" in r:
            print(f"| {r['trace']} | refused: {r['error']} | | | | | | |")
            continue
        test = "-" if r["test_interval"] is None else f"[{100 * r['test_interval'][0]:+.1f}, {100 * r['test_interval'][1]:+.1f}] %"
        later = "-" if r["later_interval"] is None else (f"[{100 * r['later_interval'][0]:+.1f}, "
                                                         f"{100 * r['later_interval'][1]:+.1f}] % ({r['interval_weeks']})")
        kept = " (kept EASY-FCFS)" if r["kept_easy"] else ""
        print(f"| {r['trace'].replace('-cln', '')} | {r['candidate']}{kept} | {r['later_weeks']} weeks | {test} | "
              f"{later} | {100 * r['realized']:+.1f} % | {'yes' if r['in_later'] else 'no'} | "
              f"{'yes' if r['in_test'] else 'no'} |")
    if judged:
        print(f"\ncoverage: later-period interval {sum(r['in_later'] for r in judged)}/{len(judged)}, "
              f"testing-half interval {sum(r['in_test'] for r in judged)}/{len(judged)}")
        print(f"\nthe budget ({args.budget}): the whole tune command's wall time, measured here\n")
        print("| trace | whole command | against the budget | race | tune's estimate | weeks per half | "
              "the budget dropped candidates |")
        print("|---|---|---|---|---|---|---|")
        for r in judged:
            b = r["budget"]
            print(f"| {r['trace'].replace('-cln', '')} | {r['tune_wall_s']:.1f} s | "
                  f"{100 * (r['tune_wall_s'] / b['budget_s'] - 1):+.0f} % | {b.get('wall_s', 0):.1f} s | "
                  f"{b.get('estimate_s', 0):.1f} s | {b.get('weeks_per_half')} | {'yes' if b.get('halving') else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
