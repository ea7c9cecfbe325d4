"""``bftune``: the single command-line entry point.

Every command is a module of this folder, named after it, with the same small interface:
``add_parser(subparsers, parents)`` registers its parser (its ``func`` default is what runs); what
several commands share (the one-line parser, the checks of every value, the workload and scheduler
option groups) is in ``common.py``.  This module assembles them in the order ``bftune --help`` lists
them, sets up the process and turns every expected failure into one line.

Every sub-command turns bad input into one clear line (``bftune: error: ...`` naming the file, line or
option) and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from bftune import __version__
from bftune.experiments.cli import (accelerate, batsim, campaign, compare, convert, demo, download, learn_index,
                                    options, plot, policies, replay, reproduce, resample, simulate, tune)
from bftune.experiments.cli.common import (OneLineParser, Parents, UsageError, apply_preset_defaults,
                                           check_arguments, config_from_args)
from bftune.experiments.runs.presets import add_presets
from bftune.experiments.studies import study_presets
from bftune.schedulers.config import ConfigError
from bftune.schedulers.core.durations import DurationError
from bftune.support import compiled, interrupts
from bftune.support.files import OutputError
from bftune.support.heap import fix_mmap_threshold
from bftune.support.streams import STDOUT, NamedStream, one_line_warnings, print_error, silence_stdout, stdout_failure
from bftune.workloads.errors import WorkloadError

__all__ = ["build_parser", "check_arguments", "config_from_args", "entry", "main"]

#: The command modules, in the order of ``bftune --help``.
COMMANDS = (demo, simulate, replay, convert, resample, download, policies, options, batsim, compare, plot, campaign,
            learn_index, reproduce, tune, accelerate)


def build_parser() -> argparse.ArgumentParser:
    add_presets(study_presets())  # the product knows no study: the command line hands their presets in
    parser = OneLineParser(
        prog="bftune",
        description="Tune EASY backfilling: simulate locally, or run the same scheduler inside Batsim.",
    )
    core = "compiled core" if compiled.active() is not None else "interpreted core (bftune accelerate compiles it)"
    parser.add_argument("--version", action="version", version=f"bftune {__version__}, {core}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parents = Parents.build()
    for command in COMMANDS:
        command.add_parser(sub, parents)
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
        print_error(exc)
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
        print_error(f"{exc.filename}: {reason}" if exc.filename else reason)
        return 2
    finally:
        sys.stdout = stdout


#: Commands that start no thread or process of their own: they may skip interpreter teardown.
_SELF_CONTAINED = {"demo", "simulate", "replay", "plot", "convert", "resample", "download", "policies", "options"}


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
