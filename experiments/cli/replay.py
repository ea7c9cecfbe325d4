"""``bftune replay``: how far the simulator reproduces the machine a log comes from (its logged waits)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bftune.experiments.cli.common import Parents, UsageError, config_from_args, load_trace, tau_from_args
from bftune.support.files import check_output_dir, result_dir

#: What ``--out`` holds: the comparison (replay.json) and its weeks (replay_weeks.csv).
REPLAY_RESULT = ("replay.json", "replay_weeks.csv")


def cmd_replay(args: argparse.Namespace) -> int:
    import pandas as pd  # lazy, as for simulate

    from bftune.experiments.runs.replay import format_replay, replay

    if args.synthetic is not None:
        raise UsageError("replay compares a log with its simulation: give the log with --trace (a synthetic "
                         "workload has no logged waits)")
    config = config_from_args(args)
    tau = tau_from_args(args)
    if args.out is not None:
        check_output_dir(args.out, "--out", REPLAY_RESULT)
    trace = load_trace(args)
    try:
        result = replay(trace, config, tau)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(format_replay(result))
    if args.out is not None:
        with result_dir(args.out, replaces=REPLAY_RESULT) as stage:
            (stage / "replay.json").write_text(json.dumps(result.as_dict(), indent=2) + "\n")
            pd.DataFrame(result.weeks).to_csv(stage / "replay_weeks.csv", index=False)
        print(f"\nwrote {Path(args.out) / 'replay.json'} and {Path(args.out) / 'replay_weeks.csv'}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("replay", parents=[parents.workload, parents.scheduler],
                              help="simulate a log with the site's policy (EASY-FCFS by default; its slurm.conf with "
                                   "--slurm-conf) and set the simulated waits beside the logged ones")
    p.add_argument("--out", help="directory for replay.json and replay_weeks.csv")
    p.set_defaults(func=cmd_replay)
