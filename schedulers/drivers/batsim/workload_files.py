"""What the Batsim driver reads from the workload files Batsim names in SIMULATION_BEGINS.

Two things, neither of which decides anything by itself: the trace's clock
(``unix_start_time`` and ``timezone``, written by ``bftune convert``; the
calendar of hooks that read one), and, for the instant barrier, how many
static jobs each submission time holds, so that the driver knows when Batsim
split one instant over several messages.  Read once per run, interpreted.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from bftune.workloads.model import NO_CLOCK, TraceClock


@dataclass
class WorkloadFiles:
    clock: TraceClock
    #: Static submissions per submission time (None: not counted, or a file could not be read).
    expected: dict[float, int] | None
    #: One line when a file could not be read (its clock is then the Unix epoch in UTC).
    warning: str | None = None


def read_workload_files(workloads: dict[str, str], directory: str | os.PathLike[str],
                        count_submissions: bool) -> WorkloadFiles:
    """The clock of the first file that has one, and (``count_submissions``) the static submissions."""
    expected: dict[float, int] | None = {} if count_submissions else None
    clock: TraceClock | None = None
    for name, path in workloads.items():
        p = Path(path)
        if not p.is_absolute():
            p = Path(directory) / p
        try:
            doc = json.loads(p.read_text())
            if clock is None:
                clock = clock_of(doc)
            if expected is not None:
                for job in doc["jobs"]:
                    t = float(job["subtime"])
                    expected[t] = expected.get(t, 0) + 1
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return WorkloadFiles(
                clock or NO_CLOCK, None,
                f"cannot read workload {name!r} ({p}: {exc}): its clock is the Unix epoch in UTC, and if "
                "Batsim splits the submissions of one instant over several messages, that instant gets more "
                "than one pass")
    return WorkloadFiles(clock or NO_CLOCK, expected)


def clock_of(doc: dict) -> TraceClock | None:
    """A workload file's clock (``unix_start_time``, ``timezone``), or None when it has none."""
    start, zone = doc.get("unix_start_time"), doc.get("timezone")
    if start is None and zone is None:
        return None
    if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
        raise TypeError(f"'unix_start_time' must be an integer, not {start!r}")
    if zone is not None and not isinstance(zone, str):
        raise TypeError(f"'timezone' must be a string, not {zone!r}")
    return TraceClock(start, zone)
