"""The one option table: every scheduler option, defined once.

The CLI (``bftune simulate --policy SAF``), pybatsim's ``-o`` JSON
(``{"policy": "SAF"}``), campaign TOML files and the README's option table
all read :data:`OPTIONS`; each option has one parser, so a value means the
same thing, and a bad value gives the same message naming the option,
whichever way it came in.  Choices come from the registries that define
them (policies, reservation models, selectors, classifier modes, feature
modes), never from a copy.

Why a table of our own rather than pydantic or msgspec: the values users
write are not JSON types but durations (``40h``), registry names
(case-insensitive, normalised to the registry's spelling) and
comma-separated lists, and the errors must name the option the way the user
wrote it (``--threshold``, ``threshold``, ``[online] threshold``).  A typed
validation library would still need one custom parser per option; the table
is those parsers, with nothing in between.

An option may *require* others (``epsilon`` means nothing without a
selector, ``reservation`` nothing without backfilling, a backfilling order
nothing under PV-EASY, which has its own): an option given explicitly while
a requirement is unmet is an error, not silently ignored, and
:meth:`SchedulerConfig.to_dict` leaves such options out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from bftune.learning.features import FEATURE_MODES
from bftune.learning.learners import LEARNING_MODES
from bftune.learning.predictors import PREDICTORS, PredictorError, parse_predictor
from bftune.learning.selectors import SELECTORS
from bftune.schedulers.core.durations import DurationError, format_duration, parse_duration
from bftune.schedulers.core.easy import RESERVATION_MODELS
from bftune.schedulers.core.policies import SELECTION_DEFAULT, UnknownPolicyError, get_policy
from bftune.schedulers.core.pveasy import VENTURE_FILLS
from bftune.schedulers.core.state import OVERRUN_ESTIMATES
from bftune.schedulers.hooks.classified import MODES as CLASSIFIER_MODES
from bftune.workloads.limits import MAX_SEED


class ConfigError(ValueError):
    """An invalid scheduler option; the message names the option.

    A rule between options also says which option it blames (``option``) and
    why without the name (``reason``), so that a campaign can name its own key
    for it instead of restating the rule.
    """

    def __init__(self, message: str, option: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.reason = reason if reason is not None else message


Parser = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Requirement:
    """Option ``name`` must satisfy ``holds`` for the option that requires it to mean anything."""

    name: str
    holds: Callable[[Any], bool]
    says: str  # how the requirement reads in an error: "--selector"


def _is_set(value: Any) -> bool:
    return value is not None


def _is_true(value: Any) -> bool:
    return value is True


@dataclass(frozen=True)
class Option:
    """One scheduler option.

    ``parse(value, where)`` turns what a user wrote into the typed value or
    raises :class:`ConfigError` naming ``where``.  ``cli`` is the command-line
    flag (None: not on the command line); a boolean option's flag stores
    ``cli_value`` (``--no-backfilling`` stores False).  ``aliases`` are other
    accepted spellings of the name (``primary`` for ``policy``).
    """

    name: str
    parse: Parser
    default: Any
    help: str
    section: str
    cli: str | None = None
    metavar: str | None = None
    cli_value: Any = None
    choices: Sequence[str] | None = None
    aliases: tuple[str, ...] = ()
    requires: tuple[Requirement, ...] = ()

    def needs(self) -> str:
        """The requirements as an error or the docs say them: "--scheduler easy and backfilling"."""
        return " and ".join(r.says for r in self.requires)

    def doc_default(self) -> str:
        if self.default is None:
            return "-"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if isinstance(self.default, float) and self.name in DURATIONS:
            return format_duration(self.default)
        if isinstance(self.default, (list, tuple)):
            return ",".join(self.default) if len(self.default) <= 4 else f"the {len(self.default)} of SPEC 4"
        return str(self.default)


# --- parsers --------------------------------------------------------------------------------


def policy_name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a policy name, got {value!r}; see `bftune policies`")
    try:
        return get_policy(value).name
    except UnknownPolicyError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def policy_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = [v for v in (x.strip() for x in value.split(",")) if v]
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(f"{where}: expected a non-empty list of policy names")
    names = [policy_name(v, where) for v in value]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: a policy is listed twice")
    return names


def duration(*, infinite: bool, positive: bool = False, minimum: float | None = None, why: str = "") -> Parser:
    """A duration (``40h``, ``3600``); ``minimum`` (seconds) refuses shorter ones, saying ``why``."""

    def parse(value: Any, where: str) -> float:
        try:
            seconds = parse_duration(value, where, allow_infinite=infinite)
        except DurationError as exc:
            raise ConfigError(str(exc)) from None
        if positive and not seconds > 0:
            raise ConfigError(f"{where}: expected a positive duration, got {value!r}")
        if minimum is not None and seconds < minimum:
            raise ConfigError(f"{where}: {value!r} is shorter than {format_duration(minimum)}{why}")
        return seconds

    parse.__name__ = "duration"
    return parse


def optional(parser: Parser) -> Parser:
    """``None`` (JSON null, TOML absent) is allowed and means "off"."""

    def parse(value: Any, where: str) -> Any:
        return None if value is None else parser(value, where)

    parse.__name__ = f"optional_{parser.__name__}"
    return parse


def choice(values: Iterable[str]) -> Parser:
    allowed = tuple(values)

    def parse(value: Any, where: str) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise ConfigError(f"{where}: expected one of {', '.join(allowed)}, got {value!r}")
        return value

    parse.__name__ = "choice"
    return parse


def number(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> Parser:
    def parse(value: Any, where: str) -> float:
        if isinstance(value, bool):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected a number, got {value!r}") from None
        ok = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
        if not ok or math.isnan(x):
            lo, hi = "(" if low_open else "[", ")" if high_open else "]"
            raise ConfigError(f"{where}: expected a number in {lo}{low:g}, {high:g}{hi}, got {value!r}")
        return x

    parse.__name__ = "number"
    return parse


def integer(minimum: int | None = None, maximum: int | None = None) -> Parser:
    def parse(value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        try:
            x = int(value)
        except ValueError:
            raise ConfigError(f"{where}: expected an integer, got {value!r}") from None
        if minimum is not None and x < minimum:
            raise ConfigError(f"{where}: expected an integer >= {minimum}, got {value!r}")
        if maximum is not None and x > maximum:
            raise ConfigError(f"{where}: expected an integer <= {maximum}, got {value!r}")
        return x

    parse.__name__ = "integer"
    return parse


def predictor(value: Any, where: str) -> str:
    try:
        return parse_predictor(value)
    except PredictorError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    return value


def text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a non-empty string, got {value!r}")
    return value


# --- the table ------------------------------------------------------------------------------

def _is_unset(value: Any) -> bool:
    return value is None


def _is_easy(value: Any) -> bool:
    return value == "easy"


def _is_pv_easy(value: Any) -> bool:
    return value == "pv-easy"


def _is_online(value: Any) -> bool:
    return value == "online"


def _is_predicted(value: Any) -> bool:
    return value != "walltime"


#: The scheduling algorithms (``SchedulerConfig.build_algorithm`` builds each).
SCHEDULERS = ("easy", "pv-easy")

SELECTOR = Requirement("selector", _is_set, "--selector")
CLASSIFIER = Requirement("classifier", _is_set, "--classifier")
NO_CLASSIFIER = Requirement("classifier", _is_unset, "no --classifier")
BACKFILLING = Requirement("backfill", _is_true, "backfilling (drop --no-backfilling)")
EASY = Requirement("scheduler", _is_easy, "--scheduler easy")
PV_EASY = Requirement("scheduler", _is_pv_easy, "--scheduler pv-easy")
ONLINE_LEARNING = Requirement("learning", _is_online, "--learning online")
SAFEGUARD = Requirement("safeguard", _is_true, "the safeguard (drop --no-safeguard)")
PREDICTED = Requirement("predictor", _is_predicted, "a --predictor other than walltime")

DURATIONS = {"threshold", "kill_after", "period", "divider_window", "safeguard_period"}

#: The shortest selection period.  A period is judged by the jobs that ran in it, so one far
#: shorter than a typical job (the archive traces' median runtimes are tens of minutes) measures
#: nothing, and every period is logged: a one-second period on a year-long trace would mean 31
#: million log entries (several GB).  The studies use 1d and 1w.
MIN_PERIOD = 3600.0

_TABLE = (
    Option("scheduler", choice(SCHEDULERS), "easy",
           "EASY backfilling (SPEC 2) or PV-EASY: shadow-load preemption and venture backfilling (SPEC 7)",
           "scheduler", cli="--scheduler", choices=SCHEDULERS),
    Option("policy", policy_name, "FCFS",
           "queue order of both EASY queues (Pr), PV-EASY's priority; see `bftune policies`",
           "scheduler", cli="--policy", metavar="POLICY", aliases=("primary",)),
    Option("backfill_policy", optional(policy_name), None, "backfilling order Pb (default: the primary order)",
           "scheduler", cli="--backfill", metavar="POLICY", aliases=("bf_policy",), requires=(BACKFILLING, EASY)),
    Option("threshold", duration(infinite=True), math.inf,
           "waiting-time threshold Theta: jobs waiting longer go first, by r (40h, 2d, 3600, inf)",
           "scheduler", cli="--threshold", metavar="DURATION"),
    Option("reservation", choice(RESERVATION_MODELS), "count",
           "reservation model: count (the studies') or machines (batsched easy_bf's)",
           "scheduler", cli="--reservation", choices=RESERVATION_MODELS, requires=(BACKFILLING, EASY)),
    Option("venture_fill", choice(VENTURE_FILLS), "priority",
           "what PV-EASY's venture backfilling starts on processors still idle after the jobs predicted to end "
           "by the reservation: further jobs that fit, in priority order (SPEC 7), shortest prediction first, "
           "or none",
           "scheduler", cli="--venture-fill", choices=VENTURE_FILLS, requires=(PV_EASY,)),
    Option("backfill", boolean, True, "backfilling on (false: strict order)", "scheduler",
           cli="--no-backfilling", cli_value=False, requires=(EASY,)),
    Option("predictor", predictor, "walltime",
           "runtime prediction EASY and PV-EASY plan with (the walltime stays the kill time): the user's "
           "walltime, last (Last Model), avg2 (EASY++'s: mean of the user's last two runtimes), exact (true runtime), virtual:X (p(1+U(-X,X)), X in [0, 1), seeded) "
           f"({' | '.join(PREDICTORS)})",
           "scheduler", cli="--predictor", metavar="P", requires=(BACKFILLING, NO_CLASSIFIER)),
    Option("overrun_estimate", choice(OVERRUN_ESTIMATES), "walltime",
           "what a running job's planned end becomes once it outruns its prediction: its walltime (start + "
           "walltime, the simplest of Tsafrir et al.'s corrections) or the expired prediction, kept (a scheduler "
           "that never revises a prediction: the job's processors count as free from its predicted end on)",
           "scheduler", cli="--overrun-estimate", choices=OVERRUN_ESTIMATES, requires=(PREDICTED,)),
    Option("kill_after", optional(duration(infinite=False, positive=True)), None,
           "test option: kill every job once when it has run this long, and requeue it",
           "scheduler", cli="--kill-after", metavar="DURATION"),
    Option("fairness", boolean, False, "also measure unfair delay and reservation violations (slower)",
           "scheduler", cli="--fairness", cli_value=True),
    Option("seed", integer(minimum=0, maximum=MAX_SEED), 0,
           "seed of the selectors', the classifier's and virtual predictions' randomness",
           "scheduler", cli="--seed", metavar="N"),
    Option("selector", optional(choice(SELECTORS)), None,
           "switch the policy of both queues at every period boundary (SPEC 4)",
           "online policy selection", cli="--selector", choices=tuple(SELECTORS), requires=(EASY,)),
    Option("period", duration(infinite=False, positive=True, minimum=MIN_PERIOD,
                              why=": a period far shorter than a job measures nothing"),
           7 * 86400.0, "period Delta (1d, 1w, ...; at least 1h)",
           "online policy selection", cli="--period", metavar="DURATION", requires=(SELECTOR,)),
    Option("candidates", policy_list, list(SELECTION_DEFAULT),
           "comma-separated candidate policies", "online policy selection", cli="--candidates",
           metavar="P1,P2,...", requires=(SELECTOR,)),
    Option("decay", number(0, 1, low_open=True), 1.0, "decay lambda of past periods' costs, in (0, 1]",
           "online policy selection", cli="--decay", metavar="X", requires=(SELECTOR,)),
    Option("epsilon", number(0, 1), 0.1, "bandit exploration probability, in [0, 1]",
           "online policy selection", cli="--epsilon", metavar="X", requires=(SELECTOR,)),
    Option("noise", number(0, 1, high_open=True), 0.2,
           "noisy feedback: factors uniform in [1-x, 1+x], x in [0, 1)",
           "online policy selection", cli="--noise", metavar="X", requires=(SELECTOR,)),
    Option("classifier", optional(choice(CLASSIFIER_MODES)), None,
           "small jobs first: rf (online random forest), a clairvoyant baseline (SPEC 5), or rf with its false "
           "large or false small classes corrected from the true runtimes (what each kind of error costs)",
           "small/large classification", cli="--classifier", choices=CLASSIFIER_MODES, requires=(EASY,)),
    Option("safeguard", boolean, True, "kill small-queue jobs that run past the divider, requeue them as large",
           "small/large classification", cli="--no-safeguard", cli_value=False, requires=(CLASSIFIER,)),
    Option("safeguard_period", optional(duration(infinite=False, positive=True)), None,
           "check the small jobs only every DURATION from the first submission, killing those that have run "
           "longer than the divider then (study 004's Algorithm 2, at each week's end: 1w); unset: each at "
           "exactly its start + the divider (SPEC 5)",
           "small/large classification", cli="--safeguard-period", metavar="DURATION",
           requires=(CLASSIFIER, SAFEGUARD)),
    Option("features", choice(FEATURE_MODES), FEATURE_MODES[0],
           "lag/aggregate features from jobs finished by the last retraining (weekly, the study's) or by now (live)",
           "small/large classification", cli="--features", choices=FEATURE_MODES, requires=(CLASSIFIER,)),
    Option("learning", choice(LEARNING_MODES), LEARNING_MODES[0],
           "training data from the jobs as they finish in this schedule (online) or, as study 004 did, from the "
           "trace at each week's end (decoupled; weekly features)",
           "small/large classification", cli="--learning", choices=LEARNING_MODES, requires=(CLASSIFIER,)),
    Option("divider_window", duration(infinite=True, positive=True), 7 * 86400.0,
           "the divider is the median runtime of the jobs finished in the last DURATION: 1w (the study's text) or "
           "inf (every job finished so far, nearer Table 2's one divider per trace)",
           "small/large classification", cli="--divider-window", metavar="DURATION",
           requires=(CLASSIFIER, ONLINE_LEARNING)),
    Option("unix_start_time", optional(integer()), None,
           "the trace's UnixStartTime, for calendar features (bftune reads it from the trace)",
           "small/large classification"),
    Option("timezone", optional(text), None,
           "the trace's TimeZoneString, for calendar features (bftune reads it from the trace)",
           "small/large classification"),
)

#: Every option by name, in the order of the table (the docs' order).
OPTIONS: dict[str, Option] = {o.name: o for o in _TABLE}
ALIASES: dict[str, str] = {alias: o.name for o in _TABLE for alias in o.aliases}


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def parse_options(raw: dict, where: Callable[[str], str] = str) -> dict:
    """Validate user-facing options into typed values (only those given).

    ``where(name)`` says how an option is named in errors (``--threshold``,
    ``threshold``...).  Unknown names are errors listing the known ones.
    """
    if not isinstance(raw, dict):
        raise ConfigError(f"options must be a JSON object, got {type(raw).__name__}")
    out: dict = {}
    unknown = []
    for key, value in raw.items():
        name = canonical(key)
        option = OPTIONS.get(name)
        if option is None:
            unknown.append(key)
            continue
        if name in out:
            raise ConfigError(f"{where(key)}: given twice (as {name} and an alias)")
        out[name] = option.parse(value, where(key))
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(sorted(unknown))}; known options: {', '.join(OPTIONS)}")
    check_requirements(out, where)
    return out


def check_requirements(given: dict, where: Callable[[str], str] = str) -> None:
    """An option given explicitly must have its requirement met (else it would be ignored)."""
    for name in given:
        for req in OPTIONS[name].requires:
            other = given.get(req.name, OPTIONS[req.name].default)
            if not req.holds(other):
                raise ConfigError(f"{where(name)} needs {req.says}", option=name, reason=f"needs {req.says}")


def applies(name: str, values: dict) -> bool:
    """Whether option ``name`` means anything given the other values (for ``to_dict``)."""
    return all(req.holds(values.get(req.name, OPTIONS[req.name].default)) for req in OPTIONS[name].requires)


def markdown_table() -> str:
    """The README's option table (a test checks that the README holds exactly this)."""
    rows = ["| option (-o / TOML) | command line | default | meaning |", "|---|---|---|---|"]
    for o in _TABLE:
        flag = f"`{o.cli}`" if o.cli else "-"
        meaning = o.help
        if o.choices:
            meaning += " (" + " \\| ".join(o.choices) + ")"
        if o.requires:
            meaning += f"; needs {o.needs()}"
        rows.append(f"| `{o.name}` | {flag} | {o.doc_default()} | {meaning} |")
    return "\n".join(rows)
