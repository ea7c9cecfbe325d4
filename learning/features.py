"""Features of the small/large runtime classifier (docs/semantics/learning.md#classification).

Everything here is computed *at a job's submission*, from what a real
scheduler knows then: the job's own request (user, procs, walltime, submission
time) and the classes of jobs that have already **finished**.  Nothing reads a
job's actual runtime; the classifier (``bftune.learning.classifier``) feeds
finished jobs' classes in through :meth:`FeatureExtractor.record`, and when it
does so (live: at once; weekly: at the next week boundary) is what decides how
fresh the history features are.

Feature vector (:data:`FEATURE_NAMES`, 20 float32 values, in this order):

=====================  =====================================================
``walltime``           p~_j in seconds; :data:`MISSING` (-1) when unknown
                       (<= 0 or not finite)
``procs``              q_j; -1 when unknown (<= 0)
``hour``               0-23, local time of the submission
``day_of_week``        0 = Monday ... 6 = Sunday
``day_of_month``       1-31
``month``              1-12
``week_of_year``       ISO 8601 week number, 1-53
``quarter``            1-4
``<cat>_last1..3``     classes (small = 1, large = 0) of the category's
                       three most recently finished jobs, most recent first;
                       -1 where the category has fewer finished jobs
``<cat>_small_frac``   fraction of the category's finished jobs that were
                       small (or, with ``aggregate_classes = "predicted"``,
                       that the classifier had classified small at their
                       submission); -1 when it has none
=====================  =====================================================

for the categories ``<cat>`` = ``up`` (user, procs), ``uw`` (user, walltime)
and ``ud`` (user, submission day).

Choices (docs/semantics/learning.md#classification leaves them open):

- **Clock.**  A trace time t is the instant ``unix_start_time + t`` (the SWF
  ``UnixStartTime`` header) seen in the trace's ``TimeZoneString``
  (``zoneinfo``, so daylight saving time is honoured).  No start time: epoch 0.
  No timezone: UTC.  A timezone name ``zoneinfo`` does not know: UTC, and a
  warning in :attr:`Calendar.warnings` (so in the classifier's report).
- **Which time zone database.**  The ``tzdata`` package's (a dependency), not
  the system's: the archive traces name legacy zones (``US/Eastern``,
  ``US/Pacific``) that some systems no longer install (Ubuntu 24.04 moved
  them to ``tzdata-legacy``).  On such a machine the system's database made
  CTC-SP2's and SDSC's calendar features UTC and changed the classifier's
  results; the package gives every machine the same calendar.  The system's
  database serves only when the package is missing or lacks the name.
- **Submission day** of the (user, day) category is the *calendar date* in that
  clock (``date.toordinal()``), not the day of the week.
- **"Previous finished jobs"** are ordered by the order in which they are
  recorded, which the classifier makes the order of their finish times (ties:
  the order the scheduler reported them in).
- **Jobs without a class** (no divider existed at their submission, see the
  classifier) are never recorded: they are in no category history.
- **Missing user ids** (user < 0, e.g. a trace without user field) use the
  sentinel user :data:`NO_USER` (-1): the categories then degrade to (procs),
  (walltime) and (day) across all such jobs.  A missing walltime is the
  sentinel -1 in the feature *and* in the (user, walltime) key.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone as dt_timezone, tzinfo
from importlib import resources
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MISSING = -1.0  # sentinel for every unknown feature value
NO_USER = -1  # sentinel user for jobs without a user id
#: When lag/aggregate features see a finished job: "weekly" (from the last retraining on,
#: the contract's default) or "live" (at once).  The first is the default.
FEATURE_MODES = ("weekly", "live")
#: Which class of a finished job the aggregate features count: its true class (runtime < divider, as the lag
#: features; the default) or the class the classifier predicted at its submission.
AGGREGATE_CLASSES = ("true", "predicted")
#: Where the calendar features' clock starts: "absolute" (the trace's UnixStartTime, in its time zone; the
#: default) or "relative" (trace time 0 read as 1970-01-01 00:00 UTC: what a workload whose submission times
#: count from its start, without the header, gives).
CALENDAR_MODES = ("absolute", "relative")
#: The training labels (the ``relabel`` option): each job's own, against the divider in force at its
#: classification ("none", the default), or every training job's relabelled at each weekly retraining against
#: the median runtime of the jobs finished in the week that just ended ("last-week-median").
RELABEL_MODES = ("none", "last-week-median")

CATEGORIES = ("up", "uw", "ud")  # (user, procs), (user, walltime), (user, submission day)
CALENDAR_NAMES = ("hour", "day_of_week", "day_of_month", "month", "week_of_year", "quarter")
FEATURE_NAMES: tuple[str, ...] = (
    ("walltime", "procs")
    + CALENDAR_NAMES
    + tuple(f"{cat}_{what}" for cat in CATEGORIES for what in ("last1", "last2", "last3", "small_frac"))
)
N_FEATURES = len(FEATURE_NAMES)
#: The features the forest may treat as categorical (factors) rather than numbers, by option value
#: (:mod:`bftune.learning.categorical`): none (every feature a number, the default), the request (p~ and q: a
#: user picks them from a few round values), or the request and the calendar fields.
CATEGORICAL_SETS: dict[str, tuple[str, ...]] = {"none": (), "request": ("walltime", "procs"),
                                                "request-and-calendar": ("walltime", "procs", *CALENDAR_NAMES)}

_EPOCH = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)
#: An IANA zone name: path components of letters, digits, '_', '+' and '-' (no '..', no absolute path).
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*")


def zone(name: str) -> tzinfo:
    """The IANA zone ``name`` from the ``tzdata`` package, else from the system (module docstring, "Which time
    zone database"); ZoneInfoNotFoundError or ValueError when neither knows it."""
    if _ZONE_NAME.fullmatch(name):
        try:
            data = resources.files("tzdata").joinpath("zoneinfo", *name.split("/"))
            with data.open("rb") as fh:
                return ZoneInfo.from_file(fh, key=name)
        except (ModuleNotFoundError, FileNotFoundError, IsADirectoryError, NotADirectoryError, ValueError):
            pass
    return ZoneInfo(name)


class Calendar:
    """Calendar fields of trace times (see the module docstring, "Clock").

    ``warnings`` lists what was assumed (unknown timezone...); ``tz_name`` is
    the zone actually used.
    """

    __slots__ = ("unix_start_time", "tz", "tz_name", "warnings", "_cache_key", "_cache_val", "_args")

    def __init__(self, unix_start_time: int | float | None, timezone: str | None) -> None:
        self._args = (unix_start_time, timezone)
        self.warnings: list[str] = []
        self.unix_start_time: int | float
        if unix_start_time is None:
            self.unix_start_time = 0
            self.warnings.append("no UnixStartTime: calendar features count from epoch 0 (1970-01-01)")
        else:
            self.unix_start_time = unix_start_time
        name = (timezone or "").strip()
        self.tz: tzinfo
        if not name:
            self.tz, self.tz_name = dt_timezone.utc, "UTC"
            if unix_start_time is not None:
                self.warnings.append("no TimeZoneString: calendar features use UTC")
        else:
            try:
                self.tz, self.tz_name = zone(name), name
            except (ZoneInfoNotFoundError, ValueError, OSError):
                self.tz, self.tz_name = dt_timezone.utc, "UTC"
                self.warnings.append(f"unknown timezone {name!r}: calendar features use UTC")
        self._cache_key: float | None = None
        self._cache_val: tuple[int, int, int, int, int, int, int] = (0, 0, 0, 0, 0, 0, 0)

    def __reduce__(self) -> tuple:
        """Pickled as its arguments: a zone read from the tzdata package's file does not pickle itself."""
        return (Calendar, self._args)

    def fields(self, t: float) -> tuple[int, int, int, int, int, int, int]:
        """(hour, day_of_week, day_of_month, month, iso_week, quarter, day_ordinal) of trace time t.

        Consecutive calls at the same second (bursts of submissions) hit a
        one-entry cache.
        """
        key = math.floor(t)
        if key == self._cache_key:
            return self._cache_val
        # _EPOCH + timedelta is exact for any float seconds (no platform
        # limit on negative timestamps, unlike datetime.fromtimestamp).
        d = (_EPOCH + timedelta(seconds=self.unix_start_time + key)).astimezone(self.tz)
        month = d.month
        val = (d.hour, d.weekday(), d.day, month, d.isocalendar()[1], (month - 1) // 3 + 1, d.toordinal())
        self._cache_key, self._cache_val = key, val
        return val


class CategoryHistory:
    """Finished-job classes of one kind of category (e.g. all (user, procs) keys).

    Per key: ``[last1, last2, last3, n_counted_small, n_finished]`` in a plain
    dict, so a lookup and an update are O(1) and never touch pandas or numpy.
    The lags hold the jobs' classes; the aggregate counts ``counted`` (the
    class or the predicted class, :data:`AGGREGATE_CLASSES`).
    """

    __slots__ = ("_d",)

    def __init__(self) -> None:
        self._d: dict = {}

    def __len__(self) -> int:
        return len(self._d)

    def features(self, key) -> tuple[float, float, float, float]:
        """(last1, last2, last3, small_frac) for ``key``; -1 where unknown."""
        h = self._d.get(key)
        if h is None:
            return (MISSING, MISSING, MISSING, MISSING)
        return (h[0], h[1], h[2], h[3] / h[4])

    def add(self, key, small: bool, counted: bool | None = None) -> None:
        """A job of ``key`` finished with class ``small``; the aggregate counts ``counted`` (default: ``small``)."""
        c = 1.0 if small else 0.0
        a = c if counted is None else (1.0 if counted else 0.0)
        h = self._d.get(key)
        if h is None:
            self._d[key] = [c, MISSING, MISSING, a, 1]
        else:
            h[2] = h[1]
            h[1] = h[0]
            h[0] = c
            h[3] += a
            h[4] += 1


class FeatureExtractor:
    """Builds feature rows at submission and records finished jobs' classes.

    ``row(...)`` returns the 20 values (a Python list, written by the caller
    straight into its float32 buffer) and the job's three category keys; the
    caller keeps the keys and hands them back to ``record`` once the job's
    class is known.  ``row`` only *reads* the histories, so a job never sees
    itself, and it sees another job only after that job was recorded.
    """

    __slots__ = ("calendar", "histories", "n_missing_user", "n_missing_walltime", "n_missing_procs")

    def __init__(self, calendar: Calendar) -> None:
        self.calendar = calendar
        self.histories = tuple(CategoryHistory() for _ in CATEGORIES)
        self.n_missing_user = 0
        self.n_missing_walltime = 0
        self.n_missing_procs = 0

    def row(self, user: int | None, procs: int | float, walltime: float, submit: float) -> tuple[list[float], tuple]:
        if user is None or user < 0:
            user = NO_USER
            self.n_missing_user += 1
        if walltime is None or not (walltime > 0 and walltime < math.inf):  # also catches NaN
            walltime = MISSING
            self.n_missing_walltime += 1
        if procs is None or not procs > 0:
            procs = MISSING
            self.n_missing_procs += 1
        hour, dow, dom, month, week, quarter, day = self.calendar.fields(submit)
        keys = ((user, procs), (user, walltime), (user, day))
        up, uw, ud = self.histories
        values = [walltime, procs, hour, dow, dom, month, week, quarter]
        values += up.features(keys[0])
        values += uw.features(keys[1])
        values += ud.features(keys[2])
        return values, keys

    def record(self, keys: tuple, small: bool, counted: bool | None = None) -> None:
        """A job of these category keys finished with this class (the aggregates count ``counted`` if given)."""
        for history, key in zip(self.histories, keys):
            history.add(key, small, counted)
