"""Outputs that are complete or absent: atomic files and result directories replaced as a set.

Experiments run in parallel and are often interrupted (Ctrl-C, SIGTERM from a
batch system, SIGKILL, a full disk); a workload, platform, downloaded trace or
result directory that exists must therefore be complete, and one that was
there before a failed run must still be the old one.

- **Files.**  :func:`atomic_write_bytes` writes a temporary file in the
  destination directory (same file system, so the final ``os.replace`` is an
  atomic rename) and only then moves it into place; :func:`atomic_write_many`
  does the same for several files that belong together (a workload and its
  platform): every content is on disk before the first rename.
- **Result directories.**  :func:`result_dir` gives the writer a fresh
  staging directory next to the destination; when the block succeeds the
  staging directory is swapped with the destination in one atomic step
  (``renameat2(RENAME_EXCHANGE)`` on Linux, ``renamex_np(RENAME_SWAP)`` on
  macOS), so a reader sees the old set or the new set, never a mix.  The
  mechanism does not care how the files are produced (any writer, any
  format) and costs two renames: nothing is copied.
- **Leftovers.**  Every temporary (``.NAME.XXXXXXXX.tmp`` files,
  ``.NAME.part-XXXXXXXX`` staging directories, downloads' ``.part`` files)
  is ``flock``-ed by its writer while the writer lives.
  :func:`clean_leftovers` removes those whose lock it can take: the writer
  was killed (SIGKILL, power loss) before it could clean up.  A running
  writer's temporaries are never touched.
- **Checks first.**  :func:`check_output_dir` and :func:`check_output_file`
  tell, before any work starts, whether an output can be written, and raise
  :class:`OutputError` naming the path (the CLI turns it into one line and
  exit status 2) - rather than a traceback after an hour of simulation.

A result directory is owned by bftune: it is replaced as a whole, so one
that holds files bftune did not write (``--out .``, a home directory) is
refused instead of being swept away.  A directory written by this module
holds a small marker file, :data:`MARKER`, which lists the names the result
wrote: the directory may be replaced only while it holds nothing else, so a
campaign or a tune that later wrote into a directory that once held a
``simulate`` result (its stored runs, its lock) is never replaced by the
next ``simulate``.  Callers name the files an older result of theirs may hold
(``replaces``) so that results written before the marker existed, or before
it listed its names, are replaced too.

Limits (docs/reliability.md, "Outputs are complete or absent"): where the platform or file system offers
no atomic exchange, the swap takes two renames and a crash between them
leaves the old set under ``.NAME.old-XXXXXXXX``; the next run writing NAME
puts it back (or drops it when NAME exists again).  Without ``fcntl``
(not POSIX) temporaries are never cleaned.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Collection, Iterable, Mapping, Union

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: Files and their bytes, named by str, Path or any path-like (a mapping is invariant in its keys: a
#: dict[Path, bytes] is not a Mapping[str | PathLike, bytes], hence one entry per kind of name).
FileContents = Union[Mapping[str, bytes], Mapping[Path, bytes], Mapping[Union[str, os.PathLike[str]], bytes]]

#: The file that says "bftune wrote this directory" (so it may be replaced as a whole).
MARKER = ".bftune-result"
#: Where a failed run's files go when a result directory is kept on failure: ``NAME.failed``.
FAILED_SUFFIX = ".failed"

# tempfile's random part: 8 characters of [a-z0-9_].
#: Names of the temporaries this module makes (a store recognises them too).
LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?:[a-z0-9_]{8}\.(?:tmp|part|probe)|(?P<kind>part|old)-[a-z0-9_]{8})$")


#: Names longer than this (in bytes) are shortened in their temporaries' names (:func:`temp_stem`).
_STEM_BYTES = 200
_SHORTENED_RE = re.compile(r"~[0-9a-f]{16}$")


def temp_stem(name: str) -> str:
    """What the temporaries of ``name`` are named after: ``name``, or for a name too long to take the
    temporaries' 16 more characters within a file system's 255 bytes, its first 150 bytes, ``~`` and a hash
    of the whole (so an ``--out`` name of 255 characters can be written like any other)."""
    encoded = os.fsencode(name)
    if len(encoded) <= _STEM_BYTES:
        return name
    digest = hashlib.blake2b(encoded, digest_size=8).hexdigest()
    return os.fsdecode(encoded[:150]) + "~" + digest


class OutputError(ValueError):
    """An output path that cannot be written; the message names it and says why."""


# --- files ------------------------------------------------------------------------------------


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path.

    The parent directory must exist.  On any error the temporary file is
    removed and the previous content of ``path`` (if any) is left untouched.
    """
    return atomic_write_many({path: data})[0]


