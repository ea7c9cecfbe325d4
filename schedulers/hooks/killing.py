"""Kill-and-requeue hooks, and the watch list they share.

``KillWatch`` is the mechanics every hook that kills a run at a planned time
needs: remember (run, time), ask for a wake-up at that time, and at a pass
hand back the runs whose time has come (still running ones only).

``KillOnceAfter`` is the protocol exerciser the Batsim issue asks for: every
job that runs longer than a fixed time is killed at exactly that time, once,
and its rerun (same r_j, restarted from scratch) is never killed again.  It
drives the whole kill/requeue path of both backends, and the small/large
safeguard uses the same watch.
"""

from __future__ import annotations

from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues
from bftune.schedulers.option import Option, duration, optional


class KillWatch:
    """Runs to kill at planned times: ``watch`` at a start, ``due`` at a pass, ``forget`` at an end."""

    __slots__ = ("_at", "_new")

    def __init__(self) -> None:
        self._at: dict[str, float] = {}  # run id -> kill time
        self._new: list[float] = []  # kill times not yet asked for as wake-ups

    def __bool__(self) -> bool:
        return bool(self._at)

    def watch(self, job: Job, at: float) -> None:
        self._at[job.id] = at
        self._new.append(at)

    def forget(self, job_id: str) -> None:
        self._at.pop(job_id, None)

    def due(self, core: Core, now: float) -> list[Job]:
        """The watched runs whose kill time has come and that still run, in run-id order (then unwatched)."""
        if not self._at:
            return []
        due = sorted(rid for rid, t in self._at.items() if t <= now)
        running = core.machine.running
        out = []
        for rid in due:
            del self._at[rid]
            job = running.get(rid)
            if job is not None:
                out.append(job)
        return out

    def request_wakeups(self, decisions: Decisions) -> None:
        """Ask for a pass at every kill time watched since the last call."""
        if self._new:
            decisions.wakeups.extend(self._new)
            self._new.clear()


class KillOnceAfter(Hook):
    """Kill each first run still running ``after`` seconds after its start; requeue it."""

    def __init__(self, after: float) -> None:
        self.may_kill = True  # on the instance: see Hook
        self.kill_reason = "kill_after"
        self.after = after
        self._watch = KillWatch()

    def on_start(self, core: Core, job: Job, now: float) -> None:
        if job.attempt == 0 and job.estimate > self.after:
            self._watch.watch(job, now + self.after)

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        self._watch.forget(job.id)

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        for job in self._watch.due(core, now):
            core.kill(job, f"ran {self.after:g}s", decisions, requeue=job.rerun())

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        self._watch.request_wakeups(decisions)


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    after = values["kill_after"]
    return KillOnceAfter(after) if after is not None else None


HOOK = HookSpec(
    name="kill_after",
    options=(
        Option("kill_after", optional(duration(infinite=False, positive=True)), None,
               "test option: kill every job once when it has run this long, and requeue it",
               "scheduler", cli="--kill-after", metavar="DURATION", duration=True),
    ),
    build=build)
