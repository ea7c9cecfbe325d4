"""Speed of `--scheduler slurm` against EASY, as users run it (not a test: it prints figures).

Each run is a fresh ``bftune simulate --trace T ... --out DIR`` process (interpreter start, imports,
reading the trace, simulating, writing out_jobs.csv and summary.json): EASY-FCFS, Slurm with every
priority weight 0 (submission order) and Slurm with age, job size and fair-share weights (the
multifactor priority recomputed at every PriorityCalcPeriod tick, Fair Tree usage charged at each).  It
reports the median wall-clock time of ``--repeat`` runs, the simulation alone (summary.json's
``simulation_seconds``) and both as ratios to EASY (docs/semantics/scheduling.md#slurm).

    uv run python benchmarks/slurm_speed.py                   # KTH-SP2 and CTC-SP2, 3 runs each
    uv run python benchmarks/slurm_speed.py --repeat 1 CTC    # one trace, one run each

By default one unmeasured run per trace first fills the parse cache, as after a user's first run of
that trace (benchmarks/simulate.py does the same).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import add_data_argument, data_dir, find_trace, user_env
from simulate import Measure, bftune_command, core_label, load, machine, measure, median

#: label -> options of `bftune simulate`
CONFIGURATIONS = {
    "EASY-FCFS": [],
    "Slurm, weights 0": ["--scheduler", "slurm"],
    "Slurm, age+size+fair-share": ["--scheduler", "slurm", "--priority-weight-age", "1000",
                                   "--priority-weight-job-size", "1000", "--priority-weight-fairshare", "10000"],
}
DEFAULT_TRACES = ("KTH-SP2", "CTC-SP2")


def run_once(trace: Path, options: list[str], env: dict[str, str]) -> Measure:
    with tempfile.TemporaryDirectory(prefix="bftune-slurm-bench-") as out:
        return measure([*bftune_command(), "simulate", "--trace", str(trace), *options, "--out", out],
                       Path(out), env)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", help="SWF traces, or name prefixes of the data directory's traces "
                                              f"(default: {', '.join(DEFAULT_TRACES)})")
    add_data_argument(ap)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each (median; default 3)")
    args = ap.parse_args(argv)
    directory = data_dir(args.data)
    traces = [find_trace(name, directory) for name in (args.traces or DEFAULT_TRACES)]
    env = user_env()
    print(f"machine: {machine()}; core: {core_label(env)}; load before: {load()}")
    print(f"command: bftune simulate --trace T [--scheduler slurm ...] --out DIR; median of {args.repeat}")
    print()
    print("| trace | scheduler | `bftune simulate` wall | x EASY | simulation | x EASY |")
    print("|---|---|---|---|---|---|")
    for trace in traces:
        run_once(trace, [], env)  # fills the parse cache, unmeasured
        name = trace.name.split(".swf")[0]
        base: Measure | None = None
        for label, options in CONFIGURATIONS.items():
            runs = [run_once(trace, options, env) for _ in range(args.repeat)]
            wall = median([r.wall for r in runs])
            sim = median([r.sim or 0.0 for r in runs])
            if base is None:
                base = Measure(wall, 0.0, 0.0, sim)
            print(f"| {name} | {label} | {wall:.2f} s | {wall / base.wall:.1f} | {sim:.2f} s | "
                  f"{sim / (base.sim or 1.0):.1f} |", flush=True)
    print()
    print(f"load after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
