"""The one progress line (campaigns, Batsim runs)."""

from __future__ import annotations

import io

from bftune.experiments.progress import Progress


def test_progress_bar_shows_counts_and_eta():
    stream = io.StringIO()
    bar = Progress(10, already=2, stream=stream, interval=0.0)
    bar.update(True)
    bar.update(False)
    text = stream.getvalue()
    assert "4/10" in text and "1 failed" in text and "2 stored" in text and "ETA" in text
    assert "--:--" not in text.splitlines()[-1]
