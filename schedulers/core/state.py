"""The machine as the decision core sees it: free machines and running jobs."""

from __future__ import annotations


from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.machines import Interval, MachineSet
from bftune.schedulers.core.sortedindex import SortedIndex


def _end_key(job: Job) -> tuple[float, int, str]:
    return (job.expected_end, job.seq, job.id)


class MachineState:
    """Free machines and running jobs, indexed by expected end for reservations."""

    def __init__(self, m: int) -> None:
        if m <= 0:
            raise ValueError(f"a machine needs at least one processor, got {m}")
        self.m = m
        self.free = MachineSet.full(m)
        self.running: dict[str, Job] = {}
        self.by_end: SortedIndex[Job] = SortedIndex(_end_key)

    @property
    def free_count(self) -> int:
        return self.free.size

    def start(self, job: Job, alloc: list[Interval], now: float) -> None:
        self.free.remove(alloc, job.procs)
        job.alloc = alloc
        job.start = now
        job.expected_end = now + job.estimate
        self.running[job.id] = job
        self.by_end.add(job)

    def finish(self, job_id: str) -> Job:
        job = self.running.pop(job_id)
        self.by_end.remove(job)
        self.free.add(job.alloc)
        return job

    def set_expected_end(self, job: Job, end: float) -> None:
        self.by_end.remove(job)
        job.expected_end = end
        self.by_end.add(job)

    def refresh_overdue(self, now: float) -> None:
        """A job still running past its estimate is expected to run to its walltime.

        Only predictions shorter than the walltime can be overrun (a walltime is
        enforced by a kill at that exact time, reported in the same batch).
        """
        running = self.by_end.items  # the list itself: this runs at every pass
        if not running or running[0].expected_end > now:
            return
        overdue = []
        for job in running:
            if job.expected_end > now:
                break
            overdue.append(job)
        for job in overdue:
            self.set_expected_end(job, max(job.start + job.walltime, now))
