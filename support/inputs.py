"""Reading inputs within bounds: regular files only, decompression streamed, lines and sizes bounded.

An input path may name anything: ``/dev/zero``, ``/dev/urandom``, a FIFO, a
2.6 MB ``.swf.gz`` that expands to one 2.5 GB comment line.  Read whole
(``read_bytes``, ``gzip.decompress``), such inputs grew bftune to 24 GB
until the kernel killed it, deaf to SIGTERM inside one long C call.  Every
reader of a user's file goes through this module instead:

- :func:`open_regular` opens without blocking (a FIFO with no writer would
  block ``open`` itself) and refuses anything but a regular file, in one
  line naming the path and what it is (a device, a FIFO, a directory);
- :func:`read_small` reads a file that is small by nature (a campaign file,
  a learned policy's fit) and refuses one larger than its bound before
  holding more than that in memory;
- :func:`text_chunks` gives a file's bytes a chunk at a time, gunzipped on
  the fly when the file starts with gzip's magic bytes (never more than a
  chunk of decompressed data at once), and :func:`line_blocks` cuts them
  into lines of bounded length (a longer line is refused after reading
  that many bytes of it).

Reading goes chunk by chunk in Python, so a SIGTERM (``bftune.support.interrupts``)
stops a read within one chunk.  The bounds themselves are
``bftune.workloads.limits``'s (documented in the README's limits table);
this module is below every layer and imports only the standard library.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from typing import BinaryIO, Iterable, Iterator

#: Bytes read (or decompressed) at a time: a SIGTERM waits for at most one chunk, and cutting a chunk of
#: one-character lines into lines makes a few MB of temporaries at most.
CHUNK = 256 * 1024
GZIP_MAGIC = b"\x1f\x8b"


class InputError(ValueError):
    """An input that cannot be read within bftune's bounds; the message is one line naming the path."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file (symbolic links followed).

    Opened with ``O_NONBLOCK`` and checked on the descriptor (``fstat``), so
    a FIFO neither blocks nor slips in between a check and the ``open``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: {_kind(mode)}, not a regular file; bftune reads its inputs from files")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return f"is {name}"
    return "is a special file"


def read_small(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (``what`` names it in the error)."""
    with open_regular(path) as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise InputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(f"{path}: more than {_size(limit)}; {what} is a few kB at most")
    return data


def read_small_text(path: str | os.PathLike[str], limit: int, what: str) -> str:
    """:func:`read_small`, decoded as UTF-8; text that is not UTF-8 is an error naming the first bad byte."""
    data = read_small(path, limit, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
                         f"{what} is a text file") from None


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"


def stored_chunks(f: BinaryIO, path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The bytes of an open file as stored (not decompressed), a chunk at a time, from its current position."""
    while True:
        try:
            chunk = f.read(CHUNK)
        except OSError as exc:
            raise InputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        if not chunk:
            return
        yield chunk


def is_gzip(f: BinaryIO) -> bool:
    """Whether the open file starts with gzip's magic bytes (its position is left where it was)."""
    position = f.tell()
    head = f.read(2)
    f.seek(position)
    return head == GZIP_MAGIC


def text_chunks(f: BinaryIO, path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The content of an open file from its start, gunzipped on the fly if it is gzip data; a chunk at a time.

    Each decompression step yields at most :data:`CHUNK` bytes, however
    much the data expands.  Corrupt or truncated gzip data is an
    :class:`InputError` naming the path.
    """
    f.seek(0)
    if not is_gzip(f):
        yield from stored_chunks(f, path)
        return
    gz = gzip.GzipFile(fileobj=f, mode="rb")
    while True:
        try:
            chunk = gz.read(CHUNK)
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError; a truncated file EOFError
            raise InputError(f"{path}: corrupt gzip data: {exc}") from None
        if not chunk:
            return
        yield chunk


def line_blocks(chunks: Iterable[bytes], path: str | os.PathLike[str],
                max_line: int) -> Iterator[tuple[int, list[bytes]]]:
    """The lines of ``chunks`` (without their ``\\n``), a list per chunk with the number of its first line.

    A line over ``max_line`` bytes is an error naming ``path:line``, raised
    as soon as that many bytes of the line are read: a file of one endless
    line costs ``max_line`` bytes of memory, not its size.  A last line
    without ``\\n`` is given too.  Chunks of nothing but blank lines
    (spaces, tabs, newlines) are counted, not given: gigabytes of them cost
    no line-by-line work.
    """
    carry = b""
    lineno = 1  # of the line that ``carry`` begins
    for chunk in chunks:
        if not chunk.translate(None, b" \t\n") and not carry.translate(None, b" \t"):
            breaks = chunk.count(b"\n")
            lineno += breaks
            carry = carry + chunk if not breaks else chunk[chunk.rfind(b"\n") + 1:]
            if len(carry) > max_line:
                _too_long(path, lineno, max_line)
            continue
        pieces = (carry + chunk).split(b"\n") if carry else chunk.split(b"\n")
        carry = pieces.pop()
        if pieces and max(map(len, pieces)) > max_line:
            _too_long(path, lineno + next(i for i, piece in enumerate(pieces) if len(piece) > max_line), max_line)
        if pieces:
            yield lineno, pieces
        lineno += len(pieces)
        if len(carry) > max_line:
            _too_long(path, lineno, max_line)
    if carry:
        yield lineno, [carry]


def _too_long(path: str | os.PathLike[str], lineno: int, max_line: int) -> None:
    raise InputError(f"{path}:{lineno}: a line longer than {_size(max_line)}; not a workload file (the longest "
                     "line of the archive's traces is under 100 bytes)")
