"""Processes seen from outside, for the fault tests: who descends from whom, who is still alive.

Read from /proc (Linux): tests that need it skip elsewhere.  A zombie (exited,
not yet reaped - in a container whose init does not reap, it may stay one)
counts as dead: it runs nothing and holds nothing but its pid.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Callable

LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name: [state, ppid, pgid, ...]."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, pgid) of every living process."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] not in ("Z", "X"):
                table[int(entry)] = (int(fields[1]), int(fields[2]))
    return table


def descendants(pid: int) -> list[int]:
    """Living processes started by ``pid``, its children's children and so on."""
    table = _table()
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, (ppid, _) in table.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


def group_members(pgid: int) -> list[int]:
    """Living processes of process group ``pgid``."""
    return [p for p, (_, group) in _table().items() if group == pgid]


def command(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = 0.05):
    """Poll ``condition`` until it returns something true; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"after {timeout:g} s: {what}")
        time.sleep(interval)


def interruptible() -> None:
    """``preexec_fn`` that lets Ctrl-C and a closed terminal reach the child: SIGINT and SIGHUP to their defaults.

    A test runner started in the background of a non-interactive shell (CI
    scripts, ``pytest &``) has SIGINT ignored, its children inherit that, and
    Python then installs no KeyboardInterrupt handler: a SIGINT test would
    test nothing.  One started under ``nohup`` has SIGHUP ignored, which
    bftune respects (the user asked for it), so a SIGHUP test would fail.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
