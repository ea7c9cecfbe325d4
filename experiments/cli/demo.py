"""``bftune demo``: EASY variants on the embedded synthetic workload, side by side."""

from __future__ import annotations

import argparse
import contextlib

from bftune.experiments.cli.common import Parents
from bftune.schedulers.config import SchedulerConfig
from bftune.support.files import result_dir


DEMO_VARIANTS: list[tuple[str, dict]] = [
    ("FCFS, no backfilling", {"policy": "FCFS", "backfill": False}),
    ("EASY-FCFS", {"policy": "FCFS"}),
    ("EASY-SPF", {"policy": "SPF"}),
    ("EASY-SAF", {"policy": "SAF"}),
    ("EASY-SAF + 40h threshold", {"policy": "SAF", "threshold": "40h"}),
    ("EASY-FCFS-SPF", {"policy": "FCFS", "backfill_policy": "SPF"}),
    ("EASY-WFP3", {"policy": "WFP3"}),
    ("EASY-LCFS + 20h threshold", {"policy": "LCFS", "threshold": "20h"}),
]


def _variant_dir(label: str) -> str:
    return label.replace(" ", "_").replace(",", "").replace("+", "plus")


def cmd_demo(args: argparse.Namespace) -> int:
    from bftune.experiments.runs.local import run_local  # lazy: pandas (see cmd_simulate)

    n, procs, seed = args.jobs, args.procs, args.seed
    # The variants' directories are one result: replaced together at the end.
    target = (result_dir(args.out, replaces=[_variant_dir(label) for label, _ in DEMO_VARIANTS])
              if args.out is not None else None)
    from bftune.workloads.synthetic import generate  # lazy: numpy (see cmd_simulate)

    trace = generate(n, procs, seed)
    print(f"bftune demo: {len(trace.jobs)} synthetic jobs (Lublin-Feitelson model, seed {seed}) on {procs} processors\n")
    header = f"{'scheduler':<28}{'AvgWait (s)':>13}{'MaxWait (s)':>13}{'AVGbsld':>10}{'util.':>8}"
    print(header)
    print("-" * len(header))
    with target if target is not None else contextlib.nullcontext() as stage:
        for label, options in DEMO_VARIANTS:
            config = SchedulerConfig.from_options(options)
            summary, _ = run_local(trace, config, stage / _variant_dir(label) if stage else None, tau=10.0)
            print(f"{label:<28}{summary['avg_wait']:>13.0f}{summary['max_wait']:>13.0f}"
                  f"{summary['avg_bsld']:>10.2f}{summary['utilization']:>8.3f}")
    print("\nAVGbsld uses tau = 10 s. Try: bftune simulate --synthetic 5000 --policy SAF --threshold 40h --out results/x")
    if target is not None:
        print(f"per-variant out_jobs.csv and summary.json written under {args.out}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("demo", help="simulate EASY variants on the embedded synthetic workload")
    p.add_argument("--jobs", default=3000, help="number of synthetic jobs (default 3000)")
    p.add_argument("--procs", default=128, help="machine size (default 128)")
    p.add_argument("--seed", default=1, help="seed of the synthetic workload (default 1, as everywhere)")
    p.add_argument("--out", help="also write each variant's results under this directory")
    p.set_defaults(func=cmd_demo)
