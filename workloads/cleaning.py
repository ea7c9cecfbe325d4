"""Which SWF records become jobs: the default filter and the other named cleanings.

:func:`~bftune.workloads.swf.read_swf` parses a file's records and cleans
them here; :func:`clean_rows` cleans rows another reader parsed, by the same
rules.  ``m`` is the machine size (for a file, read from its header unless
given: :mod:`bftune.workloads.swf`).

**The default filter**, ``drop-overruns`` (docs/semantics/workloads.md#cleaning, identical
to the conversion of the Batsim recordings the backends are checked against).  ``procs`` = requested procs (field 8), or
allocated procs (field 5) where the request is ``<= 0``.  Rules are applied
in the order below and a job is counted under the *first* rule it breaks,
so the counts add up to the number of dropped jobs:

=========================  ==============================================
key                        drops a job when
=========================  ==============================================
``negative_submit``        submit < 0
``missing_procs``          requested <= 0 and allocated <= 0
``procs_gt_machine``       procs > m
``runtime_le_0``           runtime <= 0
``walltime_le_0``          requested time <= 0 (see ``walltime_fallback``)
``walltime_lt_runtime``    requested time < runtime
=========================  ==============================================

This is the order of the Batsim converter's list; on KTH-SP2 it yields the
README's 475 / 8 / 1 and 27,992 kept jobs.  ``"malformed_line"`` (lenient
mode) counts lines, which never reach the job rules: reading counts them.

``walltime_fallback="runtime"`` is for traces without requested times
(``lublin_256`` has -1 there): a job whose requested time is ``<= 0`` gets
walltime = runtime instead of being dropped, and is counted under
``"walltime_from_runtime"``.  That key counts *modified*, not dropped, jobs
(it is not in :data:`DROP_RULES`).  Note that in Batsim a job whose delay
equals its walltime ends as COMPLETED_WALLTIME_REACHED (docs/semantics/scheduling.md#batsim-semantics), so
every such job is reported as walltime-killed although it ran to its end.

**Other cleanings** (``cleaning=``, :data:`CLEANINGS`) give the job sets
of evaluations that did not apply this filter.  ``"drop-overruns"`` is the
default and is the rule set above (it drops the jobs that outran their request,
where ``"keep-overruns"`` keeps them); ``"spec"``, its former name, is still
accepted (:data:`CLEANING_ALIASES`).

- ``"keep-overruns"``: every record with submit >= 0, procs > 0 (chosen as
  above), procs <= m and runtime > 0 is a job.  A job whose requested time
  is below its runtime is *kept* with that walltime (counted under
  ``"overruns_kept"``): both simulators end it at its walltime, as
  COMPLETED_WALLTIME_REACHED, exactly what Batsim does with such a job.  A
  requested time <= 0 becomes the runtime (``"walltime_from_runtime"``).
- ``"batsim-converter"``: what Batsim's own converter
  (``tools/swf_to_batsim_workload_delay.py``, default options) makes of
  the file: procs = *allocated* processors (field 5; the request is
  ignored), records with procs <= 0 or runtime <= 0 dropped, walltime =
  max(requested time, 2 x runtime) (counted under ``"walltime_raised"``
  where that is more than the request: overruns and missing requests get
  twice their runtime), and the runtime becomes the converter's delay
  profile floor(runtime) + 1.  A raised walltime is far closer to the
  runtime than users' requests are, which helps every walltime-based
  policy and any runtime predictor.
- ``"ran"``: every job that ran, as recorded:
  a record counts when its allocated processors (field 5) are known
  (``> 0``); records of jobs that never started (allocated -1, e.g. jobs
  cancelled in the queue) are dropped under ``"never_started"``.  procs,
  m and the other drops are as in ``spec``.  A runtime <= 0 (0: a run
  under a second, -1: not recorded) becomes 1 s, counted under
  ``"runtime_raised"`` (Batsim refuses a delay of 0); a requested time
  <= 0 becomes the runtime (``"walltime_from_runtime"``); a runtime above
  the requested time is kept (``"overruns_kept"``) and the job ends at
  its walltime, as COMPLETED_WALLTIME_REACHED, as in ``keep-overruns``.
  CTC-SP2 keeps all 77,222 records; SDSC-BLUE keeps 223,790 of 243,306.
- ``"ran-overruns-finish"``: the jobs of ``"ran"``, but a job whose runtime
  exceeds its requested time gets its runtime as walltime (counted under
  ``"walltime_raised"``): it runs to its end instead of being killed at its
  request, as on a machine that does not enforce requests.

Kept jobs are sorted by (submit, id).

Every parse path (the line-by-line one, the vectorised one, the parse
cache) runs the same statement of the rules (:func:`clean_columns`) over columns
(:class:`FieldColumns`), with C-speed builtins: a ``min`` or ``max`` settles
most rules, ``itertools.compress`` selects the kept rows, records are built
column-wise and only for kept rows.
"""

