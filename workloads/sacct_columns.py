"""sacct's columns: which have a known shape, which are free text, and how a header or a ``--format`` names them.

sacct does not escape or quote: a value holding the delimiter splits into
several fields.  So every column is one of three kinds:

- **shaped** (:data:`SHAPES`): ids, times, durations, counts, states, exit
  codes, TRES strings, memory sizes, node lists.  A value either matches
  its shape or the line is misread; these columns *anchor* a line.  A
  shaped column may span several fields only where its shape can hold the
  delimiter (a TRES string ``cpu=8,mem=4G`` under ``--delimiter=,``), and
  then the joined value must match the shape.
- **free text** (:data:`FREE_TEXT`): what users or admins type - job
  names, comments, constraints (``[a|b]`` is Slurm's OR), submit lines,
  paths, reasons, reservations.  These absorb the surplus fields of a line.
- **opaque**: identifiers that cannot hold the delimiter (User, Group,
  Account, Partition, QOS, Cluster ...: one field each, anything but a
  ``key=value`` piece of a TRES list) and columns this module does not know
  (a newer sacct's: one field each, any value).  (A pending job's
  partition list ``a,b`` under ``--delimiter=,`` is therefore misread: use
  another delimiter with such dumps.)

Names are compared case-insensitively; a ``--format`` entry's width
(``JobName%30``) is dropped, as sacct does in its parsable output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bftune.workloads.errors import WorkloadError

_ID = r"\d+(?:_(?:\d+|\[[\d,%\-]+\]))?(?:\+\d+)?(?:\.[A-Za-z0-9_-]+)?"
_TIME = r"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?|unknown|none|n/a)"
_DURATION = r"(?:(?:\d+-)?\d+(?::\d+){0,2}(?:\.\d+)?|unlimited|partition_limit|invalid|unknown|none)"
_COUNT = r"(?:\d+|unlimited|partition_limit|unknown|none|n/a)"
_STATE = r"[A-Z_]+(?: by -?\d+)?\+?"
_EXIT = r"-?\d+:-?\d+"
_TRES_PAIR = r"[A-Za-z][A-Za-z0-9_/:.\-]*=[A-Za-z0-9_.:+()*/\-]*"
_TRES = rf"(?:{_TRES_PAIR}(?:,{_TRES_PAIR})*)?"
_MEM = r"(?:\d+(?:\.\d+)?[KMGTPE]?[nc]?|0|)"
_HOSTS = r"(?:None assigned|(?:[A-Za-z0-9_.\-]+(?:\[[\d,\-]+\])?[A-Za-z0-9_.\-]*)(?:,[A-Za-z0-9_.\-]+(?:\[[\d,\-]+\])?[A-Za-z0-9_.\-]*)*|)"


@dataclass(frozen=True)
class Shape:
    """A value's form (a full match, spaces around ignored; case-insensitive but for states) and the separators
    inside it: a column spans several fields only where the delimiter is one of them (``,`` in a TRES list)."""

    name: str
    pattern: re.Pattern[str]
    separators: tuple[str, ...]
    anchors: bool = True  # strong enough to tell a record's first line (an identifier's shape is not)

    def matches(self, text: str) -> bool:
        return self.pattern.fullmatch(text.strip()) is not None

    def may_hold(self, delimiter: str) -> bool:
        return delimiter in self.separators


def _shape(name: str, pattern: str, separators: tuple[str, ...], flags: int = re.IGNORECASE,
           anchors: bool = True) -> Shape:
    return Shape(name, re.compile(pattern, flags), separators, anchors)


_SHAPES_BY_KIND: dict[str, Shape] = {
    "jobid": _shape("a job id", _ID, (",",)),  # an array range 12_[1,3-5]
    "time": _shape("a date and time", _TIME, ("-", ":", "T")),
    "duration": _shape("a duration", _DURATION, ("-", ":")),
    "count": _shape("a count", _COUNT, ()),
    "state": _shape("a job state", _STATE, (" ",), 0),  # sacct prints states in capitals: 'run' is not one
    "exit": _shape("an exit code", _EXIT, (":",)),
    "tres": _shape("a TRES list", _TRES, (",", "=", "/")),
    "mem": _shape("a memory size", _MEM, ()),
    "hosts": _shape("a node list", _HOSTS, (",", " ", "-")),
    "ident": _shape("an identifier", r"[^=]*", (), anchors=False),  # a name: anything but a TRES piece 'cpu=4'
}

_KINDS: dict[str, tuple[str, ...]] = {
    "jobid": ("jobid", "jobidraw"),
    "time": ("submit", "start", "end", "eligible"),
    "duration": ("elapsed", "timelimit", "cputime", "totalcpu", "usercpu", "systemcpu", "suspended", "avecpu",
                 "mincpu", "reserved", "planned", "plannedcpu", "resvcpu"),
    "count": ("ncpus", "alloccpus", "reqcpus", "nnodes", "allocnodes", "reqnodes", "ntasks", "elapsedraw",
              "timelimitraw", "cputimeraw", "uid", "gid", "associd", "dbindex", "priority", "qosraw", "resvcpuraw",
              "plannedcpuraw", "wckeyid", "reservationid", "consumedenergyraw", "arrayjobid", "arraytaskid"),
    "state": ("state",),
    "exit": ("exitcode", "derivedexitcode"),
    "tres": ("alloctres", "reqtres", "tresusageinave", "tresusageinmax", "tresusageinmaxnode", "tresusageinmaxtask",
             "tresusageinmin", "tresusageinminnode", "tresusageinmintask", "tresusageintot", "tresusageoutave",
             "tresusageoutmax", "tresusageoutmaxnode", "tresusageoutmaxtask", "tresusageoutmin",
             "tresusageoutminnode", "tresusageoutmintask", "tresusageouttot"),
    "mem": ("reqmem", "maxrss", "averss", "maxvmsize", "avevmsize", "maxdiskread", "avediskread", "maxdiskwrite",
            "avediskwrite", "maxpages", "avepages"),
    "hosts": ("nodelist", "failednode", "maxrssnode", "maxvmsizenode", "maxdiskreadnode", "maxdiskwritenode",
              "maxpagesnode", "mincpunode"),
}

#: Columns whose values are typed by people (or built from such): they may hold the delimiter and newlines.
FREE_TEXT: frozenset[str] = frozenset({
    "jobname", "comment", "admincomment", "systemcomment", "constraints", "submitline", "workdir", "reason",
    "reservation", "extra", "stdout", "stderr", "stdin", "container", "licenses", "wckey", "mcslabel", "blockid",
    "layout", "flags", "reqgres", "allocgres", "reqcpufreq", "reqcpufreqmin", "reqcpufreqmax", "reqcpufreqgov",
    "avecpufreq"})

#: Identifiers: one field each (they cannot hold the delimiter), any value.
OPAQUE: frozenset[str] = frozenset({
    "user", "group", "account", "partition", "qos", "cluster", "consumedenergy", "maxrsstask", "maxvmsizetask",
    "maxdiskreadtask", "maxdiskwritetask", "maxpagestask", "mincputask"})

#: Column (lower case) -> its shape; columns not here are free text (:data:`FREE_TEXT`) or unknown (any value).
SHAPES: dict[str, Shape] = {column: _SHAPES_BY_KIND[kind] for kind, columns in _KINDS.items() for column in columns}
SHAPES.update({column: _SHAPES_BY_KIND["ident"] for column in OPAQUE})

#: Every column name sacct prints that this module knows (lower case).
KNOWN: frozenset[str] = frozenset(SHAPES) | FREE_TEXT | OPAQUE

_WIDTH = re.compile(r"%-?\d*$")


def parse_format(text: str) -> list[str]:
    """``"JobID,JobName%30,user"`` (what the admin gave ``sacct --format``) -> the column names, widths dropped."""
    names = [_WIDTH.sub("", part.strip()) for part in text.split(",")]
    if not names or any(not re.fullmatch(r"[A-Za-z0-9]+", n) for n in names):
        raise WorkloadError(f"sacct format {cut(text)}: not a list of sacct column names (JobID,User,Submit,...)")
    return names


def split_header(line: str) -> tuple[list[str], str, bool] | None:
    """``(names, delimiter, parsable)`` if ``line`` is a sacct header: column names (letters and digits) between
    one and the same delimiter, ``JobID`` among them; ``parsable``: the line ends with the delimiter
    (``--parsable``).  None otherwise."""
    line = line.lstrip("\ufeff").rstrip("\r\n")
    names = re.findall(r"[A-Za-z0-9]+", line)
    separators = re.split(r"[A-Za-z0-9]+", line)
    if len(names) < 2 or separators[0] != "":
        return None
    delimiter = separators[1]
    inner, last = separators[1:-1], separators[-1]
    if not delimiter or any(s != delimiter for s in inner) or last not in ("", delimiter):
        return None
    if "jobid" not in (n.lower() for n in names):
        return None
    return names, delimiter, last == delimiter


def cut(text: str, keep: int = 40) -> str:
    """A value as an error line shows it: quoted, at most ``keep`` characters, then its length."""
    if len(text) <= keep:
        return repr(text)
    return f"{text[:keep]!r}...({len(text):,} characters)"


def names_text(names: list[str], keep: int = 12, what: str = "columns") -> str:
    """A list of names as an error line shows it: the first ``keep``, then how many."""
    shown = ", ".join(cut(n, 30).strip("'") for n in names[:keep])
    return shown if len(names) <= keep else f"{shown}, ... ({len(names):,} {what})"
