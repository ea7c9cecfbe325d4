"""The standard streams of a bftune command: errors that name them, warnings as one line, a quiet end.

``bftune policies >/dev/full`` must say "standard output: No space left on
device" in one line, not exit 0 or print a traceback; a warning of bftune's
own is one line like its errors; and once standard output is gone, the
interpreter's last flush must not fail again at exit.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Iterator


#: The longest error line printed: a message naming a 30,000-column header or a 5,000-digit field once
#: printed 90 KB; the head (what went wrong, where) and the tail (the advice) are what a reader needs.
MAX_ERROR_CHARS = 1_000


def error_line(message: object, *, lines: bool = False) -> str:
    """``bftune: error: MESSAGE`` as one bounded line (``lines``: Batsim's log tail keeps its lines).

    A message of several lines (an exception of a library) is joined with "; "; longer than
    :data:`MAX_ERROR_CHARS`, its middle is cut and the cut is said.
    """
    text = str(message)
    if not lines:
        text = "; ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(text) > MAX_ERROR_CHARS:
        head, tail = text[:MAX_ERROR_CHARS * 3 // 4], text[-MAX_ERROR_CHARS // 5:]
        text = f"{head} [... {len(text) - len(head) - len(tail):,} characters cut ...] {tail}"
    return f"bftune: error: {text}"


def print_error(message: object, *, lines: bool = False) -> None:
    """Print :func:`error_line` on the standard error."""
    print(error_line(message, lines=lines), file=sys.stderr)


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """bftune's own warnings (``UnpinnedChecksumWarning``...) as one line, ``bftune: warning: ...``, rather than
    Python's two-line format naming a source line of bftune; other libraries' warnings as they were."""
    previous = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if category.__module__.startswith("bftune."):
            print(f"bftune: warning: {message}", file=sys.stderr)
        else:
            previous(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


#: How errors name standard output (``bftune policies >/dev/full``).
STDOUT = "standard output"


class NamedStream:
    """A text stream whose write errors name it (``os.write`` errors name no file)."""

    def __init__(self, stream, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, self._name) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, self._name) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def stdout_failure() -> OSError | None:
    """Flush standard output; the error if that fails (then output goes nowhere, quietly)."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        silence_stdout()
        return exc
    except ValueError:  # closed
        return None
    return None


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