def atomic_write_chunks(path: str | os.PathLike[str], chunks: Iterable[bytes | memoryview]) -> Path:
    """Write the concatenation of ``chunks`` to ``path`` atomically, one chunk at a time.

    For large outputs (a 300,000-row out_jobs.csv): the whole content is
    never held in memory.  Same guarantees as :func:`atomic_write_bytes`
    (a locked temporary, fsync'ed, then renamed; removed on any error).
    """
    path = Path(path)
    fd, tmp = _locked_temp_file(path.parent, path.name, ".tmp")
    try:
        try:
            for chunk in chunks:
                _write_all(fd, chunk)
            os.fsync(fd)
        except OSError as exc:  # os.write names no file: say which one (a full disk...)
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    finally:
        os.close(fd)  # releases the lock, after the rename
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`)."""
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_many(contents: FileContents) -> list[Path]:
    """Write several files that belong together: all temporaries first, then the renames.

    A failure while writing any of them (a full disk, a kill) leaves every
    destination as it was; the renames that follow are back to back.
    """
    staged: list[tuple[int, str, Path]] = []
    try:
        for name, data in contents.items():
            path = Path(name)
            fd, tmp = _locked_temp_file(path.parent, path.name, ".tmp")
            staged.append((fd, tmp, path))
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:  # os.write names no file: say which one (a full disk...)
                raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
            # mkstemp creates 0600; give the file the usual permissions instead.
            os.chmod(tmp, 0o666 & ~_UMASK)
        for _, tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for _, tmp, _ in staged:
            _unlink_quietly(tmp)
        raise
    finally:
        for fd, _, _ in staged:
            os.close(fd)  # releases the lock, after the rename
    return [path for _, _, path in staged]


def locked_temp_file(directory: str | os.PathLike[str], name: str, suffix: str) -> tuple[int, Path]:
    """A new, locked temporary ``.NAME.XXXXXXXX<suffix>`` in ``directory``: (fd, path).

    For writers that stream (downloads): the lock marks the file as in use
    until ``fd`` is closed, so :func:`clean_leftovers` leaves it alone.
    """
    fd, tmp = _locked_temp_file(Path(directory), name, suffix)
    return fd, Path(tmp)


def _locked_temp_file(directory: Path, name: str, suffix: str) -> tuple[int, str]:
    fd, tmp = tempfile.mkstemp(prefix=f".{temp_stem(name)}.", suffix=suffix, dir=directory)
    _lock(fd)
    return fd, tmp


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# --- checks -----------------------------------------------------------------------------------


def output_path(path: str | os.PathLike[str] | None, what: str = "--out") -> Path:
    """``path`` as an absolute Path; an empty one is an error (``Path('')`` would mean here)."""
    if path is None or not os.fspath(path).strip():
        raise OutputError(f"{what}: empty path; name a directory or file to write")
    text = os.fspath(path)
    if "\0" in text:
        raise OutputError(f"{what}: the path contains a NUL character")
    return Path(os.path.abspath(text))


def check_output_dir(path: str | os.PathLike[str] | None, what: str = "--out",
                     replaces: Collection[str] = ()) -> Path:
    """Fail now, before any work, unless ``path`` can become (or be replaced by) a result directory.

    ``path`` may be missing (its parents are created later), an empty
    directory, or a result directory this module wrote (or that holds only
    names of ``replaces``).  Returns the absolute path (a final symbolic
    link is followed: the results go where it points).
    """
    final = output_path(path, what)
    if final.is_symlink():
        final = final.resolve()
    if os.path.lexists(final):
        if not final.is_dir():
            raise OutputError(f"{what} {path}: exists and is not a directory")
        foreign = _foreign_entry(final, replaces)
        if foreign is not None:
            raise OutputError(f"{what} {path}: holds {foreign!r}, which is not part of an earlier result of this "
                              "command (another command's stored work, or files of your own); a result directory "
                              "is replaced as a whole, so choose a new or empty directory")
    _check_creatable(final, path, what)
    return final


def check_writable_dir(path: str | os.PathLike[str] | None, what: str = "--out") -> Path:
    """Fail now unless files can be written in directory ``path`` (made later if missing).

    For directories that collect files (``convert``'s output, ``download``'s
    trace cache) rather than hold one result: what is there is kept.
    """
    final = output_path(path, what)
    if os.path.lexists(final) and not final.is_dir():
        raise OutputError(f"{what} {path}: exists and is not a directory")
    _check_creatable(final / "x", path, what)
    return final


def check_output_file(path: str | os.PathLike[str] | None, what: str = "--out") -> Path:
    """Fail now unless a file can be written at ``path`` (replacing a file there)."""
    final = output_path(path, what)
    if final.is_dir():
        raise OutputError(f"{what} {path}: is a directory; name the file to write")
    if os.path.lexists(final) and not final.is_file():
        raise OutputError(f"{what} {path}: exists and is not a regular file")
    _check_creatable(final, path, what)
    return final


def _check_creatable(final: Path, shown: object, what: str) -> None:
    """The nearest existing ancestor of ``final`` must be a directory we can write in."""
    ancestor = final.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"{what} {shown}: {ancestor} is not a directory")
    try:  # os.access is not enough: root, read-only mounts, ACLs
        fd, probe = tempfile.mkstemp(prefix=f".{temp_stem(final.name)}.", suffix=".probe", dir=ancestor)
    except OSError as exc:
        raise OutputError(f"{what} {shown}: cannot write in {ancestor}: {exc.strerror or exc}") from None
    os.close(fd)
    _unlink_quietly(probe)


def _foreign_entry(directory: Path, replaces: Collection[str]) -> str | None:
    """The first entry that is neither ours (marker, ``replaces``) nor a temporary; None if none."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise OutputError(f"{directory}: cannot list it: {exc.strerror or exc}") from None
    ours = {MARKER, *replaces}
    if MARKER in names:
        kind, marked = _marker(directory / MARKER)
        if kind is None or kind == _kind(replaces):  # a marker of before kinds were written: its names
            ours.update(marked)
    for name in names:
        if name not in ours and not LEFTOVER.match(name):
            return name
    return None


#: The marker line that says which command's result a directory holds (its ``replaces`` names).
_KIND = "#kind "


def _kind(replaces: Collection[str]) -> str:
    """A result's kind: the names its command replaces (simulate: out_jobs.csv, summary.json)."""
    return ",".join(sorted(replaces))


def _marker(marker: Path) -> tuple[str | None, list[str]]:
    """The kind a result directory's marker records (None: written before kinds were) and the names it lists."""
    try:
        lines = marker.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, []
    kind = next((line[len(_KIND):] for line in lines[1:] if line.startswith(_KIND)), None)
    return kind, [line for line in lines[1:] if line and "/" not in line and not line.startswith(_KIND)]


def _marker_text(staging: Path, replaces: Collection[str]) -> str:
    """The marker of a result: what it is, which command's (its kind: only that command replaces it), then
    every name it wrote (what a later run of the same command may replace)."""
    names = sorted(name for name in os.listdir(staging) if name != MARKER)
    return "written by bftune; replaced as a whole by the next run while it holds only these:\n" + \
        f"{_KIND}{_kind(replaces)}\n" + "".join(f"{name}\n" for name in names)


# --- result directories --------------------------------------------------------------------------


class ResultDir:
    """A staging directory that becomes ``path`` as a whole when the ``with`` block succeeds.

    ``with ResultDir(out) as stage:`` - write everything into ``stage``.  On
    success ``stage`` is swapped with ``out`` (the old set, if any, is then
    deleted) and ``NAME.failed`` from an earlier failure is removed.  On an
    exception (KeyboardInterrupt and signals included) ``out`` is left as it
    was and the staging directory is deleted, or with ``keep_failed`` moved
    to ``NAME.failed`` (:attr:`failed_path`) for the post-mortem (Batsim's
    log).  The destination is checked when the object is made (see
    :func:`check_output_dir`), so make it before the work starts.
    """

    def __init__(self, path: str | os.PathLike[str] | None, *, what: str = "--out",
                 replaces: Collection[str] = (), keep_failed: bool = False) -> None:
        self.final = check_output_dir(path, what, replaces)
        self.replaces = tuple(replaces)
        self.what = what
        self.keep_failed = keep_failed
        self.failed_path = self.final.with_name(self.final.name + FAILED_SUFFIX)
        self.staging: Path | None = None
        self._fd: int | None = None

    def __enter__(self) -> Path:
        parent = self.final.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            clean_leftovers(parent, self.final.name)
            self.staging = Path(tempfile.mkdtemp(prefix=f".{temp_stem(self.final.name)}.part-", dir=parent))
            os.chmod(self.staging, 0o777 & ~_UMASK)  # mkdtemp makes 0700; give the usual permissions
        except OSError as exc:
            raise OutputError(f"{self.what} {self.final}: cannot write in {parent}: {exc.strerror or exc}") from None
        self._fd = os.open(self.staging, os.O_RDONLY)
        _lock(self._fd)
        return self.staging

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        staging = self.staging
        assert staging is not None and self._fd is not None
        try:
            if exc_type is None:
                atomic_write_text(staging / MARKER, _marker_text(staging, self.replaces))
                # again, just before the swap: another command may have written there while this one worked
                foreign = _foreign_entry(self.final, self.replaces) if self.final.is_dir() else None
                if foreign is not None:
                    raise OutputError(f"{self.what} {self.final}: now holds {foreign!r}, which this command did "
                                      f"not write (written there while it ran); its results are in {staging}")
                try:
                    _swap_into_place(staging, self.final)
                except OSError as err:
                    raise OutputError(f"{self.what} {self.final}: cannot move the results into place "
                                      f"({err.strerror or err}); they are in {staging}") from None
                _remove(self.failed_path)
            elif self.keep_failed and not (os.path.lexists(self.failed_path) and not self.failed_path.is_dir()):
                try:
                    _swap_into_place(staging, self.failed_path)
                except OSError:
                    _remove(staging)
            else:
                _remove(staging)
        finally:
            os.close(self._fd)
            self._fd = None


def result_dir(path: str | os.PathLike[str] | None, *, what: str = "--out", replaces: Collection[str] = (),
               keep_failed: bool = False) -> ResultDir:
    """``with result_dir(out) as stage: ...`` - see :class:`ResultDir`."""
    return ResultDir(path, what=what, replaces=replaces, keep_failed=keep_failed)


def _swap_into_place(staging: Path, final: Path) -> None:
    """Make ``staging`` become ``final`` in one step where the system allows; drop the old ``final``."""
    if not os.path.lexists(final):
        try:
            os.rename(staging, final)
            return
        except OSError as exc:  # someone made it in the meantime: swap with it below
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    if exchange(staging, final):
        _remove(staging)  # now the old set
        return
    old = Path(tempfile.mkdtemp(prefix=f".{temp_stem(final.name)}.old-", dir=final.parent))
    fd = os.open(final, os.O_RDONLY)
    try:
        _lock(fd)  # the old set moves with its lock: no cleaner restores it in between
        os.rename(final, old)  # replaces the empty directory just made
        os.rename(staging, final)
    finally:
        os.close(fd)
    _remove(old)


def exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Swap two paths atomically; False where the kernel, libc or file system cannot."""
    func, kind = _exchange_function()
    if func is None:
        return False
    ea, eb = os.fsencode(a), os.fsencode(b)
    if kind == "renameat2":
        result = func(_AT_FDCWD, ea, _AT_FDCWD, eb, _RENAME_EXCHANGE)
    else:
        result = func(ea, eb, _RENAME_SWAP)
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS stdio.h
_EXCHANGE: tuple | None = None


def _exchange_function() -> tuple:
    global _EXCHANGE
    if _EXCHANGE is None:
        func, kind = None, ""
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if sys.platform.startswith("linux"):
                func, kind = getattr(libc, "renameat2", None), "renameat2"
            elif sys.platform == "darwin":
                func, kind = getattr(libc, "renamex_np", None), "renamex_np"
        except OSError:  # pragma: no cover - no C library to load
            func = None
        _EXCHANGE = (func, kind)
    return _EXCHANGE


# --- leftovers ----------------------------------------------------------------------------------


def clean_leftovers(directory: str | os.PathLike[str], name: str | None = None) -> list[Path]:
    """Remove temporaries of dead writers in ``directory`` (only NAME's when ``name`` is given).

    A temporary is removed only if its lock can be taken, i.e. no living
    process is writing it.  An ``.NAME.old-*`` directory (the old set, left
    by a crash in the middle of a two-rename swap) is put back as NAME when
    NAME is missing.  Returns what was removed or restored.
    """
    directory = Path(directory)
    if fcntl is None:  # pragma: no cover - not POSIX: no way to tell live from dead
        return []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    done = []
    stem = temp_stem(name) if name is not None else None
    for entry in entries:
        match = LEFTOVER.match(entry.name)
        if match is None or (stem is not None and match.group("name") != stem):
            continue
        restore = name if name is not None else match.group("name")
        if match.group("kind") == "old" and _SHORTENED_RE.search(restore):
            continue  # an old set of a long NAME, known only by its shortened stem: the next run writing NAME
        path = Path(entry.path)
        fd = _try_lock(path)
        if fd is None:
            continue
        try:
            final = directory / restore
            if match.group("kind") == "old" and not os.path.lexists(final):
                os.rename(path, final)
            else:
                _remove(path)
            done.append(path)
        except OSError:
            pass
        finally:
            os.close(fd)
    return done


def _lock(fd: int) -> None:
    """Mark a temporary of ours as in use (released when ``fd`` is closed, or the process dies)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _try_lock(path: Path) -> int | None:
    """An open, locked descriptor of ``path``, or None if a living writer holds it (or it is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _remove(path: Path) -> None:
    try:
        is_dir = path.is_dir() and not path.is_symlink()
    except OSError:  # a name too long to exist (NAME.failed of a 255-character NAME)
        return
    if is_dir:
        remove_tree(path)
    else:
        _unlink_quietly(path)


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove a folder of ours even where a user made it read-only, quietly (what stays is a leftover).

    A result directory the user had made read-only (``chmod -R a-w``) is, once replaced, the old set in
    a ``.NAME.old-*``/``.part-*`` folder; removing its files needs its folders writable, and without that
    the folder stayed and could not be deleted without a ``chmod`` first.  The folders are ours to remove,
    so each one that refuses is made writable by its owner and the removal tried again.
    """
    def writable_then_retry(function, name, _exc) -> None:
        try:
            os.chmod(os.path.dirname(name), 0o700)  # the folder that refused (it is ours, about to go)
            if function in (os.rmdir, os.unlink, os.remove):
                function(name)
            elif function in (os.scandir, os.listdir, os.open):  # an unreadable folder: read it, then again
                os.chmod(name, 0o700)
                remove_tree(name)
        except OSError:
            pass  # still there: a leftover the next run of the same command removes

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=writable_then_retry)
    else:  # onerror, deprecated from 3.12 on
        shutil.rmtree(path, onerror=writable_then_retry)


def _read_umask() -> int:
    # os.umask can only be read by setting it; do it once, at import time,
    # rather than racing other threads on every write.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _unlink_quietly(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
