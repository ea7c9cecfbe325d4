"""The ``bftune reproduce`` sub-command's parser (import-light: built for every bftune command)."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.campaign import add_data_argument, add_shard_argument
from bftune.experiments.campaign.limits import default_workers
from bftune.experiments.studies import SCALES, STUDIES
from bftune.experiments.cli.common import Parents


def cmd_reproduce(args: argparse.Namespace) -> int:
    from bftune.experiments.reproduce.command import main  # the campaign machinery: imported when used

    return main(args)


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> argparse.ArgumentParser:
    """Register ``reproduce STUDY [--scale quick|paper] --out DIR [--workers N] [--dask ADDR] [--only NAMES]
    [--shard PARTS/N] [--data DIR] [--report-only]``."""
    studies = "; ".join(f"{n}: {entry.title}" for n, entry in STUDIES.items())
    p = subparsers.add_parser(
        "reproduce", help="run what a published study needs and write its tables beside ours (report.md)",
        description="Run the campaigns a study needs (resumable, local cores or Dask), then write DIR/report.md "
                    f"with its published tables beside ours. Studies: {studies}. Exit status: 0 done, 1 some "
                    "runs failed, 2 bad study, scale, directory or missing trace, 130 interrupted (SIGINT), "
                    "143 (SIGTERM).")
    p.add_argument("study", choices=tuple(STUDIES), help="study number (docs: Reproductions)")
    p.add_argument("--scale", choices=SCALES, default="quick",
                   help="quick (minutes: a smaller version of each experiment) or paper (the study's sizes; hours)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for configs, campaigns and report.md")
    p.add_argument("--dask", metavar="ADDRESS", help="run the campaigns on this Dask scheduler")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"local worker processes (default {default_workers()}; 1 = inline)")
    p.add_argument("--only", metavar="NAME[,NAME...]",
                   help="run only these campaigns of the study's plan (e.g. SDSC-SP2 for 001, abl_spec for 004; "
                        "a bad name lists them), without the extra steps; the report covers everything stored")
    add_shard_argument(p)
    add_data_argument(p)
    p.add_argument("--report-only", action="store_true", help="only rebuild report.md from what is stored")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    p.set_defaults(func=cmd_reproduce)
    return p
