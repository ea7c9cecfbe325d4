"""Pictures of one run's schedule: a Gantt chart, queue length and utilisation over time, the wait distribution.

Each function draws on a matplotlib Axes (made when none is given) from an out_jobs.csv table of either
backend and returns what it drew on, so that a notebook can add to it and a test can read what was drawn
back.  The numbers come from :mod:`bftune.experiments.runs.timeline`; this module only draws.

matplotlib is imported on the first picture (:func:`pyplot`), never at import: the command line imports
every command's module, and ``bftune simulate`` must not pay matplotlib's 0.4 s or more.  Every time axis
counts from the run's first submission, the origin that ``--start`` and ``--end`` are durations from.
"""

from __future__ import annotations

import io
import zlib
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from bftune.experiments.runs.metrics import KILLED, WALLTIME
from bftune.experiments.runs.timeline import (STOPPED, PlotError, Runs, Window, boxes, runs_of, steps, waits,
                                              window, with_users)

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: How runs can be coloured: by their user, their job (reruns share it), their final state, their size class.
COLOUR_BY = ("user", "job", "state", "size")
#: The kinds of picture, as ``bftune plot --kind`` names them ("all": one figure with every panel).
KINDS = ("gantt", "queue", "waits", "all")
#: The image formats written, by file extension.
FORMATS = ("png", "svg")

#: Distinct colours for users and jobs: tab20 without its two greys (grey means "other" or "unknown").
_PALETTE = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#9467bd",
            "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5")
_OTHER = "#b0b0b0"
_UNKNOWN = "#dddddd"
_STATE_COLOURS = {"COMPLETED_SUCCESSFULLY": "#4c72b0", WALLTIME: "#dd8452", KILLED: "#c44e52"}
#: How a stopped run is marked over its colour: red outline and hatching (killed and requeued: dense).
_MARKS = {KILLED: "////", WALLTIME: "\\\\"}
#: Size classes (processors), upper bounds: powers of four read well on machines from 64 to 100,000.
_SIZES = (1, 4, 16, 64, 256, 1024, 4096)
#: Time ticks tried, in seconds: the first that gives at most ten ticks on the window.
_TICK_STEPS = (60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400,
               14 * 86400, 28 * 86400, 91 * 86400, 364 * 86400)
#: Ids of the drawn collections (also their SVG group ids): what tests and users look up.
RUNS_GID = "bftune-runs"
STOPPED_GID = {KILLED: "bftune-killed", WALLTIME: "bftune-walltime"}

Table = Mapping[str, Sequence] | Any  # an out_jobs table: a DataFrame or a mapping of columns


def pyplot() -> Any:
    """matplotlib.pyplot with whatever backend the session has (a notebook's inline one, a desktop's window)."""
    import matplotlib.pyplot as plt

    return plt


def headless() -> None:
    """Draw to files only (the Agg backend): for the command line, which runs on servers with no display.

    Not done for the Python API: there, pictures are meant for the notebook or window the user has.
    """
    import matplotlib

    matplotlib.use("Agg")


def _axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    _, made = pyplot().subplots(figsize=size, layout="constrained")
    return made


# --- the Gantt chart ---------------------------------------------------------------------------------------------


