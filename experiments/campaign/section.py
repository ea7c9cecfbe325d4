"""Typed access to one table of a campaign config, with errors naming the file, the section and the key.

Every check of a campaign config goes through :class:`Section`, so a bad value
always reads ``FILE: [section] key: what is wrong`` (one line, exit status 2
from the CLI).  Values that are scheduler options (policies, thresholds,
periods, reservation, features, epsilon...) are parsed by the option table
(``bftune.schedulers.options``), the parsers the CLI and pybatsim's ``-o``
use; campaign-level keys (weeks, resamples, traces, variants...) are checked
here.
"""

from __future__ import annotations

from typing import Any, Iterable

from bftune.experiments.campaign.specs import CampaignError
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import DurationError, format_duration, parse_duration
from bftune.schedulers.options import OPTIONS, ConfigError

REQUIRED = object()


class Section:
    """One TOML table (``data``) of ``file``; unknown keys are refused at once."""

    def __init__(self, file: str, name: str, data: Any, known: Iterable[str]) -> None:
        self.file, self.name = file, name
        if not isinstance(data, dict):
            raise CampaignError(f"{file}: [{name}] must be a table, got {type(data).__name__}")
        self.data = data
        known = tuple(known)
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise CampaignError(f"{file}: [{name}] {unknown[0]}: unknown key; known keys: {', '.join(sorted(known))}")

    def error(self, key: str, msg: str) -> CampaignError:
        return CampaignError(f"{self.file}: [{self.name}] {key}: {msg}")

    def get(self, key: str, default: Any) -> Any:
        """The raw value of ``key``; ``default`` if absent (``REQUIRED``: absent is an error)."""
        if key in self.data:
            return self.data[key]
        if default is REQUIRED:
            raise self.error(key, "required key is missing")
        return default

    def string(self, key: str, default: Any = REQUIRED, choices: Iterable[str] | None = None) -> str:
        v = self.get(key, default)
        if not isinstance(v, str):
            raise self.error(key, f"expected a string, got {v!r}")
        if choices is not None and v not in choices:
            raise self.error(key, f"{v!r} is not one of {', '.join(choices)}")
        return v

    def optional_integer(self, key: str, minimum: int | None = None, maximum: int | None = None,
                         why: str = "") -> int | None:
        """:meth:`integer`, or None when the key is absent (or null)."""
        if self.data.get(key) is None:
            return None
        return self.integer(key, REQUIRED, minimum, maximum, why)

    def integer(self, key: str, default: Any = REQUIRED, minimum: int | None = None,
                maximum: int | None = None, why: str = "") -> int:
        """An integer in [minimum, maximum]; ``why`` explains the maximum in the error."""
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(key, f"expected an integer, got {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {v}")
        if maximum is not None and v > maximum:
            raise self.error(key, f"{v} is too large: at most {maximum}{f' ({why})' if why else ''}")
        return v

    def number(self, key: str, default: Any = REQUIRED) -> float:
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(key, f"expected a number, got {v!r}")
        return float(v)

    def boolean(self, key: str, default: Any = REQUIRED) -> bool:
        v = self.get(key, default)
        if not isinstance(v, bool):
            raise self.error(key, f"expected true or false, got {v!r}")
        return v

    def seconds(self, key: str, default: Any = REQUIRED) -> float:
        """A positive, finite number of seconds (``10`` or ``"10s"``)."""
        value = self.get(key, default)
        try:
            seconds = parse_duration(value, key, allow_infinite=False)
        except DurationError as exc:
            raise self.error(key, str(exc).split(": ", 1)[-1]) from None
        if seconds <= 0:
            raise self.error(key, f"expected a positive number of seconds, got {value!r}")
        return seconds

    def strings(self, key: str, default: Any = REQUIRED, choices: Iterable[str] | None = None,
                upper: bool = False, unique: bool = True) -> list[str]:
        v = self.get(key, default)
        if not isinstance(v, (list, tuple)) or not v:
            raise self.error(key, f"expected a non-empty list of strings, got {v!r}")
        out = []
        for item in v:
            if not isinstance(item, str):
                raise self.error(key, f"expected strings, got {item!r}")
            item = item.strip().upper() if upper else item.strip()
            if choices is not None and item not in choices:
                raise self.error(key, f"{item!r} is not one of {', '.join(choices)}")
            out.append(item)
        if unique and len(set(out)) != len(out):
            dup = next(x for x in out if out.count(x) > 1)
            raise self.error(key, f"{dup!r} is listed twice")
        return out

    # --- scheduler options: values parsed by the option table (one parser per option) ------------

    def where(self, key: str) -> str:
        """How ``key`` is named in errors: ``FILE: [section] key``."""
        return f"{self.file}: [{self.name}] {key}"

    def option(self, key: str, default: Any = REQUIRED, name: str | None = None) -> Any:
        """The value of ``key``, parsed by the option table's parser of option ``name`` (default: ``key``)."""
        return self.parse(key, self.get(key, default), name or key)

    def parse(self, key: str, value: Any, name: str) -> Any:
        """``value`` (found under ``key``) parsed as option ``name``."""
        try:
            return OPTIONS[name].parse(value, self.where(key))
        except ConfigError as exc:
            raise CampaignError(str(exc)) from None

    def option_list(self, key: str, default: Any, name: str) -> list:
        """A non-empty list under ``key``, each item parsed as option ``name``; no item twice."""
        v = self.get(key, default)
        if not isinstance(v, (list, tuple)) or not v:
            raise self.error(key, f"expected a non-empty list, got {v!r}")
        out = [self.parse(key, item, name) for item in v]
        if len(set(map(repr, out))) != len(out):
            dup = next(x for x in out if out.count(x) > 1)
            raise self.error(key, f"{dup!r} is listed twice")
        return out

    def durations(self, key: str, default: Any, name: str) -> list[str]:
        """A list of durations (option ``name``'s parser), each in its shortest form ("40h", "inf")."""
        return [format_duration(x) for x in self.option_list(key, default, name)]

    def scheduler(self, key: str, options: dict) -> dict:
        """``options`` if they make a configuration together (requirements...), else an error naming ``key``.

        A rule between options that blames an option this section sets names
        that key instead, with the rule's own words (one statement of each
        rule: the option table's requirements and ``SchedulerConfig``'s checks).
        """
        try:
            SchedulerConfig.from_options(options)
        except ConfigError as exc:
            if exc.option is not None and exc.option in self.data:
                raise self.error(exc.option, exc.reason) from None
            raise self.error(key, str(exc)) from None
        return options
