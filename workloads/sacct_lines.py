"""From a dump's bytes to records of fields: decoding, multi-line records, and fields split by the delimiter.

sacct neither quotes nor escapes, so what it prints is not always one
record a line, nor one field a delimiter:

- **Decoding.**  Each physical line is read as UTF-8, else as Latin-1 (a
  user name of an old passwd file), never refused for its bytes; a UTF-8
  byte-order mark before the first line and a ``\\r`` before each ``\\n``
  (CRLF) are dropped.
- **Records over several lines.**  A ``SubmitLine`` or ``Comment`` holding
  newlines spans several physical lines.  A record is *complete* when it has
  the header's number of fields at least and its last field fits the last
  column's shape (surplus delimiters in free text can give the count before
  the record's end).  A line starts a new record when the first column has
  a shape (``JobID`` first, as sacct puts it) and the line's first field
  fits it, after a complete record - or after a short one if the line is a
  whole record on its own: the short record is then refused with its line
  number rather than swallowing the next job.  With an unshaped first
  column (free text, a name), a line starts a record after a complete one
  whose last column has a shape (a time, a count, a state ...), or when it
  has the header's number of fields itself: newlines in a dump with
  neither a shaped first nor a shaped last column cannot be read for sure.
  Any other line is joined to the record, its newline inside the value;
  blank lines between records are skipped.  Error lines name a record's first
  physical line.
- **Surplus fields** (:func:`split_record`): a value holding the delimiter
  gives more fields than the header.  The shaped columns
  (:mod:`bftune.workloads.sacct_columns`) anchor the record; the surplus
  fields are joined back (with the delimiter) into the free-text columns.
  Every distribution of the surplus among the columns that may hold the
  delimiter is considered and kept if every shaped column then reads with
  its shape.  If the kept distributions give the same values to every
  column bftune reads (one distribution, or several that differ only in
  free text bftune ignores), the record is read so; otherwise it is
  ambiguous (:class:`AmbiguousRecord`: one line naming the candidate
  columns).  A shaped column spanning several fields (a TRES list under
  ``--delimiter=,``) spans at most :data:`MAX_SHAPED_SPAN`, and the search
  is bounded (:data:`MAX_SPLIT_WORK`).
- ``--parsable`` ends every line, header included, with the delimiter: that
  last empty field is not a column.  A line ending with one extra delimiter
  under a ``--parsable2`` header is read without it when no other reading
  works.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError
from bftune.workloads.sacct_columns import FREE_TEXT, SHAPES, Shape

#: The most fields a shaped column may span when its shape can hold the delimiter (a TRES or node list).
MAX_SHAPED_SPAN = 64
#: The most (columns x surplus fields) the search of a record's reading may cost; a 64 KiB line of delimiters
#: under a header of thousands of columns is refused instead of searched.
MAX_SPLIT_WORK = 4_000_000


class LineError(Exception):
    """A record cannot be read; the caller adds the file and the line."""


class AmbiguousRecord(LineError):
    """A record's surplus fields can be distributed among its free-text columns in ways that read differently."""


