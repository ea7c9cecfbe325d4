"""What ``bftune reproduce`` does (the parser is in ``cli.py``; the package docstring is the guide)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from bftune.experiments.campaign.command import data_option
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.runner import format_failures, run_campaign
from bftune.experiments.campaign.shards import Shard
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import DirectoryLock
from bftune.experiments.reproduce.study import CampaignPlan, Execution, Study
from bftune.experiments.studies import STUDIES, Entry
from bftune.support import checkout
from bftune.support.files import atomic_write_text
from bftune.workloads.archive import Archive, data_dir
from bftune.workloads.errors import WorkloadError
from bftune.support.streams import print_error


def load_study(number: str) -> Study:
    """The ``STUDY`` of registered study ``number`` (its modules imported now)."""
    entry = STUDIES.get(number)
    if entry is None:
        raise CampaignError(f"unknown study {number!r}; studies: {', '.join(STUDIES)}")
    if not (entry.path / "__init__.py").is_file() and entry.module is None:
        raise CampaignError(f"study {number} ({entry.title}) has no folder {entry.path} with an __init__.py "
                            "defining STUDY (experiments/studies/__init__.py says what a study folder holds)")
    return _import(number, entry).STUDY


def _import(number: str, entry: Entry):
    if entry.package is not None:
        return importlib.import_module(entry.package)
    # A folder outside the package: imported from its path, as a package, so its modules import one another.
    name = f"bftune_study_{number}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, entry.path / "__init__.py",
                                                      submodule_search_locations=[str(entry.path)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def archive_of(data: str | None) -> Archive:
    """The data directory of ``--data`` (or its setting: ``BFTUNE_DATA``, the default)."""
    return data_option(data) or _setting()


def _setting() -> Archive:
    try:
        return data_dir()
    except WorkloadError as exc:
        raise CampaignError(str(exc)) from None


def require_traces(study: Study, scale: str, archive: Archive) -> None:
    """The archive traces the study's extra steps and report read, present (or downloaded) now: one line if not."""
    for name in study.traces(scale):
        try:
            archive.require(name)
        except WorkloadError as exc:
            raise CampaignError(f"study {study.number}: {exc}") from None


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


def run_study(study: Study, scale: str, out: Path, archive: Archive, *, workers: int | None = None, dask=None,
              progress: bool = True, only: str | None = None,
              shard: Shard | None = None) -> tuple[list[dict], list[str]]:
    """The campaigns of ``study`` at ``scale`` (``only``: those named) into ``out/campaigns`` (stored runs reused),
    then its extra steps (not with ``only`` or ``shard``: each campaign's part ``shard`` is all that runs).

    Every config is read, and every archive trace made present, before the first run.
    Returns the failed runs and the notes of the extra steps.
    """
    plans = selected(study, scale, only)
    require_traces(study, scale, archive)  # the report reads them too, after --only and --shard
    configs = out / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    campaigns = [(plan, load_config(atomic_write_text(configs / f"{plan.name}.toml", plan.config), archive))
                 for plan in plans]
    failures: list[dict] = []
    for plan, campaign in campaigns:
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
    notes = study.extra(scale, out, Execution(archive, workers, dask, progress)) if study.extra is not None else []
    return failures, notes


def write_report(study: Study, scale: str, out: Path, command: str, archive: Archive) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"# Reproduction of study {study.number}: {study.title}", "",
            f"Scale `{scale}` ({study.durations.get(scale, 'duration not measured')}); report written {stamp} by",
            "", f"    {command}", "",
            f"Source: {source(study)}. Campaign configs: `configs/`; their runs, tables and "
            "reports: `campaigns/<name>/`.", "", ""]
    return atomic_write_text(out / "report.md", "\n".join(head) + study.report(out, scale, archive).rstrip() + "\n")


def source(study: Study) -> str:
    """What the report cites as the study: the project's copy of its text in a checkout, which a wheel's user
    does not have (``../shared`` sits beside the repository); the study's title otherwise."""
    if checkout.in_checkout():
        return f"`../shared/seeds/{study.seed_file}`"
    return f"the study \"{study.title}\" (cited in full in bftune's CITATION.cff, in its source)"


def command_line(args: argparse.Namespace, argv: list[str]) -> str:
    """The command the report says made it, as this user typed it (``uv run`` in a checkout only)."""
    given = " ".join(argv[2:]) if len(argv) > 2 else f"{args.study} --scale {args.scale} --out {args.out}"
    return checkout.command(f"reproduce {given}")


@contextlib.contextmanager
def reproduction_dir(out: Path, report_only: bool) -> Iterator[None]:
    """The reproduction's directory, held by this command (``flock``, as a campaign's: ``DirectoryLock``).

    A second ``reproduce`` or a ``--report-only`` on a directory that a
    running ``reproduce`` holds is refused in one line, not given a report
    of dashes; ``--report-only`` also wants a directory a reproduction
    wrote (its ``campaigns/``), and says so of a missing or unrelated one.
    """
    if report_only:
        if not out.is_dir():
            raise CampaignError(f"{out}: no such reproduction directory; --report-only rebuilds the report of "
                                "an earlier `bftune reproduce STUDY --out DIR`")
        if not any((out / "campaigns").glob("*/campaign.json")):
            raise CampaignError(f"{out}: not a reproduction directory (no campaigns/*/campaign.json); give the "
                                "--out of an earlier `bftune reproduce`")
    else:
        if out.exists() and not out.is_dir():
            raise CampaignError(f"{out}: not a directory")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CampaignError(f"{out}: cannot create it ({exc.strerror or exc})") from None
    with DirectoryLock(out):
        yield


def main(args: argparse.Namespace) -> int:
    typed = command_line(args, sys.argv)
    out = Path(args.out)
    t0 = time.monotonic()
    # SIGTERM and SIGHUP stop as Ctrl-C does (around every command): stored runs are kept, the same command resumes.
    try:
        with contextlib.ExitStack() as held:
            study = load_study(args.study)
            for option, value in (("--only", args.only), ("--shard", args.shard)):
                if value is not None and args.report_only:
                    raise CampaignError(f"{option}: runs campaigns, --report-only runs none; give one of them")
            shard = Shard.parse(args.shard) if args.shard is not None else None
            archive = archive_of(args.data)  # checked before the directory is made
            held.enter_context(reproduction_dir(out, args.report_only))  # locked, as a campaign's directory
            if not args.report_only:
                failures, notes = run_study(study, args.scale, out, archive, workers=args.workers, dask=args.dask,
                                            progress=not args.no_progress, only=args.only, shard=shard)
            else:  # the report finds the traces it reads itself (Archive.require)
                failures, notes = [], []
            path = write_report(study, args.scale, out, typed, archive)
    except CampaignError as exc:
        print_error(exc)
        return 2
    for note in notes:
        print(note)
    print(f"study {study.number} ({args.scale}): report in {path} ({time.monotonic() - t0:.0f} s)")
    if failures:
        print(format_failures(failures), file=sys.stderr)
        return 1
    return 0
