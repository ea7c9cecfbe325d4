"""The ``bftune tune`` sub-command's parser and entry; the work is in ``engine.py`` (imported when it runs).

The parser is built for every ``bftune`` command, so this module imports
nothing heavy.  Exit status: 0 a recommendation was made; 2 bad input (a
trace, an option, a budget too small to judge anything, a locked
directory), one line; 130/143 interrupted (every simulated week is kept:
the same command resumes).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from bftune.experiments.campaign.limits import default_workers
from bftune.workloads.cleaning import CLEANINGS, check_cleaning
from bftune.experiments.cli.common import Parents, dump_from_args
from bftune.support.streams import print_error

DEFAULT_BUDGET = "10m"
#: The validation period: the last quarter of the log (docs/guides/tune.md#validation).
DEFAULT_HOLDOUT = "25%"
DEFAULT_WEEKS = 250
DEFAULT_FINALISTS = 3


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> argparse.ArgumentParser:
    """Register ``tune``, with the workload options' parent parser (--trace, --procs, ...)."""
    from bftune.experiments.tune.candidates import PAIR_POLICIES  # light: the option table is loaded anyway

    p = subparsers.add_parser(
        "tune", parents=[parents.workload],
        help="tell an admin how to set EASY for their machine, from their own trace or Slurm accounting",
        description="Choose an EASY configuration for a machine from its own workload (an SWF trace or a Slurm "
                    "sacct --parsable2 dump): per-user weekly resampling of each half of the trace, candidates raced on the "
                    "training half (clearly worse ones dropped early), the best judged on the testing half against "
                    "EASY-FCFS-FCFS. Writes the recommendation in every form bftune accepts and a self-contained "
                    "report.html. Resumable: every simulated week is stored in --out.")
    g = p.add_argument_group("tuning")
    g.add_argument("--objective", default="avg_wait",
                   help="what to minimise: avg_wait (default), avg_bsld, mwbs or max_wait")
    g.add_argument("--max-wait-increase", metavar="X%", default=None,
                   help="only recommend configurations whose mean MaxWait ratio to EASY-FCFS on the training half "
                        "is at most 1 + X (10%% or 0.1; default: no limit, the threshold bounds waits)")
    g.add_argument("--budget", default=DEFAULT_BUDGET,
                   help=f"wall-clock time for the simulations (default {DEFAULT_BUDGET}; 30s, 2h...): how many "
                        "resampled weeks and candidates to run")
    g.add_argument("--candidates", default="pairs",
                   help="families of candidates, comma-separated: pairs (EASY-Pr-Pb with thresholds, default), "
                        "selectors, pv-easy, classifier, slurm (Slurm priority and backfill settings, "
                        "docs/guides/slurm.md), or all")
    g.add_argument("--slurm-conf", metavar="PATH",
                   help="the site's slurm.conf: its priority and backfill keys are the baseline every candidate is "
                        "judged against (instead of EASY-FCFS) and the slurm family's starting point; the outputs "
                        "then hold slurm.conf.diff (docs/guides/slurm.md)")
    g.add_argument("--policies", default=",".join(PAIR_POLICIES),
                   help="the orders of the pairs (default the seven classic orders: " + ",".join(PAIR_POLICIES) + ")")
    g.add_argument("--thresholds", default="20h", help="waiting-time thresholds of the pairs (default 20h; none, 40h...)")
    g.add_argument("--weeks", default=DEFAULT_WEEKS,
                   help=f"at most this many resampled weeks per half (default {DEFAULT_WEEKS})")
    g.add_argument("--holdout", metavar="SHARE", default=DEFAULT_HOLDOUT,
                   help="the last share of the log's submission span kept out of the search and used to check the "
                        "recommendation as it happened (default %(default)s; 0 turns it off)")
    g.add_argument("--later-weeks", metavar="N", type=int, default=None,
                   help="the later period the recommendation is judged for, in weeks (default: as long as the "
                        "held-out part): its interval decides whether a change is recommended")
    g.add_argument("--finalists", default=DEFAULT_FINALISTS, type=int,
                   help=f"candidates judged on the testing half (default {DEFAULT_FINALISTS})")
    g.add_argument("--tau", default=None, help="bounded-slowdown constant tau in seconds (default 10)")
    g.add_argument("--out", required=True, help="output directory (stored weeks, outputs; reused by a re-run)")
    g.add_argument("--dask", metavar="ADDRESS", help="run the simulations on this Dask scheduler")
    g.add_argument("--workers", type=int, metavar="N",
                   help=f"local worker processes (default {default_workers()}; 1 = inline)")
    g.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=cmd_tune)
    return p


def cmd_tune(args: argparse.Namespace) -> int:
    from bftune.experiments.campaign.specs import CampaignError
    from bftune.experiments.tune.budget import BudgetError
    from bftune.experiments.tune.engine import TuneError, run
    from bftune.experiments.tune.outputs import summary_text, write_all

    published: list[tuple[list[dict], dict, dict]] = []

    def publish(race) -> None:  # inside the run's lock: the outputs are the race's, as one set
        published.append(write_all(race))

    try:
        settings = settings_from_args(args)
        race = run(settings, publish=publish)
        rows, rec, record = published[0]
    except (TuneError, BudgetError, CampaignError) as exc:
        print_error(exc)
        return 2
    print(summary_text(race, rows, rec, record))
    return 0


def later_weeks(weeks: int | None) -> int | None:
    """``--later-weeks``: a positive number of weeks, or None (the held-out part's length)."""
    from bftune.experiments.tune.engine import TuneError

    if weeks is not None and weeks < 1:
        raise TuneError(f"--later-weeks {weeks}: give a number of weeks, at least 1")
    return weeks


