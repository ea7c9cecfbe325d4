"""Pictures of a schedule (``bftune plot``): the numbers drawn, then what is drawn, then the images themselves.

The data (windows, rectangles, queue and busy steps, waits) is checked on a small hand-made run whose
every value is known; the drawing is checked by reading back the Axes' collections; the images by
rendering them (PNG pixels, SVG elements), up to a Gantt chart of KTH-SP2's first week.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.runs import plots
from bftune.experiments.runs.outjobs import COLUMNS
from bftune.experiments.runs.tables import read_out_jobs
from bftune.experiments.runs.timeline import (DEFAULT_SPAN, PlotError, boxes, runs_of, steps, waits, window,
                                              with_users)
from locations import KTH

OK, KILLED, REJECTED = "COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "REJECTED"

# A 10-processor run, times in seconds after the first submission (1000):
#   job 1: submitted 0, runs 0-100 on 0-3;  job 2: submitted 10, runs 100-300 on 0-1 and 4-7;
#   job 3: submitted 20, runs 50-80 on 8-9 and is killed, resubmitted at 80, reruns 300-400 on 8-9;
#   job 4: submitted 30, rejected.
ORIGIN = 1000.0
RUNS = [  # name, submit, start, end, procs, allocation, state
    ("0000001", 0, 0, 100, 4, "0-3", OK),
    ("0000003", 20, 50, 80, 2, "8-9", KILLED),
    ("0000002", 10, 100, 300, 6, "0-1 4-7", OK),
    ("0000003#1", 80, 300, 400, 2, "8-9", OK),
    ("0000004", 30, None, None, 12, "", REJECTED),
]
M = 10


def table(rows=RUNS, **extra) -> pd.DataFrame:
    """An out_jobs table of ``rows``, as read_out_jobs gives it (a rejected run's times are NaN)."""
    def at(t):
        return np.nan if t is None else ORIGIN + t

    df = pd.DataFrame({
        "job_id": [r[0] for r in rows], "workload_name": "w0", "profile": "p",
        "submission_time": [at(r[1]) for r in rows], "requested_number_of_resources": [r[4] for r in rows],
        "requested_time": 1000.0, "success": [int(r[6] == OK) for r in rows], "final_state": [r[6] for r in rows],
        "starting_time": [at(r[2]) for r in rows],
        "execution_time": [np.nan if r[2] is None else r[3] - r[2] for r in rows],
        "finish_time": [at(r[3]) for r in rows], "allocated_resources": [r[5] for r in rows], **extra})
    for column in COLUMNS:  # the columns no picture reads, so that the table is a whole out_jobs.csv
        if column not in df:
            df[column] = "" if column == "metadata" else -1.0
    return df


def corners(path) -> tuple[float, float, float, float]:
    """A drawn rectangle's (x0, x1, y0, y1)."""
    v = path.vertices
    return float(v[:, 0].min()), float(v[:, 0].max()), float(v[:, 1].min()), float(v[:, 1].max())


def collection(ax, gid):
    return next(c for c in ax.collections if c.get_gid() == gid)


# --- the numbers ---------------------------------------------------------------------------------------------------


def test_runs_leave_out_the_rejected_and_start_time_at_the_first_submission():
    runs = runs_of(table())
    assert runs.name.tolist() == ["0000001", "0000003", "0000002", "0000003#1"]
    assert runs.job.tolist() == ["0000001", "0000003", "0000002", "0000003"]  # a rerun is its job's
    assert runs.first_submit == ORIGIN


def test_the_window_defaults_to_the_first_week_and_reads_durations():
    runs = runs_of(table())
    w = window(runs)
    assert (w.origin, w.start, w.end) == (ORIGIN, ORIGIN, ORIGIN + DEFAULT_SPAN)
    w = window(runs, "1m", "5m")
    assert (w.start, w.end) == (ORIGIN + 60, ORIGIN + 300)
    assert window(runs, 0, "inf").end == float("inf")


@pytest.mark.parametrize("start, end, message", [
    ("1d", None, "no run executes between start=1d and end=8d"),
    ("5m", "1m", "end must be after start"),
    ("401", "1h", "no run executes"),  # every run ended at 400
])
def test_a_window_without_a_run_is_one_line(start, end, message):
    with pytest.raises(PlotError, match=message):
        window(runs_of(table()), start, end)


def test_boxes_are_the_runs_processor_intervals_during_their_execution():
    runs = runs_of(table())
    got = boxes(runs, window(runs))
    rows = sorted(zip(runs.name[got.run].tolist(), (got.x0 - ORIGIN).tolist(), (got.x1 - ORIGIN).tolist(),
                      got.y0.tolist(), got.y1.tolist()))
    assert rows == [("0000001", 0, 100, 0, 4), ("0000002", 100, 300, 0, 2), ("0000002", 100, 300, 4, 8),
                    ("0000003", 50, 80, 8, 10), ("0000003#1", 300, 400, 8, 10)]


def test_only_the_windows_runs_have_boxes():
    runs = runs_of(table())
    got = boxes(runs, window(runs, "90", "200"))  # job 1 ends at 100, job 2 runs, job 3's runs are out
    assert sorted(set(runs.name[got.run].tolist())) == ["0000001", "0000002"]


def test_queue_and_busy_steps_at_known_times():
    data = steps(runs_of(table()), M)
    expected = {  # seconds after the first submission: (jobs waiting, processors busy)
        -1: (0, 0), 0: (0, 4), 15: (1, 4), 25: (2, 4), 50: (1, 6), 79: (1, 6),
        80: (2, 4),  # job 3 killed: its processors freed, its rerun waiting
        100: (1, 6),  # job 1 ended, job 2 started
        300: (0, 2), 399: (0, 2), 400: (0, 0)}
    assert {t: data.at(ORIGIN + t) for t in expected} == expected
    assert data.utilisation.max() == pytest.approx(0.6)


def test_waits_are_the_metrics_waits_per_job():
    jobs = table()
    assert sorted(waits(jobs).tolist()) == [0, 90, 280]  # job 3: its rerun's start - its first submission
    runs = runs_of(jobs)
    assert waits(jobs, window(runs, "15", "1h")).tolist() == [280]  # submitted in the window: job 3 only


def test_users_come_from_the_workload_or_the_table():
    runs = with_users(runs_of(table()), {1: 5, 2: 7, 3: 5})
    assert runs.user.tolist() == [5, 5, 7, 5]
    assert with_users(runs_of(table()), {1: 5}).user.tolist() == [5, -1, -1, -1]  # unknown: -1
    assert runs_of(table(user=[5, 5, 7, 5, 9])).user.tolist() == [5, 5, 7, 5]


def test_integer_job_ids_as_the_python_api_gives_them():
    jobs = table(attempt=[0, 0, 0, 1, 0])
    jobs["job_id"] = [1, 3, 2, 3, 4]  # a rerun keeps its job's number; its attempt says which run it is
    runs = runs_of(jobs)
    assert runs.job.tolist() == ["1", "3", "2", "3"]
    assert sorted(waits(jobs).tolist()) == [0, 90, 280]
    assert with_users(runs, {3: 8}).user.tolist() == [-1, 8, -1, 8]


def test_a_table_that_is_not_out_jobs_is_refused():
    with pytest.raises(PlotError, match="missing column"):
        runs_of({"job_id": ["1"]})


# --- what is drawn -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_gantt_chart_draws_each_box_where_the_run_was():
    ax = plots.gantt(table(), M)
    drawn = sorted(corners(p) for p in collection(ax, plots.RUNS_GID).get_paths())
    assert drawn == [(0, 100, 0, 4), (50, 80, 8, 10), (100, 300, 0, 2), (100, 300, 4, 8), (300, 400, 8, 10)]
    assert ax.get_ylim() == (0, M)
    assert ax.get_xlim() == (0, DEFAULT_SPAN)
    plots.pyplot().close(ax.figure)


@pytest.mark.slow
def test_a_killed_run_is_marked():
    ax = plots.gantt(table(), M)
    marks = collection(ax, plots.STOPPED_GID[KILLED])
    assert [corners(p) for p in marks.get_paths()] == [(50, 80, 8, 10)]  # job 3's first run only
    assert marks.get_hatch() and tuple(marks.get_edgecolor()[0][:3]) == pytest.approx((0.816, 0, 0), abs=0.01)
    assert "killed and requeued" in [t.get_text() for t in ax.get_legend().get_texts()]
    plots.pyplot().close(ax.figure)


@pytest.mark.slow
def test_runs_coloured_by_user_share_their_users_colour():
    ax = plots.gantt(table(), M, colour_by="user", users={1: 5, 2: 7, 3: 5})
    runs = collection(ax, plots.RUNS_GID)
    by_box = {corners(p): tuple(c) for p, c in zip(runs.get_paths(), runs.get_facecolors())}
    assert by_box[(0, 100, 0, 4)] == by_box[(50, 80, 8, 10)] == by_box[(300, 400, 8, 10)]  # user 5
    assert by_box[(100, 300, 0, 2)] != by_box[(0, 100, 0, 4)]  # user 7
    # Heaviest first: user 7 used 6 processors for 200 s, user 5 4 x 100 + 2 x 30 + 2 x 100 processor-seconds.
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["user 7", "user 5", "killed and requeued"]
    plots.pyplot().close(ax.figure)


@pytest.mark.slow
def test_a_table_with_users_is_coloured_by_user_by_default():
    ax = plots.gantt(table(user=[5, 5, 7, 5, 9]), M)  # the API's jobs table may carry the user column
    assert ax.get_title().endswith("coloured by user")
    plots.pyplot().close(ax.figure)
    ax = plots.gantt(table(), M)
    assert ax.get_title().endswith("coloured by job")
    plots.pyplot().close(ax.figure)


def test_colour_by_user_needs_users():
    with pytest.raises(PlotError, match="no user"):
        plots.gantt(table(), M, colour_by="user")
    with pytest.raises(PlotError, match="colour_by"):
        plots.gantt(table(), M, colour_by="shoe size")


@pytest.mark.slow
def test_the_queue_panel_draws_the_steps():
    queue, busy = plots.queue_and_utilisation(table(), M, end="400")
    x, y = queue.lines[0].get_data()
    assert x[0] == 0 and x[-1] == 400
    assert y[np.searchsorted(x, 80, side="right") - 1] == 2  # after the kill: the rerun and job 2 wait
    bx, by = busy.lines[0].get_data()
    assert by[np.searchsorted(bx, 150, side="right") - 1] == pytest.approx(60)  # job 2's 6 of 10, in %
    plots.pyplot().close(queue.figure)


# --- the images --------------------------------------------------------------------------------------------------


def pixels(path):
    from PIL import Image  # matplotlib's dependency

    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def intervals(allocations) -> int:
    """How many processor intervals (``"0-3 8"``: two) the allocations hold: the rectangles to draw."""
    return sum(len(re.findall(r"\d+(?:-\d+)?", a)) for a in allocations)


def svg_group(text: str, gid: str) -> str:
    start = text.index(f'<g id="{gid}">')
    return text[start:text.index("</g>", start)]


@pytest.mark.slow
def test_the_command_writes_png_and_svg_of_a_synthetic_run(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["simulate", "--synthetic", "300", "--procs", "32", "--policy", "SAF", "--threshold", "40h",
                 "--kill-after", "1h", "--out", str(run)]) == 0
    sizes = {"gantt": (600, 1200), "queue": (500, 1200), "waits": (450, 800), "all": (1200, 1200)}  # at 100 dpi
    for kind in plots.KINDS:
        assert main(["plot", str(run), "--kind", kind, "--end", "inf"]) == 0
        picture = pixels(tmp_path / f"run-{'schedule' if kind == 'all' else kind}.png")  # beside the run
        assert picture.shape[:2] == sizes[kind]
    svg = tmp_path / "g.svg"
    assert main(["plot", str(run), "--out", str(svg), "--colour-by", "state", "--end", "inf"]) == 0
    text = svg.read_text()
    runs = read_out_jobs(run / "out_jobs.csv")
    assert svg_group(text, plots.RUNS_GID).count("<path") == intervals(runs["allocated_resources"])
    killed = runs[runs["final_state"] == KILLED]
    assert len(killed) and svg_group(text, plots.STOPPED_GID[KILLED]).count("<path") == intervals(
        killed["allocated_resources"])
    assert main(["plot", str(run), "--out", str(svg), "--colour-by", "state", "--end", "inf"]) == 0
    assert svg.read_text() == text  # no date, no random id: the same run gives the same file
    assert not list(run.glob("*.png")) and not list(run.glob("*.svg"))  # the run directory stays the run's


@pytest.mark.parametrize("argv, message", [
    (["{missing}"], "not a directory"),
    (["{empty}"], "no out_jobs.csv"),
    (["{compare}"], "a comparison holds two runs: plot "),
    (["{run}", "--out", "x.jpg"], "the extension says the format: .png or .svg, not '.jpg'"),
    (["{run}", "--start", "10d"], "no run executes between --start=10d and --end=17d"),
    (["{run}", "--start", "1d", "--end", "2h"], "--end must be after --start"),
    (["{run}", "--start", "2x"], "--start: cannot read '2x'"),
    (["{run}", "--colour-by", "user"], "--colour-by user: out_jobs.csv has no user"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    table().to_csv(run / "out_jobs.csv", index=False)
    (run / "summary.json").write_text(json.dumps({"m": M}))
    (tmp_path / "empty").mkdir()
    (tmp_path / "compare" / "local").mkdir(parents=True)
    (tmp_path / "compare" / "local" / "out_jobs.csv").write_text("")
    names = {"missing": tmp_path / "missing", "empty": tmp_path / "empty", "compare": tmp_path / "compare",
             "run": run}
    capsys.readouterr()
    assert main(["plot", *[a.format(**names) for a in argv]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not list(tmp_path.glob("*.png"))


@pytest.mark.slow
@pytest.mark.skipif(not KTH.exists(), reason=f"archive trace not found at {KTH} (../shared/workloads)")
def test_a_gantt_chart_of_kth_sp2s_first_week(tmp_path, capsys):
    run, png, svg = tmp_path / "kth", tmp_path / "kth.png", tmp_path / "kth.svg"
    assert main(["simulate", "--trace", str(KTH), "--out", str(run)]) == 0
    assert main(["plot", str(run), "--trace", str(KTH), "--out", str(png)]) == 0
    assert main(["plot", str(run), "--trace", str(KTH), "--out", str(svg)]) == 0
    assert "wrote" in capsys.readouterr().out

    picture = pixels(png)
    assert picture.shape == (600, 1200, 3)  # 12 x 6 inches at 100 dpi, no tight cropping
    white = (picture > 245).all(axis=2).mean()
    assert 0.2 < white < 0.9, white  # a chart on a page: neither blank nor a filled block
    saturation = picture.max(axis=2) - picture.min(axis=2)
    assert (saturation > 60).mean() > 0.15  # coloured rectangles over much of it
    colours = {tuple(c) for c in picture[saturation > 60][::7].tolist()}
    assert len(colours) >= 15  # runs coloured by user: many users, each its own colour

    # The SVG: one rectangle per interval of every run that executes during the week, and no other.
    jobs = read_out_jobs(run / "out_jobs.csv")
    origin = jobs["submission_time"].min()
    week = jobs[(jobs["starting_time"] < origin + 7 * 86400) & (jobs["finish_time"] > origin)]
    assert 300 < len(week) < 2000  # hundreds of runs
    assert svg_group(svg.read_text(), plots.RUNS_GID).count("<path") == intervals(week["allocated_resources"])


def test_the_api_draws_a_result():
    """``Result.plot_*``: the same drawings from a notebook (the API keeps the notebook's backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import bftune

    result = bftune.simulate(bftune.synthetic(300, procs=16))
    ax = result.plot_gantt(end="inf")
    drawn = [c for c in ax.collections if c.get_gid() == "bftune-runs"]
    assert drawn and len(drawn[0].get_paths()) >= 300  # every run drawn (one rectangle per processor interval)
    queue, busy = result.plot_queue()
    assert queue.lines and busy.lines
    assert result.plot_waits().patches or result.plot_waits().lines
