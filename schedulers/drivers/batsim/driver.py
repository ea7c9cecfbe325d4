"""The Batsim driver: Batsim messages in, Batsim replies out, decisions by the core.

``BatsimDriver(core_factory).handle(message) -> reply`` is pure message-in /
message-out (no sockets, no clock): the socket loop
(``bftune.schedulers.drivers.batsim.connection``), the pybatsim entry point
(``schedulers/bftuneEasy.py``) and the transcript replay tests all use it.

It feeds the decision core exactly what the local simulator
(``bftune.schedulers.drivers.local.simulator``) feeds it, in the same grouping, so both
backends take the same decisions:

- one instant is one batch, treated as a set: first every JOB_COMPLETED
  frees its machines (``core.end``), in the order the runs were started (the
  local simulator's; order-sensitive hooks such as the classifier's training
  rows see the same order), then JOB_KILLED acknowledgements are checked,
  then every JOB_SUBMITTED joins the queue in (subtime, id) order
  (``core.submit``), then ONE pass (``core.decide(now)``).  Messages that
  carry no job event and no REQUESTED_CALL (SIMULATION_BEGINS, a lone
  NOTIFY, SIMULATION_ENDS) get no pass, because the local simulator has no
  pass there either;
- the pass's decisions become the reply, every event stamped with the
  message's ``now`` (no time consumption): starts -> EXECUTE_JOB with the
  job's interval allocation, kills -> one KILL_JOB, wake-ups -> CALL_ME_LATER
  (each time requested once);
- a kill with a requeue: Batsim's JOB_COMPLETED(COMPLETED_KILLED) + JOB_KILLED
  is the local simulator's kill acknowledgement: the run frees its machines,
  the core queues the rerun it prepared (``<id>#<n>``, original r_j), then
  the pass.  The reply registers the rerun as a dynamic job re-using the
  killed job's profile, with pybatsim's resubmission metadata, before any
  EXECUTE_JOB that starts it; Batsim's JOB_SUBMITTED acknowledging it is not
  a scheduling event (no pass for it);
- Batsim does not always deliver one instant in one message (seen with real
  Batsim 4.2.1: a JOB_COMPLETED after a JOB_SUBMITTED of the same ``now`` on
  KTH-SP2, and the submissions of one instant split 1 + 7 on CTC-SP2).  So
  before each pass the driver checks whether an event of this ``now`` is
  known to be still on its way, and if so holds the instant's events (checked
  and counted, not yet given to the core) and its pass until the message that
  brings it (``stats.deferred``).  Known are: completions (at start +
  min(delay, walltime), from the delay profile), our own CALL_ME_LATER times,
  and the static submissions counted by submission time from the workload
  files (:mod:`.workload_files`).  These say only when an instant is
  complete, never what to decide.  If a workload cannot be read, a warning
  says so and split submissions get one pass per message;
- with dynamic jobs enabled, Batsim ends only after NOTIFY
  registration_finished: the driver sends it once Batsim has said
  no_more_static_job_to_submit and nothing is waiting, running, being killed
  or awaiting resubmission.

Core and clock: at SIMULATION_BEGINS the driver builds its core with the
``core_factory`` it was given (``SchedulerConfig.build``: the driver knows no
configuration), for Batsim's machine size and the workload's clock (its
``unix_start_time`` and ``timezone``, which ``bftune convert`` writes into a
workload file whose trace has them; a workload without them runs on the
Unix epoch in UTC).  The first workload that has a clock gives it.

Runtime oracle: clairvoyant baselines ask the core's ``runtime_oracle`` for a
job's true runtime; here it is the ``delay`` of the job's profile (profiles
come in SIMULATION_BEGINS, or with JOB_SUBMITTED when Batsim forwards them),
as the local simulator gives the trace's runtime.

Job mapping: Batsim id ``w0!0000015`` -> core ``Job(id="0000015",
seq=15, submit=subtime, procs=res, walltime=walltime, user=user)``.  Names
that are not numbers get ``seq`` from a counter starting at 2**62 (after
every job number, in order of arrival).  Jobs that can never run (more
processors than the machine, no positive walltime) are rejected by the core;
the driver sends REJECT_JOB and lists them in ``warnings``.

Every protocol violation raises :class:`ProtocolError` (malformed input, an
unknown event, a completion of a job that is not running...), and a Batsim
started without the options a configuration needs raises
:class:`BatsimSetupError` naming the missing batsim flags.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mypy_extensions import mypyc_attr
from procset import ProcSet

from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.engine import Core
from bftune.schedulers.core.jobs import EndState, Job, delay_outcome
from bftune.schedulers.core.machines import Interval
from bftune.schedulers.drivers.batsim.protocol import (
    CallMeLater, Event, ExecuteJob, JobCompleted, JobKilled, JobSubmitted, KillJob, Notify, ProtocolError,
    RegisterJob, RejectJob, RequestedCall, ResourceStateChanged, SetJobMetadata, SimulationBegins, SimulationEnds,
    message, parse_message, split_job_id,
)
from bftune.schedulers.drivers.batsim.stats import DriverStats
from bftune.schedulers.drivers.batsim.workload_files import read_workload_files
from bftune.workloads.model import NO_CLOCK, TraceClock

#: Builds the decision core for Batsim's machine size and the workload's clock (``SchedulerConfig.build``).
CoreFactory = Callable[[int, TraceClock], Core]

#: batsim flags a configuration that kills and requeues jobs needs.
DYNAMIC_JOB_FLAGS = ("--enable-dynamic-jobs", "--acknowledge-dynamic-jobs", "--enable-profile-reuse")
_FLAG_OF_CONFIG = {
    "dynamic-jobs-enabled": "--enable-dynamic-jobs",
    "dynamic-jobs-acknowledged": "--acknowledge-dynamic-jobs",
    "profile-reuse-enabled": "--enable-profile-reuse",
}
_NON_NUMERIC_SEQ = 2 ** 62
_END_STATES = {s.value: s for s in EndState}


def alloc_text(intervals: list[Interval]) -> str:
    """A core allocation (inclusive intervals) in Batsim's interval-set notation (``"0-3 7"``).

    The core's allocations are sorted and merged, so the core's own writer
    gives exactly the text of procset, the interval-set library of Batsim's
    Python tools (tests check both agree), at a tenth of the cost: it runs
    for every start and every completion.  procset reads what Batsim sends
    when it differs from that text.
    """
    return ms.to_string(intervals)


@mypyc_attr(native_class=False)  # compiled native classes cannot derive from RuntimeError
class BatsimSetupError(RuntimeError):
    """Batsim was started without an option this scheduler configuration needs."""


@dataclass(slots=True)
class _Entry:
    """A job Batsim told us about."""

    job: Job
    workload: str
    profile: str
    raw: dict  # the job object of JOB_SUBMITTED
    runtime: float | None = None  # the delay of its profile, when it is a delay profile
    done: bool = False
    end_at: float | None = None  # when a started run will end (start + min(delay, walltime))
    started: int = -1  # its start's rank among all starts: the order the completions of one instant are applied in


@dataclass
class _Batch:
    begins: SimulationBegins | None = None
    ends: SimulationEnds | None = None
    completed: list[JobCompleted] = field(default_factory=list)
    killed: list[JobKilled] = field(default_factory=list)
    submitted: list[JobSubmitted] = field(default_factory=list)
    calls: int = 0
    notifies: list[Notify] = field(default_factory=list)


class BatsimDriver:
    """Maps Batsim messages onto a decision core that ``core_factory(m, clock)`` builds at SIMULATION_BEGINS.

    After SIMULATION_ENDS, ``finished`` is true and further messages are
    errors.
    """

    def __init__(self, core_factory: CoreFactory, *,
                 workload_dir: str | os.PathLike[str] | None = None, instant_barrier: bool = True) -> None:
        self.workload_dir = Path(workload_dir) if workload_dir is not None else Path.cwd()
        self.instant_barrier = instant_barrier
        self._expected: dict[float, int] | None = None  # static submissions still to come, by subtime
        self._expected_times: list[float] = []
        self._expected_next = 0
        self._core_factory = core_factory
        self.clock = NO_CLOCK
        self.core: Core | None = None
        self.begins: SimulationBegins | None = None
        self.started = False
        self.finished = False
        self.now = 0.0
        self.dynamic = False
        self.no_more_static = False
        self.registration_finished_sent = False
        self.stats = DriverStats()
        self.warnings: list[str] = []
        self._jobs: dict[str, _Entry] = {}  # Batsim id -> entry
        self._batsim_id: dict[str, str] = {}  # core job id -> Batsim id
        self._awaiting: dict[str, Job] = {}  # Batsim id of a rerun registered, not yet acknowledged
        self._ends_at: dict[float, int] = {}  # time -> running runs that will end then (known delays)
        self._calls: set[float] = set()  # CALL_ME_LATER times asked and not yet called
        self._next_seq = _NON_NUMERIC_SEQ
        self._starts = 0  # starts sent so far (each entry's ``started``)
        # Events of an instant Batsim split over several messages, received (checked, counted) but not yet
        # given to the core: all of them are applied together once the instant is complete.
        self._held_now: float | None = None
        self._held_ends: list[tuple[_Entry, EndState]] = []
        self._held_jobs: list[Job] = []

    # --- public --------------------------------------------------------------------------

    def handle(self, raw: dict) -> dict:
        """One Batsim message (decoded JSON) -> the reply to send (a dict)."""
        t0 = time.perf_counter()
        try:
            return self._handle(raw)
        finally:
            self.stats.busy_seconds += time.perf_counter() - t0

    @property
    def m(self) -> int:
        return self.core.m if self.core is not None else 0

    @property
    def _core(self) -> Core:
        """The core, made at SIMULATION_BEGINS, which every other event follows (``_begin`` checks it)."""
        core = self.core
        if core is None:
            raise ProtocolError("an event before SIMULATION_BEGINS")
        return core

    def idle(self) -> bool:
        core = self.core
        return (core is None or (not core.queue.jobs and not core.machine.running and not core.killing)) \
            and not self._awaiting and self._held_now is None

    def progress(self) -> dict:
        """A snapshot for progress displays."""
        core = self.core
        return {"now": self.now, "messages": self.stats.messages, "submitted": self.stats.submitted,
                "completed": self.stats.completed, "waiting": len(core.queue.jobs) if core else 0,
                "running": len(core.machine.running) if core else 0}

    # --- one message -----------------------------------------------------------------------

    def _handle(self, raw: dict) -> dict:
        if self.finished:
            raise ProtocolError("Batsim sent a message after SIMULATION_ENDS")
        t0 = time.perf_counter()
        msg = parse_message(raw, "batsim")
        self.stats.parse_seconds += time.perf_counter() - t0
        now = msg.now
        if now < self.now:
            raise ProtocolError(f"Batsim message at now={now}: time went backwards (previous message at now={self.now})")
        self.stats.messages += 1
        self.stats.events_in += len(msg.events)
        batch = self._sort(msg.events, now)
        if batch.begins is not None:
            self._begin(batch.begins, now)
        elif not self.started:
            kinds = ", ".join(e.TYPE for e in msg.events) or "no event"
            raise ProtocolError(f"Batsim message at now={now}: the first message must hold SIMULATION_BEGINS, got {kinds}")
        out: list[Event] = []  # reruns' registrations, then the pass's rejects, starts, kills and wake-ups
        if self._held_now is not None and self._held_now != now:
            # An instant that never completed (an event it expected never came): its events are applied at
            # their time, and its pass is this message's.
            self._apply_held(out)
        self.now = now
        for completed in batch.completed:
            self._held_ends.append(self._complete(completed, now))
        for killed in batch.killed:
            self._killed(killed, now)
        scheduling = bool(batch.completed or batch.killed or batch.calls)
        for submitted in batch.submitted:
            job = self._submit(submitted, now)
            if job is not None:
                self._held_jobs.append(job)
                scheduling = True
        if self._held_ends or self._held_jobs:
            self._held_now = now
        if batch.calls:
            self._calls = {t for t in self._calls if t > now}
        for notify in batch.notifies:
            self._notify(notify, now)
        if scheduling and self.instant_barrier and self._instant_incomplete(now):
            # Batsim split this instant: more of its events will come in a following message at
            # the same now.  They are held, and applied with the pass once all events of the
            # instant are here, in the local simulator's order.
            self.stats.deferred += 1
        elif scheduling:
            self._apply_held(out)
            t0 = time.perf_counter()
            self._decide(now, out)
            self.stats.decide_seconds += time.perf_counter() - t0
        if batch.ends is not None:
            self._apply_held(out)
            self._end(now)
        elif (self.dynamic and self.no_more_static and not self.registration_finished_sent and self.idle()):
            out.append(Notify(now, type="registration_finished"))
            self.registration_finished_sent = True
        self.stats.events_out += len(out)
        return message(now, out)

    def _instant_incomplete(self, now: float) -> bool:
        """Whether an event of time ``now`` is known to be still on its way.

        Known are: completions (a running job's delay profile and walltime give
        its end), our own CALL_ME_LATER times, and the static submissions (the
        workload files Batsim names in SIMULATION_BEGINS; only their submission
        times are used, never to decide anything).
        """
        if self._ends_at.get(now) or now in self._calls:
            return True
        expected = self._expected
        if expected is None:
            return False
        times, i = self._expected_times, self._expected_next
        while i < len(times) and times[i] < now:  # instants passed: anything still expected never came
            left = expected.pop(times[i], 0)
            if left:
                self.warnings.append(f"{left} job(s) of the workload with submission time {times[i]:g} "
                                     "were never submitted by Batsim")
            i += 1
        self._expected_next = i
        return expected.get(now, 0) > 0

    def _read_workloads(self, ev: SimulationBegins) -> None:
        """The workload files Batsim names: their clock, and (``instant_barrier``) the static submissions."""
        files = read_workload_files(ev.workloads, self.workload_dir, self.instant_barrier)
        if files.warning is not None:
            self.warnings.append(files.warning)
        self.clock = files.clock
        if files.expected is not None:
            self._expected = files.expected
            self._expected_times = sorted(files.expected)

    def _sort(self, events: list[Event], now: float) -> _Batch:
        batch = _Batch()
        for i, ev in enumerate(events):
            if isinstance(ev, JobSubmitted):
                batch.submitted.append(ev)
            elif isinstance(ev, JobCompleted):
                batch.completed.append(ev)
            elif isinstance(ev, JobKilled):
                batch.killed.append(ev)
            elif isinstance(ev, RequestedCall):
                batch.calls += 1
            elif isinstance(ev, Notify):
                batch.notifies.append(ev)
            elif isinstance(ev, SimulationBegins):
                if batch.begins is not None or self.started:
                    raise ProtocolError(f"Batsim message at now={now}, event #{i}: a second SIMULATION_BEGINS "
                                        "(is more than one Batsim connected to this scheduler?)")
                batch.begins = ev
            elif isinstance(ev, SimulationEnds):
                batch.ends = ev
            elif isinstance(ev, ResourceStateChanged):
                raise ProtocolError(f"Batsim message at now={now}, event #{i}: unexpected RESOURCE_STATE_CHANGED "
                                    "(this scheduler never changes resource states)")
            else:  # pragma: no cover - parse_message only yields the types above
                raise ProtocolError(f"Batsim message at now={now}, event #{i}: unexpected {ev.TYPE}")
        return batch

    # --- events ------------------------------------------------------------------------------

    def _begin(self, ev: SimulationBegins, now: float) -> None:
        m = ev.nb_compute_resources
        ids = sorted(ev.compute_resource_ids)
        if ids != list(range(m)):
            raise ProtocolError(f"SIMULATION_BEGINS: compute resource ids must be 0..{m - 1}, got {ids[:5]}...")
        if ev.allow_compute_sharing:
            self.warnings.append("Batsim allows compute sharing; this scheduler never shares a machine")
        self.begins = ev
        self.dynamic = ev.dynamic_jobs_enabled
        self.started = True
        self._read_workloads(ev)
        self.core = self._core_factory(m, self.clock)
        self.core.runtime_oracle = self.true_runtime
        if self.core.may_kill:
            self._check_dynamic(f"this configuration kills and requeues jobs ({', '.join(self.core.kill_reasons())})")

    def true_runtime(self, job: Job) -> float:
        """The job's actual work: the delay of its Batsim profile (clairvoyant baselines only).

        A rerun is asked about while its kill is acknowledged, before it is
        registered: it has its job's profile, so its job answers.
        """
        entry = self._jobs.get(self._batsim_id.get(job.id) or self._batsim_id.get(job.first_id, ""))
        if entry is None:
            raise BatsimSetupError(f"no Batsim job is known for {job.id!r}")
        if entry.runtime is None:
            raise BatsimSetupError(f"job {entry.workload}!{job.id} uses profile {entry.profile!r}, which is not a "
                                   "delay profile known to the scheduler: a clairvoyant baseline needs the delay")
        return entry.runtime

    def _profile_delay(self, workload: str, name: str, forwarded: dict | None) -> float | None:
        profile = forwarded
        if profile is None and self.begins is not None:
            profile = self.begins.profiles.get(workload, {}).get(name)
        if isinstance(profile, dict) and profile.get("type") == "delay":
            delay = profile.get("delay")
            if isinstance(delay, (int, float)) and not isinstance(delay, bool):
                return float(delay)
        return None

    def _check_dynamic(self, why: str) -> None:
        cfg = self.begins.config if self.begins is not None else {}
        missing = [flag for key, flag in _FLAG_OF_CONFIG.items() if not cfg.get(key, False)]
        if missing:
            raise BatsimSetupError(f"{why}, which needs Batsim's dynamic jobs: start batsim with "
                                   f"{' '.join(DYNAMIC_JOB_FLAGS)} (missing: {' '.join(missing)})")

    def _entry(self, job_id: str, what: str, now: float) -> _Entry:
        entry = self._jobs.get(job_id)
        if entry is None:
            raise ProtocolError(f"Batsim message at now={now}: {what} for job {job_id!r}, which was never submitted")
        return entry

    def _apply_held(self, out: list[Event]) -> None:
        """Give the core the events received for the held instant, as the local simulator does: the runs that
        ended, in the order they were started, then the jobs submitted, by submission time and id.  The rerun
        the core queues for a killed run is registered in ``out``."""
        at = self._held_now
        if at is None:
            return
        ends, jobs = self._held_ends, self._held_jobs
        if len(ends) > 1:
            ends.sort(key=_start_rank)
        for entry, state in ends:
            rerun = self._end_run(entry, at, state)
            if rerun is not None:
                self._register_rerun(entry, rerun, at, out)
        if len(jobs) > 1:
            jobs.sort(key=_arrival_order)
        core = self._core
        for job in jobs:
            if core.submit(job, at):  # one the core rejects is answered by the pass (REJECT_JOB)
                self.stats.submitted += 1
        ends.clear()
        jobs.clear()
        self._held_now = None

    def _complete(self, ev: JobCompleted, now: float) -> tuple[_Entry, EndState]:
        """Check a completion and count it as arrived; the core is given it with its instant (``_apply_held``)."""
        entry = self._entry(ev.job_id, "JOB_COMPLETED", now)
        job = entry.job
        if entry.done or job.id not in self._core.machine.running:
            where = "has already ended" if entry.done else "was never started"
            raise ProtocolError(f"Batsim message at now={now}: JOB_COMPLETED for job {ev.job_id!r}, which {where}")
        state = _END_STATES.get(ev.job_state)
        if state is None:
            raise ProtocolError(f"Batsim message at now={now}: job {ev.job_id!r} ended as {ev.job_state}, which this "
                                "scheduler does not handle (it runs delay jobs only)")
        expected = alloc_text(job.alloc or [])
        if ev.alloc and ev.alloc != expected and ProcSet.from_str(ev.alloc) != ProcSet(*(job.alloc or [])):
            raise ProtocolError(f"Batsim message at now={now}: JOB_COMPLETED for {ev.job_id!r} reports alloc "
                                f"{ev.alloc!r}, but it was started on {expected!r}")
        if state is not EndState.COMPLETED_KILLED and job.id in self._core.killing:
            self.warnings.append(f"job {ev.job_id} ended ({ev.job_state}) before its kill took effect; not requeued")
        entry.done = True
        if entry.end_at is not None:  # arrived: no longer holds its instant up
            left = self._ends_at[entry.end_at] - 1
            if left:
                self._ends_at[entry.end_at] = left
            else:
                del self._ends_at[entry.end_at]
            entry.end_at = None
        return entry, state

    def _end_run(self, entry: _Entry, now: float, state: EndState) -> Job | None:
        rerun = self._core.end(entry.job.id, now, state)
        self.stats.completed += 1
        if state is EndState.COMPLETED_KILLED:
            self.stats.killed += 1
        elif state is EndState.COMPLETED_WALLTIME_REACHED:
            self.stats.walltime_reached += 1
        return rerun

    def _register_rerun(self, entry: _Entry, rerun: Job, now: float, out: list[Event]) -> None:
        """Register in Batsim the rerun the core queued for a killed run (a dynamic job reusing its profile)."""
        job_id = f"{entry.workload}!{entry.job.id}"
        self._check_dynamic(f"job {job_id} was killed to be requeued")
        rerun_id = f"{entry.workload}!{rerun.id}"
        if rerun_id in self._jobs or rerun.id in self._batsim_id:
            raise ProtocolError(f"Batsim message at now={now}: the rerun {rerun_id!r} of {job_id!r} already exists")
        raw = {"profile": entry.profile, "id": rerun_id, "res": rerun.procs,
               "walltime": entry.raw.get("walltime", rerun.walltime), "subtime": now}
        # REGISTER_JOB comes before any EXECUTE_JOB of the rerun in the same reply.
        out.append(RegisterJob(now, job_id=rerun_id, job=raw))
        metadata = {"parent_job": f"{entry.workload}!{rerun.first_id}", "nb_resubmit": rerun.attempt}
        out.append(SetJobMetadata(now, job_id=rerun_id, metadata=str(metadata)))
        self._jobs[rerun_id] = _Entry(rerun, entry.workload, entry.profile, raw, entry.runtime)
        self._batsim_id[rerun.id] = rerun_id
        self._awaiting[rerun_id] = rerun
        self.stats.reruns += 1
        self.stats.submitted += 1

    def _killed(self, ev: JobKilled, now: float) -> None:
        """JOB_KILLED follows the JOB_COMPLETED (COMPLETED_KILLED) of the same runs: only checked."""
        for job_id in ev.job_ids:
            entry = self._entry(job_id, "JOB_KILLED", now)
            if not entry.done:
                raise ProtocolError(f"Batsim message at now={now}: JOB_KILLED for {job_id!r} without its "
                                    "JOB_COMPLETED (COMPLETED_KILLED)")

    def _submit(self, ev: JobSubmitted, now: float) -> Job | None:
        """Record a new job, to be queued with its instant (``_apply_held``); None for a rerun's acknowledgement
        (not a scheduling event: the rerun was queued with its kill's acknowledgement)."""
        job_id = ev.job_id
        if self._awaiting.pop(job_id, None) is not None:
            if ev.res != self._jobs[job_id].job.procs:
                raise ProtocolError(f"Batsim message at now={now}: the acknowledged rerun {job_id!r} asks for "
                                    f"{ev.res} processors, not {self._jobs[job_id].job.procs}")
            return None
        if job_id in self._jobs:
            raise ProtocolError(f"Batsim message at now={now}: job {job_id!r} was submitted twice")
        workload, name = split_job_id(job_id)
        if name.isascii() and name.isdigit():
            seq = int(name)
        else:
            seq = self._next_seq
            self._next_seq += 1
        job = Job(id=name, seq=seq, submit=ev.subtime, procs=ev.res, walltime=ev.walltime, user=ev.user)
        self._arrived(ev.subtime)
        if job.id in self._batsim_id:
            raise ProtocolError(f"Batsim message at now={now}: job {job_id!r} has the same name as "
                                f"{self._batsim_id[job.id]!r}; this scheduler needs job names unique across workloads")
        self._jobs[job_id] = _Entry(job, workload, ev.profile_name, ev.job,
                                    self._profile_delay(workload, ev.profile_name, ev.profile))
        self._batsim_id[job.id] = job_id
        return job

    def _arrived(self, subtime: float) -> None:
        expected = self._expected
        if expected is not None and subtime in expected:
            left = expected[subtime] - 1
            if left:
                expected[subtime] = left
            else:
                del expected[subtime]

    def _notify(self, ev: Notify, now: float) -> None:
        if ev.type == "no_more_static_job_to_submit":
            self.no_more_static = True
        elif ev.type == "no_more_external_event_to_occur":
            pass
        else:
            raise ProtocolError(f"Batsim message at now={now}: unexpected NOTIFY {ev.type!r} "
                                "(external machine events are not supported: the machine is fixed)")

    def _decide(self, now: float, out: list[Event]) -> None:
        decisions = self._core.decide(now)
        self.stats.passes += 1
        ids = self._batsim_id
        for reject in decisions.rejects:
            job_id = ids[reject.job.id]
            out.append(RejectJob(now, job_id=job_id))
            self.warnings.append(f"rejected job {job_id}: it {reject.reason}")
            self.stats.rejected += 1
            self._jobs[job_id].done = True
        for job in decisions.starts:
            job_id = ids[job.id]
            out.append(ExecuteJob(now, job_id=job_id, alloc=alloc_text(job.alloc or [])))
            entry = self._jobs[job_id]
            entry.started = self._starts
            self._starts += 1
            if entry.runtime is not None:
                end = now + delay_outcome(entry.runtime, job.walltime)[0]
                entry.end_at = end
                self._ends_at[end] = self._ends_at.get(end, 0) + 1
        self.stats.started += len(decisions.starts)
        if decisions.kills:
            kill_ids = []
            for kill in decisions.kills:
                job_id = ids[kill.job.id]
                kill_ids.append(job_id)
                if kill.requeue is not None:
                    self._check_dynamic(f"the scheduler killed job {job_id} to requeue it")
            out.append(KillJob(now, job_ids=tuple(kill_ids)))
        for t in decisions.wakeups:
            if t not in self._calls:
                self._calls.add(t)
                out.append(CallMeLater(now, at=float(t)))

    def _end(self, now: float) -> None:
        self.finished = True
        core = self._core
        left = len(core.queue.jobs) + len(core.machine.running) + len(self._awaiting)
        if left:
            self.warnings.append(f"Batsim ended the simulation at t={now} with {len(core.queue.jobs)} jobs waiting, "
                                 f"{len(core.machine.running)} running and {len(self._awaiting)} reruns not acknowledged")

    # --- results --------------------------------------------------------------------------

    def report(self) -> dict:
        """What the core's hooks report, plus the driver's counters and warnings."""
        out = dict(self.core.report()) if self.core is not None else {}
        out["driver"] = self.stats.as_dict()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def _start_rank(end: tuple[_Entry, EndState]) -> int:
    """The order the local simulator ends the runs of one instant in: the order they were started."""
    return end[0].started


def _arrival_order(job: Job) -> tuple[float, str]:
    """The order the jobs submitted at one instant are queued in (the local simulator's: time, then id)."""
    return (job.submit, job.id)

