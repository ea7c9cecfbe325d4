"""A trace in a notebook: a one-line repr, an HTML summary, and the jobs to and from a pandas DataFrame."""

from __future__ import annotations

import doctest
import math

import pandas as pd
import pytest
from bftune.workloads import model
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.synthetic import generate


def test_the_examples_of_the_trace_docstrings_run():
    assert doctest.testmod(model, optionflags=doctest.ELLIPSIS).failed == 0


def test_the_repr_is_one_short_line_whatever_the_size():
    """``repr`` of KTH-SP2 was 4 million characters: every record, printed by the dataclass."""
    trace = generate(20000, 128, 1)
    text = repr(trace)
    assert text.startswith(f"<Trace {trace.name!r}: ") and "20,000 jobs, m=128, span " in text and "days>" in text
    assert len(text) < 120 and "\n" not in text
    assert "20,000" in trace._repr_html_() and "<table>" in trace._repr_html_()


def test_the_html_summary_escapes_what_the_file_named():
    trace = Trace(jobs=[JobRecord(1, 0.0, 1, 1.0, 2.0, user=4)], max_procs=2, name="<b>x</b>", source="a&b.swf",
                  unix_start_time=0, timezone="Europe/Paris")
    html = trace._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "a&amp;b.swf" in html and "<b>x" not in html
    assert "1970-01-01 00:00 UTC (Europe/Paris)" in html and ">1</td>" in html  # one user


def test_equality_is_still_by_value():
    one, two = generate(50, 8, 3), generate(50, 8, 3)
    assert one == two and one != generate(50, 8, 4) and repr(one) == repr(two)


def test_a_trace_round_trips_through_a_dataframe():
    trace = generate(500, 32, 2)
    frame = trace.to_dataframe()
    assert list(frame.columns) == [f.name for f in model.fields(JobRecord)] and len(frame) == 500
    assert frame["id"].dtype == "int64" and frame["submit"].dtype == "float64"
    again = Trace.from_dataframe(frame)  # machine size and name from the frame's attrs
    assert again.jobs == trace.jobs and again.max_procs == 32 and again.name == trace.name
    assert all(type(job.id) is int and type(job.procs) is int for job in again.jobs)


def test_a_dataframe_of_ones_own_becomes_a_sorted_checked_trace():
    frame = pd.DataFrame({"id": [3, 1, 2], "submit": [50.0, 0.0, 50.0], "procs": [1, 2, 4],
                          "runtime": [5, 6, 7], "walltime": [10, 10, 10], "user": [1.0, None, 2.0], "note": "x"})
    trace = Trace.from_dataframe(frame, max_procs=4, name="mine")
    assert [job.id for job in trace.jobs] == [1, 2, 3]  # by (submit, id)
    assert [job.user for job in trace.jobs] == [-1, 2, 1] and trace.jobs[0].group == -1
    assert trace.name == "mine" and trace.max_procs == 4


@pytest.mark.parametrize("frame, kwargs, message", [
    (pd.DataFrame({"id": [1], "submit": [0], "procs": [1], "runtime": [1]}), {"max_procs": 2}, "no column walltime"),
    (pd.DataFrame({"id": [1], "submit": [0], "procs": [1], "runtime": [1], "walltime": [2]}), {},
     "give max_procs"),
    (pd.DataFrame({"id": [1], "submit": ["soon"], "procs": [1], "runtime": [1], "walltime": [2]}), {"max_procs": 2},
     "column submit: not a number"),
    (pd.DataFrame({"id": [1], "submit": [0], "procs": [1.5], "runtime": [1], "walltime": [2]}), {"max_procs": 2},
     "procs 1.5 is not a whole number"),
    (pd.DataFrame({"id": [1], "submit": [math.nan], "procs": [1], "runtime": [1], "walltime": [2]}),
     {"max_procs": 2}, "submit nan is not a finite number"),
])
def test_a_dataframe_the_simulators_cannot_run_is_refused_in_one_line(frame, kwargs, message):
    with pytest.raises(WorkloadError, match=message):
        Trace.from_dataframe(frame, **kwargs)