def holdout_share(text: str) -> float:
    """``--holdout``: ``25%``, ``0.25`` or ``0`` (a share of the log's submission span below 1/2)."""
    from bftune.experiments.tune.engine import TuneError

    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise TuneError(f"--holdout: {text!r} is not a share (25%, 0.25, or 0 for none)") from None
    if not 0 <= value <= 0.5:
        raise TuneError(f"--holdout: {text!r} must be between 0 and 50 %: the search needs the larger part")
    return round(value, 6)


def parse_share(text: str | None) -> float | None:
    """``--max-wait-increase``: ``10%``, ``0.1`` or ``none``."""
    from bftune.experiments.tune.engine import TuneError

    if text is None or text.strip().lower() in ("none", "inf"):
        return None
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise TuneError(f"--max-wait-increase: {text!r} is not a share (10%, 0.1 or none)") from None
    if math.isnan(value):
        raise TuneError(f"--max-wait-increase: {text!r} is not a number; give a share (10%, 0.1) or none")
    if value < 0:
        raise TuneError(f"--max-wait-increase: {text!r} must be at least 0 %")
    if value >= 100:  # 1e309 is an infinity: "none" says no limit in words
        raise TuneError(f"--max-wait-increase: {text!r} must be below 10000 % (100); give none for no limit")
    return value


def site_from_args(args: argparse.Namespace) -> dict:
    """``--slurm-conf``: the site's setting and its file, as :class:`Settings` fields (empty without it)."""
    from bftune.experiments.cli.common import say
    from bftune.experiments.tune.engine import TuneError
    from bftune.schedulers.options import ConfigError
    from bftune.schedulers.slurmconf import read_slurm_conf

    if args.slurm_conf is None:
        return {}
    try:
        conf = read_slurm_conf(args.slurm_conf)
        conf.config()
    except ConfigError as exc:
        raise TuneError(str(exc)) from None
    for line in conf.notes():
        say(line)
    path = Path(args.slurm_conf).expanduser()
    return {"site": dict(conf.options), "site_path": str(path.resolve()),
            "site_text": path.read_text(encoding="utf-8", errors="replace"), "site_cpus": conf.node_cpus}


def settings_from_args(args: argparse.Namespace):
    """The checked settings of a tune run (every problem one line, before any work)."""
    from bftune.experiments.campaign.workloads import trace_label
    from bftune.experiments.tune import candidates as cand
    from bftune.experiments.tune.engine import Settings, TuneError
    from bftune.experiments.tune.weeks import OBJECTIVES, Source
    from bftune.schedulers.core.durations import parse_duration
    from bftune.experiments.runs.metrics import check_tau
    from bftune.workloads.archive import PREFIX as ARCHIVE_PREFIX, data_dir
    from bftune.workloads.read import is_dump
    from bftune.workloads.slurm import check_timezone, dump_name

    if args.objective not in OBJECTIVES:
        raise TuneError(f"--objective {args.objective!r}: not an objective; choose among "
                        + ", ".join(f"{k} ({v})" for k, v in OBJECTIVES.items()))
    budget = parse_duration(args.budget, "--budget", allow_infinite=False)
    if budget <= 0:
        raise TuneError("--budget must be positive (30s, 10m, 2h)")
    if args.finalists < 1:
        raise TuneError("--finalists must be at least 1")
    tau = check_tau(args.tau or "10", "--tau")
    if args.synthetic is not None:
        procs = 256 if args.procs is None else args.procs
        source = Source(f"synthetic:{args.synthetic}:{procs}:{args.seed}", holdout=holdout_share(args.holdout))
        name = f"synthetic-{args.synthetic}-{procs}"
    elif args.trace:
        if args.trace.startswith(ARCHIVE_PREFIX):  # archive:KTH-SP2, checked as every command checks it
            args.trace = data_dir().resolve(args.trace)
        path = Path(args.trace).expanduser()
        if not path.is_file():
            raise TuneError(f"{args.trace}: no such file")
        if path.suffix == ".json":
            raise TuneError(f"{args.trace}: tune reads SWF traces and Slurm dumps (a Batsim workload has no users "
                            "to resample by week)")
        dump = dump_from_args(args)
        options = dict(dump)
        slurm = is_dump(path, sacct_format=options.get("sacct_format"), sacct_delimiter=options.get("sacct_delimiter"))
        if dump and not slurm:
            raise TuneError(f"--{dump[0][0].replace('_', '-').replace('partitions', 'partition')}: only for Slurm "
                            f"accounting dumps ({args.trace} is not one)")
        if args.timezone is not None:
            if not slurm:
                raise TuneError(f"--timezone: only for Slurm accounting dumps ({args.trace} is not one)")
            check_timezone(args.timezone)
        source = Source(args.trace, str(path.resolve()), args.procs, args.walltime_from_runtime, args.lenient,
                        check_cleaning(args.cleaning or CLEANINGS[0]), args.timezone, dump, holdout_share(args.holdout))
        name = dump_name(path) if slurm else trace_label(path.name)
        if options.get("partitions"):
            name += f" (partition {', '.join(options['partitions'])})"
    else:
        raise TuneError("give a workload: --trace FILE (SWF or a Slurm sacct dump) or --synthetic N")
    site = site_from_args(args)
    return Settings(source=source, name=name, objective=args.objective, **site,
                    max_wait_increase=parse_share(args.max_wait_increase), budget_s=budget,
                    families=cand.parse_families(args.candidates), policies=cand.parse_policies(args.policies),
                    thresholds=cand.parse_thresholds(args.thresholds), max_weeks=args.weeks,
                    finalists=args.finalists, seed=args.seed, tau=tau, out=Path(args.out), workers=args.workers,
                    dask=args.dask, progress=not args.no_progress, later_weeks=later_weeks(args.later_weeks))
