"""The one progress line of long commands (campaign runs, Batsim simulations), on stderr.

``[#########...................] 12/40  30.0%, 3 stored before, 1 failed | <detail> | elapsed 01:02 | ETA 02:25``

On a terminal the line is redrawn in place (at most every ``tty_interval``
seconds); elsewhere (logs, CI) a line is printed at most every ``interval``
seconds and at the end.  The ETA is the time per item finished in this
process times the items left.  tqdm would do the same but is not among our
dependencies; this is one small module used by every command instead.
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO


def hms(seconds: float) -> str:
    """``MM:SS`` or ``H:MM:SS``; ``--:--`` when unknown."""
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """A progress line for ``total`` items, ``already`` of them done before this process started."""

    def __init__(self, total: int, already: int = 0, stream: TextIO | None = None, enabled: bool = True,
                 interval: float = 10.0, tty_interval: float = 0.2, width: int = 28, label: str = "") -> None:
        self.total, self.already = total, already
        self.done, self.failed = 0, 0
        self.detail = ""
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = enabled and bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = tty_interval if self.tty else interval
        self.width, self.label = width, label
        self.t0 = time.monotonic()
        self._last = -math.inf
        self._drawn = 0  # length of the line on screen (tty)

    def line(self) -> str:
        finished = self.already + self.done + self.failed
        frac = min(finished / self.total, 1.0) if self.total else 1.0
        fill = int(round(frac * self.width))
        elapsed = time.monotonic() - self.t0
        now = self.done + self.failed
        left = max(self.total - finished, 0)
        eta = elapsed / now * left if now else math.inf
        counts = (f", {self.already} stored before" if self.already else "") + \
                 (f", {self.failed} failed" if self.failed else "")
        detail = f" | {self.detail}" if self.detail else ""
        label = f"{self.label}: " if self.label else ""
        return (f"{label}[{'#' * fill}{'.' * (self.width - fill)}] {finished}/{self.total} {100 * frac:5.1f}%"
                f"{counts}{detail} | elapsed {hms(elapsed)} | ETA {hms(eta if left else 0.0)}")

    def update(self, ok: bool = True) -> None:
        """One more item finished (``ok``) or failed."""
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.draw()

    def due(self) -> bool:
        """Whether :meth:`draw` would print now (callers skip gathering a detail when it would not)."""
        return self.enabled and time.monotonic() - self._last >= self.interval

    def set(self, done: int, detail: str = "", force: bool = False) -> None:
        """``done`` items finished in this process so far; ``detail`` shown in the line."""
        self.done, self.detail = done, detail
        self.draw(force)

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        finished = self.already + self.done + self.failed >= self.total
        if not (force or finished or self.due()):
            return
        text = self.line()
        if self.tty:
            self.stream.write("\r" + text.ljust(self._drawn))
            self._drawn = len(text)
        else:
            self.stream.write(text + "\n")
        self._last = time.monotonic()
        self.stream.flush()

    def close(self) -> None:
        """End the line on a terminal."""
        if self.enabled and self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = 0
