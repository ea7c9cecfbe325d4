"""Fairness metrics that need the scheduler's view between events (docs/semantics/scheduling.md#metrics).

Priority is the algorithm's (``Algorithm.priority``: EASY's primary order,
PV-EASY's priority), ranks as ``Order.rank`` gives them (threshold
promotion included).  After every pass the monitor looks at the first
waiting job h:

- *blocked jobs*: jobs that were h while not fitting, at some pass (the
  "first blocked job"; in a PV-EASY pass that preempts, the job it
  preempts for; ``blocked_jobs_one_pass`` leaves out the jobs of a second or
  later preemption round at the same instant, which a PV-EASY that preempts
  within one pass never sees at the head); each gets a *reservation* the
  first time, by
  the algorithm's own rule (``Algorithm.expected_start``: EASY's shadow time
  from every running job, PV-EASY's from the sunny load);
- *backfilled jobs*: jobs whose final run was started while a job of higher
  priority was left waiting (EASY's backfilling phase, PV-EASY's venture
  backfilling);
- *unfair delay* (strict-fairness violation) of h: total time during which h
  is the first waiting job, does not fit, but would fit if every running job
  of lower priority were removed;
- *reservation violation*: h starts after its
  reservation and, at some moment after the reservation, was blocked while
  it would have fit without the running jobs of lower priority.  A job that
  starts late only because jobs of higher priority ran past their
  predictions, or because newcomers of higher priority overtook it, is the
  "benign" case and is not counted; it is still counted, with any
  other late start, by ``reservation_missed`` (started after its reservation,
  whatever the cause: the literal rule of docs/semantics/scheduling.md#metrics).  With walltimes EASY-FCFS
  never misses a reservation;
- the delay from reservation is start - reservation (first start after it).

The state between two passes is constant, so each pass's observation holds
until the next pass; the monitor only reads the core and never decides.
It is opt-in (``fairness`` option) because it ranks the running jobs at
every pass with a blocked head.

Per-job results (which jobs were blocked - and when first, and which
of them one pass per instant sees -, backfilled, violated) are
reported under ``fairness_jobs``; ``bftune.experiments.runs.metrics`` joins them
with the out_jobs.csv table for the slowdowns of blocked jobs and the
slowdown increments of violations, then leaves them out of summary.json.
"""

from __future__ import annotations

from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.ordering import first_blocked
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues
from bftune.schedulers.option import Option, boolean


class FairnessMonitor(Hook):
    def __init__(self) -> None:
        self.unfair: dict[str, float] = {}  # first id -> accumulated unfair delay
        self.reserved: dict[str, float] = {}  # first id -> reservation at its first blocked pass
        self.blocked_at: dict[str, float] = {}  # first id -> time of its first blocked pass
        self.violated: set[str] = set()  # first ids blocked by lower-priority jobs after their reservation
        self.violations: dict[str, float] = {}  # first id -> start - reservation, violated jobs
        self.missed: dict[str, float] = {}  # first id -> start - reservation (> 0), any cause
        self.backfilled: set[str] = set()  # first ids whose final run was a backfill start
        self._backfill_runs: set[str] = set()  # run ids started by backfilling, still running
        self._open: tuple[str, float] | None = None  # (head id, since) while the head is unfairly blocked
        # Blocked jobs as one pass per instant sees them (as a PV-EASY that preempts within one pass sees them):
        # the jobs of a second or later preemption round at the same instant left out.
        self.blocked_one_pass: set[str] = set()
        self._preempted_at: float | None = None  # the instant of the last pass that decided kills

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if self._open is not None:
            jid, since = self._open
            self._open = None
            if now > since:
                self.unfair[jid] = self.unfair.get(jid, 0.0) + (now - since)
                if now > self.reserved[jid]:
                    self.violated.add(jid)

    def on_start(self, core: Core, job: Job, now: float) -> None:
        jid = job.first_id
        s = self.reserved.get(jid)
        if s is None or jid in self.missed or jid in self.violations:
            return
        if now > s:
            self.missed[jid] = now - s
            if jid in self.violated:
                self.violations[jid] = now - s

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        was_backfill = job.id in self._backfill_runs
        self._backfill_runs.discard(job.id)
        if state is not EndState.COMPLETED_KILLED:  # the final run decides how the job was started
            if was_backfill:
                self.backfilled.add(job.first_id)
            else:
                self.backfilled.discard(job.first_id)

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if core.killing and not decisions.kills:
            return  # kills of an earlier pass not yet acknowledged: a transitional state, same instant
        order = core.algorithm.priority
        machine = core.machine
        # The blocked job of this pass: the first, in priority order, that does not fit once the
        # jobs before it are taken.  After an ordinary pass that is the first waiting job; a pass
        # that preempts leaves the jobs it will start to the acknowledgement's pass, and its
        # blocked job is the one it preempts for.
        _, head, free = first_blocked(core.queue.iterate(order, now), machine.free_count)
        if decisions.starts and head is not None:
            head_rank = order.rank(head, now)
            for job in decisions.starts:
                if order.rank(job, now) > head_rank:
                    self._backfill_runs.add(job.id)
        if head is None:
            return
        jid = head.first_id
        later_round = bool(decisions.kills) and self._preempted_at == now
        if decisions.kills:
            self._preempted_at = now
        if not later_round:
            self.blocked_one_pass.add(jid)
        if jid not in self.reserved:
            self.reserved[jid] = core.algorithm.expected_start(core, head, now)
            self.blocked_at[jid] = now
        lower = sum(job.procs for job in machine.ranked_below(order, head, now))
        if free + lower >= head.procs:
            self._open = (jid, now)

    def report(self) -> dict:
        delays = [d for d in self.unfair.values() if d > 0]
        viol = list(self.violations.values())
        missed = list(self.missed.values())
        return {
            "fairness": {
                "blocked_jobs": len(self.reserved),
                "blocked_jobs_one_pass": len(self.blocked_one_pass),
                "backfilled_jobs": len(self.backfilled),
                "strict_fairness_violations": len(delays),
                "unfair_delay_total": float(sum(delays)),
                "unfair_delay_jobs": len(delays),
                "unfair_delay_mean": _mean(delays),
                "unfair_delay_max": float(max(delays)) if delays else 0.0,
                "reserved_jobs": len(self.reserved),
                "reservation_violations": len(viol),
                "reservation_violation_mean": _mean(viol),
                "reservation_violation_max": float(max(viol)) if viol else 0.0,
                "reservation_missed": len(missed),
                "reservation_missed_mean": _mean(missed),
                "reservation_missed_max": float(max(missed)) if missed else 0.0,
            },
            "fairness_jobs": {
                "blocked": sorted(self.reserved),
                "blocked_at": dict(sorted(self.blocked_at.items())),
                "blocked_one_pass": sorted(self.blocked_one_pass),
                "backfilled": sorted(self.backfilled),
                "violations": dict(sorted(self.violations.items())),
                "unfair": {j: d for j, d in sorted(self.unfair.items()) if d > 0},
            },
        }


def _mean(values: list[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    return FairnessMonitor() if values["fairness"] else None


HOOK = HookSpec(
    name="fairness",
    options=(
        Option("fairness", boolean, False, "also measure unfair delay and reservation violations (slower)",
               "scheduler", cli="--fairness", cli_value=True),
    ),
    build=build)
