"""The Batsim driver's counters and timers, reported in summary.json (``batsim.driver``).

Compiled with the driver by ``bftune accelerate``: the driver updates them for
every message.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class DriverStats:
    messages: int = 0
    events_in: int = 0
    events_out: int = 0
    passes: int = 0
    submitted: int = 0
    started: int = 0
    completed: int = 0  # runs ended (any state)
    killed: int = 0  # runs ended as COMPLETED_KILLED
    walltime_reached: int = 0
    rejected: int = 0
    reruns: int = 0  # reruns registered
    deferred: int = 0  # passes put off because Batsim split an instant (see BatsimDriver)
    busy_seconds: float = 0.0  # time spent inside handle(), of which:
    parse_seconds: float = 0.0  # checking the message and making its typed events (protocol.parse_message)
    decide_seconds: float = 0.0  # the core's passes and the reply's events they make

    def as_dict(self) -> dict:
        # fields(), not __dict__: compiled by bftune accelerate, the class has no instance dictionary
        return {f.name: (round(v, 6) if isinstance(v := getattr(self, f.name), float) else v) for f in fields(self)}
