"""What a scheduler option is: its record, its parsers, and the requirements between options.

Every option of the table (:mod:`bftune.schedulers.options`) is an
:class:`Option` with one parser, whichever way a value comes in (the CLI,
pybatsim's ``-o`` JSON, campaign TOML, the Python API), so a value means the
same thing everywhere and a bad one gives the same message naming the
option.  The core's options are in the table's module; each hook declares
its own next to its code (``bftune.schedulers.hooks``), with these parsers.

Why a table of our own rather than pydantic or msgspec: the values users
write are not JSON types but durations (``40h``), registry names
(case-insensitive, normalised to the registry's spelling) and
comma-separated lists, and the errors must name the option the way the user
wrote it (``--threshold``, ``threshold``, ``[online] threshold``).  A typed
validation library would still need one custom parser per option; these are
those parsers, with nothing in between.

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

from bftune.schedulers.core.durations import DurationError, format_duration, parse_duration
from bftune.schedulers.core.policies import UnknownPolicyError, get_policy


class ConfigError(ValueError):
    """An invalid scheduler option; the message names the option, in one line.

    A rule between options also says which option it blames (``option``) and
    why without the name (``reason``), so that a campaign can name its own key
    for it instead of restating the rule.

    Parameters
    ----------
    message : str
        The line a user reads (``threshold: cannot read '4x': ...``).
    option : str, optional
        The option a rule between options blames.
    reason : str, optional
        The rule, without the option's name (default: ``message``).

    Examples
    --------
    >>> from bftune.schedulers.config import SchedulerConfig
    >>> try:
    ...     SchedulerConfig(epsilon=0.2)
    ... except ConfigError as error:
    ...     print(error, "|", error.option, "|", error.reason)
    epsilon needs selector | epsilon | needs selector
    """

    def __init__(self, message: str, option: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.reason = reason if reason is not None else message


Parser = Callable[[Any, str], Any]


def rule(option: str, reason: str) -> ConfigError:
    """A rule between options broken, blamed on ``option`` (``reason`` without the option's name)."""
    return ConfigError(f"{option}: {reason}", option=option, reason=reason)


@dataclass(frozen=True)
class Requirement:
    """Option ``name`` must satisfy ``holds`` for the option that requires it to mean anything."""

    name: str
    holds: Callable[[Any], bool]
    says: str  # how the requirement reads in an error: "--selector"


@dataclass(frozen=True)
class Option:
    """One scheduler option.

    ``parse(value, where)`` turns what a user wrote into the typed value or
    raises :class:`ConfigError` naming ``where``.  ``cli`` is the command-line
    flag (None: not on the command line); a boolean option's flag stores
    ``cli_value`` (``--no-backfilling`` stores False).  ``aliases`` are other
    accepted spellings of the name (``primary`` for ``policy``).  A
    ``duration`` option holds seconds and is shown as a duration (``40h``).
    ``plugins`` names the kind of unit (``selector``...) when the option also
    takes a user's own by import path or entry point (docs/guides/plugins.md):
    ``choices`` are then the built-in ones, not all that is accepted.
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
    duration: bool = False
    plugins: str = ""
    # The slurm.conf key the option mirrors (``PriorityWeightAge``, ``SchedulerParameters:bf_interval``) and how
    # slurm.conf writes its value (integer, seconds, minutes, duration, yesno, flags, choice); None for the
    # options Slurm has no key for (docs/semantics/scheduling.md#slurm).
    slurm_key: str | None = None
    slurm_unit: str = ""

    def needs(self) -> str:
        """The requirements as an error or the docs say them: "--scheduler easy and backfilling"."""
        return " and ".join(r.says for r in self.requires)

    def doc_default(self) -> str:
        if self.default is None:
            return "-"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if isinstance(self.default, (list, tuple)) and not self.default:
            return "-"
        if isinstance(self.default, (list, tuple)):
            return ",".join(self.default) if len(self.default) <= 4 else f"the {len(self.default)} default candidates"
        return str(self.shown(self.default))

    def shown(self, value: Any) -> Any:
        """``value`` as a user would write it (a duration as ``40h``, ``inf``)."""
        if self.duration and isinstance(value, (int, float)) and not isinstance(value, bool):
            return format_duration(value)
        return value


# --- parsers --------------------------------------------------------------------------------


def policy_name(value: Any, where: str) -> str:
    """A policy's name in the registry's spelling, or a user's policy by import path or entry point."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a policy name (see `bftune policies`) or your own, "
                          f"MODULE:NAME, got {value!r}")
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


