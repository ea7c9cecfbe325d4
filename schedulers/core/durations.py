"""Durations as users write them: ``40h``, ``2d``, ``90m``, ``3600``, ``inf``.

Unit letters are lowercase and mean one thing each: s, m (minutes), h, d,
w.  An uppercase letter is refused rather than guessed: ``1M`` reads as a
month to many people and as a minute to others, and months and years have
no fixed length (write ``30d`` or ``52w``).
"""

from __future__ import annotations

import math
import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_NAMES = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$")
_HINT = "write seconds (3600) or a number with a unit s/m/h/d/w (90m, 40h, 2d, 1w)"
_INFINITE = {"inf", "infinity", "none", "off", "never"}


class DurationError(ValueError):
    """A duration string that cannot be read; the message says what is accepted."""


def parse_duration(text: str | float | int | None, what: str = "duration", allow_infinite: bool = True) -> float:
    """Seconds from a number or a string with a unit (s, m, h, d, w).

    ``None``/``"inf"``/``"none"`` mean infinity (a disabled threshold) when
    ``allow_infinite``.
    """
    if text is None:
        if allow_infinite:
            return math.inf
        raise DurationError(f"{what}: a duration is required")
    if isinstance(text, bool):
        raise DurationError(f"{what}: expected a duration, got {text!r}")
    if isinstance(text, (int, float)):
        try:
            value = float(text)
        except OverflowError:  # an int past the largest float (10**400)
            digits = len(str(text)) if isinstance(text, int) and text.bit_length() < 14_000 else "thousands of"
            raise DurationError(f"{what}: {digits} digits is not a duration") from None
        if math.isinf(value) and value > 0 and allow_infinite:
            return value
        if not math.isfinite(value):
            raise DurationError(f"{what}: expected a finite duration, got {text!r}")
        if value < 0:
            raise DurationError(f"{what}: expected a non-negative duration, got {text!r}")
        return value
    s = str(text).strip()
    if s.lower() in _INFINITE:
        if allow_infinite:
            return math.inf
        raise DurationError(f"{what}: an infinite duration is not allowed here")
    m = _RE.match(s)
    hint = _HINT + (", or inf/none" if allow_infinite else "")
    if not m:
        raise DurationError(f"{what}: cannot read {text!r}; {hint}")
    unit = m.group(2) or "s"
    if unit not in _UNITS:
        if unit.lower() in _UNITS:
            why = (f"unit {unit!r} is not accepted: units are lowercase, {unit.lower()!r} means "
                   f"{_NAMES[unit.lower()]} (months and years have no fixed length: write 30d or 52w)")
        elif unit.lower() in ("mo", "mon", "month", "months", "y", "yr", "year", "years"):
            why = "months and years have no fixed length (write 30d or 52w)"
        else:
            why = f"unknown unit {unit!r}"
        raise DurationError(f"{what}: cannot read {text!r}: {why}; {hint}")
    return float(m.group(1)) * _UNITS[unit]


def format_duration(seconds: float) -> str:
    """The shortest exact unit form (``144000`` -> ``40h``), ``inf`` for infinity."""
    if math.isinf(seconds):
        return "inf"
    for unit in ("w", "d", "h", "m"):
        size = _UNITS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s" if seconds != int(seconds) else f"{int(seconds)}s"
