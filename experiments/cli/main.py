"""``bftune``: the single command-line entry point.

Every sub-command turns bad input into one clear line (``bftune: error: ...``
naming the file, line or option) and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Callable

from bftune import __version__

from bftune.support import compiled
from bftune.support import interrupts
from bftune.experiments.cli.accelerate import add_accelerate_parser
from bftune.experiments.cli.campaign import add_campaign_parser
from bftune.experiments.cli.learn_index import add_learn_index_parser
from bftune.support.files import (OutputError, atomic_write_many, check_output_dir, check_output_file, check_writable_dir,
                          clean_leftovers, output_path, result_dir)
from bftune.experiments.runs.presets import ALIASES, PRESETS, add_presets, get_preset
from bftune.experiments.studies import study_presets
from bftune.experiments.cli.reproduce import add_reproduce_parser
from bftune.experiments.cli.tune import add_tune_parser
from bftune.support.streams import STDOUT, NamedStream, one_line_warnings, silence_stdout, stdout_failure
from bftune.support.gcpause import paused_gc
from bftune.support.heap import fix_mmap_threshold
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.options import OPTIONS, Parser, applies, duration, integer, markdown_table
from bftune.schedulers.core.durations import DurationError, parse_duration
from bftune.schedulers.core.policies import REGISTRY, formula_of
from bftune.workloads import limits
from bftune.workloads.batsim_json import batsim_workload_text
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.read import read_workload
from bftune.workloads.slurm import is_slurm_dump
from bftune.workloads.swf import CLEANINGS
from bftune.workloads.cleaning import CLEANING_NAMES
from bftune.workloads.swf_write import swf_text, write_swf


class UsageError(ValueError):
    """A command-line mistake the parser cannot see (conflicting options...)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors as one line (``bftune simulate: error: ...; see --help``) and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def _print_message(self, message: str, file=None) -> None:  # type: ignore[override]
        """argparse's, without swallowing a failed write to standard output (``--help >/dev/full``): that
        error goes to :func:`main`, which says so in one line (exit 2); a closed pipe (``| head``) is none."""
        if not message:
            return
        file = file or sys.stderr
        if file is not sys.stdout:
            super()._print_message(message, file)
            return
        try:
            file.write(message)
            file.flush()
        except BrokenPipeError:
            silence_stdout()


# --- values of the flags that are not scheduler options ---------------------------------------


def _count(check: Callable[[int, str], int]) -> Parser:
    """A size flag: an integer, then the workload limit ``check`` (``bftune.workloads.limits``)."""
    as_integer = integer()

    def parse(value: object, where: str) -> int:
        return check(as_integer(value, where), where)

    return parse


def _output(value: object, where: str) -> object:
    """``--out`` and ``--dest`` of every command: one check (``files.output_path``: not empty, no NUL)."""
    output_path(value, where)  # type: ignore[arg-type]  # a string from argparse
    return value


def _dask(value: object, where: str) -> str:
    """``--dask`` of every command that takes it: the campaigns' one parser of Dask addresses."""
    from bftune.experiments.campaign.executors import dask_address  # the executors: only with --dask
    from bftune.experiments.campaign.specs import CampaignError

    try:
        return dask_address(str(value), where)
    except CampaignError as exc:
        raise UsageError(str(exc)) from None


#: (argument name, flag, parser) of every command-line value that is not a scheduler option; each
#: is checked when the command starts, before any work, with the parsers the option table uses.
ARGUMENTS: tuple[tuple[str, str, Parser], ...] = (
    ("out", "--out", _output),
    ("dest", "--dest", _output),
    ("dask", "--dask", _dask),
    ("synthetic", "--synthetic", _count(limits.jobs)),
    ("jobs", "--jobs", _count(limits.jobs)),
    ("procs", "--procs", _count(limits.procs)),
    ("weeks", "--weeks", _count(limits.weeks)),
    ("seed", "--seed", OPTIONS["seed"].parse),
    ("port", "--port", integer(1, 65535)),
    ("timeout", "--timeout", duration(infinite=False, positive=True)),
)


