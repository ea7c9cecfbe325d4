"""What every command of ``bftune`` shares: the one-line parser, the checked values, the option groups.

A command module (``simulate.py``, ``demo.py``, ...) registers its parser with ``add_parser(subparsers,
parents)`` and runs with the parsed arguments; this module holds what several of them use: the parser class
whose errors are one line (exit 2), the checks every non-scheduler value goes through before any work
(:data:`ARGUMENTS`), the workload and scheduler option groups (:class:`Parents`), and turning arguments into a
configuration, a tau and a trace.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Callable

from bftune.experiments.runs.metrics import check_tau
from bftune.experiments.runs.presets import ALIASES, PRESETS, get_preset
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import parse_duration
from bftune.schedulers.options import OPTIONS, Parser, applies, duration, integer
from bftune.schedulers.slurmconf import SlurmConf, read_slurm_conf
from bftune.support.files import output_path
from bftune.support.streams import silence_stdout
from bftune.workloads import limits
from bftune.workloads.archive import PREFIX as ARCHIVE_PREFIX, data_dir
from bftune.workloads.cleaning import CLEANING_NAMES, CLEANINGS
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.read import DumpReading, dump_reading, is_dump, read_workload


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


def workload_options() -> OneLineParser:
    p = OneLineParser(add_help=False)
    g = p.add_argument_group("workload")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--trace", help="SWF trace (.swf or .swf.gz), Batsim workload JSON, or Slurm accounting "
                                     "(sacct --allusers --parsable2 output, header included; told by its content)")
    src.add_argument("--synthetic", metavar="N", help="generate N jobs of the embedded synthetic model")
    g.add_argument("--procs", metavar="M", help="machine size m (default: the trace's MaxProcs; 256 for --synthetic)")
    # the option table's default (1): the API, -o, campaign files and this flag give the same run (python-api.md)
    g.add_argument("--seed", metavar="N", default=OPTIONS["seed"].default,
                   help="seed of everything random: the synthetic workload and the selectors (default "
                        f"{OPTIONS['seed'].default})")
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
    d = p.add_argument_group("Slurm accounting dumps (docs/semantics/workloads.md#slurm-accounting-dumps)")
    d.add_argument("--sacct-format", metavar="COLUMNS",
                   help="the columns of a dump made with --noheader, in order: the list given to sacct --format "
                        "(JobID,User,Submit,...; widths such as JobName%%30 allowed)")
    d.add_argument("--sacct-delimiter", metavar="CHARS",
                   help="the delimiter of a dump without a header (sacct --delimiter); default: detected from the "
                        "header, else |")
    d.add_argument("--partition", metavar="NAME[,NAME]",
                   help="keep the jobs of these partitions (every other record counted); give --procs, the "
                        "partition's size, else the largest allocation there is taken")
    d.add_argument("--cores-per-node", metavar="C",
                   help="whole-node allocation: a job takes NNodes x C processors (needs the NNodes column)")
    d.add_argument("--cluster", metavar="NAME", help="the cluster to read in a dump of several (sacct -M)")
    d.add_argument("--overrun-grace", metavar="DURATION",
                   help="how far past its limit a job may have run and still be read as ended at its limit "
                        "(TIMEOUT: Slurm kills a little late); default 300s, 0 keeps the overruns as they were")
    g.add_argument("--preset", choices=(*PRESETS, *ALIASES), default=None,
                   help="named defaults for --cleaning, the classifier options and --tau (explicit flags win): "
                        + "; ".join(f"{p.name}: {p.summary}" for p in PRESETS.values())
                        + "; " + "; ".join(f"{old}: former name of {new}" for old, new in ALIASES.items()))
    return p


def scheduler_options() -> OneLineParser:
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
            # An option that takes a user's own unit (MODULE:NAME) lists its built-in choices in the help but
            # leaves the checking to its parser, which knows both.
            choices = None if option.plugins else option.choices
            if option.plugins and option.choices:
                helptext += f" ({' | '.join(option.choices)})"
            g.add_argument(option.cli, dest=option.name, metavar=option.metavar, choices=choices,
                           default=None, help=helptext)
    g = groups["scheduler"]
    g.add_argument("--primary", dest="primary", metavar="POLICY", help="primary queue order Pr (same as --policy)")
    g.add_argument("--slurm-conf", metavar="PATH", help=SLURM_CONF_HELP)
    g.add_argument("--tau", default=None, help="bounded-slowdown constant tau in seconds (default 10, or the preset's)")
    return p


#: ``--slurm-conf``'s help, shared by the commands that take scheduler options and by tune.
SLURM_CONF_HELP = ("a site's slurm.conf: its priority and backfill keys are the configuration (--scheduler slurm; "
                   "other keys ignored and named on stderr; flags given beside it override its keys; "
                   "docs/guides/slurm.md)")


def slurm_conf_from_args(args: argparse.Namespace) -> SlurmConf | None:
    """``--slurm-conf``, read (its notes said on stderr), or None; ``--scheduler`` beside it is refused."""
    path = getattr(args, "slurm_conf", None)
    if path is None:
        return None
    if getattr(args, "scheduler", None) is not None:
        raise UsageError("--scheduler: --slurm-conf sets the scheduler (slurm); give one or the other")
    conf = read_slurm_conf(path)
    for line in conf.notes():
        say(line)
    return conf


def config_from_args(args: argparse.Namespace) -> SchedulerConfig:
    """The options given on the command line, validated by the option table (errors name the flag).

    A ``--preset`` adds its options where they were not given and mean
    something (its classifier options only with ``--classifier``).  ``--slurm-conf`` gives the site's keys
    first; a flag given beside it overrides its key (errors name the flag, or the file's line and key).
    """
    flags = {name: option.cli for name, option in OPTIONS.items() if option.cli}
    flags["primary"] = "--primary"
    given = {name: getattr(args, name) for name in flags if getattr(args, name, None) is not None}
    conf = slurm_conf_from_args(args)
    if conf is not None:
        names = {name: f"{conf.lines.get(name, conf.path)}: {OPTIONS[name].slurm_key or name}"
                 for name in conf.options if name not in given}
        flags.update(names)
        given = {**{k: v for k, v in conf.options.items() if k not in given}, **given}
    preset = getattr(args, "preset", None)
    if preset is not None:
        for name, value in get_preset(preset).options.items():
            if name not in given and applies(name, given):
                given[name] = value
    return SchedulerConfig.from_options(given, where=lambda name: flags.get(name, name), flag_names=True)


def apply_preset_defaults(args: argparse.Namespace) -> None:
    """--cleaning and --tau not given: the preset's (if any), else the default cleaning and 10 s."""
    preset = get_preset(args.preset) if getattr(args, "preset", None) else None
    if hasattr(args, "cleaning") and args.cleaning is None:
        args.cleaning = preset.cleaning if preset else CLEANINGS[0]
    if hasattr(args, "tau") and args.tau is None:
        args.tau = str(preset.tau) if preset else "10"


def tau_from_args(args: argparse.Namespace) -> float:
    return check_tau(args.tau, "--tau")


def load_trace(args: argparse.Namespace) -> Trace:
    """The workload named by --trace or --synthetic (cleaned, with its cleaning counts)."""
    if args.synthetic is not None:
        from bftune.workloads.synthetic import generate  # lazy: numpy (see cmd_simulate)

        return generate(args.synthetic, 256 if args.procs is None else args.procs, args.seed)
    if not args.trace:
        raise UsageError("give a workload: --trace FILE or --synthetic N")
    if args.trace.startswith(ARCHIVE_PREFIX):  # archive:KTH-SP2, checked against its pinned sha256
        args.trace = data_dir().resolve(args.trace)
    timezone = getattr(args, "timezone", None)
    dump = dict(dump_from_args(args))
    if timezone is not None and not is_dump(args.trace, **_reading(dump)):
        raise UsageError(f"--timezone: only for Slurm accounting dumps ({args.trace} is not one: an SWF trace or a "
                         "Batsim workload carries its own clock)")
    return read_workload(args.trace, procs=args.procs, lenient=args.lenient,
                         walltime_from_runtime=args.walltime_from_runtime, cleaning=args.cleaning,
                         timezone=timezone, inform=say, **dump)


def _reading(dump: dict) -> dict:
    """The options of a dump reading that tell whether a file is a dump (:func:`is_dump`'s keywords)."""
    return {key: dump[key] for key in ("sacct_format", "sacct_delimiter") if key in dump}


def args_name_a_dump(args: argparse.Namespace) -> bool:
    """Whether ``--trace`` (with the command line's dump options) is read as a Slurm accounting dump."""
    return bool(args.trace) and is_dump(args.trace, **_reading(dict(dump_from_args(args))))


def dump_from_args(args: argparse.Namespace) -> DumpReading:
    """The Slurm dump options of the command line, checked (one line each), as :func:`dump_reading` pairs."""
    cores = getattr(args, "cores_per_node", None)
    grace = getattr(args, "overrun_grace", None)
    if cores is not None:
        try:
            cores = limits.procs(int(cores) if str(cores).strip().isdigit() else cores, "--cores-per-node")
        except WorkloadError as exc:
            raise UsageError(str(exc)) from None
    if grace is not None:
        grace = int(parse_duration(grace, "--overrun-grace", allow_infinite=False))
    partition = getattr(args, "partition", None)
    if partition is not None and not [p for p in partition.split(",") if p.strip()]:
        raise UsageError("--partition: give one partition name or more, separated by commas")
    for flag in ("sacct_format", "sacct_delimiter", "cluster"):
        if getattr(args, flag, None) == "":
            raise UsageError(f"--{flag.replace('_', '-')}: empty")
    return dump_reading(sacct_format=getattr(args, "sacct_format", None),
                        sacct_delimiter=getattr(args, "sacct_delimiter", None), partitions=partition,
                        cores_per_node=cores, cluster=getattr(args, "cluster", None), overrun_grace=grace)


def say(line: str) -> None:
    """A note of a reader (one line, on standard error)."""
    print(line, file=sys.stderr)


def cleaning_counts(trace: Trace) -> str:
    """What reading the workload dropped or changed, by rule (``procs_gt_machine=3, ...``); empty if nothing."""
    return ", ".join(f"{k}={v}" for k, v in trace.cleaning.items() if v)


@dataclass(frozen=True)
class Parents:
    """The option groups commands share, as argparse parent parsers (built once per ``bftune`` parser)."""

    workload: argparse.ArgumentParser
    scheduler: argparse.ArgumentParser

    @classmethod
    def build(cls) -> Parents:
        return cls(workload_options(), scheduler_options())


# --- the two commands that run Batsim ---------------------------------------------------------------------------


def backend_command(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from bftune.experiments.cli import backends  # lazy: pyzmq + pandas, 0.9 s of start-up

        config = config_from_args(args)
        status = backends.check_before_run(name, args)  # --out and --batsim, before the trace is read
        if status is not None:
            return status
        trace = load_trace(args)
        return getattr(backends, f"cmd_{name}")(trace, config, args)

    run.__name__ = f"cmd_{name}"
    return run


def add_backend_parser(subparsers: argparse._SubParsersAction, parents: Parents, name: str, helptext: str) -> None:
    """``batsim`` or ``compare``: the same arguments; the work (``backends.py``) is imported when one runs."""
    p = subparsers.add_parser(name, parents=[parents.workload, parents.scheduler], help=helptext)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--batsim", help="path of the batsim executable (default: found on PATH)")
    p.add_argument("--port", help="localhost port for the scheduler, 1..65535 (default: a free one)")
    p.add_argument("--timeout", default=120.0,
                   help="time without any message before the run is declared stalled (default 120 s; 5m...)")
    p.set_defaults(func=backend_command(name))
