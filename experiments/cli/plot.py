"""``bftune plot``: pictures of a run's schedule (Gantt chart, queue and utilisation, waits) as PNG or SVG.

Reads a run directory of ``bftune simulate``, ``bftune batsim`` or one half of ``bftune compare``
(out_jobs.csv, and summary.json for the machine size m).  The picture goes beside the directory by default,
not into it: a result directory is replaced as a whole by its command, and a file of another command in it
would make the next run into it refuse (see :func:`bftune.support.files.check_output_dir`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bftune.experiments.cli.common import Parents, UsageError, load_trace
from bftune.experiments.runs.plots import COLOUR_BY, FORMATS, KINDS  # matplotlib is imported only to draw
from bftune.support.files import atomic_write_bytes, check_output_file, clean_leftovers


def cmd_plot(args: argparse.Namespace) -> int:
    # Lazy: pandas and matplotlib (over a second of start-up together) only when a picture is drawn.
    from bftune.experiments.runs import plots
    from bftune.experiments.runs.tables import read_out_jobs
    from bftune.experiments.runs.timeline import PlotError

    run = Path(args.run_dir)
    out = Path(args.out) if args.out else _default_out(run, args.kind)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise UsageError(f"--out {out}: the extension says the format: .png or .svg, not {out.suffix or 'none'!r}")
    shown, out = out, check_output_file(out, "--out")  # the destination first, as every command does
    jobs_csv = _out_jobs(run)
    workload = args.trace is not None or args.synthetic is not None
    colour_by = args.colour_by or ("user" if workload else "job")
    if colour_by == "user" and not workload:
        raise UsageError("--colour-by user: out_jobs.csv has no user; give the workload the run was made of "
                         "(--trace FILE, with the options it was read with)")
    try:
        jobs = read_out_jobs(jobs_csv)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    users = {job.id: job.user for job in load_trace(args).jobs} if workload and colour_by == "user" else None
    plots.headless()
    try:
        fig = plots.figure(args.kind, jobs, _machine_size(run), start=args.start, end=args.end,
                           colour_by=colour_by, users=users, names=("--start", "--end"))
    except PlotError as exc:
        raise UsageError(f"{run}: {exc}") from None
    data = plots.image(fig, fmt)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out.parent, out.name)
    atomic_write_bytes(out, data)
    print(f"wrote {shown}")
    return 0


def _out_jobs(run: Path) -> Path:
    """The run's out_jobs.csv, or one line saying what the directory is instead."""
    if not run.is_dir():
        raise UsageError(f"{run}: not a directory (give the --out directory of bftune simulate or bftune batsim)")
    path = run / "out_jobs.csv"
    if path.is_file():
        return path
    halves = [name for name in ("local", "batsim") if (run / name / "out_jobs.csv").is_file()]
    if halves:
        raise UsageError(f"{run}: a comparison holds two runs: plot {' or '.join(str(run / h) for h in halves)}")
    raise UsageError(f"{run}: no out_jobs.csv (give the --out directory of bftune simulate or bftune batsim)")


def _machine_size(run: Path) -> int | None:
    """m from summary.json; None (the highest allocated processor + 1) when there is none or it lacks m."""
    try:
        m = json.loads((run / "summary.json").read_text(encoding="utf-8")).get("m")
    except (OSError, ValueError, AttributeError):
        m = None
    if isinstance(m, int) and not isinstance(m, bool) and m > 0:
        return m
    print(f"bftune: note: {run}: no m in summary.json; the processors drawn are those the runs used",
          file=sys.stderr)
    return None


def _default_out(run: Path, kind: str) -> Path:
    """``RUN_DIR-gantt.png`` beside the run directory (see the module's docstring for why not inside it)."""
    run = run.resolve()
    return run.parent / f"{run.name}-{'schedule' if kind == 'all' else kind}.png"


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser(
        "plot", parents=[parents.workload],
        help="draw a run's schedule: Gantt chart, queue and utilisation, waits (PNG or SVG)",
        description="Draw a window of a run's schedule from its out_jobs.csv (bftune simulate, batsim, or one "
                    "half of compare). The workload options (--trace...) are only needed to colour runs by "
                    "user: give those the run was made with.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run's directory (holding out_jobs.csv and summary.json)")
    p.add_argument("--out", help="the image to write, .png or .svg (default: RUN_DIR-KIND.png beside RUN_DIR)")
    p.add_argument("--kind", choices=KINDS, default="gantt",
                   help="gantt: processors over time, one rectangle per run; queue: jobs waiting and processors "
                        "busy; waits: the distribution of waits; all: the three stacked (default gantt)")
    p.add_argument("--start", metavar="DURATION",
                   help="the window's start, after the first submission (3d, 36h, 0; default 0)")
    p.add_argument("--end", metavar="DURATION",
                   help="the window's end, after the first submission (default: start + 1w; inf: the whole run)")
    p.add_argument("--colour-by", "--color-by", dest="colour_by", choices=COLOUR_BY,
                   help="user (needs the workload: --trace), job (a rerun has its job's colour), state (final "
                        "state) or size (processors); default user with --trace, else job")
    p.set_defaults(func=cmd_plot)