def check_arguments(args: argparse.Namespace) -> None:
    """Every value of :data:`ARGUMENTS` given (or defaulted) through its parser, in place."""
    for name, flag, parse in ARGUMENTS:
        value = getattr(args, name, None)
        if value is not None:
            setattr(args, name, parse(value, flag))


# --- shared option groups ------------------------------------------------------


def _workload_options() -> OneLineParser:
    p = OneLineParser(add_help=False)
    g = p.add_argument_group("workload")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--trace", help="SWF trace (.swf or .swf.gz), Batsim workload JSON, or Slurm accounting "
                                     "(sacct --allusers --parsable2 output, header included; told by its content)")
    src.add_argument("--synthetic", metavar="N", help="generate N jobs of the embedded synthetic model")
    g.add_argument("--procs", metavar="M", help="machine size m (default: the trace's MaxProcs; 256 for --synthetic)")
    g.add_argument("--seed", metavar="N", default=1,
                   help="seed of everything random: the synthetic workload and the selectors (default 1)")
    g.add_argument("--lenient", action="store_true", help="skip (and count) malformed SWF lines instead of failing")
    g.add_argument("--walltime-from-runtime", action="store_true",
                   help="for traces without requested times: use the runtime as walltime (counted in cleaning)")
    g.add_argument("--cleaning", choices=CLEANING_NAMES, default=None,
                   help="which SWF records become jobs: drop-overruns (default: jobs that ran within their request, "
                        "docs/semantics/workloads.md#cleaning; spec is its former name), keep-overruns (every record "
                        "that ran; overruns end at their walltime), batsim-converter (Batsim's converter: "
                        "allocated procs, walltime max(request, 2 x runtime)) or ran (every job that ran, as "
                        "recorded) or ran-overruns-finish (the same, a job that outruns its request running to "
                        "its end); see bftune.workloads.swf")
    g.add_argument("--timezone", metavar="ZONE",
                   help="the zone a Slurm dump's local times are in (the cluster's, e.g. Europe/Stockholm: "
                        "daylight-saving changes read right); default UTC")
    g.add_argument("--preset", choices=(*PRESETS, *ALIASES), default=None,
                   help="named defaults for --cleaning, the classifier options and --tau (explicit flags win): "
                        + "; ".join(f"{p.name}: {p.summary}" for p in PRESETS.values())
                        + "; " + "; ".join(f"{old}: former name of {new}" for old, new in ALIASES.items()))
    return p


def _scheduler_options() -> OneLineParser:
    """Every scheduler option of the option table that has a flag, grouped by section.

    Defaults stay None here, so that an option is passed on only when given:
    the table supplies defaults, and an option given while its requirement
    is unmet (``--epsilon`` without ``--selector``) is an error, not ignored.
    """
    p = OneLineParser(add_help=False)
    groups: dict[str, argparse._ArgumentGroup] = {}
    for option in OPTIONS.values():
        if option.cli is None or option.name == "seed":  # --seed is the workload group's: it seeds both
            continue
        g = groups.get(option.section) or groups.setdefault(option.section, p.add_argument_group(option.section))
        helptext = f"{option.help} (default {option.doc_default()})"
        if isinstance(option.default, bool):
            g.add_argument(option.cli, dest=option.name, action="store_const", const=option.cli_value, default=None,
                           help=option.help)
        else:
            g.add_argument(option.cli, dest=option.name, metavar=option.metavar, choices=option.choices,
                           default=None, help=helptext)
    g = groups["scheduler"]
    g.add_argument("--primary", dest="primary", metavar="POLICY", help="primary queue order Pr (same as --policy)")
    g.add_argument("--tau", default=None, help="bounded-slowdown constant tau in seconds (default 10, or the preset's)")
    return p


