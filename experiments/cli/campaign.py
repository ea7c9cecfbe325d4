"""The ``bftune campaign`` sub-command's parser; the command itself is ``command.main``.

The parser is built for every ``bftune`` command, so this module imports
only what the parser needs, and ``command.py`` (config, kinds, reports,
executors: about 40 ms of imports, measured with ``python -X importtime``
on ``bftune simulate``) is imported when ``bftune campaign`` runs.
"""

from __future__ import annotations

import argparse

from bftune.experiments.campaign.limits import default_workers
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.cli.common import Parents


def cmd_campaign(args: argparse.Namespace) -> int:
    from bftune.experiments.campaign.command import main  # start-up time: see the module docstring

    return main(args)


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> argparse.ArgumentParser:
    """Register ``campaign CONFIG --out DIR [--dask ADDR] [--workers N] [--shard PARTS/N] [--data DIR]
    [--report-only]``."""
    p = subparsers.add_parser(
        "campaign", help="run a campaign of simulations from a TOML config (offline tuning, online selection, "
                         "classification...: the kinds of docs/guides/campaigns.md)",
        description="Run every simulation of a campaign config, in parallel, storing each run as it finishes; "
                    "an interrupted campaign resumes where it stopped. CONFIG is a TOML file or the name of a "
                    "shipped config (`bftune campaign --list` lists them, from "
                    f"{CONFIG_DIR}). Relative trace paths in configs are relative to the repository root; "
                    "archive:NAME names a trace of the catalogue, found in the --data directory. "
                    "Exit status: 0 done, 1 some runs failed, 2 bad config, directory or option (or the directory "
                    "is locked by another campaign), 130 interrupted (SIGINT), 143 terminated (SIGTERM).")
    p.add_argument("config", nargs="?", help="campaign TOML file or a shipped config's name (with --report-only: the "
                                             "campaign directory)")
    p.add_argument("--list", action="store_true", help="list the shipped configs with what each runs, and stop")
    p.add_argument("--out", metavar="DIR", help="campaign directory (results, tables, report)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask scheduler (e.g. tcp://host:8786)")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"local worker processes (default {default_workers()}; 1 = inline in this process)")
    add_shard_argument(p)
    add_data_argument(p)
    p.add_argument("--report-only", action="store_true",
                   help="only rebuild report.md and plots from the tables (and the tables from the runs if "
                        "their last rebuild was cut short)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_campaign)
    return p


def add_data_argument(p: argparse.ArgumentParser) -> None:
    """``--data``, the same for ``bftune campaign`` and ``bftune reproduce`` (``bftune.workloads.archive``)."""
    p.add_argument("--data", metavar="DIR",
                   help="directory of the archive traces that configs name as archive:NAME (default: $BFTUNE_DATA, "
                        "else $XDG_DATA_HOME/bftune/traces or ~/.local/share/bftune/traces); a missing trace is "
                        "downloaded (checksum-verified) when the network allows")


def add_shard_argument(p: argparse.ArgumentParser) -> None:
    """``--shard``, the same for ``bftune campaign`` and ``bftune reproduce`` (``shards.py`` says how runs are dealt)."""
    p.add_argument("--shard", metavar="PARTS/N",
                   help="run only these of N parts of the runs (0/2 and 1/2 on two machines; 0-9/16 takes ten "
                        "parts of sixteen), then copy every runs/*.json into one directory and run the same "
                        "command without --shard to write the tables")