@dataclass(frozen=True, eq=False)
class Layout:
    """How the records of one dump are cut: its columns, their shapes, and which ones bftune reads."""

    names: tuple[str, ...]
    delimiter: str
    parsable: bool
    shapes: tuple[Shape | None, ...]
    absorbs: tuple[bool, ...]  # the column may span several fields
    used: dict[int, Callable[[str], object]]  # the columns bftune reads -> what it reads of a value

    @classmethod
    def of(cls, names: list[str], delimiter: str, parsable: bool,
           used: dict[int, Callable[[str], object]]) -> "Layout":
        """``used``: the columns whose values must not depend on the reading chosen, each with what bftune
        makes of a value (two readings that differ only in text it ignores are one)."""
        lower = [n.strip().lower() for n in names]
        shapes = tuple(SHAPES.get(n) for n in lower)
        absorbs = tuple(n in FREE_TEXT or (s is not None and s.may_hold(delimiter)) for n, s in zip(lower, shapes))
        return cls(tuple(names), delimiter, parsable, shapes, absorbs, dict(used))

    @property
    def width(self) -> int:
        return len(self.names)

    def count(self, text: str) -> int:
        """How many fields ``text`` cuts into (``--parsable``'s last delimiter not counted)."""
        n = text.count(self.delimiter) + 1
        return n - 1 if self.parsable and text.endswith(self.delimiter) else n

    def anchored(self) -> bool:
        """Whether the first column has a shape: then a line starting a record is told by its first field."""
        first = self.shapes[0]
        return first is not None and first.anchors

    def complete(self, text: str) -> bool:
        """Whether ``text`` can be a whole record: the header's number of fields at least, and a last field that
        fits the last column (surplus delimiters in free text give the count before the record's end)."""
        if self.count(text) < self.width:
            return False
        shape = self.shapes[-1]
        if shape is None:
            return True
        last = text[: -len(self.delimiter)] if self.parsable and text.endswith(self.delimiter) else text
        return shape.matches(last.rsplit(self.delimiter, 1)[-1])

    def _first_fits(self, line: str) -> bool:
        """Whether ``line`` begins with a value of the first column (``12_[1,3]`` under ``,``: several fields)."""
        shape = self.shapes[0]
        assert shape is not None
        pieces = line.split(self.delimiter, 8 if self.absorbs[0] else 1)
        if not pieces[0].strip():
            return False
        last = len(pieces) - 1 if self.absorbs[0] else 1
        return any(shape.matches(self.delimiter.join(pieces[:k])) for k in range(1, max(last, 1) + 1))

    def starts(self, line: str, complete: bool) -> bool:
        """Whether ``line`` starts a new record after one that is ``complete`` or not (module docstring)."""
        if not line.strip():
            return False
        whole = self.count(line) >= self.width
        if self.anchored():
            return self._first_fits(line) and (complete or whole)
        last = self.shapes[-1]
        return complete and (whole or (last is not None and last.anchors))


def physical_lines(blocks: Iterable[tuple[int, list[bytes]]]) -> Iterator[tuple[int, str]]:
    """Numbered lines, decoded (UTF-8, else Latin-1), without a BOM or the ``\\r`` of CRLF."""
    first = True
    for start, block in blocks:
        for i, raw in enumerate(block):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                line = raw.decode("latin-1")
            if first:
                line, first = line.lstrip("\ufeff"), False
            yield start + i, line[:-1] if line.endswith("\r") else line


def records(lines: Iterator[tuple[int, str]], layout: Layout, source: str) -> Iterator[tuple[int, str]]:
    """The dump's records, each with the number of its first physical line (module docstring)."""
    text: str | None = None
    first = 0
    count = 0
    for lineno, line in lines:
        if text is None:
            if line.strip():
                text, first = line, lineno
            continue
        complete = layout.complete(text)
        if layout.starts(line, complete):
            count = _counted(count, source, first)
            yield first, text
            text, first = line, lineno
        elif line.strip() or not complete:
            text = f"{text}\n{line}"
            if len(text) > limits.MAX_RECORD_CHARS:
                raise WorkloadError(f"{source}:{first}: a record longer than {limits.MAX_RECORD_CHARS // 1024} KiB "
                                    "(its lines joined): not a sacct record")
    if text is not None:
        _counted(count, source, first)
        yield first, text


def _counted(count: int, source: str, lineno: int) -> int:
    if count >= limits.MAX_JOBS:
        raise WorkloadError(f"{source}:{lineno}: more than {limits.MAX_JOBS:,} records: more than bftune accepts "
                            "(about 2 KB of memory per job)")
    return count + 1


def split_record(text: str, layout: Layout) -> list[str]:
    """The record's values, one per column (module docstring); a LineError if no reading, or no single one."""
    fields = text.split(layout.delimiter)
    if layout.parsable and len(fields) > 1 and fields[-1] == "":
        fields.pop()
    width = len(layout.names)
    if len(fields) == width:
        return fields
    if len(fields) < width:
        raise LineError(f"expected {width} fields (the header's), found {len(fields)}")
    try:
        return _resolve(fields, layout)
    except AmbiguousRecord:
        raise
    except LineError:
        if fields[-1] != "" or layout.parsable:
            raise
        fewer = fields[:-1]  # a --parsable line under a --parsable2 header
        if len(fewer) == width:
            return fewer
        try:
            return _resolve(fewer, layout)
        except LineError:
            pass
        raise


