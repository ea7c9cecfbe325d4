"""``bftune campaign CONFIG --out DIR [--workers N | --dask ADDRESS] [--report-only]``.

Exit status: 0 every run stored; 1 some runs failed (listed with their
configuration and seed; the others finished); 2 a bad config, output
directory or option, or a directory locked by another campaign (one line,
before any work); 130 interrupted by SIGINT (Ctrl-C), 143 by SIGTERM - both
stop the workers at once and keep every stored run, and the same command
resumes.
"""

from __future__ import annotations

import argparse
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from bftune.experiments.campaign.config import CONFIG_DIR, load_config
from bftune.experiments.campaign.executors import default_workers
from bftune.experiments.campaign.kinds import KINDS
from bftune.experiments.campaign.runner import format_failures, run_campaign
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import DirectoryLock, load_meta, publish

EXIT_SIGTERM = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where SIGINT would raise KeyboardInterrupt, so that both stop a campaign the same way."""


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (the previous handler after)."""

    def handler(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def report_only(target: str | None) -> Path:
    """Rebuild report.md and plots of a campaign directory (and its tables if a rebuild was cut short)."""
    if target is None:
        raise CampaignError("--report-only needs the campaign directory: --report-only DIR or --out DIR")
    out = Path(target)
    load_meta(out)  # a campaign directory, or one clear line
    with DirectoryLock(out):
        return publish(out, tables=False)


def cmd_campaign(args: argparse.Namespace) -> int:
    try:
        with sigterm_interrupts():
            if args.report_only:
                target = args.out
                if target is None and args.config and Path(args.config).is_dir():
                    target = args.config
                print(f"wrote {report_only(target)}")
                return 0
            if not args.config:
                raise CampaignError("give a campaign config: bftune campaign CONFIG --out DIR")
            if args.out is None:
                raise CampaignError("give the output directory: --out DIR")
            campaign = load_config(args.config)
            outcome = run_campaign(campaign, args.out, workers=args.workers, dask=args.dask,
                                   progress=not args.no_progress)
    except CampaignError as exc:
        print(f"bftune: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print("bftune: terminated", file=sys.stderr)
        return EXIT_SIGTERM
    print(f"campaign {campaign.name}: {outcome.done} runs done, {outcome.reused} reused, "
          f"{len(outcome.failures)} failed, of {outcome.total}, in {outcome.wall_s:.1f} s on {outcome.executor}")
    print(f"tables and report in {outcome.out_dir} (report.md)")
    if outcome.failures:
        print(format_failures(outcome.failures), file=sys.stderr)
    return outcome.exit_code


def add_campaign_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``campaign CONFIG --out DIR [--dask ADDR] [--workers N] [--report-only]``."""
    p = subparsers.add_parser(
        "campaign", help="run a campaign of simulations from a TOML config (" +
                         ", ".join(kind.help for kind in KINDS.values()) + ")",
        description="Run every simulation of a campaign config, in parallel, storing each run as it finishes; "
                    "an interrupted campaign resumes where it stopped. Shipped configs: "
                    f"{CONFIG_DIR}. Relative trace paths in configs are relative to the repository root. "
                    "Exit status: 0 done, 1 some runs failed, 2 bad config, directory or option, "
                    "130 interrupted (SIGINT), 143 terminated (SIGTERM).")
    p.add_argument("config", nargs="?", help="campaign TOML file (with --report-only: the campaign directory)")
    p.add_argument("--out", metavar="DIR", help="campaign directory (results, tables, report)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask scheduler (e.g. tcp://host:8786)")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"local worker processes (default {default_workers()}; 1 = inline in this process)")
    p.add_argument("--report-only", action="store_true",
                   help="only rebuild report.md and plots from the tables (and the tables from the runs if "
                        "their last rebuild was cut short)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_campaign)
    return p
