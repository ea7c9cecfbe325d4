"""Small markdown helpers for reproduction reports: ours beside theirs."""

from __future__ import annotations

import math


def num(value, digits: int = 1, sign: bool = False) -> str:
    """A number for a table ('-' when missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c": names or figures in a report's sentence."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def diff(ours, theirs, digits: int = 1) -> str:
    """ours - theirs, signed ('-' when either is missing)."""
    if ours is None or theirs is None or (isinstance(ours, float) and math.isnan(ours)):
        return "-"
    return f"{ours - theirs:+.{digits}f}"
