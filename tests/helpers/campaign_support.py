"""Functions run in campaign worker processes by the executor tests (importable by name in spawned workers)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def pid_after(item: dict) -> int:
    """Sleep ``item["sleep"]`` seconds, die abruptly if ``item["crash"]``, else return this process's id."""
    time.sleep(item.get("sleep", 0.0))
    if item.get("crash"):
        os._exit(3)
    return os.getpid()


def hold_gil(item: dict) -> int:
    """Sum ``item["n"]`` integers in one C call, which holds the GIL throughout (as compiled code does).

    ``item["started"]``, a path, is created just before the call: a test waits for it rather than guessing
    how long a loaded machine takes to get there."""
    if "started" in item:
        Path(item["started"]).touch()
    return sum(range(item["n"]))
