"""The core's binary searches (schedulers/core/search.py): the loops run when compiled, against ``bisect``."""

from __future__ import annotations

import bisect

import pytest
from bftune.schedulers.core import search
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture(params=[False, True], ids=["c-bisect", "compiled-loops"])
def compiled_loops(request, monkeypatch):
    """Both implementations, interpreted: the C ``bisect`` and the loops a compiled core runs."""
    monkeypatch.setattr(search, "COMPILED", request.param)
    return request.param


@pytest.mark.parametrize("name", ["bisect_left", "bisect_right"])
def test_bisections_of_floats_agree_with_the_standard_library(compiled_loops, name):
    ours, reference = getattr(search, name), getattr(bisect, name)
    for values in ([], [1.0], [1.0, 1.0, 2.0], [0.0, 1.0, 1.0, 1.0, 5.0, 7.5, 7.5]):
        for x in (-1.0, 0.0, 1.0, 1.5, 5.0, 7.5, 9.0):
            assert ours(values, x) == reference(values, x), (values, x)


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(0, 200), unique=True, max_size=30), probes=st.lists(st.integers(-2, 205), max_size=10))
def test_interval_searches_agree_with_bisecting_the_tuples(cuts, probes):
    points = sorted(cuts)
    intervals = [(a, b) for a, b in zip(points[::2], points[1::2])]  # sorted, disjoint
    for loops in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(search, "COMPILED", loops)
            for a in probes:
                for lo in range(len(intervals) + 1):
                    assert search.first_starting_from(intervals, a, lo) == bisect.bisect_left(intervals, (a, -1), lo)
                assert search.last_starting_at_most(intervals, a) == bisect.bisect_right(intervals, (a, 1 << 62)) - 1
