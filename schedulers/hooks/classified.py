"""Small jobs first, with a learned classifier and a kill-and-requeue safeguard (SPEC section 5).

Every first run is classified at submission: small (queue class 0) or large
(class 1).  The EASY orders are built with ``by_class`` so the small queue,
sorted by the policy, precedes the large queue, sorted by the same policy;
the threshold still wraps the concatenation.

Safeguard: a job started as small that is still running when it has run as
long as the divider in force at its start is killed at exactly that moment
and requeued as large, keeping its r_j, restarting from scratch.  A rerun is
large, so it is never killed again for the same reason.  A job whose walltime
is not longer than that divider needs no watch: it cannot overrun it.

Periodic safeguard (``check_period``): study 004's Algorithm 2 instead goes
through the running jobs "at the end of every week" and kills the small ones
whose elapsed time exceeds the divider *then*.  The checks fall at the first
submission + k * period (the instant the classifier's weeks start from on both
backends); the hook asks for a wake-up at the next one while a small job runs,
and none when none does, so simulations end.  A job that overruns the divider
between two checks runs on until the next one, so most false small jobs
finish before any check: far fewer kills, each later in the job's run.

Variants (``mode``), which differ only in where the class comes from:
- ``rf``: the online random forest of ``bftune.learning.classifier``;
- ``class-clairvoyant``: the true class (runtime < divider at submission),
  from the driver's runtime oracle; same safeguard, so a perfect classifier
  and this baseline schedule identically;
- ``runtime-clairvoyant``: no classes at all; every job's planning estimate
  p~ is its true runtime (capped by its walltime), the upper bound of what
  runtime prediction can give EASY.
- ``rf-no-false-large`` / ``rf-no-false-small``: the forest's classes with
  one kind of its errors corrected from the runtime oracle (a truly small
  job it calls large goes small; a truly large job it calls small goes
  large), the rest as ``rf``.  Not schedulers anyone could run: they split
  the distance from ``rf`` to ``class-clairvoyant`` into what each kind of
  error costs (delayed small jobs against killed large ones), which a
  reproduction needs when the same error *rates* cost more than published.
``safeguard=False`` is the no-safeguard baseline (misclassified large jobs
run to completion in the small queue's slots).

The classifier is a :class:`~bftune.learning.classifier.RuntimeClassifier`
(learns from the jobs as they finish in this schedule) or, to reproduce
study 004, a :class:`~bftune.learning.decoupled.DecoupledClassifier` (learns
from the trace; it is handed each job's runtime at classification, for use
at the end of the job's submission week).
"""

from __future__ import annotations

from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.hooks.killing import KillWatch

SMALL, LARGE = 0, 1
#: The forest's classes with one kind of error corrected by the oracle: mode -> the true class it corrects to.
CORRECTED = {"rf-no-false-large": SMALL, "rf-no-false-small": LARGE}
MODES = ("rf", "class-clairvoyant", "runtime-clairvoyant", *CORRECTED)
#: The modes that train the forest (the others need the divider alone).
LEARNED = ("rf", *CORRECTED)
#: The modes that order a small queue before a large one (runtime-clairvoyant keeps one queue).
TWO_QUEUES = ("rf", "class-clairvoyant", *CORRECTED)


