"""The one progress line (campaigns, Batsim runs)."""

from __future__ import annotations

import io

from bftune.support.progress import Progress


def test_progress_bar_shows_counts_and_eta():
    stream = io.StringIO()
    bar = Progress(10, already=2, stream=stream, interval=0.0)
    bar.update(True)
    bar.update(False)
    text = stream.getvalue()
    assert "4/10" in text and "1 failed" in text and "2 stored before" in text and "ETA" in text
    assert "--:--" not in text.splitlines()[-1]


def test_absolute_counts_with_a_detail_and_a_label():
    """How a Batsim run shows its jobs: absolute counts, a detail, at most one line per interval off a terminal."""
    stream = io.StringIO()
    bar = Progress(200, stream=stream, interval=3600, label="batsim")
    bar.set(10, "t=50 s, 3 running")  # the first line at once
    assert bar.due() is False
    bar.set(15, "t=70 s, 3 running")  # not due yet (interval): not shown
    bar.set(20, "t=90 s, 2 running", force=True)
    bar.set(200, "t=400 s, 0 running")  # the last one is always shown
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("batsim: [") and "10/200" in lines[0] and "t=50 s, 3 running" in lines[0]
    assert "20/200" in lines[1] and "t=90 s, 2 running" in lines[1]
    assert "200/200 100.0%" in lines[2] and "ETA 00:00" in lines[2]
