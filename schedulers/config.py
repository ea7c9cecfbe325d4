"""Scheduler configuration: one validated record that builds a decision core.

The same ``SchedulerConfig`` comes from the CLI, from pybatsim's ``-o`` JSON
options and from campaign files, so a configuration means the same thing on
both backends.  Validation happens here, before any simulation or any
message is exchanged, and every error names the offending option.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.durations import DurationError, format_duration, parse_duration
from bftune.schedulers.core.easy import RESERVATION_MODELS, Easy
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.policies import SELECTION_DEFAULT, UnknownPolicyError, get_policy


class ConfigError(ValueError):
    """An invalid scheduler option; the message names the option."""


@dataclass
class SchedulerConfig:
    """Everything that defines a scheduler.  Defaults are EASY-FCFS, count model."""

    policy: str = "FCFS"  # primary order (Pr)
    backfill_policy: str | None = None  # Pb; None = same as policy
    threshold: float = math.inf  # Theta, seconds
    reservation: str = "count"
    backfill: bool = True  # False = strict order, no backfilling
    kill_after: float | None = None  # test option: kill each job once at this elapsed time, requeue it
    # Online policy selection (SPEC section 4); selector None = a fixed policy, no periods.
    selector: str | None = None  # fixed | random | full | noisy | bandit
    period: float = 7 * 86400.0  # Delta
    candidates: list[str] = field(default_factory=lambda: list(SELECTION_DEFAULT))
    decay: float = 1.0  # lambda
    epsilon: float = 0.1
    noise: float = 0.2  # noisy feedback: factors uniform in [1 - noise, 1 + noise]
    seed: int = 0
    # Small/large classification (SPEC section 5); classifier None = no classes.
    classifier: str | None = None  # rf | class-clairvoyant | runtime-clairvoyant
    safeguard: bool = True
    features: str = "weekly"  # weekly (the study's) | live
    fairness: bool = False  # also measure unfair delay and reservation violations (SPEC 3)
    unix_start_time: int | None = None  # the trace's calendar, for calendar features
    timezone: str | None = None
    extra: dict = field(default_factory=dict)  # options consumed by extensions

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        try:
            self.policy = get_policy(self.policy).name  # the registry's spelling: "lcfs" -> "LCFS"
            if self.backfill_policy is not None:
                self.backfill_policy = get_policy(self.backfill_policy).name
        except UnknownPolicyError as exc:
            raise ConfigError(f"policy: {exc}") from None
        if self.reservation not in RESERVATION_MODELS:
            raise ConfigError(
                f"reservation: {self.reservation!r} is not a reservation model; choose {' or '.join(RESERVATION_MODELS)}"
            )
        if not isinstance(self.threshold, (int, float)) or self.threshold < 0:
            raise ConfigError(f"threshold: expected a non-negative duration, got {self.threshold!r}")
        if self.kill_after is not None and not (self.kill_after > 0):
            raise ConfigError(f"kill_after: expected a positive duration, got {self.kill_after!r}")
        if self.selector is not None:
            from bftune.learning.selectors import SELECTORS  # numpy: imported only when selecting

            if self.selector not in SELECTORS:
                raise ConfigError(f"selector: {self.selector!r} is not a selector; choose one of {', '.join(SELECTORS)}")
            if not (isinstance(self.period, (int, float)) and 0 < self.period < math.inf):
                raise ConfigError(f"period: expected a positive finite duration, got {self.period!r}")
            if not isinstance(self.candidates, list) or not self.candidates:
                raise ConfigError("candidates: expected a non-empty list of policy names")
            try:
                self.candidates = [get_policy(name).name for name in self.candidates]
            except UnknownPolicyError as exc:
                raise ConfigError(f"candidates: {exc}") from None
            if len(set(c.upper() for c in self.candidates)) != len(self.candidates):
                raise ConfigError("candidates: a policy is listed twice")
            if not (0 < self.decay <= 1):
                raise ConfigError(f"decay: expected a number in (0, 1], got {self.decay!r}")
            if not (0 <= self.epsilon <= 1):
                raise ConfigError(f"epsilon: expected a probability in [0, 1], got {self.epsilon!r}")
            if not (0 <= self.noise < 1):
                raise ConfigError(f"noise: expected a number in [0, 1), got {self.noise!r}")
            if self.backfill_policy is not None:
                raise ConfigError("backfill_policy: a selector sets both queues' policy; drop backfill_policy")
        if self.classifier is not None:
            from bftune.schedulers.hooks.classified import MODES

            if self.classifier not in MODES:
                raise ConfigError(f"classifier: {self.classifier!r} is not a classifier; choose one of {', '.join(MODES)}")
            if self.selector is not None:
                raise ConfigError("classifier: cannot be combined with a selector (one policy per run)")
        if not isinstance(self.safeguard, bool):
            raise ConfigError(f"safeguard: expected true or false, got {self.safeguard!r}")
        if self.features not in ("weekly", "live"):
            raise ConfigError(f"features: expected weekly or live, got {self.features!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ConfigError(f"seed: expected an integer, got {self.seed!r}")

    @classmethod
    def from_options(cls, options: dict) -> "SchedulerConfig":
        """Build from user-facing options (strings allowed: "40h", "SAF")."""
        if not isinstance(options, dict):
            raise ConfigError(f"options must be a JSON object, got {type(options).__name__}")
        known = {f.name for f in fields(cls)} | {"backfill_policy", "primary", "bf_policy"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ConfigError(
                f"unknown option(s) {', '.join(unknown)}; known options: "
                f"{', '.join(sorted(f.name for f in fields(cls) if f.name != 'extra'))}"
            )
        opts = dict(options)
        if "primary" in opts:
            opts["policy"] = opts.pop("primary")
        if "bf_policy" in opts:
            opts["backfill_policy"] = opts.pop("bf_policy")
        if isinstance(opts.get("candidates"), str):
            opts["candidates"] = [c.strip() for c in opts["candidates"].split(",") if c.strip()]
        if isinstance(opts.get("candidates"), list):
            opts["candidates"] = [str(c).strip().upper() for c in opts["candidates"]]
        for key in ("decay", "epsilon", "noise"):
            if key in opts:
                try:
                    opts[key] = float(opts[key])
                except (TypeError, ValueError):
                    raise ConfigError(f"{key}: expected a number, got {opts[key]!r}") from None
        for key in ("threshold", "kill_after", "period"):
            if key == "kill_after" and opts.get(key) is None:
                opts.pop(key, None)  # null = no kill (as to_dict writes it)
                continue
            if key in opts:
                try:
                    value = parse_duration(opts[key], key, allow_infinite=(key == "threshold"))
                except DurationError as exc:
                    raise ConfigError(str(exc)) from None
                opts[key] = value
        for key in ("backfill", "safeguard", "fairness"):
            if key in opts and not isinstance(opts[key], bool):
                raise ConfigError(f"{key}: expected true or false, got {opts[key]!r}")
        for key in ("policy", "backfill_policy", "reservation", "selector", "classifier", "features", "timezone"):
            if key in opts and opts[key] is not None and not isinstance(opts[key], str):
                raise ConfigError(f"{key}: expected a string, got {opts[key]!r}")
        return cls(**opts)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["threshold"] = format_duration(self.threshold)
        if self.kill_after is not None:
            d["kill_after"] = format_duration(self.kill_after)
        if self.selector is None:
            for key in ("period", "candidates", "decay", "epsilon", "noise"):
                d.pop(key)
        if self.classifier is None:
            for key in ("safeguard", "features"):
                d.pop(key)
        else:
            d["period"] = format_duration(self.period)
        d["algorithm"] = self.describe()
        return d

    @property
    def may_requeue(self) -> bool:
        """Whether this configuration kills and requeues jobs (Batsim then needs dynamic jobs).

        Kept next to ``build_hooks``: a new killing hook must say so here.
        """
        if self.kill_after is not None:
            return True
        return self.classifier is not None and self.safeguard and self.classifier != "runtime-clairvoyant"

    @property
    def by_class(self) -> bool:
        return self.classifier in ("rf", "class-clairvoyant")

    def orders(self) -> tuple[Order, Order]:
        primary = Order.of(self.policy, self.threshold, self.by_class)
        backfill = Order.of(self.backfill_policy or self.policy, self.threshold, self.by_class)
        return primary, backfill

    def describe(self) -> str:
        if self.classifier is not None:
            base = self.build_algorithm().describe()
            guard = "" if self.safeguard or self.classifier == "runtime-clairvoyant" else ", no safeguard"
            return f"{base} with {self.classifier}{guard}"
        if self.selector is not None:
            policy = self.policy if self.selector == "fixed" else "|".join(self.candidates)
            theta = "" if self.threshold == math.inf else f", {format_duration(self.threshold)}"
            return f"EASY({self.selector}[{policy}] per {format_duration(self.period)}{theta})"
        return self.build_algorithm().describe()

    def build_algorithm(self) -> Easy:
        primary, backfill = self.orders()
        return Easy(primary, backfill, reservation=self.reservation, backfill_enabled=self.backfill)

    def build_hooks(self) -> list[Hook]:
        hooks: list[Hook] = []
        if self.kill_after is not None:
            from bftune.schedulers.hooks.killing import KillOnceAfter

            hooks.append(KillOnceAfter(self.kill_after))
        if self.selector is not None:
            from bftune.learning.selectors import make_selector
            from bftune.schedulers.hooks.selection import PolicySelection

            selector = make_selector(self.selector, self.candidates, self.policy, self.decay, self.epsilon,
                                     self.noise)
            hooks.append(PolicySelection(selector, self.period, self.threshold, self.reservation, self.seed))
        if self.fairness:
            from bftune.schedulers.hooks.fairness import FairnessMonitor

            hooks.append(FairnessMonitor())
        if self.classifier is not None:
            from bftune.learning.classifier import RuntimeClassifier
            from bftune.schedulers.hooks.classified import SmallFirst

            # Only the learned variant needs a forest; the baselines need the divider alone.
            clf = RuntimeClassifier(self.unix_start_time, self.timezone, features=self.features, seed=self.seed,
                                    train=self.classifier == "rf")
            hooks.append(SmallFirst(self.classifier, clf, self.safeguard))
        return hooks

    def build(self, m: int) -> Core:
        """A fresh decision core for an m-processor machine."""
        return Core(m, self.build_algorithm(), self.build_hooks())