class SmallFirst(Hook):
    """Classify at submission, order small first, kill overrunning small jobs."""

    def __init__(self, mode: str, classifier, safeguard: bool = True, check_period: float | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown classifier mode {mode!r}; choose one of {', '.join(MODES)}")
        self.mode = mode
        self.clf = classifier
        self.safeguard = safeguard and mode != "runtime-clairvoyant"
        self.may_kill = self.safeguard
        self.kill_reason = "the classifier's safeguard"
        self._watch = KillWatch()
        self.kills = 0
        if check_period is not None and not check_period > 0:
            raise ValueError(f"check_period must be a positive duration, got {check_period}")
        self.check_period = check_period
        self._origin: float | None = None  # first submission: the checks' time origin
        self._next_check = float("inf")
        self._wake_requested = -float("inf")
        self._small_running = 0  # running small jobs (the periodic check asks for wake-ups only while any run)

    def on_submit(self, core: Core, job: Job, now: float) -> None:
        if self._origin is None:
            self._origin = now
        self.clf.advance(now)
        if self.mode == "runtime-clairvoyant":
            job.estimate = min(core.true_runtime(job, self.mode), job.walltime)
        if job.attempt > 0:  # a rerun: requeued as large, not classified again
            job.qclass = LARGE
            return
        if getattr(self.clf, "needs_runtime", False):  # study 004: decoupled learning reads the trace
            small, prob = self.clf.classify(job.id, job.user, job.procs, job.walltime, job.submit, now,
                                            runtime=core.true_runtime(job, self.mode))
        else:
            small, prob = self.clf.classify(job.id, job.user, job.procs, job.walltime, job.submit, now)
        if self.mode == "class-clairvoyant":
            small = self._truly_small(core, job, now)
        elif self.mode in CORRECTED:
            truly_small = self._truly_small(core, job, now)
            if truly_small != small and truly_small == (CORRECTED[self.mode] == SMALL):
                small = truly_small  # the kind of error this mode corrects
        if self.mode == "runtime-clairvoyant":
            small = False  # one queue: classes play no part
        job.qclass = SMALL if small else LARGE
        job.tag("predicted_small", bool(small))
        job.tag("prob_small", float(prob))

    def _truly_small(self, core: Core, job: Job, now: float) -> bool:
        """The job's true class against the divider in force (none yet, in the first week: large)."""
        divider = self.clf.divider(now)
        return divider is not None and core.true_runtime(job, self.mode) < divider

    def on_start(self, core: Core, job: Job, now: float) -> None:
        if not self.safeguard or job.qclass != SMALL:
            return
        if self.check_period is not None:
            self._small_running += 1
            return
        divider = self.clf.divider(now)
        if divider is None or job.walltime <= divider:
            return
        self._watch.watch(job, now + divider)
        job.tag("divider_at_start", float(divider))

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        self._watch.forget(job.id)
        if self.check_period is not None and self.safeguard and job.qclass == SMALL:
            self._small_running -= 1
        self.clf.advance(now)
        if state is not EndState.COMPLETED_KILLED:
            self.clf.finished(job.first_id, now - job.start, now)

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        self.clf.advance(now)
        due = self._watch.due(core, now) if self.check_period is None else self._checked(core, now)
        for job in due:
            rerun = job.rerun()
            rerun.qclass = LARGE
            self.kills += 1
            core.kill(job, "small job ran past the divider", decisions, requeue=rerun)

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if self.check_period is None:
            self._watch.request_wakeups(decisions)
            return
        if self._origin is None or not self._small_running:
            return
        if self._next_check <= now or self._next_check == float("inf"):  # first small start, or checks skipped
            self._next_check = self._check_after(now)
        if self._next_check > self._wake_requested:
            decisions.wakeups.append(self._next_check)
            self._wake_requested = self._next_check

    # --- the periodic safeguard --------------------------------------------------------

    def _check_after(self, now: float) -> float:
        """The first check instant strictly after ``now``."""
        period, origin = self.check_period, self._origin
        assert period is not None and origin is not None, "checks are timed from the first submission"
        k = int((now - origin) // period) + 1
        return origin + k * period

    def _checked(self, core: Core, now: float) -> list[Job]:
        """At a check instant: the running small jobs that have run longer than the current divider."""
        if now < self._next_check:
            return []
        self._next_check = self._check_after(now)
        divider = self.clf.divider(now)
        if divider is None:
            return []
        running = core.machine.running
        return [running[rid] for rid in sorted(running)
                if running[rid].qclass == SMALL and now - running[rid].start > divider]

    def report(self) -> dict:
        cls = dict(self.clf.report())
        if self.mode in CORRECTED:
            cls["note"] = (f"{self.mode}: the figures below are the forest's own predictions; the schedule used "
                           "them with one kind of error corrected from the true runtimes")
        elif self.mode != "rf":
            # The baselines train no forest: the figures below describe "every job large"
            # predictions, not the classes the baseline used.
            cls["note"] = f"{self.mode}: classes come from the true runtimes; no forest was trained"
        overall = cls.get("overall") or {}
        for key in ("accuracy", "precision", "recall", "false_small_rate", "false_large_rate"):
            cls.setdefault(key, overall.get(key))  # the headline figures at the top, per-week rows in "weeks"
        out = {"classification": cls, "safeguard_kills": self.kills,
               "classifier_mode": self.mode, "safeguard": self.safeguard}
        return out