def gantt(jobs: Table, m: int | None = None, *, start: object = None, end: object = None,
          colour_by: str | None = None, users: Mapping[int, int] | None = None, ax: Axes | None = None,
          names: tuple[str, str] = ("start", "end")) -> Axes:
    """Draw each run of the window as rectangles: its processors (y) during its execution (x).

    ``jobs``: the out_jobs table; ``m``: the machine's processors (summary.json's ``m``; default: the
    highest allocated one + 1).  ``start``/``end``: the window, durations after the first submission
    (default: the first week).  ``colour_by``: ``"user"`` (needs ``users``, a workload's ``{job id: user}``,
    or a ``user`` column in ``jobs``), ``"job"`` (a rerun has its job's colour), ``"state"`` or ``"size"``;
    default: by user where users are known, else by job.
    Runs killed and requeued are hatched and outlined in red, runs killed at their walltime likewise with
    the other slant.  Returns the Axes: its collection with gid :data:`RUNS_GID` holds one rectangle per
    box of :func:`bftune.experiments.runs.timeline.boxes`, in their order.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    runs = _coloured_runs(jobs, colour_by, users)
    colour_by = colour_by or ("job" if runs.user is None else "user")
    w = window(runs, start, end, names)
    drawn = boxes(runs, w)
    m = _machine(runs, m)
    ax = _axes(ax, (12, 6))
    x0, x1 = w.relative(drawn.x0), w.relative(drawn.x1)
    faces, legend = _colours(runs, drawn.run, colour_by)
    rects = _rectangles(x0, x1, drawn.y0, drawn.y1)
    # An (n, 4, 2) array, which matplotlib's stubs do not allow for, but which it draws fastest.
    collection = PolyCollection(rects, facecolors=faces, edgecolors="white", linewidths=0.3)  # type: ignore[arg-type]
    collection.set_gid(RUNS_GID)
    ax.add_collection(collection)
    handles = [Patch(facecolor=colour, label=label) for label, colour in legend]
    for state, hatch in _MARKS.items():
        stopped = runs.state[drawn.run] == state
        if stopped.any():
            marks = PolyCollection(rects[stopped], facecolors="none", edgecolors="#d00000",  # type: ignore[arg-type]
                                   linewidths=0.8, hatch=hatch)
            marks.set_gid(STOPPED_GID[state])
            ax.add_collection(marks)
            handles.append(Patch(facecolor="white", edgecolor="#d00000", hatch=hatch, label=STOPPED[state]))
    right = w.end if w.end != float("inf") else float(drawn.x1.max())
    ax.set_xlim(w.relative(w.start), w.relative(right))
    ax.set_ylim(0, m)
    _time_axis(ax, w.relative(w.start), w.relative(right))
    ax.set_ylabel(f"processor (m = {m})")
    ax.set_title(f"Schedule: {len(set(drawn.run.tolist()))} runs, coloured by {colour_by}")
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


def _coloured_runs(jobs: Table, colour_by: str | None, users: Mapping[int, int] | None) -> Runs:
    if colour_by is not None and colour_by not in COLOUR_BY:
        raise PlotError(f"colour_by: one of {', '.join(COLOUR_BY)}, not {colour_by!r}")
    runs = runs_of(jobs)
    if users is not None:
        runs = with_users(runs, users)
    if colour_by == "user" and runs.user is None:
        raise PlotError("colour by user: the out_jobs table has no user; give the workload the run was made of")
    return runs


def _machine(runs: Runs, m: int | None) -> int:
    from bftune.experiments.runs.timeline import machine_size

    size = machine_size(runs) if m is None else int(m)
    if size <= 0:
        raise PlotError(f"m must be a positive number of processors, got {m}")
    return size


def _rectangles(x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """The boxes as an (n, 4, 2) array of corners: what PolyCollection draws at C speed."""
    import numpy as np

    return np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1), np.stack([x1, y1], 1),
                     np.stack([x0, y1], 1)], 1).astype(float)


def _colours(runs: Runs, index: np.ndarray, colour_by: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Each box's face colour and the legend's ``(label, colour)`` entries."""
    if colour_by == "job":
        return [_PALETTE[_number(job) % len(_PALETTE)] for job in runs.job[index].tolist()], []
    if colour_by == "state":
        states = runs.state[index].tolist()
        shown = sorted(set(states))
        return [_STATE_COLOURS.get(s, _OTHER) for s in states], [(s, _STATE_COLOURS.get(s, _OTHER)) for s in shown]
    if colour_by == "size":
        classes = [_size_class(q) for q in runs.procs[index].tolist()]
        labels = {c: _size_label(c) for c in sorted(set(classes))}
        colour = {c: _PALETTE[(2 * c) % len(_PALETTE)] for c in labels}
        return [colour[c] for c in classes], [(f"{labels[c]} processors", colour[c]) for c in labels]
    return _user_colours(runs, index)


def _user_colours(runs: Runs, index: np.ndarray) -> tuple[list[str], list[tuple[str, str]]]:
    """The window's heaviest users (processor-seconds drawn) get a colour each, the others one grey."""
    assert runs.user is not None
    import numpy as np

    work: dict[int, float] = {}
    for i in np.unique(index).tolist():  # per run, not per box: a run on two intervals counts once
        u = int(runs.user[i])
        work[u] = work.get(u, 0.0) + (runs.end[i] - runs.start[i]) * runs.procs[i]
    user = runs.user[index].tolist()
    ranked = sorted((u for u in work if u >= 0), key=lambda u: (-work[u], u))
    colour = {u: _PALETTE[k] for k, u in enumerate(ranked[:len(_PALETTE)])}
    legend = [(f"user {u}", colour[u]) for u in ranked[:len(_PALETTE)]]
    if len(ranked) > len(_PALETTE):
        legend.append((f"{len(ranked) - len(_PALETTE)} other users", _OTHER))
    if -1 in work:
        legend.append(("unknown user", _UNKNOWN))
    return [colour.get(u, _OTHER if u >= 0 else _UNKNOWN) for u in user], legend


