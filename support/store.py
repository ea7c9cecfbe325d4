"""The one resumable store: a directory of finished items, each kept as soon as it is done, skipped when run again.

Three commands keep long work in such a directory: a campaign (its runs), ``bftune tune`` (its simulated
weeks) and the learned index's score collection (its windows).  They share one way of keeping it:

- **one file per finished item**, ``<items>/<file(key)>`` (JSON), written atomically (a locked temporary
  renamed into place, :mod:`bftune.support.files`) by the one coordinating process as soon as the item
  arrives: a kill leaves each item whole or absent, never half-written;
- **reading what is stored to skip it**: every readable item is handed to its user, who keeps those that
  answer the same question (a campaign: a success whose run id is its file's name; tune: the same data,
  seed and tau; the collection: the same settings' digest); an unreadable or foreign file is ignored, so
  its item is simply run again;
- **failures**: an item that failed goes to ``failures/<file(key)>`` with its error and traceback; a later
  success removes it (tune stores none: a lost task takes its candidates out of the race);
- **the identity file** (``campaign.json``, ``tune.json``, ``collection.json``) saying what the directory
  holds.  Its user judges a stored identity (a campaign notes another campaign and keeps its runs; the
  collection refuses other settings; tune makes a new plan); the store itself refuses a directory made by
  a layout whose items would mix with its own (a campaign's and a tune's both live in ``runs/`` and both
  write ``weeks.csv``);
- **the lock**: ``flock`` on ``.campaign.lock`` (the name of the first user, kept so that a directory made
  before is locked by the same file), held by the one process working in the directory, non-blocking (a
  second process stops at once with the holder named), dropped by the kernel when the holder ends;
- **clean-up of leftovers**: the temporaries of writes cut short by a kill, removed under the lock before
  any work (:func:`bftune.support.files.clean_leftovers`: a living writer's are never touched).

What differs between the three is data, a :class:`Layout`: the folder of items, how a key names its file,
the identity file, the JSON form of each file, the exception its command turns into one line.  Each user
holds its layout (``CAMPAIGN`` in ``experiments/campaign/store.py``, ``TUNE`` in ``experiments/tune/store.py``,
``COLLECTION`` in ``learning/index/collect.py``); the layouts reproduce byte for byte the files each wrote
before they shared this module, so a directory stored before is resumed as it is.

Why here, in ``support/``: the collection lives in ``learning/``, a product layer below ``experiments/``
that may not import it, while campaigns and tune are above; ``support/`` imports nothing of bftune beyond
itself, so every user may import it, and what is specific to one user (its layout, what it accepts as
stored, its tables) stays with that user.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from bftune.support.files import LEFTOVER, atomic_write_text, clean_leftovers

#: The lock file of every layout (named after campaigns, its first user).
LOCK = ".campaign.lock"


class StoreError(ValueError):
    """A store directory that cannot be used; the message names it (one line, exit status 2)."""


@dataclass(frozen=True)
class JsonForm:
    """How one kind of file is written: ``json.dumps`` options, a final newline, and a cleaning of the value.

    ``strict`` forbids NaN and infinities (``clean`` turns them into JSON first, e.g. the runs' ``jsonable``).
    """

    indent: int | None = 1
    separators: tuple[str, str] | None = None
    newline: bool = True
    strict: bool = True
    clean: Callable[[Any], Any] | None = None

    def text(self, value: Any) -> str:
        value = self.clean(value) if self.clean is not None else value
        return json.dumps(value, indent=self.indent, separators=self.separators,
                          allow_nan=not self.strict) + ("\n" if self.newline else "")


@dataclass(frozen=True)
class Layout:
    """What one user's directory looks like (module docstring); the files on disk follow from it alone."""

    what: str  # what such a directory holds, in messages: "campaign", "tune run", "collection"
    identity: str  # the identity file: "campaign.json"
    items: str = "runs"  # the folder of finished items
    file: str = "{}.json"  # an item's file name, from its key (``str.format``): "{:05d}.json"
    failures: str = "failures"  # the folder of failed items
    item_form: JsonForm = JsonForm()
    failure_form: JsonForm = JsonForm()
    identity_form: JsonForm = JsonForm()
    #: identity files of layouts that share this one's folders or tables, with what they hold: refused
    foreign: tuple[tuple[str, str], ...] = ()
    #: more folders whose leftovers are removed (written through ``support.files`` beside the items)
    outputs: tuple[str, ...] = ("plots",)
    #: the exception raised for an unusable directory (the user's command turns it into one line)
    error: type[Exception] = StoreError


def _stray_entry(path: Path, layout: Layout) -> str | None:
    """The first entry of a directory without the layout's identity file that the layout does not make.

    A store's directory is new, empty, or one the layout wrote (its identity file says so).  Without one it
    may hold only the layout's own folders and lock (the runs of shards, copied into a new directory to be
    merged) and temporaries: anything else is someone's files, which the tables and report written into the
    directory could overwrite (``--out .``, a home directory, ``/``).
    """
    if (path / layout.identity).exists():
        return None
    ours = {layout.items, layout.failures, LOCK, *layout.outputs,
            *(name for name, _ in layout.foreign)}  # another layout's directory: refuse_foreign says which
    for name in sorted(os.listdir(path)):
        if name not in ours and not LEFTOVER.match(name):
            return name
    return None


class DirectoryLock:
    """An exclusive lock on a store directory: ``flock`` on ``DIR/.campaign.lock`` (module docstring).

    Worker processes are spawned and do not inherit it.  (Advisory locks on network file systems depend on
    the server.)  ``what`` names the caller in the refusal ("in use by another campaign").
    """

    def __init__(self, root: str | os.PathLike[str], what: str, error: type[Exception] = StoreError) -> None:
        self.path = Path(root) / LOCK
        self.what = what
        self.error = error
        self._fh: TextIO | None = None

    def __enter__(self) -> DirectoryLock:
        try:
            fh = open(self.path, "a+")
        except OSError as exc:
            raise self.error(f"{self.path}: cannot create the lock file ({exc.strerror})") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise self.error(f"{self.path.parent}: in use by another {self.what} ({holder}); wait for it to end "
                             "or choose another --out") from None
        fh.seek(0)
        fh.truncate()
        now = _dt.datetime.now().isoformat(timespec="seconds")
        fh.write(f"pid {os.getpid()} on {socket.gethostname()} since {now}\n")
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()  # closing the descriptor releases the lock
            self._fh = None


class Store:
    """A directory of one :class:`Layout`: open it, lock it, clean it, keep and read its items and identity."""

    def __init__(self, root: str | os.PathLike[str], layout: Layout) -> None:
        self.root = Path(root)
        self.layout = layout

    @classmethod
    def open(cls, root: str | os.PathLike[str], layout: Layout) -> Store:
        """The directory, created if needed and checked before any work; the layout's error, one line, if unusable.

        Only the directory itself: its folders are made by :meth:`make_folders`, under the lock.
        """
        what = layout.what
        if str(root).strip() == "":
            raise layout.error(f"--out: empty path; give the {what} directory")
        path = Path(root)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise layout.error(f"{path}: not a directory (a file is in the way); give a directory for --out") from None
        except OSError as exc:
            raise layout.error(f"{path}: cannot use it as the {what} directory: "
                               f"{exc.strerror or exc}{f' ({exc.filename})' if exc.filename else ''}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise layout.error(f"{path}: cannot write in it (permission denied)")
        stray = _stray_entry(path, layout)
        if stray is not None:
            raise layout.error(f"{path}: holds {stray!r} and no {layout.identity}: not a {what} directory; "
                               "give a new or empty directory for --out (bftune writes its tables and report "
                               "there, and would overwrite files of the same names)")
        return cls(path, layout)

    # --- the directory ----------------------------------------------------------------------

    @property
    def items_dir(self) -> Path:
        return self.root / self.layout.items

    @property
    def failures_dir(self) -> Path:
        return self.root / self.layout.failures

    def lock(self, what: str | None = None) -> DirectoryLock:
        """The directory's lock (``with store.lock():``), naming ``what`` (the layout's by default) when refused."""
        return DirectoryLock(self.root, what or self.layout.what, self.layout.error)

    def make_folders(self) -> None:
        """The folders of items and failures (once the identity is judged: a refused directory gets none)."""
        for folder in (self.items_dir, self.failures_dir):
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self.layout.error(f"{folder}: cannot create it ({exc.strerror or exc})") from None

    def remove_leftovers(self) -> int:
        """Delete the temporaries of writes cut short by a kill, folder by folder; how many went."""
        folders = (self.root, self.items_dir, self.failures_dir, *(self.root / o for o in self.layout.outputs))
        return sum(len(clean_leftovers(d)) for d in folders if d.is_dir())

    def refuse_foreign(self) -> None:
        """The layout's error if the directory holds what another layout wrote there (module docstring)."""
        for name, what in self.layout.foreign:
            if (self.root / name).exists():
                raise self.layout.error(f"{self.root} holds a {what} ({name}), not a {self.layout.what}: "
                                        "use another --out")

    # --- the identity file ---------------------------------------------------------------------

    @property
    def identity_path(self) -> Path:
        return self.root / self.layout.identity

    def read_identity(self) -> dict | None:
        """The stored identity: None without one; the layout's error, naming the file, if it cannot be read."""
        path = self.identity_path
        try:
            value = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise self.layout.error(f"{self.root}: not a {self.layout.what} directory") from None
        except (ValueError, OSError) as exc:
            raise self.layout.error(f"{path}: unreadable ({exc})") from None
        if not isinstance(value, dict):
            raise self.layout.error(f"{path}: unreadable (not a JSON object)")
        return value

    def write_identity(self, identity: dict) -> Path:
        return atomic_write_text(self.identity_path, self.layout.identity_form.text(identity))

    # --- items ---------------------------------------------------------------------------------

    def item_path(self, key: object) -> Path:
        return self.items_dir / self.layout.file.format(key)

    def failure_path(self, key: object) -> Path:
        return self.failures_dir / self.layout.file.format(key)

    def keep(self, key: object, record: dict) -> Path:
        """Store a finished item (atomically); the failure an earlier attempt left goes."""
        path = atomic_write_text(self.item_path(key), self.layout.item_form.text(record))
        self.failure_path(key).unlink(missing_ok=True)
        return path

    def keep_failure(self, key: object, record: dict) -> Path:
        """Store a failed item (its error and traceback) beside the items, for its user to read."""
        return atomic_write_text(self.failure_path(key), self.layout.failure_form.text(record))

    def read(self, path: Path) -> dict | None:
        """One stored item: None if absent, unreadable or not a JSON object (its item is run again)."""
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def read_key(self, key: object) -> dict | None:
        return self.read(self.item_path(key))

    def records(self) -> Iterator[tuple[Path, dict]]:
        """Every readable stored item with its file, in file-name order (the caller keeps those it accepts)."""
        for path in sorted(self.items_dir.glob("*.json")):
            record = self.read(path)
            if record is not None:
                yield path, record
