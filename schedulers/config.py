"""Scheduler configuration: one validated record that builds a decision core.

The same ``SchedulerConfig`` comes from the CLI, from pybatsim's ``-o`` JSON
options and from campaign files, all through the one option table
(:mod:`bftune.schedulers.options`), so a configuration means the same thing
on both backends.  Validation happens here, before any simulation or any
message is exchanged, and every error names the offending option.

This is the one place that knows every piece: it builds the algorithm, the
hooks (with their learned parts) and, for selection, the replay of past
periods in the local simulator - which is why neither the hooks nor the core
import any of it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Callable

from bftune.learning.learners import learner
from bftune.learning.predictors import make_predictor
from bftune.learning.selectors import make_selector
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Algorithm, Core, Hook
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.pveasy import PvEasy
from bftune.schedulers.drivers.local.simulator import PeriodReplay
from bftune.schedulers.hooks.classified import LEARNED, TWO_QUEUES, SmallFirst
from bftune.schedulers.hooks.fairness import FairnessMonitor
from bftune.schedulers.hooks.killing import KillOnceAfter
from bftune.schedulers.hooks.prediction import Prediction
from bftune.schedulers.hooks.selection import PolicySelection
from bftune.schedulers.options import DURATIONS, OPTIONS, ConfigError, applies, check_requirements, parse_options

__all__ = ["ConfigError", "SchedulerConfig"]


def _default(name: str):
    default = OPTIONS[name].default
    if isinstance(default, list):
        return field(default_factory=lambda: list(default))
    return default


def _rule(option: str, reason: str) -> ConfigError:
    """A rule between options, blamed on ``option``."""
    return ConfigError(f"{option}: {reason}", option=option, reason=reason)


@dataclass
class SchedulerConfig:
    """Everything that defines a scheduler; the fields are the option table's options.

    Defaults (the table's) are EASY-FCFS, count model, walltimes as estimates.
    """

    scheduler: str = _default("scheduler")  # easy | pv-easy
    policy: str = _default("policy")  # primary order (Pr)
    backfill_policy: str | None = _default("backfill_policy")  # Pb; None = same as policy
    threshold: float = _default("threshold")  # Theta, seconds
    reservation: str = _default("reservation")
    venture_fill: str = _default("venture_fill")  # PV-EASY: idle processors after step 3a: priority | shortest | none
    backfill: bool = _default("backfill")  # False = strict order, no backfilling
    predictor: str = _default("predictor")  # planning estimates: walltime | last | avg2 | exact | virtual:X
    overrun_estimate: str = _default("overrun_estimate")  # walltime | expired: a running job past its prediction
    kill_after: float | None = _default("kill_after")  # test option: kill each job once at this elapsed time
    fairness: bool = _default("fairness")  # also measure unfair delay and reservation violations (SPEC 3)
    seed: int = _default("seed")
    # Online policy selection (SPEC section 4); selector None = a fixed policy, no periods.
    selector: str | None = _default("selector")
    period: float = _default("period")  # Delta
    candidates: list[str] = _default("candidates")
    decay: float = _default("decay")  # lambda
    epsilon: float = _default("epsilon")
    noise: float = _default("noise")  # noisy feedback: factors uniform in [1 - noise, 1 + noise]
    # Small/large classification (SPEC section 5); classifier None = no classes.
    classifier: str | None = _default("classifier")
    safeguard: bool = _default("safeguard")
    safeguard_period: float | None = _default("safeguard_period")  # study 004's periodic check (Algorithm 2)
    features: str = _default("features")
    learning: str = _default("learning")  # online (from the schedule, SPEC 5) | decoupled (study 004: the trace)
    divider_window: float = _default("divider_window")  # the divider's window of finished jobs (online learning)
    unix_start_time: int | None = _default("unix_start_time")  # the trace's calendar, for calendar features
    timezone: str | None = _default("timezone")

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Every field through its option's parser (normalising names), then the cross-option rules."""
        for f in fields(self):
            setattr(self, f.name, OPTIONS[f.name].parse(getattr(self, f.name), f.name))
        changed = {f.name: getattr(self, f.name) for f in fields(self)
                   if getattr(self, f.name) != OPTIONS[f.name].default}
        check_requirements(changed)
        if self.selector is not None and self.backfill_policy is not None:
            raise _rule("backfill_policy", "a selector sets both queues' policy; drop backfill_policy")
        if self.classifier is not None and self.selector is not None:
            raise _rule("classifier", "cannot be combined with a selector (one policy per run)")
        if self.learning == "decoupled" and self.features != "weekly":
            raise _rule("learning", "decoupled learning uses weekly features (drop features = live)")

    @classmethod
    def from_options(cls, options: dict, where: Callable[[str], str] = str) -> "SchedulerConfig":
        """Build from user-facing options (strings allowed: "40h", "SAF"); see the option table.

        ``where(name)`` names an option in errors the way the user wrote it (``--threshold``).
        """
        return cls(**parse_options(options, where))

    def to_dict(self) -> dict:
        """The options that mean something for this configuration, as a user would write them."""
        values = asdict(self)
        d = {name: value for name, value in values.items() if applies(name, values)}
        for name in DURATIONS & d.keys():
            if d[name] is not None:
                d[name] = format_duration(d[name])
        d["algorithm"] = self.describe()
        return d

    @property
    def needs_dynamic_jobs(self) -> bool:
        """Whether this configuration may kill and requeue jobs: Batsim then needs dynamic jobs.

        Derived from what the algorithm and the hooks declare (``may_kill``), never listed here.
        """
        return self.build_algorithm().may_kill or any(hook.may_kill for hook in self.build_hooks())

    @property
    def by_class(self) -> bool:
        return self.classifier in TWO_QUEUES

    def orders(self) -> tuple[Order, Order]:
        primary = Order.of(self.policy, self.threshold, self.by_class)
        backfill = Order.of(self.backfill_policy or self.policy, self.threshold, self.by_class)
        return primary, backfill

    def describe(self) -> str:
        if self.classifier is not None:
            base = self.build_algorithm().describe()
            guard = "" if self.safeguard or self.classifier == "runtime-clairvoyant" else ", no safeguard"
            if self.safeguard and self.safeguard_period is not None and self.classifier != "runtime-clairvoyant":
                guard = f", safeguard every {format_duration(self.safeguard_period)}"
            learning = ", decoupled learning" if self.learning == "decoupled" else ""
            return f"{base} with {self.classifier}{guard}{learning}"
        if self.selector is not None:
            policy = self.policy if self.selector == "fixed" else "|".join(self.candidates)
            theta = "" if self.threshold == math.inf else f", {format_duration(self.threshold)}"
            base = f"EASY({self.selector}[{policy}] per {format_duration(self.period)}{theta})"
        else:
            base = self.build_algorithm().describe()
        if self.predictor == "walltime" or not self.backfill:
            return base
        kept = " overrun_estimate=expired" if self.overrun_estimate == "expired" else ""
        return f"{base} predictor={self.predictor}{kept}"

    def build_algorithm(self) -> Algorithm:
        primary, backfill = self.orders()
        if self.scheduler == "pv-easy":
            return PvEasy(primary, self.venture_fill)
        return Easy(primary, backfill, reservation=self.reservation, backfill_enabled=self.backfill)

    def build_hooks(self, replay_memo: dict[str, float] | None = None) -> list[Hook]:
        """The hooks; ``replay_memo``: period replays shared with other runs (``PeriodReplay``)."""
        hooks: list[Hook] = []
        if self.predictor != "walltime" and self.backfill:
            # First, so that every other hook sees a job's planning estimate.
            hooks.append(Prediction(make_predictor(self.predictor, self.seed)))
        if self.kill_after is not None:
            hooks.append(KillOnceAfter(self.kill_after))
        if self.selector is not None:
            selector = make_selector(self.selector, self.candidates, self.policy, self.decay, self.epsilon,
                                     self.noise)
            replay = (PeriodReplay(self.threshold, self.reservation, memo=replay_memo)
                      if selector.needs_simulation else None)
            hooks.append(PolicySelection(selector, self.period, self.threshold, replay, self.seed))
        if self.fairness:
            hooks.append(FairnessMonitor())
        if self.classifier is not None:
            # Only the learned variant needs a forest; the baselines need the divider alone.
            make = learner(self.learning)
            train = self.classifier in LEARNED
            if self.learning == "decoupled":  # the study's divider: no window to choose
                clf = make(self.unix_start_time, self.timezone, features=self.features, seed=self.seed, train=train)
            else:
                clf = make(self.unix_start_time, self.timezone, features=self.features, seed=self.seed, train=train,
                           divider_window=self.divider_window)
            hooks.append(SmallFirst(self.classifier, clf, self.safeguard, self.safeguard_period))
        return hooks

    def build(self, m: int, replay_memo: dict[str, float] | None = None) -> Core:
        """A fresh decision core for an m-processor machine (``replay_memo``: see ``build_hooks``)."""
        return Core(m, self.build_algorithm(), self.build_hooks(replay_memo),
                    revise_overruns=self.overrun_estimate == "walltime")
