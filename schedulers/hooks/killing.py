"""Kill-and-requeue hooks.

``KillOnceAfter`` is the protocol exerciser the Batsim issue asks for: every
job that runs longer than a fixed time is killed at exactly that time, once,
and its rerun (same r_j, restarted from scratch) is never killed again.  It
drives the whole kill/requeue path of both backends before any classifier
exists, and the small/large safeguard reuses the same mechanics.
"""

from __future__ import annotations

from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.jobs import Job


class KillOnceAfter(Hook):
    """Kill each first run still running ``after`` seconds after its start; requeue it."""

    def __init__(self, after: float) -> None:
        self.after = after
        self._watch: dict[str, float] = {}  # run id -> kill time
        self._new: list[float] = []  # kill times not yet asked for as wake-ups

    def on_start(self, core: Core, job: Job, now: float) -> None:
        if job.attempt == 0 and job.estimate > self.after:
            self._watch[job.id] = now + self.after
            self._new.append(now + self.after)

    def on_end(self, core, job, now, state) -> None:
        self._watch.pop(job.id, None)

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if not self._watch:
            return
        due = [rid for rid, t in self._watch.items() if t <= now]
        for rid in sorted(due):
            job = core.machine.running.get(rid)
            del self._watch[rid]
            if job is not None:
                core.kill(job, f"ran {self.after:g}s", decisions, requeue=job.rerun())

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if self._new:
            decisions.wakeups.extend(self._new)
            self._new.clear()
