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
nothing was ever built, and a hash of the 90 kB of compiled sources (half a millisecond) otherwise.
``BFTUNE_CORE=interpreted`` turns the compiled core off (the test suite does,
so that tests may patch the core's modules); a build that fails to load is
reported in one line on stderr and ignored.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

from bftune.cachedir import cache_dir

#: The modules ``bftune accelerate`` compiles: the decision core, the local driver's event loop and its log, and
#: the Batsim driver (every Batsim message goes through it).  Not the protocol's event classes: they are
#: dataclasses with a class constant (``TYPE``), which mypyc turns into a field.
#: The packages' ``__init__`` modules stay interpreted, so that package folders (and the fits beside them) stay put.
MODULES = tuple(f"bftune.schedulers.core.{name}" for name in (
    "decisions", "durations", "easy", "engine", "jobs", "machines", "ordering", "policies", "polynomial",
    "pveasy", "search", "sortedindex", "state")) + (
    "bftune.schedulers.drivers.local.simulator", "bftune.schedulers.drivers.local.runs",
    "bftune.schedulers.drivers.batsim.driver")

#: The environment variable that chooses: ``auto`` (default: compiled when built) or ``interpreted``.
SWITCH = "BFTUNE_CORE"
CHOICES = ("auto", "interpreted")
MANIFEST = "manifest.json"
PACKAGE_ROOT = Path(__file__).resolve().parent


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
        return importlib.util.spec_from_file_location(
            fullname, location, loader=importlib.machinery.ExtensionFileLoader(fullname, location))


def active() -> CompiledCore | None:
    """The installed finder, if this process runs the compiled core."""
    return next((f for f in sys.meta_path if isinstance(f, CompiledCore)), None)


def install() -> CompiledCore | None:
    """Put the matching build, if any, first on the import path; None when running interpreted."""
    choice = os.environ.get(SWITCH, "auto")
    if choice not in CHOICES:
        print(f"bftune: {SWITCH}={choice!r} is not one of {', '.join(CHOICES)}; taking auto", file=sys.stderr)
    if choice == "interpreted" or active() is not None:
        return active()
    if not (cache_dir() / "compiled").is_dir():
        return None
    try:
        directory = build_dir()
        files = json.loads((directory / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError):
        return None  # no build for these sources (or an unreadable one): interpreted
    finder = CompiledCore(directory, files)
    runtime = [name for name in files if name not in MODULES]  # mypyc's shared library
    sys.meta_path.insert(0, finder)
    try:
        # All or nothing: a compiled module beside the interpreted copy of another would hold two
        # different classes of one name (the compiled ones reach each other inside the library).
        absent = sorted(set(MODULES) - set(files)) + [name for name in files if not (directory / files[name]).is_file()]
        if absent:
            raise ImportError(f"{absent[0]} is missing")
        for name in runtime:
            importlib.import_module(name)
    except ImportError as exc:
        sys.meta_path.remove(finder)
        print(f"bftune: the compiled core in {directory} does not load ({exc}); running interpreted "
              f"(rebuild: bftune accelerate; or set {SWITCH}=interpreted)", file=sys.stderr)
        return None
    return finder