from __future__ import annotations

import math
from array import array
from itertools import compress, islice, repeat
from operator import add, attrgetter, gt, itemgetter, le, lt, mul
from typing import Iterable, Iterator, Literal, NamedTuple, Sequence

from bftune.workloads.model import JobRecord, Trace, records_from_columns

#: Cleaning rules that drop jobs (or lines), in the order they are applied.
DROP_RULES: tuple[str, ...] = (
    "malformed_line",
    "negative_submit",
    "missing_procs",
    "procs_gt_machine",
    "runtime_le_0",
    "walltime_le_0",
    "walltime_lt_runtime",
    "never_started",
)
#: Every key reading puts in ``Trace.cleaning``; the last four count kept but modified jobs.
CLEANING_KEYS: tuple[str, ...] = DROP_RULES + ("walltime_from_runtime", "overruns_kept", "walltime_raised",
                                               "runtime_raised")

WalltimeFallback = Literal["runtime"] | None

#: The named cleanings (module docstring; docs/semantics/workloads.md#cleaning): the default filter first.
CLEANINGS: tuple[str, ...] = ("drop-overruns", "keep-overruns", "batsim-converter", "ran", "ran-overruns-finish")
#: Former names, still accepted wherever a cleaning is read (command line, campaign files, the API).
CLEANING_ALIASES: dict[str, str] = {"spec": "drop-overruns"}
#: The name a stored run's identity holds for a cleaning, where it differs: renaming a cleaning must not turn
#: every stored run or week into another one.
IDENTITY_NAMES: dict[str, str] = {"drop-overruns": "spec"}
#: Every name a cleaning may be given by: the cleanings, then their former names (the choices of --cleaning).
CLEANING_NAMES: tuple[str, ...] = (*CLEANINGS, *CLEANING_ALIASES)
#: The walltime the Batsim converter gives a job: max(requested, BATSIM_WALLTIME_FACTOR x runtime).
BATSIM_WALLTIME_FACTOR = 2


def check_cleaning(cleaning: str) -> str:
    """The cleaning ``cleaning`` names (a former name gives today's), else ValueError listing them."""
    cleaning = CLEANING_ALIASES.get(cleaning, cleaning)
    if cleaning not in CLEANINGS:
        raise ValueError(f"cleaning must be one of {', '.join(CLEANINGS)}, not {cleaning!r}")
    return cleaning


def identity_name(cleaning: str) -> str:
    """The name a stored identity holds for ``cleaning`` (today's name or a former one): the name it had when
    the identity was first stored, so that a rename never turns a stored run or week into another one."""
    cleaning = CLEANING_ALIASES.get(cleaning, cleaning)
    return IDENTITY_NAMES.get(cleaning, cleaning)


#: 0-based SWF fields the cleanings read, in :class:`FieldColumns` order (and all the parse cache keeps).
CLEANED_FIELDS: tuple[int, ...] = (0, 1, 3, 4, 7, 8, 10, 11, 12, 13, 14, 15, 2)


class FieldColumns(NamedTuple):
    """The fields the cleanings read, one sequence per field: a list, or an ``array('q')`` of a cache or the fast path.

    Values are those of the careful path (int where integral, float
    otherwise), whatever the path: the records are made of them.
    """

    id: Sequence[int]
    submit: Sequence[int | float]
    runtime: Sequence[int | float]
    alloc: Sequence[int]
    req_procs: Sequence[int]
    req_time: Sequence[int | float]
    status: Sequence[int]
    user: Sequence[int]
    group: Sequence[int]
    executable: Sequence[int]
    queue: Sequence[int]
    partition: Sequence[int]
    wait: Sequence[int | float]  # field 3, the logged wait: kept on the records, read by no rule