def whole_duration(*, unit: int = 1, minimum: float = 0, maximum: float = math.inf) -> Parser:
    """A finite duration (``1d``, ``90``) that is a whole number of ``unit`` seconds, within bounds.

    For the options slurm.conf writes as integer seconds (``unit`` 1) or whole minutes (``unit`` 60): a
    value Slurm cannot be given is refused here rather than rounded when a slurm.conf is written.
    """
    what = "seconds" if unit == 1 else "minutes" if unit == 60 else f"multiples of {unit} s"

    def parse(value: Any, where: str) -> float:
        try:
            seconds = parse_duration(value, where, allow_infinite=False)
        except DurationError as exc:
            raise ConfigError(str(exc)) from None
        if seconds % unit:
            raise ConfigError(f"{where}: Slurm takes whole {what}, got {value!r}")
        if not minimum <= seconds <= maximum:
            raise ConfigError(f"{where}: expected {format_duration(minimum)} to {format_duration(maximum)}, "
                              f"got {value!r}")
        return seconds

    parse.__name__ = "whole_duration"
    return parse


def yes_no(value: Any, where: str) -> bool:
    """true/false, or slurm.conf's YES/NO (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "true", "false"):
        return value.strip().lower() in ("yes", "true")
    raise ConfigError(f"{where}: expected YES or NO (or true/false), got {value!r}")


def flag_list(allowed: Sequence[str], refused: dict[str, str] | None = None) -> Parser:
    """Flags from a comma-separated string or a list, any case, as a tuple in ``allowed``'s order.

    ``refused`` maps flags a user may know (Slurm's) to why they are not accepted.
    """
    refused = refused or {}

    def parse(value: Any, where: str) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",")]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: expected a comma-separated list of flags, got {value!r}")
        given = {v.strip().upper() for v in value if v.strip()}
        for flag in sorted(given):
            if flag in refused:
                raise ConfigError(f"{where}: {flag} {refused[flag]}")
            if flag not in allowed:
                raise ConfigError(f"{where}: unknown flag {flag!r}; accepted: {', '.join(allowed)}")
        return tuple(flag for flag in allowed if flag in given)

    parse.__name__ = "flag_list"
    return parse


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    return value


def text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a non-empty string, got {value!r}")
    return value


# --- requirements that several option groups share ------------------------------------------


def is_set(value: Any) -> bool:
    return value is not None


def is_unset(value: Any) -> bool:
    return value is None


def is_true(value: Any) -> bool:
    return value is True


def is_easy(value: Any) -> bool:
    return value == "easy"


#: The option needs EASY (PV-EASY has its own priority, no separate backfilling, no selector).
EASY = Requirement("scheduler", is_easy, "--scheduler easy")
def is_slurm(value: Any) -> bool:
    return value == "slurm"


#: The option is Slurm's (docs/semantics/scheduling.md#slurm): it means nothing under another scheduler.
SLURM = Requirement("scheduler", is_slurm, "--scheduler slurm")


def is_not_slurm(value: Any) -> bool:
    return value != "slurm"


#: The option is bftune's own (an order, planning estimates) where Slurm has its own rule (its priority, the
#: time limits its backfill plans with).
NOT_SLURM = Requirement("scheduler", is_not_slurm, "a --scheduler other than slurm")
#: The option needs backfilling (``--no-backfilling`` turns it off).
BACKFILLING = Requirement("backfill", is_true, "backfilling (drop --no-backfilling)")
