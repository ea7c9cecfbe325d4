"""What one scheduling pass returns to its driver."""

from __future__ import annotations

from dataclasses import dataclass, field

from bftune.schedulers.core.jobs import Job


@dataclass(slots=True)
class Kill:
    """Stop a running job now.  If ``requeue`` is set, the driver submits that
    run once the kill is done (restart from scratch, same r_j)."""

    job: Job
    reason: str
    requeue: Job | None = None


@dataclass(slots=True)
class Decisions:
    """Starts (each job carries its ``alloc``), kills and wake-up requests.

    Drivers apply starts and kills at the pass's time; a wake-up at time T
    guarantees a pass at T even if nothing else happens then.
    """

    starts: list[Job] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    wakeups: list[float] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.starts or self.kills or self.wakeups)