def config_from_args(args: argparse.Namespace) -> SchedulerConfig:
    """The options given on the command line, validated by the option table (errors name the flag).

    A ``--preset`` adds its options where they were not given and mean
    something (its classifier options only with ``--classifier``).
    """
    flags = {name: option.cli for name, option in OPTIONS.items() if option.cli}
    flags["primary"] = "--primary"
    given = {name: getattr(args, name) for name in flags if getattr(args, name, None) is not None}
    preset = getattr(args, "preset", None)
    if preset is not None:
        for name, value in get_preset(preset).options.items():
            if name not in given and applies(name, given):
                given[name] = value
    return SchedulerConfig.from_options(given, where=lambda name: flags.get(name, name))


def apply_preset_defaults(args: argparse.Namespace) -> None:
    """--cleaning and --tau not given: the preset's (if any), else the default cleaning and 10 s."""
    preset = get_preset(args.preset) if getattr(args, "preset", None) else None
    if hasattr(args, "cleaning") and args.cleaning is None:
        args.cleaning = preset.cleaning if preset else CLEANINGS[0]
    if hasattr(args, "tau") and args.tau is None:
        args.tau = str(preset.tau) if preset else "10"


def tau_from_args(args: argparse.Namespace) -> float:
    tau = parse_duration(args.tau, "--tau", allow_infinite=False)
    if tau <= 0:
        raise UsageError("--tau must be positive")
    return tau


def load_trace(args: argparse.Namespace) -> Trace:
    """The workload named by --trace or --synthetic (cleaned, with its cleaning counts)."""
    if args.synthetic is not None:
        from bftune.workloads.synthetic import generate  # lazy: numpy (see cmd_simulate)

        return generate(args.synthetic, 256 if args.procs is None else args.procs, args.seed)
    if not args.trace:
        raise UsageError("give a workload: --trace FILE or --synthetic N")
    timezone = getattr(args, "timezone", None)
    if timezone is not None and not is_slurm_dump(args.trace):
        raise UsageError(f"--timezone: only for Slurm accounting dumps ({args.trace} is not one: an SWF trace or a "
                         "Batsim workload carries its own clock)")
    return read_workload(args.trace, procs=args.procs, lenient=args.lenient,
                         walltime_from_runtime=args.walltime_from_runtime, cleaning=args.cleaning,
                         timezone=timezone, inform=_say)


def _say(line: str) -> None:
    """A note of a reader (one line, on standard error)."""
    print(line, file=sys.stderr)


# --- commands -------------------------------------------------------------------


def cmd_policies(args: argparse.Namespace) -> int:
    width = max(len(name) for name in REGISTRY)
    print("Policies (sort key, lowest first; ties: submission time, then job id; wait = now - r):")
    for policy in REGISTRY.values():
        dyn = "  [uses wait: re-evaluated every pass]" if policy.dynamic else ""
        print(f"  {policy.name:<{width}}  {formula_of(policy)}{dyn}")
    print("\nCompose them: --primary P --backfill Q (EASY-P-Q), --threshold 40h (jobs waiting longer go first, "
          "by r), --no-backfilling.")
    return 0


def cmd_options(args: argparse.Namespace) -> int:
    """The option table: the same names in -o JSON and campaign TOML, flags on the command line."""
    if args.markdown:
        print(markdown_table())
        return 0
    width = max(len(name) for name in OPTIONS)
    print("Scheduler options (pybatsim -o JSON and campaign TOML names; command-line flags):")
    for option in OPTIONS.values():
        flag = option.cli or "(no flag)"
        needs = f"; needs {option.needs()}" if option.requires else ""
        print(f"  {option.name:<{width}}  {flag:<16} default {option.doc_default():<10} {option.help}{needs}")
    return 0


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


def cmd_convert(args: argparse.Namespace) -> int:
    from bftune.platforms.generator import platform_xml  # lazy: 87 ms of XML modules, convert only

    out = check_writable_dir(args.out, "--out")
    trace = load_trace(args)
    # Both contents first, then both files: a workload is never left without its platform.
    wl, pf = out / f"{trace.name}.json", out / f"platform_{trace.max_procs}.xml"
    contents = {wl: batsim_workload_text(trace).encode(), pf: platform_xml(trace.max_procs).encode()}
    out.mkdir(parents=True, exist_ok=True)
    for path in contents:
        clean_leftovers(out, path.name)
    if args.trace and is_slurm_dump(args.trace):  # the jobs as an archive SWF file too, header fields included
        contents[out / f"{trace.name}.swf"] = swf_text(trace).encode()
    atomic_write_many(contents)
    print(f"{len(trace.jobs)} jobs, m = {trace.max_procs}")
    if cleaning_counts(trace):
        print(f"cleaning: {cleaning_counts(trace)}")
    print("\n".join(f"wrote {path}" for path in contents))
    return 0


