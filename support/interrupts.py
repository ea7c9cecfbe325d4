"""SIGTERM and SIGHUP stop bftune the way Ctrl-C does: by an exception that runs every clean-up.

Python turns SIGINT into ``KeyboardInterrupt``, so ``finally`` blocks and
context managers run: Batsim's process group is killed, staging directories
are removed, stored campaign runs are kept.  SIGTERM (a batch system's
``scancel``, ``kill``) and SIGHUP (a closed terminal) would end the process
on the spot instead, leaving Batsim running and temporaries behind.
:func:`stopping_like_ctrl_c` makes them raise :class:`Terminated`, a ``KeyboardInterrupt``,
so that every handler written for Ctrl-C handles them too.  SIGKILL cannot be
caught: for it, child processes watch the launcher themselves
(``bftune.support.guard``) and leftovers are cleaned by the next run
(``bftune.support.files.clean_leftovers``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Iterator

#: The signals turned into :class:`Terminated`.
SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


class Terminated(KeyboardInterrupt):
    """The process was asked to stop by ``signum`` (exit status 128 + signum)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def stopping_like_ctrl_c() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` (main thread only; no-op elsewhere).

    The previous handlers come back afterwards, so that ``main()`` called in
    a long-lived process (a test runner, a notebook) leaves it as it was.
    """
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            if signal.getsignal(signum) is signal.SIG_IGN:  # nohup: the user asked to ignore it
                continue
            previous[signum] = signal.signal(signum, _raise)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def exit_status(exc: KeyboardInterrupt) -> int:
    """128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return exc.exit_status if isinstance(exc, Terminated) else 128 + signal.SIGINT