def _number(job: str) -> int:
    """A job's colour index: its number (neighbouring jobs differ), else a stable hash of its name."""
    return int(job) if job.isdigit() else zlib.crc32(job.encode())


def _size_class(procs: int) -> int:
    return next((k for k, bound in enumerate(_SIZES) if procs <= bound), len(_SIZES))


def _size_label(k: int) -> str:
    if k == 0:
        return "1"
    if k == len(_SIZES):
        return f"> {_SIZES[-1]}"
    return f"{_SIZES[k - 1] + 1}-{_SIZES[k]}"


# --- queue and utilisation -------------------------------------------------------------------------------------


def queue_and_utilisation(jobs: Table, m: int | None = None, *, start: object = None, end: object = None,
                          axes: tuple[Axes, Axes] | None = None,
                          names: tuple[str, str] = ("start", "end")) -> tuple[Axes, Axes]:
    """Jobs waiting (top) and the share of processors busy (bottom) over the window, as steps.

    Arguments as :func:`gantt`'s.  The data is :func:`bftune.experiments.runs.timeline.steps`.
    Returns both Axes.
    """
    import numpy as np

    runs = runs_of(jobs)
    w = window(runs, start, end, names)
    data = steps(runs, _machine(runs, m))
    if axes is None:
        _, made = pyplot().subplots(2, 1, figsize=(12, 5), sharex=True, layout="constrained")
        axes = (made[0], made[1])
    queue, busy = axes
    right = w.end if w.end != float("inf") else float(data.times[-1])
    # The steps inside the window, with the values holding at its edges, so the lines span it.
    inside = (data.times > w.start) & (data.times < right)
    t = np.concatenate([[w.start], data.times[inside], [right]])
    at_start, at_end = data.at(w.start), data.at(right)
    waiting = np.concatenate([[at_start[0]], data.waiting[inside], [at_end[0]]])
    used = np.concatenate([[at_start[1]], data.busy[inside], [at_end[1]]]) / data.m
    queue.step(w.relative(t), waiting, where="post", color="#4c72b0", lw=0.9)
    queue.set_ylabel("jobs waiting")
    queue.set_ylim(bottom=0)
    busy.step(w.relative(t), 100 * used, where="post", color="#55a868", lw=0.9)
    busy.fill_between(w.relative(t), 100 * used, step="post", color="#55a868", alpha=0.25, lw=0)
    busy.set_ylabel(f"processors busy (%, m = {data.m})")
    busy.set_ylim(0, 100)
    for ax in axes:
        ax.set_xlim(w.relative(w.start), w.relative(right))
        ax.grid(alpha=0.3)
    _time_axis(busy, w.relative(w.start), w.relative(right))
    queue.set_title("Queue length and utilisation")
    return queue, busy


# --- waits -------------------------------------------------------------------------------------------------------


def wait_distribution(jobs: Table, *, start: object = None, end: object = None, ax: Axes | None = None,
                      names: tuple[str, str] = ("start", "end")) -> Axes:
    """The share of jobs that waited at most x (an empirical CDF, log x) for the jobs submitted in the window.

    A wait is the job's final run's start minus its first submission, as the metrics count it.  Waits
    under a second are drawn at 1 s (a log axis has no 0); the title says how many there are.
    """
    import numpy as np

    w = window(runs_of(jobs), start, end, names)
    wait = np.sort(waits(jobs, w))
    if not len(wait):
        raise PlotError(f"no job was submitted between {names[0]} and {names[1]}: no wait to draw")
    ax = _axes(ax, (8, 4.5))
    shown = np.maximum(wait, 1.0)
    share = np.arange(1, len(wait) + 1) / len(wait)
    ax.step(np.r_[1.0, shown], np.r_[0.0, share], where="post", color="#4c72b0", lw=1.2)
    ax.set_xscale("log")
    top = max(float(shown[-1]), 60.0) * 1.5
    ax.set_xlim(1.0, top)
    ax.set_ylim(0, 1.0)
    ticks = [t for t in (1, 60, 3600, 86400, 7 * 86400, 28 * 86400) if t <= top]
    ax.set_xticks(ticks, [{1: "1 s", 60: "1 min", 3600: "1 h", 86400: "1 d", 604800: "1 w",
                           2419200: "4 w"}[t] for t in ticks])
    mean, median = float(wait.mean()), float(np.median(wait))
    for value, label, style in ((median, "median", ":"), (mean, "mean", "--")):
        ax.axvline(max(value, 1.0), color="#c44e52", ls=style, lw=1, label=f"{label} {_duration(value)}")
    ax.set_xlabel("wait (log scale; waits under 1 s drawn at 1 s)")
    ax.set_ylabel("share of jobs waiting at most this")
    zero = int((wait < 1).sum())
    ax.set_title(f"Waits of {len(wait)} jobs ({100 * zero / len(wait):.0f} % under 1 s)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


# --- time axes ---------------------------------------------------------------------------------------------------


def _time_axis(ax: Axes, lo: float, hi: float) -> None:
    """Ticks at a round step (at most about ten in the window), labelled as days and hours since time 0."""
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    span = max(hi - lo, 1.0)
    step = next((s for s in _TICK_STEPS if span / s <= 10), _TICK_STEPS[-1])
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: _clock(x, step)))
    ax.set_xlabel("time since the first submission (days and hours)")