def cleaning_counts(trace: Trace) -> str:
    """What reading the workload dropped or changed, by rule (``procs_gt_machine=3, ...``); empty if nothing."""
    return ", ".join(f"{k}={v}" for k, v in trace.cleaning.items() if v)


def cmd_resample(args: argparse.Namespace) -> int:
    from bftune.workloads.resample import resample, split_halves  # lazy: numpy (see cmd_simulate)

    out = check_output_file(args.out, "--out")
    trace = load_trace(args)
    if args.split:
        train, test = split_halves(trace)
        trace = train if args.split == "train" else test
    new = resample(trace, args.weeks, args.seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out.parent, out.name)
    counts = cleaning_counts(trace)  # the jobs resampled are those the cleaning kept: say what it dropped
    note = f"{trace.name} was cleaned ({args.cleaning}) before resampling: {counts or 'nothing dropped'}"
    write_swf(new, out, notes=[note] if args.trace else [])
    print(f"wrote {out}: {len(new.jobs)} jobs in {args.weeks} resampled weeks"
          f"{f' of the {args.split} half' if args.split else ''} (seed {args.seed})")
    if counts:
        print(f"cleaning: {counts}")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from bftune.workloads.download import download  # lazy: 84 ms of urllib/ssl, download only

    check_writable_dir(args.dest, "--dest")
    path = download(args.name, args.dest, base_url=args.base_url)
    print(f"{path}")
    return 0


