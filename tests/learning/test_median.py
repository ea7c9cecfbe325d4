"""The rolling median (the classifier's divider, the campaign's reference classes) against a brute force."""

from __future__ import annotations

import numpy as np
import pytest
from bftune.learning.median import RollingMedian
from hypothesis import given, settings
from hypothesis import strategies as st


def brute(events: list[tuple[float, float]], now: float, window: float) -> float | None:
    values = [v for t, v in events if now - window < t <= now]
    return float(np.median(values)) if values else None


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 20)), max_size=40), st.integers(1, 15))
def test_equals_the_median_of_the_window(steps, window):
    """Values added at non-decreasing times; the median asked at non-decreasing instants."""
    rm = RollingMedian(window)
    events: list[tuple[float, float]] = []
    now = 0.0
    for gap, value in steps:
        now += gap / 4
        assert rm.median(now) == brute(events, now, window)
        rm.add(now, float(value))
        events.append((now, float(value)))
        assert rm.median(now) == brute(events, now, window)


def test_window_is_open_on_the_left_and_even_counts_average():
    rm = RollingMedian(10.0)
    rm.add(0.0, 1.0)
    rm.add(5.0, 4.0)
    assert rm.median(5.0) == 2.5  # two values: the mean of the middle two
    assert rm.median(9.99) == 2.5
    assert rm.median(10.0) == 4.0  # the value added at 0 left at exactly 0 + window
    assert rm.median(15.0) is None and len(rm) == 0
    with pytest.raises(ValueError):
        RollingMedian(0)
