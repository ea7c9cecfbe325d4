"""The decision core's view of a job.

The core never sees a job's actual runtime: only what a real scheduler knows
at submission (size, requested walltime, user, submission time) plus its own
bookkeeping.  ``estimate`` is the duration the core plans with; it equals the
walltime unless a predictor (or a clairvoyant baseline) says otherwise, while
``walltime`` stays the kill time.
"""

from __future__ import annotations

import math
from enum import Enum

from bftune.schedulers.core.machines import Interval

INF = math.inf


class EndState(str, Enum):
    """How a run ended, with Batsim's names (out_jobs.csv ``final_state``)."""

    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"


def delay_outcome(delay: float, walltime: float) -> tuple[float, EndState]:
    """How long a delay job of ``delay`` seconds runs under ``walltime``, and how it ends.

    Batsim's rule (docs/semantics/scheduling.md#batsim-semantics): it runs min(delay, walltime); a job whose
    delay reaches its walltime (equality included) is killed at the walltime
    and ends as COMPLETED_WALLTIME_REACHED.  Both drivers plan ends with it.
    """
    if delay < walltime:
        return delay, EndState.COMPLETED_SUCCESSFULLY
    return walltime, EndState.COMPLETED_WALLTIME_REACHED


class Job:
    """One run of a job, as the scheduler knows it.

    A requeued job is a *new run*: a new ``id`` (``<origin>#<n>``, Batsim's
    naming for resubmissions) that keeps the original ``submit`` time and
    ``seq``, so priorities and tie-breaks are those of the original job.

    A hand-written slots class rather than a dataclass: the simulator creates
    one per job of traces with 300,000 jobs, and this is on its hot path.
    """

    __slots__ = ("id", "seq", "submit", "procs", "walltime", "user", "estimate", "origin", "attempt", "qclass",
                 "info", "start", "alloc", "expected_end")

    def __init__(self, id: str, seq: int, submit: float, procs: int, walltime: float, user: int = -1,
                 estimate: float = 0.0, origin: str = "", attempt: int = 0, qclass: int = 0,
                 info: dict | None = None) -> None:
        self.id = id  # run name without workload prefix, e.g. "0000015" or "0000015#1"
        self.seq = seq  # tie-break after submit time: the SWF job number
        self.submit = submit  # r_j of the original submission
        self.procs = procs  # q_j
        self.walltime = walltime  # p~_j, the kill time
        self.user = user
        self.estimate = estimate if estimate > 0 else walltime  # planning duration
        self.origin = origin  # id of the first run; "" for a first run
        self.attempt = attempt  # number of earlier killed runs of this job
        self.qclass = qclass  # queue class for split queues (0 first); set by a classifier
        self.info = info  # free-form tags (predicted class...), None until a hook sets some
        # Running state, set by the core when it starts the job.
        self.start = -1.0
        self.alloc: list[Interval] | None = None
        self.expected_end = INF

    def __repr__(self) -> str:
        return (f"Job({self.id!r}, submit={self.submit:g}, procs={self.procs}, walltime={self.walltime:g}"
                f"{f', start={self.start:g}' if self.start >= 0 else ''})")

    @property
    def first_id(self) -> str:
        """Id of the original run (the job as the workload names it)."""
        return self.origin or self.id

    def tag(self, key: str, value) -> None:
        if self.info is None:
            self.info = {}
        self.info[key] = value

    def rerun(self) -> "Job":
        """The next run of this job after a kill: restart from scratch, same r_j."""
        origin = self.first_id
        attempt = self.attempt + 1
        return Job(
            id=f"{origin}#{attempt}",
            seq=self.seq,
            submit=self.submit,
            procs=self.procs,
            walltime=self.walltime,
            user=self.user,
            estimate=self.estimate,
            origin=origin,
            attempt=attempt,
            qclass=self.qclass,
            info=dict(self.info) if self.info else None,
        )
