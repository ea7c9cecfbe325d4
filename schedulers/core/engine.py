"""The decision core: machine state + waiting queue + a pass algorithm + hooks.

Both drivers (the local simulator and the Batsim scheduler) talk to a
``Core`` in the same three verbs, and nothing else decides anything:

- ``submit(job, now)``: a job (or the rerun of a killed job) is waiting;
- ``end(job_id, now, state)``: a run ended (success, walltime, or a kill);
- ``decide(now)``: once all events of a timestamp are applied, one pass.

A pass is a pure function of the state and ``now``; running it twice at the
same time with no event in between decides nothing new.  That is what lets
the two backends agree even when Batsim splits one instant into several
messages (a kill's acknowledgement, a resubmission, a requested call).

Hooks extend a core without touching its algorithm: a classifier tags
jobs on submission, a predictor sets estimates, a selector swaps orders at
period boundaries, a safeguard kills overdue jobs before the pass.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

from bftune.schedulers.core.decisions import Decisions, Kill
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.machines import Interval
from bftune.schedulers.core.ordering import WaitingQueue
from bftune.schedulers.core.state import MachineState


class JobTooLargeError(ValueError):
    """A job asks for more processors than the machine has: it can never run."""


class Algorithm(Protocol):
    """One scheduling pass: read the core's state, call ``core.start``/``core.kill``."""

    def schedule(self, core: "Core", now: float, decisions: Decisions) -> None: ...

    def describe(self) -> str: ...


class Hook:
    """Base class for extensions; every method is optional."""

    def on_submit(self, core: "Core", job: Job, now: float) -> None:
        """Called before the job joins the queue (set ``qclass``, ``estimate``...)."""

    def on_start(self, core: "Core", job: Job, now: float) -> None:
        """Called when the core starts a job."""

    def on_end(self, core: "Core", job: Job, now: float, state: EndState) -> None:
        """Called after a run ended and its machines were freed."""

    def before_pass(self, core: "Core", now: float, decisions: Decisions) -> None:
        """Called at the start of every pass (switch orders, decide kills)."""

    def after_pass(self, core: "Core", now: float, decisions: Decisions) -> None:
        """Called at the end of every pass (request wake-ups)."""

    def report(self) -> dict:
        """What the hook wants saved with the results (choices, costs...)."""
        return {}


class Core:
    """State plus decision logic; no clock, no I/O."""

    def __init__(self, m: int, algorithm: Algorithm, hooks: Sequence[Hook] = ()) -> None:
        self.machine = MachineState(m)
        self.queue = WaitingQueue()
        self.algorithm = algorithm
        self.hooks: list[Hook] = list(hooks)
        self.killing: dict[str, Kill] = {}
        self.now = 0.0
        # Set by a driver that knows true runtimes (the local simulator; Batsim's
        # delay profiles).  Only clairvoyant baselines may call it.
        self.runtime_oracle: Callable[[Job], float] | None = None

    @property
    def m(self) -> int:
        return self.machine.m

    # --- events -------------------------------------------------------------

    def submit(self, job: Job, now: float) -> None:
        if job.procs > self.machine.m or job.procs <= 0:
            raise JobTooLargeError(
                f"job {job.id} asks for {job.procs} processors; the machine has {self.machine.m}"
            )
        self.now = now
        for hook in self.hooks:
            hook.on_submit(self, job, now)
        self.queue.add(job)

    def end(self, job_id: str, now: float, state: EndState) -> Job:
        self.now = now
        job = self.machine.finish(job_id)
        self.killing.pop(job_id, None)
        for hook in self.hooks:
            hook.on_end(self, job, now, state)
        return job

    def decide(self, now: float) -> Decisions:
        self.now = now
        decisions = Decisions()
        if not self.queue.jobs and not self.hooks:
            return decisions  # nothing waits and nothing else wants a say: a pass would be a no-op
        self.machine.refresh_overdue(now)
        for hook in self.hooks:
            hook.before_pass(self, now, decisions)
        self.algorithm.schedule(self, now, decisions)
        for hook in self.hooks:
            hook.after_pass(self, now, decisions)
        if decisions.wakeups:
            decisions.wakeups = sorted({t for t in decisions.wakeups if t > now})
        return decisions

    # --- actions used by algorithms and hooks -------------------------------

    def start(self, job: Job, alloc: list[Interval], now: float, decisions: Decisions) -> None:
        self.queue.remove(job)
        self.machine.start(job, alloc, now)
        decisions.starts.append(job)
        for hook in self.hooks:
            hook.on_start(self, job, now)

    def kill(self, job: Job, reason: str, decisions: Decisions, requeue: Job | None = None) -> None:
        """Ask the driver to stop ``job``; it keeps its machines until the kill is done."""
        if job.id in self.killing or job.id not in self.machine.running:
            return
        kill = Kill(job=job, reason=reason, requeue=requeue)
        self.killing[job.id] = kill
        decisions.kills.append(kill)

    def describe(self) -> str:
        return self.algorithm.describe()

    def report(self) -> dict:
        out: dict = {}
        for hook in self.hooks:
            out.update(hook.report())
        return out