def _batsim_command(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from bftune.experiments.cli import batsim as batsim_cli  # lazy: pyzmq + pandas, 0.9 s of start-up

        config = config_from_args(args)
        status = batsim_cli.check_before_run(name, args)  # --out and --batsim, before the trace is read
        if status is not None:
            return status
        trace = load_trace(args)
        return getattr(batsim_cli, f"cmd_{name}")(trace, config, args)

    run.__name__ = f"cmd_{name}"
    return run


# --- parser -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    add_presets(study_presets())  # the product knows no study: the command line hands their presets in
    parser = OneLineParser(
        prog="bftune",
        description="Tune EASY backfilling: simulate locally, or run the same scheduler inside Batsim.",
    )
    core = "compiled core" if compiled.active() is not None else "interpreted core (bftune accelerate compiles it)"
    parser.add_argument("--version", action="version", version=f"bftune {__version__}, {core}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wl, sc = _workload_options(), _scheduler_options()

    p = sub.add_parser("demo", help="simulate EASY variants on the embedded synthetic workload")
    p.add_argument("--jobs", default=3000, help="number of synthetic jobs (default 3000)")
    p.add_argument("--procs", default=128, help="machine size (default 128)")
    p.add_argument("--seed", default=1)
    p.add_argument("--out", help="also write each variant's results under this directory")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("simulate", parents=[wl, sc], help="replay a workload in the local simulator")
    p.add_argument("--out", help="directory for out_jobs.csv and summary.json")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("convert", parents=[wl], help="write a Batsim workload JSON and a matching platform")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("resample", parents=[wl], help="per-user week resampling of a trace (docs/semantics/workloads.md#resampling)")
    p.add_argument("--weeks", required=True, help=f"length of the new trace in weeks (at most {limits.MAX_WEEKS:,})")
    p.add_argument("--split", choices=["train", "test"], help="resample only this half (split at the temporal midpoint)")
    p.add_argument("--out", required=True, help="output SWF file")
    p.set_defaults(func=cmd_resample)

    p = sub.add_parser("download", help="download a named Parallel Workloads Archive trace (checksum-verified)")
    p.add_argument("name", help="trace name, e.g. KTH-SP2")
    p.add_argument("--dest", default="traces", help="directory to store it in (default ./traces)")
    p.add_argument("--base-url", help="mirror of the archive (default: the archive itself)")
    p.set_defaults(func=cmd_download)

    p = sub.add_parser("policies", help="list the queue policies and their formulas")
    p.set_defaults(func=cmd_policies)

    p = sub.add_parser("options", help="list every scheduler option (command line, pybatsim -o, campaign TOML)")
    p.add_argument("--markdown", action="store_true", help="as the markdown table of the docs' option reference")
    p.set_defaults(func=cmd_options)

    for name, helptext in (("batsim", "run the scheduler inside real Batsim (starts batsim and our scheduler)"),
                           ("compare", "run both backends and compare their decisions job by job")):
        p = sub.add_parser(name, parents=[wl, sc], help=helptext)
        p.add_argument("--out", required=True, help="output directory")
        p.add_argument("--batsim", help="path of the batsim executable (default: found on PATH)")
        p.add_argument("--port", help="localhost port for the scheduler, 1..65535 (default: a free one)")
        p.add_argument("--timeout", default=120.0,
                       help="time without any message before the run is declared stalled (default 120 s; 5m...)")
        p.set_defaults(func=_batsim_command(name))
    add_campaign_parser(sub)
    add_learn_index_parser(sub)
    add_reproduce_parser(sub)
    add_tune_parser(sub, wl)
    add_accelerate_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (one line, see OneLineParser)
        return exc.code if isinstance(exc.code, int) else 0
    except OSError as exc:  # --help or --version into a full standard output
        silence_stdout()
        print(f"bftune: error: {STDOUT}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    stdout = sys.stdout
    sys.stdout = NamedStream(stdout, STDOUT)  # type: ignore[assignment]
    try:
        with interrupts.stopping_like_ctrl_c(), one_line_warnings():  # SIGTERM and SIGHUP clean up as Ctrl-C does
            check_arguments(args)
            apply_preset_defaults(args)
            return int(args.func(args) or 0)
    except (WorkloadError, ConfigError, DurationError, UsageError, OutputError) as exc:
        print(f"bftune: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        what = f"stopped by {exc}" if isinstance(exc, interrupts.Terminated) else "interrupted"
        print(f"bftune: {what}", file=sys.stderr)
        return interrupts.exit_status(exc)
    except BrokenPipeError:  # output piped into `head` and the like
        silence_stdout()
        return 0
    except OSError as exc:  # a full disk, an I/O error, a file that vanished: one line naming it
        if exc.filename == STDOUT:
            silence_stdout()
        reason = exc.strerror or str(exc)
        print(f"bftune: error: {exc.filename}: {reason}" if exc.filename else f"bftune: error: {reason}",
              file=sys.stderr)
        return 2
    finally:
        sys.stdout = stdout


#: Commands that start no thread or process of their own: they may skip interpreter teardown.
_SELF_CONTAINED = {"demo", "simulate", "convert", "resample", "download", "policies", "options"}


def entry() -> None:
    """The ``bftune`` console script: ``main``, then a quick exit when that is safe.

    Tearing down a simulation of a 300,000-job trace (millions of small
    objects) takes the interpreter about a second after the work is done.
    Self-contained commands have written their files atomically (fsync'ed)
    and we flush the standard streams, so nothing is lost by ending the
    process at once with ``os._exit``; commands that run Batsim, worker
    processes or Dask exit normally so their clean-up runs.
    """
    argv = sys.argv[1:]
    fix_mmap_threshold()  # freed parsing buffers go back to the system (see support/heap.py)
    code = main(argv)
    failure = stdout_failure()  # `bftune policies >/dev/full`: say so, rather than exit 0 or a traceback
    if failure is not None and not isinstance(failure, BrokenPipeError) and code == 0:
        print(f"bftune: error: standard output: {failure.strerror or failure}", file=sys.stderr)
        code = 2
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in _SELF_CONTAINED:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
