"""The decision core's view of a job.

The core never sees a job's actual runtime: only what a real scheduler knows
at submission (size, requested walltime, user, submission time) plus its own
bookkeeping.  ``estimate`` is the duration the core plans with; it equals the
walltime unless a predictor (or a clairvoyant baseline) says otherwise, while
``walltime`` stays the kill time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from bftune.schedulers.machines import Interval

INF = math.inf


class EndState(str, Enum):
    """How a run ended, with Batsim's names (out_jobs.csv ``final_state``)."""

    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"


@dataclass(slots=True, eq=False)
class Job:
    """One run of a job, as the scheduler knows it.

    A requeued job is a *new run*: a new ``id`` (``<origin>#<n>``, Batsim's
    naming for resubmissions) that keeps the original ``submit`` time and
    ``seq``, so priorities and tie-breaks are those of the original job.
    """

    id: str  # run name without workload prefix, e.g. "0000015" or "0000015#1"
    seq: int  # tie-break after submit time: the SWF job number
    submit: float  # r_j of the original submission
    procs: int  # q_j
    walltime: float  # p~_j, the kill time
    user: int = -1
    estimate: float = 0.0  # planning duration; 0 means "use the walltime"
    origin: str = ""  # id of the first run; "" for a first run
    attempt: int = 0  # number of earlier killed runs of this job
    qclass: int = 0  # queue class for split queues (0 first); set by a classifier
    info: dict = field(default_factory=dict)  # free-form tags (e.g. predicted class)
    # Running state, set by the core when it starts the job.
    start: float = -1.0
    alloc: list[Interval] | None = None
    expected_end: float = INF

    def __post_init__(self) -> None:
        if self.estimate <= 0:
            self.estimate = self.walltime

    @property
    def first_id(self) -> str:
        """Id of the original run (the job as the workload names it)."""
        return self.origin or self.id

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
            info=dict(self.info),
        )
