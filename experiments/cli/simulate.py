"""``bftune simulate``: replay a workload in the local simulator; out_jobs.csv and summary.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from bftune.experiments.cli.common import Parents, config_from_args, load_trace, tau_from_args
from bftune.support.files import check_output_dir
from bftune.support.gcpause import paused_gc


def cmd_simulate(args: argparse.Namespace) -> int:
    # Lazy: local_run and results import pandas (0.6 s of start-up, python -X importtime); the
    # commands that need no output tables (policies, options, convert...) should not pay for it.
    # Nor does a simulation of a trace import numpy (60 ms and 20 MiB of a CTC-SP2 run's 90 MiB):
    # only what needs it does (a synthetic workload, a resample, the classifier, a selector, a
    # trace's first parse), each importing it where it is used.
    from bftune.experiments.runs.local import LOCAL_RESULT, run_local
    from bftune.experiments.runs.summary import format_summary

    config = config_from_args(args)
    tau = tau_from_args(args)
    if args.out is not None:  # before the work: a bad --out is found in a second, not after the simulation
        check_output_dir(args.out, "--out", LOCAL_RESULT)
    with paused_gc(freeze=True):  # the trace lives until the command exits: out of the collector's walks
        trace = load_trace(args)
    summary, _ = run_local(trace, config, args.out, tau=tau)
    print(format_summary(summary))
    if args.out:
        print(f"\nwrote {Path(args.out) / 'out_jobs.csv'} and {Path(args.out) / 'summary.json'}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("simulate", parents=[parents.workload, parents.scheduler],
                              help="replay a workload in the local simulator")
    p.add_argument("--out", help="directory for out_jobs.csv and summary.json")
    p.set_defaults(func=cmd_simulate)
