"""Small jobs first, with a learned classifier and a kill-and-requeue safeguard.

The rules: docs/semantics/learning.md#classification.

Every first run is classified at submission: small (queue class 0) or large
(class 1).  The EASY orders are built with ``by_class`` so the small queue,
sorted by the policy, precedes the large queue, sorted by the same policy;
the threshold still wraps the concatenation.

Safeguard: a job started as small that is still running when it has run as
long as the divider in force at its start is killed at exactly that moment
and requeued as large, keeping its r_j, restarting from scratch.  A rerun is
large, so it is never killed again for the same reason.  A job whose walltime
is not longer than that divider needs no watch: it cannot overrun it.

Safeguard against the current divider (``divider_now``): the divider moves as
jobs finish; instead of the divider in force at the job's start, a small job
is killed at the first instant its execution time reaches the divider in
force *then*.  The hook keeps the running small jobs, kills at each pass those
with ``now >= start + divider(now)``, and asks for a wake-up at the earliest
start + divider(now) among the others; the divider changes only when a job
finishes (an event, hence a pass) or, with a finite divider window, when a
finished job leaves the window between events, which the next pass catches.

Periodic safeguard (``check_period``): instead of watching each job, go
through the running jobs at fixed instants (say, at the end of every week)
and kill the small ones whose elapsed time exceeds the divider *then*.  The
checks fall at the first
submission + k * period (the instant the classifier's weeks start from on both
backends); the hook asks for a wake-up at the next one while a small job runs,
and none when none does, so simulations end.  A job that overruns the divider
between two checks runs on until the next one, so most false small jobs
finish before any check: far fewer kills, each later in the job's run.

Modes (:class:`ClassMode`, the ``classifier`` option), which differ only in
where the class comes from:
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
  error costs (delayed small jobs against killed large ones).
``safeguard=False`` is the no-safeguard baseline (misclassified large jobs
run to completion in the small queue's slots).

The classifier (:class:`RuntimeClasses`) is a
:class:`~bftune.learning.classifier.RuntimeClassifier` (learns from the jobs
as they finish in this schedule) or a
:class:`~bftune.learning.decoupled.DecoupledClassifier` (learns from the
workload log, week by week; it is handed each job's runtime at
classification, for use at the end of the job's submission week).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bftune.learning.features import (AGGREGATE_CLASSES, CALENDAR_MODES, CATEGORICAL_SETS, FEATURE_MODES,
                                      RELABEL_MODES)
from bftune.learning.learners import LEARNING_MODES, learner
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.hooks.killing import KillWatch
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues
from bftune.schedulers.option import (EASY, Option, Requirement, boolean, choice, duration, is_set, is_true,
                                      optional, rule)
from bftune.workloads.model import WEEK

SMALL, LARGE = 0, 1


@dataclass(frozen=True)
class ClassMode:
    """Where a job's class comes from: one value of the ``classifier`` option.

    ``classes``: ``forest`` (the classifier's predictions), ``true`` (the
    true class, from the runtime oracle) or ``none`` (one queue, every job's
    planning estimate its true runtime); ``corrects_to``: with the forest's
    classes, the true class whose errors are corrected from the oracle (a
    truly small job called large goes small: ``SMALL``).
    """

    name: str
    classes: str
    help: str
    corrects_to: int | None = None

    @property
    def trains(self) -> bool:
        """Whether the forest must be trained (the other modes need only its divider)."""
        return self.classes == "forest"

    @property
    def two_queues(self) -> bool:
        """Whether a small queue precedes a large one."""
        return self.classes != "none"


#: The ``classifier`` option's values, by name.
MODES: dict[str, ClassMode] = {mode.name: mode for mode in (
    ClassMode("rf", "forest", "the online random forest"),
    ClassMode("class-clairvoyant", "true", "the true class (runtime < divider at submission)"),
    ClassMode("runtime-clairvoyant", "none", "one queue; every planning estimate is the true runtime"),
    ClassMode("rf-no-false-large", "forest", "the forest's classes, its truly small jobs called large corrected",
              corrects_to=SMALL),
    ClassMode("rf-no-false-small", "forest", "the forest's classes, its truly large jobs called small corrected",
              corrects_to=LARGE),
)}


class RuntimeClasses(Protocol):
    """What the hook needs of a classifier (``bftune.learning``'s online and decoupled classifiers).

    ``needs_runtime``: the classifier is handed each job's true runtime when
    it classifies it (a classifier that learns from the workload log rather
    than from the schedule); others are handed None.
    """

    needs_runtime: bool

    def advance(self, now: float) -> None: ...

    def divider(self, now: float) -> float | None: ...

    def classify(self, job_id: str, user: int, procs: int, walltime: float, submit: float, now: float,
                 runtime: float | None = None) -> tuple[bool, float]: ...

    def finished(self, job_id: str, runtime: float, end: float) -> None: ...

    def job(self, job_id: str) -> dict: ...  # what it knows of one job (its label...), for reports

    def report(self) -> dict: ...


class SmallFirst(Hook):
    """Classify at submission, order small first, kill overrunning small jobs."""

    def __init__(self, mode: ClassMode | str, classifier: RuntimeClasses, safeguard: bool = True,
                 check_period: float | None = None, divider_now: bool = False) -> None:
        if isinstance(mode, str):
            if mode not in MODES:
                raise ValueError(f"unknown classifier mode {mode!r}; choose one of {', '.join(MODES)}")
            mode = MODES[mode]
        self.mode = mode
        self.clf = classifier
        self.safeguard = safeguard and mode.two_queues
        self.may_kill = self.safeguard
        self.kill_reason = "the classifier's safeguard"
        self._watch = KillWatch()
        self.kills = 0
        if check_period is not None and not check_period > 0:
            raise ValueError(f"check_period must be a positive duration, got {check_period}")
        self.check_period = check_period
        if divider_now and check_period is not None:
            raise ValueError("a periodic check already compares with the divider in force at each check")
        self.divider_now = divider_now
        self._small: dict[str, Job] = {}  # running small jobs (divider_now: checked against the divider at each pass)
        self._wake_at = -float("inf")  # the last wake-up asked for (divider_now)
        self._origin: float | None = None  # first submission: the checks' time origin
        self._next_check = float("inf")
        self._wake_requested = -float("inf")
        self._small_running = 0  # running small jobs (the periodic check asks for wake-ups only while any run)

    def on_submit(self, core: Core, job: Job, now: float) -> None:
        if self._origin is None:
            self._origin = now
        self.clf.advance(now)
        mode = self.mode
        if not mode.two_queues:
            job.estimate = min(core.true_runtime(job, mode.name), job.walltime)
        if job.attempt > 0:  # a rerun: requeued as large, not classified again
            job.qclass = LARGE
            return
        runtime = core.true_runtime(job, mode.name) if self.clf.needs_runtime else None
        small, prob = self.clf.classify(job.id, job.user, job.procs, job.walltime, job.submit, now, runtime)
        if mode.classes == "true":
            small = self._truly_small(core, job, now)
        elif mode.corrects_to is not None:
            truly_small = self._truly_small(core, job, now)
            if truly_small != small and truly_small == (mode.corrects_to == SMALL):
                small = truly_small  # the kind of error this mode corrects
        elif not mode.two_queues:
            small = False  # one queue: classes play no part
        job.qclass = SMALL if small else LARGE
        job.tag("predicted_small", bool(small))
        job.tag("prob_small", float(prob))

    def _truly_small(self, core: Core, job: Job, now: float) -> bool:
        """The job's true class against the divider in force (none yet, in the first week: large)."""
        divider = self.clf.divider(now)
        return divider is not None and core.true_runtime(job, self.mode.name) < divider

    def on_start(self, core: Core, job: Job, now: float) -> None:
        if not self.safeguard or job.qclass != SMALL:
            return
        if self.check_period is not None:
            self._small_running += 1
            return
        if self.divider_now:
            self._small[job.id] = job
            return
        divider = self.clf.divider(now)
        if divider is None or job.walltime <= divider:
            return
        self._watch.watch(job, now + divider)
        job.tag("divider_at_start", float(divider))

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        self._watch.forget(job.id)
        self._small.pop(job.id, None)
        if self.check_period is not None and self.safeguard and job.qclass == SMALL:
            self._small_running -= 1
        self.clf.advance(now)
        if state is not EndState.COMPLETED_KILLED:
            self.clf.finished(job.first_id, now - job.start, now)

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        self.clf.advance(now)
        if self.check_period is not None:
            due = self._checked(core, now)
        else:
            due = self._past_divider(now) if self.divider_now else self._watch.due(core, now)
        for job in due:
            rerun = job.rerun()
            rerun.qclass = LARGE
            self.kills += 1
            core.kill(job, "small job ran past the divider", decisions, requeue=rerun)

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if self.divider_now:
            self._wake_at_divider(now, decisions)
            return
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

    # --- the safeguard against the current divider ---------------------------------------

    def _past_divider(self, now: float) -> list[Job]:
        """The running small jobs whose execution time has reached the divider in force now, by run id (then
        forgotten: their reruns are large)."""
        divider = self.clf.divider(now)
        if divider is None or not self._small:
            return []
        due = sorted(rid for rid, job in self._small.items() if now >= job.start + divider)
        return [self._small.pop(rid) for rid in due]

    def _wake_at_divider(self, now: float, decisions: Decisions) -> None:
        """A wake-up when the earliest-started running small job reaches the current divider (if not asked)."""
        divider = self.clf.divider(now)
        if divider is None or not self._small:
            return
        at = min(job.start for job in self._small.values()) + divider
        if at > now and at != self._wake_at:
            decisions.wakeups.append(at)
            self._wake_at = at

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
        name = self.mode.name
        if self.mode.corrects_to is not None:
            cls["note"] = (f"{name}: the figures below are the forest's own predictions; the schedule used "
                           "them with one kind of error corrected from the true runtimes")
        elif not self.mode.trains:
            # The baselines train no forest: the figures below describe "every job large"
            # predictions, not the classes the baseline used.
            cls["note"] = f"{name}: classes come from the true runtimes; no forest was trained"
        overall = cls.get("overall") or {}
        for key in ("accuracy", "precision", "recall", "false_small_rate", "false_large_rate"):
            cls.setdefault(key, overall.get(key))  # the headline figures at the top, per-week rows in "weeks"
        out = {"classification": cls, "safeguard_kills": self.kills,
               "classifier_mode": name, "safeguard": self.safeguard}
        return out


# --- the hook's options and how it builds itself -----------------------------------------------

#: The ``safeguard_divider`` option's values: the divider at the job's start (the default) or the current one.
SAFEGUARD_DIVIDERS = ("start", "current")
CLASSIFIER = Requirement("classifier", is_set, "--classifier")
SAFEGUARD = Requirement("safeguard", is_true, "the safeguard (drop --no-safeguard)")


def _is_online(value: object) -> bool:
    return value == "online"


ONLINE_LEARNING = Requirement("learning", _is_online, "--learning online")


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    name = values["classifier"]
    if name is None:
        return None
    mode = MODES[name]
    make = learner(values["learning"])
    clock = context.clock
    # "relative": trace time 0 is 1970-01-01 00:00 UTC, whatever the trace's header says
    start, zone = (clock.unix_start_time, clock.timezone) if values["calendar"] == "absolute" else (0, "UTC")
    learning = {"features": values["features"], "seed": values["seed"], "train": mode.trains,
                "aggregate_classes": values["aggregate_classes"], "categorical": values["categorical_features"]}
    if values["learning"] == "online":  # learning from the log has its own divider and labels
        learning.update(divider_window=values["divider_window"], relabel=values["relabel"])
    clf = make(start, zone, **learning)
    return SmallFirst(mode, clf, values["safeguard"], values["safeguard_period"],
                      divider_now=values["safeguard_divider"] == "current")


def check(values: OptionValues) -> None:
    if values["classifier"] is not None and values["selector"] is not None:
        raise rule("classifier", "cannot be combined with a selector (one policy per run)")
    if values["learning"] == "decoupled" and values["features"] != "weekly":
        raise rule("learning", "decoupled learning uses weekly features (drop features = live)")
    if values["safeguard_divider"] == "current" and values["safeguard_period"] is not None:
        raise rule("safeguard_divider", "a periodic check (safeguard_period) already compares with the divider "
                                        "in force at each check")


def suffix(values: OptionValues) -> str:
    name = values["classifier"]
    if name is None:
        return ""
    kills = MODES[name].two_queues
    guard = "" if values["safeguard"] or not kills else ", no safeguard"
    if values["safeguard"] and values["safeguard_period"] is not None and kills:
        guard = f", safeguard every {format_duration(values['safeguard_period'])}"
    if values["safeguard"] and values["safeguard_divider"] == "current" and kills:
        guard += ", killed at the current divider"
    learning = ", decoupled learning" if values["learning"] == "decoupled" else ""
    for option, default, words in _READINGS:
        if values[option] != default:
            learning += f", {words}"
    return f" with {name}{guard}{learning}"


#: The learning options a description names when they are not their default: (option, default, words).
_READINGS = (("aggregate_classes", "true", "aggregates of predicted classes"),
             ("categorical_features", "none", "categorical features"),
             ("relabel", "none", "labels against last week's median"),
             ("calendar", "absolute", "calendar from the trace start"))


def by_class(values: OptionValues) -> bool:
    name = values["classifier"]
    return name is not None and MODES[name].two_queues


HOOK = HookSpec(
    name="classifier",
    options=(
        Option("classifier", optional(choice(MODES)), None,
               "small jobs first: rf (online random forest), a clairvoyant baseline, or rf with its false "
               "large or false small classes corrected from the true runtimes (what each kind of error costs)",
               "small/large classification", cli="--classifier", choices=tuple(MODES), requires=(EASY,)),
        Option("safeguard", boolean, True, "kill small-queue jobs that run past the divider, requeue them as large",
               "small/large classification", cli="--no-safeguard", cli_value=False, requires=(CLASSIFIER,)),
        Option("safeguard_period", optional(duration(infinite=False, positive=True)), None,
               "check the small jobs only every DURATION from the first submission, killing those that have run "
               "longer than the divider then (a periodic check, e.g. at each week's end: 1w); unset: each at "
               "exactly its start + the divider",
               "small/large classification", cli="--safeguard-period", metavar="DURATION",
               requires=(CLASSIFIER, SAFEGUARD), duration=True),
        Option("safeguard_divider", choice(SAFEGUARD_DIVIDERS), SAFEGUARD_DIVIDERS[0],
               "which divider the safeguard's kill compares a small job's execution time with: the one in force at "
               "its start (start: killed at start + that divider, the default) or the one in force at each instant "
               "(current: killed when its execution time reaches the divider then)",
               "small/large classification", cli="--safeguard-divider", choices=SAFEGUARD_DIVIDERS,
               requires=(CLASSIFIER, SAFEGUARD)),
        Option("features", choice(FEATURE_MODES), FEATURE_MODES[0],
               "lag/aggregate features from jobs finished by the last retraining (weekly) or by now (live)",
               "small/large classification", cli="--features", choices=FEATURE_MODES, requires=(CLASSIFIER,)),
        Option("learning", choice(LEARNING_MODES), LEARNING_MODES[0],
               "training data from the jobs as they finish in this schedule (online) or from the workload log, "
               "week by week, decoupled from the schedule (decoupled: weekly features; reads each job's true "
               "runtime at the end of its submission week, so a live system could not run it)",
               "small/large classification", cli="--learning", choices=LEARNING_MODES, requires=(CLASSIFIER,)),
        Option("divider_window", duration(infinite=True, positive=True), float(WEEK),
               "the divider is the median runtime of the jobs finished in the last DURATION: 1w, or inf (every "
               "job finished so far)",
               "small/large classification", cli="--divider-window", metavar="DURATION",
               requires=(CLASSIFIER, ONLINE_LEARNING), duration=True),
        Option("aggregate_classes", choice(AGGREGATE_CLASSES), AGGREGATE_CLASSES[0],
               "what the aggregate features count among a category's finished jobs: the small ones (true) or those "
               "the classifier classified small at their submission (predicted)",
               "small/large classification", cli="--aggregate-classes", choices=AGGREGATE_CLASSES,
               requires=(CLASSIFIER,)),
        Option("categorical_features", choice(CATEGORICAL_SETS), "none",
               "features the forest treats as factors, each level replaced by its share of small jobs in the "
               "training set: none, request (walltime, procs) or request-and-calendar (also the calendar fields)",
               "small/large classification", cli="--categorical-features", choices=tuple(CATEGORICAL_SETS),
               requires=(CLASSIFIER,)),
        Option("relabel", choice(RELABEL_MODES), RELABEL_MODES[0],
               "training labels: each job's against the divider at its classification (none), or every training "
               "job's against the median runtime of the jobs finished in the week that just ended, at each "
               "retraining (last-week-median)",
               "small/large classification", cli="--relabel", choices=RELABEL_MODES,
               requires=(CLASSIFIER, ONLINE_LEARNING)),
        Option("calendar", choice(CALENDAR_MODES), CALENDAR_MODES[0],
               "the calendar features' clock: the trace's start time in its time zone (absolute) or trace time 0 "
               "as 1970-01-01 00:00 UTC (relative: a workload whose times count from its start)",
               "small/large classification", cli="--calendar", choices=CALENDAR_MODES, requires=(CLASSIFIER,)),
    ),
    build=build, check=check, suffix=suffix, by_class=by_class)