def clean_rows(
    rows: Iterable[list[int | float]],
    max_procs: int,
    *,
    walltime_fallback: WalltimeFallback = None,
    cleaning: str = "drop-overruns",
) -> tuple[list[JobRecord], dict[str, int]]:
    """Apply a named cleaning (``drop-overruns`` by default) to parsed 18-field rows.

    Returns the kept jobs sorted by (submit, id) and the per-rule counts (all
    of :data:`CLEANING_KEYS` but ``malformed_line``).  Separate from parsing
    so that other readers can reuse the exact same rules; the rows are turned
    into columns, what the rules (:func:`clean_columns`) read on every path.
    """
    cleaning = check_cleaning(cleaning)
    rows = rows if isinstance(rows, list) else list(rows)
    columns = FieldColumns(*(list(map(itemgetter(field), rows)) for field in CLEANED_FIELDS))
    return clean_columns(columns, max_procs, walltime_fallback, cleaning)


def clean_columns(c: FieldColumns, m: int, walltime_fallback: WalltimeFallback,
           cleaning: str) -> tuple[list[JobRecord], dict[str, int]]:
    """The cleaning rules of the module docstring, in their order, for the careful path, the fast path and the cache.

    Each rule names the rows that break it (:func:`_where`); a row is
    counted under the first rule it breaks (:class:`_Rows`).  Rules work on
    whole columns with C-speed builtins, so that a warm read of CTC-SP2
    needs no numpy: most rules are settled by one ``min`` or ``max``.
    """
    converter = cleaning == "batsim-converter"
    finish = cleaning == "ran-overruns-finish"
    ran = cleaning == "ran" or finish
    keep_overruns = cleaning == "keep-overruns" or ran
    rows = _Rows(len(c.id))
    procs = c.alloc if converter else _requested_or_allocated(c.req_procs, c.alloc)
    runtime, walltime = c.runtime, c.req_time
    rows.drop("negative_submit", _where(c.submit, lt, 0))
    rows.drop("missing_procs", _where(procs, le, 0))
    rows.drop("procs_gt_machine", _where(procs, gt, m))
    if ran:
        rows.drop("never_started", _where(c.alloc, le, 0))
        runtime = _replaced(runtime, rows.count("runtime_raised", _where(runtime, le, 0)), 1)
    rows.drop("runtime_le_0", _where(runtime, le, 0))
    if converter:  # no walltime rule: the walltime is max(request, 2 x runtime) (module docstring)
        raised = careful_numbers(map(mul, runtime, repeat(BATSIM_WALLTIME_FACTOR)))
        rows.count("walltime_raised", _where(walltime, lt, raised))
        walltime = list(map(max, walltime, raised))  # max keeps the request where they are equal
        runtime = list(map(add, map(math.floor, runtime), repeat(1)))  # its delay profile
    else:
        if walltime_fallback == "runtime" or keep_overruns:
            walltime = _replaced(walltime, rows.count("walltime_from_runtime", _where(walltime, le, 0)), runtime)
        else:
            rows.drop("walltime_le_0", _where(walltime, le, 0))
        if finish:  # the overruns run to their end: their runtime becomes their walltime
            walltime = _replaced(walltime, rows.count("walltime_raised", _where(walltime, lt, runtime)), runtime)
        elif keep_overruns:
            rows.count("overruns_kept", _where(walltime, lt, runtime))
        else:
            rows.drop("walltime_lt_runtime", _where(walltime, lt, runtime))
    jobs = _records(rows.kept(), (c.id, c.submit, procs, runtime, walltime, c.user, c.group, c.executable,
                                  c.queue, c.partition, c.status, c.wait))
    return jobs, rows.counts


def _requested_or_allocated(requested: Sequence[int], allocated: Sequence[int]) -> Sequence[int]:
    """procs: the requested processors, or the allocated ones where the request is <= 0 (module docstring).

    Many traces (CTC-SP2) record no request at all: one ``max`` says so.
    """
    if requested and max(requested) <= 0:
        return allocated
    return _replaced(requested, _where(requested, le, 0), allocated)


class _Rows:
    """The rows a cleaning still keeps as its rules run, and what each rule counted."""

    __slots__ = ("n", "dropped", "counts")

    def __init__(self, n: int) -> None:
        self.n = n
        self.dropped: set[int] = set()
        self.counts: dict[str, int] = {key: 0 for key in CLEANING_KEYS if key != "malformed_line"}

    def drop(self, key: str, breaking: set[int]) -> None:
        """Drop the kept rows among ``breaking``, counted under ``key``: the first rule they break."""
        self.dropped |= self.count(key, breaking)

    def count(self, key: str, matching: set[int]) -> set[int]:
        """The kept rows among ``matching``, counted under ``key`` (a rule that changes them, not drops)."""
        hit = matching - self.dropped if self.dropped else matching
        self.counts[key] = len(hit)
        return hit

    def kept(self) -> bytearray | None:
        """One flag per row for ``itertools.compress``, or None when every row is kept."""
        if not self.dropped:
            return None
        flags = bytearray(b"\x01") * self.n
        for row in self.dropped:
            flags[row] = 0
        return flags


