"""The decision core: machine state + waiting queue + a pass algorithm + hooks.

Both drivers (the local simulator and the Batsim scheduler) talk to a
``Core`` in the same three verbs, and nothing else decides anything:

- ``submit(job, now)``: a job is waiting (or, if it can never run, will be
  rejected by the next pass);
- ``end(job_id, now, state)``: a run ended (success, walltime, or a kill);
  when a kill decided by this core completes, the core queues the rerun it
  prepared at the kill and returns it, so the driver only has to register it
  with its backend;
- ``decide(now)``: once all events of a timestamp are applied, one pass.

A pass is a pure function of the state and ``now``; running it twice at the
same time with no event in between decides nothing new.  That is what lets
the two backends agree even when Batsim splits one instant into several
messages (a kill's acknowledgement, a resubmission, a requested call).

Hooks extend a core without touching its algorithm: a classifier tags
jobs on submission, a predictor sets estimates, a selector swaps orders at
period boundaries (through the algorithm's ``use_order``), a safeguard kills
overdue jobs before the pass.  Whoever may kill says so (``may_kill``), so
that a configuration knows whether its backend must support requeueing.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

from mypy_extensions import mypyc_attr

from bftune.schedulers.core.decisions import Decisions, Kill, Reject
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.machines import Interval
from bftune.schedulers.core.ordering import Order, WaitingQueue
from bftune.schedulers.core.state import MachineState


class Algorithm(Protocol):
    """One scheduling pass: read the core's state, call ``core.start``/``core.kill``.

    ``priority`` is the order that defines which waiting job comes first
    (fairness metrics and preemption read it); ``use_order`` replaces every
    order the algorithm sorts by (a selector's switch); ``may_kill`` says
    whether a pass may kill running jobs (preemption); ``expected_start`` is
    when the algorithm expects a blocked first job to start, by its own rule
    (the fairness metrics' reservation violations read it).
    """

    may_kill: bool

    @property
    def priority(self) -> Order: ...

    def use_order(self, order: Order) -> None: ...

    def schedule(self, core: "Core", now: float, decisions: Decisions) -> None: ...

    def expected_start(self, core: "Core", head: Job, now: float) -> float: ...

    def describe(self) -> str: ...


# Hooks live outside the core (and tests write their own): compiled by `bftune accelerate`, the core
# must still accept subclasses written in Python.
@mypyc_attr(allow_interpreted_subclasses=True)
class Hook:
    """Base class for extensions; every method is optional.

    ``may_kill``: whether this hook may kill (and requeue) running jobs; a
    configuration whose hooks or algorithm may kill needs a backend that can
    requeue (Batsim's dynamic jobs).  ``kill_reason`` names the option that
    makes it kill, for that error message.  A hook sets both on the
    *instance* (in its ``__init__``): compiled by ``bftune accelerate``, the
    core reads them from the instance, where a subclass's class attribute
    would not be seen (``bftune batsim --kill-after`` once started Batsim
    without the dynamic-job flags on the compiled core that way).
    """

    may_kill = False
    kill_reason = ""

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


def rejection(job: Job, m: int) -> str | None:
    """Why ``job`` can never run on an m-processor machine, or None if it can."""
    if job.procs > m:
        return f"asks for {job.procs} processors; the machine has {m}"
    if job.procs <= 0:
        return f"asks for {job.procs} processors"
    if not job.walltime > 0:
        return "has no positive walltime"
    return None


@mypyc_attr(native_class=False)  # compiled native classes cannot derive from RuntimeError
class OracleMissingError(RuntimeError):
    """A clairvoyant baseline ran under a driver that knows no true runtimes."""


class Core:
    """State plus decision logic; no clock, no I/O."""

    def __init__(self, m: int, algorithm: Algorithm, hooks: Sequence[Hook] = (),
                 revise_overruns: bool = True) -> None:
        self.machine = MachineState(m)
        # A job running past its planning estimate is re-planned to its walltime (False: its expired
        # estimate is kept, option ``overrun_estimate = "expired"``).
        self.revise_overruns = revise_overruns
        self.queue = WaitingQueue()
        self.algorithm = algorithm
        self.hooks: list[Hook] = list(hooks)
        self.killing: dict[str, Kill] = {}
        self.rejected = 0
        self.kills_overtaken = 0  # runs that ended by themselves before a kill of ours took effect
        self._rejects: list[Reject] = []
        self.now = 0.0
        # Set by a driver that knows true runtimes (the local simulator; Batsim's
        # delay profiles).  Only clairvoyant baselines may call it.
        self.runtime_oracle: Callable[[Job], float] | None = None

    @property
    def m(self) -> int:
        return self.machine.m

    def true_runtime(self, job: Job, who: str) -> float:
        """``job``'s actual work, for ``who``, a clairvoyant baseline; an error if the driver knows none."""
        if self.runtime_oracle is None:
            raise OracleMissingError(f"{who} needs the true runtimes, which this driver does not provide")
        return self.runtime_oracle(job)

    @property
    def may_kill(self) -> bool:
        """Whether this core may kill running jobs (its backend must then requeue)."""
        return bool(self.kill_reasons())

    def kill_reasons(self) -> list[str]:
        """What makes this core kill running jobs (empty if nothing does)."""
        reasons = [self.algorithm.describe()] if self.algorithm.may_kill else []
        return reasons + [hook.kill_reason or type(hook).__name__ for hook in self.hooks if hook.may_kill]

    # --- events -------------------------------------------------------------

    def submit(self, job: Job, now: float) -> bool:
        """Queue ``job``; a job that can never run is rejected by the next pass (returns False)."""
        self.now = now
        reason = rejection(job, self.machine.m)
        if reason is not None:
            self._rejects.append(Reject(job, reason))
            self.rejected += 1
            return False
        for hook in self.hooks:
            hook.on_submit(self, job, now)
        self.queue.add(job)
        return True

    def end(self, job_id: str, now: float, state: EndState) -> Job | None:
        """A run ended; if this core killed it to requeue it, the rerun joins the queue and is returned."""
        self.now = now
        job = self.machine.finish(job_id)
        if self.hooks:
            for hook in self.hooks:
                hook.on_end(self, job, now, state)
        if not self.killing:
            return None
        kill = self.killing.pop(job_id, None)
        if kill is None:
            return None
        if state is not EndState.COMPLETED_KILLED:
            self.kills_overtaken += 1  # it ended by itself first: nothing to requeue
            return None
        if kill.requeue is not None:
            self.submit(kill.requeue, now)
        return kill.requeue

    def decide(self, now: float) -> Decisions:
        self.now = now
        decisions = Decisions()
        if self._rejects:
            decisions.rejects, self._rejects = self._rejects, []
        if not self.queue.jobs and not self.hooks:
            return decisions  # nothing waits and nothing else wants a say: a pass would be a no-op
        running = self.machine.by_end.items
        if running and running[0].expected_end <= now and self.revise_overruns:  # a prediction overrun: re-plan
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
        if self.hooks:
            for hook in self.hooks:
                hook.on_start(self, job, now)

    def kill(self, job: Job, reason: str, decisions: Decisions, requeue: Job | None = None) -> None:
        """Ask the driver to stop ``job``; it keeps its machines until the kill is done.

        ``requeue`` (usually ``job.rerun()``) joins the queue when the driver
        reports the kill done.
        """
        if job.id in self.killing or job.id not in self.machine.running:
            return
        kill = Kill(job=job, reason=reason, requeue=requeue)
        self.killing[job.id] = kill
        decisions.kills.append(kill)

    def use_order(self, order: Order) -> None:
        """Sort every queue of the algorithm by ``order`` from now on (a selector's switch)."""
        self.algorithm.use_order(order)

    def describe(self) -> str:
        return self.algorithm.describe()

    def report(self) -> dict:
        out: dict = {}
        for hook in self.hooks:
            out.update(hook.report())
        return out