def _resolve(fields: list[str], layout: Layout) -> list[str]:
    width, surplus = len(layout.names), len(fields) - len(layout.names)
    prefix = f"expected {width} fields (the header's), found {len(fields)}"
    candidates = [layout.names[c] for c in range(width) if layout.absorbs[c]]
    if not candidates:
        raise LineError(f"{prefix}: the delimiter {layout.delimiter!r} inside a value, and no free-text column "
                        "(JobName, Comment, SubmitLine ...) to hold it")
    if width * (surplus + 1) > MAX_SPLIT_WORK:
        raise LineError(f"{prefix}: too many extra fields to resolve")
    forward, backward = _forward(fields, layout), _backward(fields, layout)
    if 0 not in backward[0]:
        raise LineError(f"{prefix}: no way of joining the {surplus} extra into {', '.join(candidates)} leaves every "
                        "other column readable")
    valid = [f & b for f, b in zip(forward, backward)]  # offsets at which column c starts in some complete reading
    differing = [c for c in sorted(layout.used) if len({layout.used[c](v) for v in
                                                          _values(fields, layout, c, valid, backward)}) > 1]
    if differing:
        varying = [layout.names[c] for c in range(width) if layout.absorbs[c] and
                   (len(valid[c]) > 1 or len(valid[c + 1]) > 1)]
        raise AmbiguousRecord(f"{prefix}: the delimiter {layout.delimiter!r} inside values of "
                              f"{', '.join(varying)} can be read in several ways that give "
                              f"{', '.join(layout.names[c] for c in differing)} different values (ambiguous)")
    values, k = [], 0
    for c in range(width):  # the first reading in column order: the earlier free-text columns take the fewest fields
        end = next(e for e in _ends(fields, layout, c, k, surplus) if e in backward[c + 1])
        values.append(_join(fields, layout, c, k, end))
        k = end
    return values


def _join(fields: list[str], layout: Layout, column: int, k: int, end: int) -> str:
    """Column ``column``'s value when it starts at offset ``k`` and the next column at offset ``end``."""
    return layout.delimiter.join(fields[column + k: column + end + 1])


def _fits(fields: list[str], layout: Layout, column: int, k: int, end: int) -> bool:
    shape = layout.shapes[column]
    return shape is None or shape.matches(_join(fields, layout, column, k, end))


def _ends(fields: list[str], layout: Layout, column: int, k: int, surplus: int) -> Iterator[int]:
    """The offsets at which the next column may start when ``column`` starts at offset ``k``, smallest first."""
    if not layout.absorbs[column]:
        if _fits(fields, layout, column, k, k):
            yield k
        return
    last = surplus if layout.shapes[column] is None else min(surplus, k + MAX_SHAPED_SPAN - 1)
    for end in range(k, last + 1):
        if _fits(fields, layout, column, k, end):
            yield end


def _free(layout: Layout, column: int) -> bool:
    return layout.absorbs[column] and layout.shapes[column] is None


def _forward(fields: list[str], layout: Layout) -> list[set[int]]:
    """``forward[c]``: the offsets (fields taken beyond one per column) at which column c can start."""
    width, surplus = len(layout.names), len(fields) - len(layout.names)
    forward: list[set[int]] = [{0}]
    for c in range(width):
        here = forward[c]
        if not here:
            nxt: set[int] = set()
        elif _free(layout, c):
            nxt = set(range(min(here), surplus + 1))
        else:
            nxt = {end for k in here for end in _ends(fields, layout, c, k, surplus)}
        forward.append(nxt)
    return forward


def _backward(fields: list[str], layout: Layout) -> list[set[int]]:
    """``backward[c]``: the offsets from which columns c, c+1, ... can take exactly the rest of the fields."""
    width, surplus = len(layout.names), len(fields) - len(layout.names)
    backward: list[set[int]] = [set() for _ in range(width)] + [{surplus}]
    for c in range(width - 1, -1, -1):
        after = backward[c + 1]
        if not after:
            continue
        if _free(layout, c):
            backward[c] = set(range(0, max(after) + 1))
        else:
            backward[c] = {k for k in range(surplus + 1)
                           if any(e in after for e in _ends(fields, layout, c, k, surplus))}
    return backward


def _values(fields: list[str], layout: Layout, column: int, valid: list[set[int]],
            backward: list[set[int]]) -> set[str]:
    """The values ``column`` takes over every complete reading (a free-text column: only whether it varies)."""
    surplus = len(fields) - len(layout.names)
    if _free(layout, column):
        starts, ends = valid[column], valid[column + 1]
        if len(starts) == 1 and len(ends) == 1:
            return {_join(fields, layout, column, min(starts), min(ends))}
        return {"", "\n"}  # it varies: two values, whatever they are
    return {_join(fields, layout, column, k, e) for k in valid[column]
            for e in _ends(fields, layout, column, k, surplus) if e in backward[column + 1]}
