"""What ``bftune campaign`` does (the parser is in ``cli.py``).

Exit status: 0 every run stored; 1 some runs failed (listed with their
configuration and seed; the others finished); 2 a bad config, output
directory or option, or a directory locked by another campaign (one line,
before any work); 130 interrupted by SIGINT (Ctrl-C), 143 by SIGTERM - both
stop the workers at once and keep every stored run, and the same command
resumes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import config_summary, find_config, shipped_configs
from bftune.experiments.campaign.runner import format_failures, run_campaign
from bftune.experiments.campaign.shards import Shard
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import DirectoryLock, load_meta, publish
from bftune.workloads.archive import Archive, data_dir
from bftune.workloads.errors import WorkloadError
from bftune.support.write_errors import write_failure
from bftune.support.streams import print_error


def data_option(value: str | None) -> Archive | None:
    """The archive of ``--data DIR`` (None when not given: the setting is looked up when a trace needs it)."""
    if value is None:
        return None
    try:
        return data_dir(value)
    except WorkloadError as exc:
        raise CampaignError(str(exc)) from None


def report_only(target: str | None) -> Path:
    """Rebuild report.md and plots of a campaign directory (and its tables if a rebuild was cut short)."""
    if target is None:
        raise CampaignError("--report-only needs the campaign directory: --report-only DIR or --out DIR")
    out = Path(target)
    load_meta(out)  # a campaign directory, or one clear line
    with DirectoryLock(out):
        try:
            path = publish(out, tables=False)
        except OSError as exc:
            raise CampaignError(write_failure(exc, out, "every run is stored")) from None
    assert path is not None, "publish writes the report unless told not to"
    return path


def main(args: argparse.Namespace) -> int:
    # SIGTERM and SIGHUP stop a campaign as Ctrl-C does (``bftune.support.interrupts``, around every command):
    # the runner stops its workers and says how many runs are stored, and the command line reports the signal.
    try:
        if args.report_only:
            if args.shard is not None:
                raise CampaignError("--shard: runs part of a campaign, --report-only runs none; give one of them")
            target = args.out
            if target is None and args.config and Path(args.config).is_dir():
                target = args.config
            print(f"wrote {report_only(target)}")
            return 0
        if getattr(args, "list", False):
            for name, path in shipped_configs().items():
                print(f"{name:<34} {config_summary(path)}")
            return 0
        if not args.config:
            raise CampaignError("give a campaign config: bftune campaign CONFIG --out DIR (CONFIG: a TOML file or a "
                                "shipped config's name, `bftune campaign --list`)")
        if args.out is None:
            raise CampaignError("give the output directory: --out DIR")
        shard = Shard.parse(args.shard) if args.shard is not None else None
        config = find_config(args.config)
        if config is None:
            raise CampaignError(f"{args.config}: no such file, nor a shipped config (shipped: "
                                f"{', '.join(shipped_configs())})")
        campaign = load_config(config, data_option(args.data))
        outcome = run_campaign(campaign, args.out, workers=args.workers, dask=args.dask,
                               progress=not args.no_progress,
                               specs=shard.select(campaign.specs) if shard else None,
                               scope=shard.describe() if shard else "")
    except CampaignError as exc:
        print_error(exc)
        return 2
    part = f" ({shard.describe()} of {len(campaign.specs)})" if shard else ""
    print(f"campaign {campaign.name}: {outcome.done} runs done, {outcome.reused} reused, "
          f"{len(outcome.failures)} failed, of {outcome.total}{part}, in {outcome.wall_s:.1f} s on {outcome.executor}")
    print(f"tables and report in {outcome.out_dir} (report.md)")
    if outcome.failures:
        print(format_failures(outcome.failures), file=sys.stderr)
    return outcome.exit_code
