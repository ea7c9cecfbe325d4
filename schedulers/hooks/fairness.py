"""Fairness metrics of SPEC section 3 that need the scheduler's view between events.

- Unfair delay of job j: total time during which j is the highest-priority
  waiting job, does not fit, but would fit if every running job of lower
  priority (by the primary order at that time) were removed.
- Reservation violation: a job that was reserved (blocked at the head) starts
  later than the first reservation time it was given (the shadow time from
  the expected ends of the jobs running then).

The state between two passes is constant, so each pass's observation holds
until the next pass; the monitor only reads the core and never decides.
It is opt-in (``fairness`` option) because it costs a sort of the running
jobs at every pass with a blocked head.
"""

from __future__ import annotations

from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.jobs import Job


class FairnessMonitor(Hook):
    def __init__(self) -> None:
        self.unfair: dict[str, float] = {}  # first id -> accumulated unfair delay
        self.reserved: dict[str, float] = {}  # first id -> first reservation (shadow) time
        self.violations: dict[str, float] = {}  # first id -> start - reservation (> 0)
        self._open: tuple[str, float] | None = None  # (head id, since) while the head is unfairly blocked

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if self._open is not None:
            jid, since = self._open
            self.unfair[jid] = self.unfair.get(jid, 0.0) + (now - since)
            self._open = None

    def on_start(self, core: Core, job: Job, now: float) -> None:
        s = self.reserved.get(job.first_id)
        if s is not None and now > s:
            self.violations[job.first_id] = now - s

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        order = core.algorithm.priority
        head = next(iter(core.queue.iterate(order, now)), None)
        if head is None:
            return
        machine = core.machine
        free = machine.free_count
        if head.procs <= free:
            return
        # Reservation: the first shadow time this job is given.
        if head.first_id not in self.reserved:
            avail = free
            for job in sorted(machine.running.values(), key=_expected_end):
                avail += job.procs
                if avail >= head.procs:
                    self.reserved[head.first_id] = job.expected_end
                    break
        # Unfair: it would fit without the running jobs of lower priority.
        head_key = order.key(head, now)
        lower = sum(j.procs for j in machine.running.values() if order.key(j, now) > head_key)
        if free + lower >= head.procs:
            self._open = (head.first_id, now)

    def report(self) -> dict:
        delays = [d for d in self.unfair.values() if d > 0]
        viol = list(self.violations.values())
        return {"fairness": {
            "unfair_delay_total": float(sum(delays)),
            "unfair_delay_jobs": len(delays),
            "unfair_delay_mean": float(sum(delays) / len(delays)) if delays else 0.0,
            "unfair_delay_max": float(max(delays)) if delays else 0.0,
            "reserved_jobs": len(self.reserved),
            "reservation_violations": len(viol),
            "reservation_violation_mean": float(sum(viol) / len(viol)) if viol else 0.0,
            "reservation_violation_max": float(max(viol)) if viol else 0.0,
        }}


def _expected_end(job: Job) -> float:
    return job.expected_end
