"""The values of a sacct record: durations, integers and local times, read within bftune's limits.

Every value is checked before it is converted, so that no input gives a
traceback: an integer has at most :data:`~bftune.workloads.limits.MAX_INT_DIGITS`
digits (Python's ``int`` refuses 4,300 with a ``ValueError`` of its own),
a duration is at most :data:`~bftune.workloads.limits.MAX_TIME` seconds
(a ``Timelimit`` of ``99999999-00:00:00`` is refused), and a time is a
Unix time from 1970 to 2106 (a ``Submit`` in year 0001 is refused).  Error
lines show at most 40 characters of a value.
"""

from __future__ import annotations

import datetime as _dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError
from bftune.workloads.sacct_columns import cut
from bftune.workloads.sacct_lines import LineError

#: Values that mean "none" in sacct's output (lower case).
MISSING = frozenset({"", "unknown", "none", "n/a"})
_DURATION = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?(?:\.\d+)?$")
_INTEGER = re.compile(r"^-?\d+$")


def _digits(text: str, column: str) -> int:
    if len(text) > limits.MAX_INT_DIGITS and len(text.lstrip("-")) > limits.MAX_INT_DIGITS:
        raise LineError(f"column {column}: a {len(text):,}-digit number ({cut(text, 20)}): more than bftune "
                        f"reads ({limits.MAX_INT_DIGITS} digits)")
    return int(text)


def parse_duration(text: str, column: str) -> int | None:
    """A Slurm duration in seconds (``1-02:03:04``, ``02:03:04``, ``03:04``, ``5``); None if missing.

    Slurm's limits read ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``; at most
    2^32 s (:data:`~bftune.workloads.limits.MAX_TIME`).
    """
    text = text.strip()
    if text.lower() in MISSING:
        return None
    match = _DURATION.match(text)
    if match is None:
        raise LineError(f"column {column}: {cut(text)} is not a duration ([D-]HH:MM:SS)")
    days, a, b, c = (None if g is None else int(g) if len(g) <= limits.MAX_INT_DIGITS else _digits(g, column)
                     for g in match.groups())
    parts = [x for x in (a, b, c) if x is not None]
    if days is not None:
        h, m, s = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        h, m, s = parts
    elif len(parts) == 2:
        h, m, s = 0, parts[0], parts[1]
    else:
        h, m, s = 0, parts[0], 0
    return seconds((int(days or 0) * 24 + h) * 3600 + m * 60 + s, text, column)


def seconds(value: int, text: str, column: str) -> int:
    """``value`` (read from ``text``) if it is a duration bftune accepts: at most 2^32 s."""
    if value > limits.MAX_TIME:
        raise LineError(f"column {column}: {cut(text)} is out of range: durations are at most 2^32 s (136 years)")
    return value


def integer(text: str, column: str) -> int:
    """An integer (-1 when missing), of at most MAX_INT_DIGITS digits."""
    text = text.strip()
    if text.lower() in MISSING:
        return -1
    if _INTEGER.match(text) is None:
        raise LineError(f"column {column}: {cut(text)} is not an integer")
    return _digits(text, column)


def check_timezone(zone: str) -> str:
    """``zone`` if it names a time zone (IANA: ``Europe/Stockholm``), else a WorkloadError saying so."""
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise WorkloadError(f"timezone {zone!r}: not a time zone name (an IANA name such as Europe/Stockholm "
                            "or America/New_York)") from None
    return zone


class Clock:
    """Local times of the dump -> Unix seconds, in ``zone`` (UTC without one), and their daylight-saving cases."""

    def __init__(self, zone: str | None, source: str) -> None:
        if zone is None:
            self.zone: _dt.tzinfo = _dt.timezone.utc
            self.dst = False
        else:
            try:
                self.zone = ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError):
                raise WorkloadError(f"{source}: --timezone {zone!r}: not a time zone name (an IANA name such as "
                                    "Europe/Stockholm or America/New_York)") from None
            self.dst = True
        self.name = zone or "UTC"

    def epochs(self, text: str, column: str) -> tuple[int, int, str] | None:
        """``(first, second, case)``: the instant(s) a wall-clock time can be; case '' | 'ambiguous' | 'nonexistent'."""
        text = text.strip()
        if text.lower() in MISSING:
            return None
        try:
            naive = _dt.datetime.fromisoformat(text) if len(text) <= 40 else None
        except ValueError:
            naive = None
        if naive is None:
            raise LineError(f"column {column}: {cut(text)} is not a date and time (YYYY-MM-DDTHH:MM:SS)")
        try:
            found = self._instants(naive)
        except (OverflowError, ValueError, OSError):
            found = None
        if found is None or not all(0 <= t <= limits.MAX_TIME for t in found[:2]):
            raise LineError(f"column {column}: {cut(text)} is out of range: bftune reads times from 1970 to 2106 "
                            "(Unix times of at most 2^32 s)")
        return found

    def _instants(self, naive: _dt.datetime) -> tuple[int, int, str]:
        if naive.tzinfo is not None:  # a zone written in the value: it says which instant
            t = int(naive.timestamp())
            return t, t, ""
        t0 = int(naive.replace(tzinfo=self.zone, fold=0).timestamp())
        if not self.dst:
            return t0, t0, ""
        t1 = int(naive.replace(tzinfo=self.zone, fold=1).timestamp())
        if t0 == t1:
            return t0, t0, ""
        back = _dt.datetime.fromtimestamp(t0, self.zone).replace(tzinfo=None)
        return (min(t0, t1), max(t0, t1), "ambiguous") if back == naive else (t0, t0, "nonexistent")


def resolve_times(times: list[tuple[int, int, str] | None],
                  elapsed: int | None) -> tuple[list[int | None], set[str]]:
    """One instant per time (Submit, Start, End): the occurrences that keep their order and Elapsed."""
    cases = {t[2] for t in times if t is not None and t[2]}
    if "ambiguous" not in cases:
        return [t[0] if t is not None else None for t in times], cases
    # The earlier occurrence first: the rule's default when both keep the order.
    choices: list[tuple] = [(None,) if t is None else (t[0],) if t[0] == t[1] else (t[0], t[1]) for t in times]
    for sub in choices[0]:
        for start in choices[1]:
            for end in choices[2]:
                ordered = [x for x in (sub, start, end) if x is not None]
                if ordered != sorted(ordered):
                    continue
                if elapsed is not None and start is not None and end is not None and end - start != elapsed:
                    continue
                return [sub, start, end], cases
    return [t[0] if t is not None else None for t in times], cases
