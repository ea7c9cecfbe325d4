"""Load the decision core compiled by ``bftune accelerate``, when a build matches these sources exactly.

Why a cache and a finder rather than extension modules beside the sources:
Python prefers ``engine.cpython-311-….so`` to ``engine.py`` in the same
folder, so a build left in an editable checkout would silently shadow every
later edit of the core.  Builds live instead in
``$BFTUNE_CACHE_DIR/compiled/<key>/`` (default ``~/.cache/bftune``), where
``<key>`` hashes the interpreter's ABI tag and the bytes of every compiled
source: an edited module changes the key, the build no longer matches, and
bftune runs interpreted until the next ``bftune accelerate``.  There is one
source for both: mypyc compiles the very modules that run interpreted.

``import bftune`` calls :func:`install`, which costs one ``stat`` when
nothing was ever built, and otherwise a hash of the 90 kB of compiled sources (half a millisecond) and
of the 2 MB build (a few milliseconds: a truncated or altered library would crash the process when loaded).
``BFTUNE_CORE=interpreted`` turns the compiled core off (the test suite does,
so that tests may patch the core's modules); a build that is damaged (a file
whose size or digest differs from the manifest's, written when the build passed
its check) or fails to load is reported in one line on stderr and ignored.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import stat
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from bftune.support.cachedir import cache_dir

#: The modules ``bftune accelerate`` compiles: the decision core, the local driver's event loop and its log, and
#: the Batsim driver (every Batsim message goes through it).  Not the protocol's event classes: they are
#: dataclasses with a class constant (``TYPE``), which mypyc turns into a field.
#: The packages' ``__init__`` modules stay interpreted, so that package folders (and the fits beside them) stay put.
MODULES = tuple(f"bftune.schedulers.core.{name}" for name in (
    "conservative", "decisions", "durations", "easy", "engine", "jobs", "machines", "ordering", "policies",
    "polynomial", "profile", "pveasy", "search", "slurm", "slurm_priority", "sortedindex", "state")) + (
    "bftune.schedulers.drivers.local.simulator", "bftune.schedulers.drivers.local.runs",
    "bftune.schedulers.drivers.batsim.driver", "bftune.schedulers.drivers.batsim.stats")

#: Compiled, but imported on first use rather than by ``import bftune``: no compiled module imports it, so a
#: command that never talks to Batsim does not pay for the protocol's imports (about 11 ms of every start).
#: Should it not load then, its source runs instead, with one line on stderr: it defines no class that a
#: compiled module uses, so the two kinds of module mix safely.
ON_DEMAND = ("bftune.schedulers.drivers.batsim.driver",)

#: The environment variable that chooses: ``auto`` (default: compiled when built) or ``interpreted``.
SWITCH = "BFTUNE_CORE"
CHOICES = ("auto", "interpreted")
MANIFEST = "manifest.json"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # support/ is one folder below the package root


def source_path(module: str, package: Path = PACKAGE_ROOT) -> Path:
    """The ``.py`` file of one of :data:`MODULES` in the package folder ``package`` (by default, this one)."""
    return package.joinpath(*module.split(".")[1:]).with_suffix(".py")


def source_key(package: Path = PACKAGE_ROOT) -> str:
    """What a build must have been made from: the ABI tag and every compiled source, byte for byte."""
    digest = hashlib.blake2b(digest_size=10)
    digest.update(f"{sys.implementation.cache_tag} {sys.platform} {importlib.machinery.EXTENSION_SUFFIXES[0]}".encode())
    for module in MODULES:
        digest.update(module.encode() + b"\0")
        digest.update(source_path(module, package).read_bytes())
    return digest.hexdigest()


def build_dir(key: str | None = None) -> Path:
    return cache_dir() / "compiled" / (key or source_key())


class CompiledCore:
    """Finds the compiled modules of one build; every other import goes on as usual.

    A meta path finder needs only ``find_spec``; ``importlib.abc`` is not imported for its base class
    because it pulls in ``importlib.resources`` (25 ms of every start-up).
    """

    def __init__(self, directory: Path, files: dict[str, str]) -> None:
        self.directory = directory
        self.files = files

    def find_spec(self, fullname: str, path=None, target: ModuleType | None = None):
        name = self.files.get(fullname)
        if name is None:
            return None
        location = str(self.directory / name)
        extension = importlib.machinery.ExtensionFileLoader(fullname, location)
        # Any: an OnDemandLoader has the two methods imports call, not typeshed's legacy load_module.
        loader: Any = OnDemandLoader(extension, self.directory) if fullname in ON_DEMAND else extension
        return importlib.util.spec_from_file_location(fullname, location, loader=loader)


class OnDemandLoader:
    """Loads a compiled module of :data:`ON_DEMAND`, or its source if the library does not load."""

    def __init__(self, extension: importlib.machinery.ExtensionFileLoader, directory: Path) -> None:
        self.extension = extension
        self.directory = directory
        self.source: importlib.machinery.SourceFileLoader | None = None

    def create_module(self, spec):
        try:
            return self.extension.create_module(spec)
        except ImportError as exc:
            name = self.extension.name
            print(f"bftune: the compiled {name} in {self.directory} does not load ({exc}); running its source "
                  f"(bftune accelerate replaces the build; or set {SWITCH}=interpreted)", file=sys.stderr)
            self.source = importlib.machinery.SourceFileLoader(name, str(source_path(name)))
            return None  # a plain module, which exec_module fills from the source

    def exec_module(self, module: ModuleType) -> None:
        if self.source is None:
            self.extension.exec_module(module)
            return
        module.__file__ = self.source.path
        self.source.exec_module(module)


def active() -> CompiledCore | None:
    """The installed finder, if this process runs the compiled core."""
    return next((f for f in sys.meta_path if isinstance(f, CompiledCore)), None)


def install() -> CompiledCore | None:
    """Put the matching build, if any, first on the import path; None when running interpreted.

    A build is used only whole and intact: every file its manifest lists must
    have the size and digest recorded when the build was installed (after
    its self-check), and then every module must import (the Batsim driver
    when first used: :data:`ON_DEMAND`).  Otherwise (a truncated library,
    random bytes in one: a bus error or a segmentation fault if loaded; an
    unreadable manifest) one line on stderr says so and
    bftune runs interpreted, so every command works, ``bftune accelerate
    --remove`` and ``--prune`` included.
    """
    choice = os.environ.get(SWITCH, "auto")
    if choice not in CHOICES:
        print(f"bftune: {SWITCH}={choice!r} is not one of {', '.join(CHOICES)}; taking auto", file=sys.stderr)
    if choice == "interpreted" or active() is not None:
        return active()
    try:
        if not (cache_dir() / "compiled").is_dir():
            return None
    except OSError as exc:  # a cache left by `sudo` (root's, mode 700): every command must still work
        print(f"bftune: cannot read the cache directory {cache_dir()} ({exc.strerror or exc}); running the "
              f"interpreted core", file=sys.stderr)
        return None
    directory = build_dir()
    if not os.path.lexists(directory / MANIFEST):
        return None  # no build for these sources: interpreted
    try:
        files = verified_files(directory)
    except BuildError as exc:
        _ignored(directory, str(exc))
        return None
    finder = CompiledCore(directory, files)
    runtime = [name for name in files if name not in MODULES]  # mypyc's shared library
    sys.meta_path.insert(0, finder)
    try:
        # All or nothing: a compiled module beside the interpreted copy of another would hold two
        # different classes of one name (the compiled ones reach each other inside the library).
        for name in [*runtime, *MODULES]:
            if name not in ON_DEMAND:
                importlib.import_module(name)
    except ImportError as exc:
        sys.meta_path.remove(finder)
        for name in [*runtime, *MODULES]:  # nothing else imported them yet: import bftune runs this first
            sys.modules.pop(name, None)
        _ignored(directory, f"it does not load: {exc}")
        return None
    return finder


class BuildError(Exception):
    """A build that must not be loaded; the message says which file and why."""


def verified_files(directory: Path) -> dict[str, str]:
    """The manifest's module -> file of the build in ``directory``, each file checked against its digest.

    The manifest must list every module of :data:`MODULES` and, for each
    file, its size and BLAKE2b digest (written by ``bftune accelerate``
    once the build passed its check).  A file is read only if it is a
    regular file of the recorded size, so a damaged build costs no more
    than its size to reject.
    """
    try:
        manifest = json.loads(_read_regular(directory / MANIFEST, 1 << 20))
        files, digests = manifest["files"], manifest["digests"]
        if not isinstance(files, dict) or not isinstance(digests, dict):
            raise TypeError("files and digests must be objects")
    except BuildError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise BuildError(f"its {MANIFEST} is unreadable or lists no digests ({exc})") from None
    absent = sorted(set(MODULES) - set(files))
    if absent:
        raise BuildError(f"{absent[0]} is missing")
    for module, name in files.items():
        expected = digests.get(module)
        if not isinstance(name, str) or "/" in name or not isinstance(expected, dict):
            raise BuildError(f"{module}: no digest in {MANIFEST}")
        size = expected.get("size")
        data = _read_regular(directory / name, size if isinstance(size, int) and size >= 0 else 0, exact=True)
        if hashlib.blake2b(data, digest_size=DIGEST_SIZE).hexdigest() != expected.get("blake2b"):
            raise BuildError(f"{name} differs from the file that was checked (damaged)")
    return files


#: Bytes of the BLAKE2b digests in a build's manifest.
DIGEST_SIZE = 20


def file_digest(path: Path) -> dict[str, object]:
    """What the manifest records of a built file: its size and BLAKE2b digest."""
    data = path.read_bytes()
    return {"size": len(data), "blake2b": hashlib.blake2b(data, digest_size=DIGEST_SIZE).hexdigest()}


def _read_regular(path: Path, size: int, exact: bool = False) -> bytes:
    """A regular file's bytes: all of them (at most ``size``), or with ``exact`` exactly ``size``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise BuildError(f"{path.name}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # checked before fdopen, which refuses a directory with an OSError
        os.close(fd)
        raise BuildError(f"{path.name} is not a regular file")
    with os.fdopen(fd, "rb") as f:
        if exact and info.st_size != size:
            raise BuildError(f"{path.name} has {info.st_size} bytes, not the {size} that were checked (damaged)")
        if info.st_size > size:
            raise BuildError(f"{path.name} is larger than expected ({info.st_size} bytes)")
        return f.read(size + 1)


def _ignored(directory: Path, why: str) -> None:
    print(f"bftune: the compiled core in {directory} is not used: {why}; running interpreted "
          f"(bftune accelerate replaces it; or set {SWITCH}=interpreted)", file=sys.stderr)