def _clock(seconds: float, step: float) -> str:
    """``"2d"`` on whole days, ``"2d 06:00"`` within them, ``"-1d 18:00"`` before time 0."""
    sign = "-" if seconds < 0 else ""
    seconds = abs(round(seconds))
    days, rest = divmod(seconds, 86400)
    if step % 86400 == 0 and rest == 0:
        return f"{sign}{days}d"
    return f"{sign}{days}d {rest // 3600:02d}:{rest % 3600 // 60:02d}"


# --- one figure, as a file's bytes -------------------------------------------------------------------------------


def figure(kind: str, jobs: Table, m: int | None = None, *, start: object = None, end: object = None,
           colour_by: str | None = None, users: Mapping[int, int] | None = None,
           names: tuple[str, str] = ("start", "end")) -> Figure:
    """One figure of ``kind`` (:data:`KINDS`): a single picture, or ``"all"`` of them stacked, one time axis."""
    if kind not in KINDS:
        raise PlotError(f"kind: one of {', '.join(KINDS)}, not {kind!r}")
    if kind == "gantt":
        return _root(gantt(jobs, m, start=start, end=end, colour_by=colour_by, users=users, names=names))
    if kind == "queue":
        return _root(queue_and_utilisation(jobs, m, start=start, end=end, names=names)[0])
    if kind == "waits":
        return _root(wait_distribution(jobs, start=start, end=end, names=names))
    fig = pyplot().figure(figsize=(12, 12), layout="constrained")
    grid = fig.add_gridspec(4, 1, height_ratios=(3, 1, 1, 1.6))
    chart = fig.add_subplot(grid[0])
    gantt(jobs, m, start=start, end=end, colour_by=colour_by, users=users, ax=chart, names=names)
    chart.set_xlabel("")  # the utilisation panel below names the shared time axis
    panels = (fig.add_subplot(grid[1], sharex=chart), fig.add_subplot(grid[2], sharex=chart))
    queue_and_utilisation(jobs, m, start=start, end=end, axes=panels, names=names)
    wait_distribution(jobs, start=start, end=end, ax=fig.add_subplot(grid[3]), names=names)
    return fig


def _root(ax: Axes) -> Figure:
    """The figure ``ax`` is drawn in (the whole one, should it be in a subfigure)."""
    fig = ax.get_figure(root=True)
    assert fig is not None  # every Axes drawn here was made in a figure
    return fig


def image(fig: Figure, fmt: str, dpi: int = 100) -> bytes:
    """``fig`` as PNG or SVG bytes with no date or version in them (the same run gives the same file); closed.

    The figure keeps its size (no tight bounding box): a PNG of a 12 x 6 inch figure is 1200 x 600.
    """
    if fmt not in FORMATS:
        raise PlotError(f"an image format is one of {', '.join(FORMATS)}, not {fmt!r}")
    metadata: dict[str, Any] = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    buf = io.BytesIO()
    if fmt == "svg":
        import matplotlib

        with matplotlib.rc_context({"svg.hashsalt": "bftune"}):  # stable ids: the same figure, the same text
            fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    else:
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    pyplot().close(fig)
    return buf.getvalue()


__all__ = ["COLOUR_BY", "FORMATS", "KINDS", "RUNS_GID", "STOPPED_GID", "PlotError", "Window", "figure", "gantt",
           "headless", "image", "pyplot", "queue_and_utilisation", "wait_distribution"]
