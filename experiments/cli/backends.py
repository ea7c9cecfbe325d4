"""The work of ``bftune batsim`` and ``bftune compare`` (their parsers: ``batsim.py``, ``compare.py``).

Both take an already loaded ``Trace`` and a validated ``SchedulerConfig``
plus the parsed arguments (``out``, ``batsim``, ``port``, ``timeout``,
``tau``), print a short report and return the exit status; launcher errors
(Batsim missing, wrong version, Batsim or the scheduler failing, a stall)
become one ``bftune: error: ...`` message and status 1 (2 when Batsim is not
found: a bad ``--batsim`` path), never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bftune.experiments.runs.batsim import (
    BATSIM_RESULT,
    COMPARE_RESULT,
    BatsimError,
    BatsimNotFoundError,
    BatsimPortError,
    BatsimVersionError,
    compare_backends,
    find_batsim,
    run_batsim,
)
from bftune.support.files import check_output_dir
from bftune.experiments.runs.compare import format_report
from bftune.experiments.runs.summary import format_summary
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import parse_duration
from bftune.workloads.model import Trace
from bftune.support.streams import print_error


def _tau(args: argparse.Namespace) -> float:
    tau = getattr(args, "tau", 10.0)
    tau = parse_duration(tau, "--tau", allow_infinite=False) if tau is not None else 10.0
    if tau <= 0:
        raise ValueError("--tau must be positive")
    return tau


def _common(args: argparse.Namespace) -> dict:
    timeout = getattr(args, "timeout", None)
    return {
        "batsim": getattr(args, "batsim", None),
        "tau": _tau(args),
        "port": getattr(args, "port", None),
        "timeout": 120.0 if timeout is None else float(timeout),
    }


def _error(exc: Exception) -> int:
    print_error(exc, lines=True)
    # bad input (exit 2): no batsim there, a program that is not Batsim 4.x, a port in use
    return 2 if isinstance(exc, (BatsimNotFoundError, BatsimVersionError, BatsimPortError)) else 1


def check_before_run(command: str, args: argparse.Namespace) -> int | None:
    """Before the trace is read: ``--out`` can hold the results and ``--batsim`` exists.

    Returns the exit status (2) after printing the error if Batsim is
    missing, None if all is well; raises ``OutputError`` for a bad ``--out``.
    """
    check_output_dir(args.out, "--out", BATSIM_RESULT if command == "batsim" else COMPARE_RESULT)
    try:
        find_batsim(getattr(args, "batsim", None), check_version=False)
    except BatsimNotFoundError as exc:
        return _error(exc)
    return None


def cmd_batsim(trace: Trace, config: SchedulerConfig, args: argparse.Namespace) -> int:
    """Run the configuration inside real Batsim; results and summary.json in ``args.out``."""
    out = Path(args.out)
    try:
        summary = run_batsim(trace, config, out, progress=True, **_common(args))
    except BatsimError as exc:
        return _error(exc)
    print(format_summary(summary))
    _share(summary, f"{'scheduler share':<22}{{:.1%}} of {summary['simulation_seconds']:.1f} s wall time")
    for warning in summary.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"\nwrote Batsim's outputs and summary.json in {out}")
    return 0


def cmd_compare(trace: Trace, config: SchedulerConfig, args: argparse.Namespace) -> int:
    """Run both backends; report job-by-job differences; non-zero exit status on any mismatch."""
    out = Path(args.out)
    try:
        report = compare_backends(trace, config, out, progress=True, **_common(args))
    except BatsimError as exc:
        return _error(exc)
    print(format_report(report))
    _share(report, "scheduler share of Batsim's run: {:.1%}")
    print(f"\nwrote {out / 'local'}, {out / 'batsim'} and {out / 'compare.json'}")
    return 0 if report["mismatches"] == 0 else 1


def _share(result: dict, line: str) -> None:
    """The share of Batsim's wall time spent in our scheduler, when the run measured it."""
    share = result.get("scheduler_share")
    if share is not None:
        print(line.format(share))
