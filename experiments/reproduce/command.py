"""What ``bftune reproduce`` does (the parser is in ``cli.py``; the package docstring is the guide)."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bftune.experiments.campaign.command import EXIT_SIGTERM, Terminated, sigterm_interrupts
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.runner import format_failures, run_campaign
from bftune.experiments.campaign.shards import Shard
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.reproduce.registry import STUDIES
from bftune.experiments.reproduce.study import CampaignPlan, Execution, Study
from bftune.files import atomic_write_text


def load_study(number: str) -> Study:
    module, title = STUDIES[number]
    if module is None:
        raise CampaignError(f"study {number} ({title}) has no reproduction yet: its issue adds "
                            f"experiments/reproduce/study{number}.py and registers it in registry.py")
    return importlib.import_module(module if "." in module else f"bftune.experiments.reproduce.{module}").STUDY


def selected(study: Study, scale: str, only: str | None) -> list[CampaignPlan]:
    """The campaigns of the plan named in ``only`` (comma-separated; None: all), in the plan's order."""
    plans = study.plan(scale)
    if only is None:
        return plans
    names = [n.strip() for n in only.split(",") if n.strip()]
    known = [p.name for p in plans]
    unknown = [n for n in names if n not in known]
    if not names or unknown:
        raise CampaignError(f"--only: {'no campaign named' if not names else 'unknown ' + ', '.join(unknown)}; "
                            f"study {study.number} at scale {scale} has {', '.join(known)}")
    return [p for p in plans if p.name in names]


def run_study(study: Study, scale: str, out: Path, *, workers: int | None = None, dask=None,
              progress: bool = True, only: str | None = None,
              shard: Shard | None = None) -> tuple[list[dict], list[str]]:
    """The campaigns of ``study`` at ``scale`` (``only``: those named) into ``out/campaigns`` (stored runs reused),
    then its extra steps (not with ``only`` or ``shard``: each campaign's part ``shard`` is all that runs).

    Returns the failed runs and the notes of the extra steps.
    """
    plans = selected(study, scale, only)
    configs = out / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    failures: list[dict] = []
    for plan in plans:
        path = atomic_write_text(configs / f"{plan.name}.toml", plan.config)
        campaign = load_config(path)
        outcome = run_campaign(campaign, out / "campaigns" / plan.name, workers=workers, dask=dask,
                               progress=progress, specs=shard.select(campaign.specs) if shard else None,
                               scope=shard.describe() if shard else "")
        failures += outcome.failures
    skipped = [f"ran only {', '.join(p.name for p in plans)} (--only)"] if only is not None else []
    if shard is not None:
        skipped.append(f"ran {shard.describe()} of each campaign (--shard: once every part's runs/*.json are "
                       "copied into one directory, the same command without --shard writes the whole report)")
    if skipped:
        return failures, [f"study {study.number}: {'; '.join(skipped)}; extra steps skipped"]
    notes = study.extra(scale, out, Execution(workers, dask, progress)) if study.extra is not None else []
    return failures, notes


def write_report(study: Study, scale: str, out: Path, command: str) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"# Reproduction of study {study.number}: {study.title}", "",
            f"Scale `{scale}` ({study.durations.get(scale, 'duration not measured')}); report written {stamp} by",
            "", f"    {command}", "",
            f"Source: `../shared/seeds/{study.seed_file}`. Campaign configs: `configs/`; their runs, tables and "
            "reports: `campaigns/<name>/`.", "", ""]
    return atomic_write_text(out / "report.md", "\n".join(head) + study.report(out, scale).rstrip() + "\n")


def main(args: argparse.Namespace) -> int:
    command = "uv run bftune reproduce " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else \
        f"uv run bftune reproduce {args.study} --scale {args.scale} --out {args.out}"
    out = Path(args.out)
    t0 = time.monotonic()
    try:
        with sigterm_interrupts():
            study = load_study(args.study)
            for option, value in (("--only", args.only), ("--shard", args.shard)):
                if value is not None and args.report_only:
                    raise CampaignError(f"{option}: runs campaigns, --report-only runs none; give one of them")
            shard = Shard.parse(args.shard) if args.shard is not None else None
            if not args.report_only:
                if out.exists() and not out.is_dir():
                    raise CampaignError(f"{out}: not a directory")
                failures, notes = run_study(study, args.scale, out, workers=args.workers, dask=args.dask,
                                            progress=not args.no_progress, only=args.only, shard=shard)
            else:
                failures, notes = [], []
            path = write_report(study, args.scale, out, command)
    except CampaignError as exc:
        print(f"bftune: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print("bftune: terminated (stored runs kept; the same command resumes)", file=sys.stderr)
        return EXIT_SIGTERM
    for note in notes:
        print(note)
    print(f"study {study.number} ({args.scale}): report in {path} ({time.monotonic() - t0:.0f} s)")
    if failures:
        print(format_failures(failures), file=sys.stderr)
        return 1
    return 0
