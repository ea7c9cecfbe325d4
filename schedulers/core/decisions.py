"""What one scheduling pass returns to its driver."""

from __future__ import annotations

from dataclasses import dataclass

from bftune.schedulers.core.jobs import Job


@dataclass(slots=True)
class Kill:
    """Stop a running job now.  If ``requeue`` is set, the core queues that run
    when the driver reports the kill done (``Core.end(..., COMPLETED_KILLED)``
    returns it, so that the driver can register it with its backend)."""

    job: Job
    reason: str
    requeue: Job | None = None


@dataclass(slots=True)
class Reject:
    """A job that can never run on this machine (the backend is told so; it never waits)."""

    job: Job
    reason: str


@dataclass(slots=True, init=False)
class Decisions:
    """Starts (each job carries its ``alloc``), kills, rejects and wake-up requests.

    Drivers apply them at the pass's time: a reject tells the backend that a
    job can never run (Batsim: REJECT_JOB; local: a REJECTED row); a wake-up
    at time T guarantees a pass at T even if nothing else happens then.
    """

    starts: list[Job]
    kills: list[Kill]
    rejects: list[Reject]
    wakeups: list[float]

    def __init__(self, starts: list[Job] | None = None, kills: list[Kill] | None = None,
                 rejects: list[Reject] | None = None, wakeups: list[float] | None = None) -> None:
        # Written out rather than generated from default factories: a core makes one per pass
        # (twice per job on archive traces) and this is half the cost.
        self.starts = [] if starts is None else starts
        self.kills = [] if kills is None else kills
        self.rejects = [] if rejects is None else rejects
        self.wakeups = [] if wakeups is None else wakeups

    def __bool__(self) -> bool:
        return bool(self.starts or self.kills or self.rejects or self.wakeups)