#: For a test against one number: the extreme value of a column that passes it if any value does.
_EXTREME = {lt: min, le: min, gt: max}


def _where(column: Sequence, test, bound: int | float | Sequence) -> set[int]:
    """The rows i where ``test(column[i], bound)``, ``bound`` a number or a column (then row by row).

    Against a number, the column's ``min`` or ``max`` answers first (in C,
    making no list): usually no row breaks a rule.
    """
    if isinstance(bound, (int, float)):
        if not column or not test(_EXTREME[test](column), bound):
            return set()
        bounds: Iterable = repeat(bound)
    else:
        bounds = bound
    return set(compress(range(len(column)), map(test, column, bounds)))


def _replaced(column: Sequence, rows: set[int], new: int | Sequence) -> Sequence:
    """``column`` with the value of every row i of ``rows`` replaced by ``new[i]`` (or ``new``, a number).

    A copy (the column is left as it is): an array stays a compact array
    where the new values fit it, else the copy is a list.  When every row
    changes, ``new`` is the answer (a column) as it is.
    """
    if not rows:
        return column
    if isinstance(new, int):
        values: Iterable = repeat(new)
    elif len(rows) == len(column):
        return new
    else:
        values = map(new.__getitem__, rows)
    changes = list(zip(rows, values))
    out = column[:] if isinstance(column, (array, list)) else list(column)
    try:
        for row, value in changes:
            out[row] = value
    except (TypeError, OverflowError):  # a float or a huge int into an int64 array
        out = list(column)
        for row, value in changes:
            out[row] = value
    return out


def careful_numbers(values: Iterable[int | float]) -> list[int | float]:
    """``values`` with every integral float made an int (``3477.0`` -> ``3477``, as the careful path parses it)."""
    return [int(x) if type(x) is float and x.is_integer() else x for x in values]


#: Records are built this many at a time, so that only one slice of the kept fields exists as Python objects.
_RECORDS_PER_SLICE = 1 << 15
#: Record fields (JobRecord order) whose values repeat: each row gets one shared Python object per value.
_SHARED_FIELDS = frozenset({3, 4, 5, 7, 11})  # runtime, walltime, user, executable, logged wait


def _records(kept: bytearray | None, columns: Sequence[Sequence]) -> list[JobRecord]:
    """The JobRecords of the kept rows (``columns`` in JobRecord field order), sorted by (submit, id).

    Kept values become Python objects a slice at a time (``compress``), so
    that only one slice of the fields exists besides the records.  Fields
    that repeat (:data:`_SHARED_FIELDS`) get one Python object per value (a
    dictionary of the values seen, ``setdefault`` mapped over a slice in C):
    CEA-Curie's records then hold about 30 MB fewer int objects; no int and
    float of equal value meet in one dictionary, since an integral value is
    never a float.  Files are nearly always in (submit, id) order already:
    one pass checks it and the sort is skipped.
    """
    ids, submit = (list(_kept_values(column, kept)) for column in columns[:2])
    rest = [_kept_values(column, kept) for column in columns[2:]]
    shared: list[dict | None] = [{} if i + 2 in _SHARED_FIELDS else None for i in range(len(rest))]
    jobs: list[JobRecord] = []
    for lo in range(0, len(ids), _RECORDS_PER_SLICE):
        hi = lo + _RECORDS_PER_SLICE
        values = [_shared_values(list(islice(it, _RECORDS_PER_SLICE)), seen) for it, seen in zip(rest, shared)]
        jobs += records_from_columns(ids[lo:hi], submit[lo:hi], *values)
    if not _in_order(submit, ids):
        jobs.sort(key=attrgetter("submit", "id"))
    return jobs


def _kept_values(column: Sequence, kept: bytearray | None) -> Iterator:
    return iter(column) if kept is None else compress(column, kept)


def _shared_values(values: list, seen: dict | None) -> list:
    return values if seen is None else list(map(seen.setdefault, values, values))


def _in_order(submit: list, ids: list) -> bool:
    """Whether the rows are sorted by (submit, id): pairs of neighbours compared in one C-speed pass."""
    return all(map(le, zip(submit, ids), zip(islice(submit, 1, None), islice(ids, 1, None))))


def dropped_jobs(trace: Trace) -> int:
    """How many jobs (and malformed lines) cleaning removed: the sum over :data:`DROP_RULES`."""
    return sum(trace.cleaning.get(key, 0) for key in DROP_RULES)
