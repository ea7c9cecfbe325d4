"""Durations as users write them: ``40h``, ``2d``, ``90m``, ``3600``, ``inf``."""

from __future__ import annotations

import math
import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhdw]?)\s*$", re.IGNORECASE)
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
        value = float(text)
        if math.isinf(value) and value > 0 and allow_infinite:
            return value
        if not math.isfinite(value) or value < 0:
            raise DurationError(f"{what}: expected a non-negative duration, got {text!r}")
        return value
    s = str(text).strip()
    if s.lower() in _INFINITE:
        if allow_infinite:
            return math.inf
        raise DurationError(f"{what}: an infinite duration is not allowed here")
    m = _RE.match(s)
    if not m:
        raise DurationError(
            f"{what}: cannot read {text!r}; write seconds (3600) or a number with a unit s/m/h/d/w "
            f"(90m, 40h, 2d, 1w){', or inf/none' if allow_infinite else ''}"
        )
    return float(m.group(1)) * _UNITS[(m.group(2) or "s").lower()]


def format_duration(seconds: float) -> str:
    """The shortest exact unit form (``144000`` -> ``40h``), ``inf`` for infinity."""
    if math.isinf(seconds):
        return "inf"
    for unit in ("w", "d", "h", "m"):
        size = _UNITS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s" if seconds != int(seconds) else f"{int(seconds)}s"
