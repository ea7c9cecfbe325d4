"""A user's own policies, predictors, selectors and hooks: found by import path or entry point.

A unit of the user's is named by a *spelling*, a string, like a built-in one:

- ``MODULE:NAME`` (``mymod:score``, ``lab.orders:SqrtArea``): ``NAME`` (dotted names reach into
  classes) of the module Python imports as ``MODULE``, from ``sys.path`` (``PYTHONPATH``);
- ``FILE.py:NAME`` (``./orders.py:score``, ``/home/me/orders.py:score``): the file itself, loaded as a
  module of its own; a relative path is read from the current directory;
- a plain name that no built-in unit has: an entry point of the installed packages, in the group of
  its kind (:data:`GROUPS`: ``bftune.policies``, ``bftune.predictors``, ``bftune.selectors``,
  ``bftune.hooks``).  A built-in name always means the built-in: an entry point of the same name is
  ignored, with a :class:`PluginWarning` when the group is read.

Why spellings and not objects: option values are what travels to worker processes and Dask workers
(run specs carry them), and each process finds the unit from its spelling by itself.  A unit
registered in one process's memory is unknown in the others; an import path or an entry point is
known wherever the module is importable.  Whatever is found is kept for the rest of the process, so a
spelling costs one import per process.

Errors are one line (:class:`PluginError`): the spelling, the module and why; option parsers put the
option's name in front.  The kinds' contracts (what a score function receives, what a predictor
factory returns...) are checked where each kind is resolved: ``policies.py`` for queue policies,
``bftune.learning`` for predictors and selectors, ``bftune.schedulers.hooks.plugins`` for hooks.
This module knows only how to find a name.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Collection

if TYPE_CHECKING:  # importlib.metadata is imported when a group is first read: it costs start-up time
    from importlib.metadata import EntryPoint

#: The entry-point group of each kind of unit (``[project.entry-points."bftune.policies"]``).
GROUPS = {"policy": "bftune.policies", "predictor": "bftune.predictors", "selector": "bftune.selectors",
          "hook": "bftune.hooks"}

#: How errors show what a spelling looks like.
FORMS = "MODULE:NAME or FILE.py:NAME"

#: The prefix of the module names of files loaded by path (``./orders.py`` is ``bftune_plugin_orders_<hash>``).
FILE_MODULES = "bftune_plugin_"


class PluginError(ValueError):
    """A spelling that names nothing usable; the message is one line: the spelling, the module, why."""


class PluginWarning(UserWarning):
    """An installed entry point that is ignored (its name is a built-in one)."""


def is_import_path(text: str) -> bool:
    """Whether ``text`` is an import path (``MODULE:NAME``, ``FILE.py:NAME``) rather than a name."""
    return ":" in text


# --- import paths ----------------------------------------------------------------------------

_loaded: dict[tuple[str, str], object] = {}


def load(spelling: str) -> object:
    """The object ``spelling`` (``MODULE:NAME`` or ``FILE.py:NAME``) names, imported once per process.

    Raises :class:`PluginError` (one line) when the module cannot be imported or has no such name.
    """
    text = spelling.strip()
    source, _, name = text.rpartition(":")  # rpartition: a Windows path keeps its drive's colon
    if not source.strip() or not name.strip() or not all(part.isidentifier() for part in name.split(".")):
        raise PluginError(f"{text!r}: expected {FORMS} (a module or a .py file, a colon, then a name)")
    source, name = source.strip(), name.strip()
    # A file is cached by where it is, not by how it was written: ./x.py and x.py are one module.
    key = (str(_file_path(source)) if _is_file(source) else source, name)
    found = _loaded.get(key)
    if found is None:
        module = _module_of_file(source, text) if _is_file(source) else _module(source, text)
        found = _loaded[key] = _attribute(module, name, source, text)
    return found


def _is_file(source: str) -> bool:
    return source.endswith(".py") or "/" in source or os.sep in source


def _file_path(source: str) -> Path:
    path = Path(source).expanduser()
    return (path if path.is_absolute() else Path.cwd() / path).resolve()


def _module(name: str, spelling: str) -> ModuleType:
    if name == "__main__" or name == "__mp_main__":
        raise PluginError(f"{spelling}: __main__ is your script, which worker processes do not import; put "
                          f"{spelling.rpartition(':')[2]} in a module of its own (MODULE:NAME) or give the "
                          "script's file (./script.py:NAME)")
    if not all(part.isidentifier() for part in name.split(".")):
        raise PluginError(f"{spelling}: {name!r} is no module name; expected {FORMS}")
    main = None if name in sys.modules else _running_script(_origin(name))
    if main is not None:
        return main  # ``python mymod.py`` naming mymod:score: the running script, not a second copy of it
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise PluginError(f"{spelling}: cannot import {name}: no module {exc.name} on sys.path"
                              f"{_hint(name, spelling)}") from None
        raise PluginError(f"{spelling}: importing {name} failed: {one_line(exc)}") from None
    except Exception as exc:  # the module's own code failed: say where, in one line
        raise PluginError(f"{spelling}: importing {name} raised {one_line(exc)}") from None


def _hint(name: str, spelling: str) -> str:
    """How to make a module importable; names the file when it lies in the current directory."""
    local = Path(*name.split(".")).with_suffix(".py")
    if local.is_file():
        return (f" ({local} is in this directory, which is not on sys.path: run with PYTHONPATH=. or give the "
                f"file: ./{local.as_posix()}:{spelling.rpartition(':')[2]})")
    return " (put the folder that holds it on PYTHONPATH, or give its file: FILE.py:NAME)"


def _module_of_file(source: str, spelling: str) -> ModuleType:
    """The module of a ``.py`` file: the running script itself when it is that file, else loaded once."""
    path = _file_path(source)
    main = _running_script(path)
    if main is not None:
        return main  # running already: loading it again would run the script again
    if not path.is_file():
        raise PluginError(f"{spelling}: no such file {path}" if not path.exists() else
                          f"{spelling}: {path} is not a file")
    name = f"{FILE_MODULES}{_identifier(path.stem)}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{spelling}: {path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: dataclasses and pickling look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if not isinstance(exc, Exception):
            raise
        raise PluginError(f"{spelling}: loading {source} raised {one_line(exc)}") from None
    return module


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b
    except OSError:
        return False


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _attribute(module: ModuleType, name: str, source: str, spelling: str) -> object:
    found: object = module
    for i, part in enumerate(name.split(".")):
        try:
            found = getattr(found, part)
        except AttributeError:
            owner = source if i == 0 else f"{source}:{'.'.join(name.split('.')[:i])}"
            raise PluginError(f"{spelling}: {owner} has no attribute {part!r}") from None
    return found


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line, with the file and line of a syntax error."""
    if isinstance(exc, SyntaxError):
        where = f" ({Path(exc.filename).name}, line {exc.lineno})" if exc.filename else ""
        return f"SyntaxError: {exc.msg}{where}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# --- entry points --------------------------------------------------------------------------------

_groups: dict[str, dict[str, EntryPoint]] = {}
_from_entry_points: dict[tuple[str, str], tuple[str, object]] = {}


def entry_points(kind: str, builtins: Collection[str], fold: Callable[[str], str] = str.lower
                 ) -> dict[str, EntryPoint]:
    """The installed entry points of ``kind``'s group, by folded name, read once per process.

    An entry point whose name is a built-in one (``builtins``, folded) is left out, with a warning: the
    built-in wins, so an installed package never changes what a built-in name means.
    """
    group = _groups.get(kind)
    if group is None:
        group = _groups[kind] = {}
        from importlib.metadata import entry_points as installed_points

        taken = {fold(name) for name in builtins}
        for point in installed_points(group=GROUPS[kind]):
            key = fold(point.name)
            if key in taken:
                # Located at the package's entry_points.txt, line 0: the warning shows as that one line.
                warnings.warn_explicit(PluginWarning(
                    f"bftune: entry point {point.name} = {point.value} ({_distribution(point)}) in group "
                    f"{GROUPS[kind]} is ignored: {point.name} is a built-in {kind}, which wins"), PluginWarning,
                    _declared_in(point), 0)
            else:
                group.setdefault(key, point)  # a distribution seen twice on sys.path: its first place wins
    return group


def from_entry_point(kind: str, name: str, builtins: Collection[str], fold: Callable[[str], str] = str.lower
                     ) -> tuple[str, object] | None:
    """``(the entry point's name, the object it names)`` for a name that is not built in; None if none.

    The object is loaded once per process; a failing load is a :class:`PluginError` naming the entry
    point and its package.
    """
    key = fold(name.strip())
    cached = _from_entry_points.get((kind, key))
    if cached is not None:
        return cached
    point = entry_points(kind, builtins, fold).get(key)
    if point is None:
        return None
    try:
        loaded = point.load()
    except Exception as exc:
        raise PluginError(f"{name}: entry point {point.name} = {point.value} ({_distribution(point)}): cannot "
                          f"load it: {one_line(exc)}") from None
    found = _from_entry_points[kind, key] = (point.name, loaded)
    return found


def _declared_in(point: EntryPoint) -> str:
    """The file that declares ``point`` (its package's ``entry_points.txt``), or ``bftune`` when unknown."""
    folder = getattr(getattr(point, "dist", None), "_path", None)  # a PathDistribution's metadata folder
    return str(Path(folder) / "entry_points.txt") if folder is not None else "bftune"


def _distribution(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return f"package {dist.name} {dist.version}" if dist is not None else "an installed package"


def find(kind: str, text: str, builtins: Collection[str], choices: str,
         fold: Callable[[str], str] = str.lower) -> tuple[str, object]:
    """``(spelling, object)`` of a user's unit named by import path or, else, by an installed entry point.

    One lookup for predictors and selectors (and whatever else plugs in the same way): an unknown name is
    one :class:`PluginError` listing ``choices`` (the built-ins) and the installed entry points.
    """
    if is_import_path(text):
        return text, load(text)
    entry = from_entry_point(kind, text, builtins, fold)
    if entry is None:
        known = ", ".join([choices, *installed(kind, builtins, fold)])
        raise PluginError(f"unknown {kind} {text!r}; choose one of {known}, or your own: {FORMS} "
                          "(docs: guides/plugins.md)")
    return entry


def installed(kind: str, builtins: Collection[str], fold: Callable[[str], str] = str.lower) -> list[str]:
    """The names of the installed entry points of ``kind`` (those a built-in name does not shadow)."""
    return sorted(point.name for point in entry_points(kind, builtins, fold).values())


_caches: list[dict[Any, Any]] = []


def cache() -> dict[Any, Any]:
    """A per-process table of the units a kind found (and checked), which :func:`forget` empties too."""
    table: dict[Any, Any] = {}
    _caches.append(table)
    return table


def forget() -> None:
    """Forget everything found and read (for tests that install entry points or write modules)."""
    tables: list[dict[Any, Any]] = [_loaded, _groups, _from_entry_points, *_caches]
    for table in tables:
        table.clear()
    for name in [name for name in sys.modules if name.startswith(FILE_MODULES)]:
        del sys.modules[name]
    importlib.invalidate_caches()


# --- the running script -------------------------------------------------------------------------


def source_file(spelling: str) -> Path | None:
    """The file that importing ``spelling``'s module would run, when it can be told without importing it.

    A campaign asks so about the running script: a worker importing the script runs its top level again.
    """
    source = spelling.strip().rpartition(":")[0].strip()
    if not source:
        return None
    if _is_file(source):
        return _file_path(source)
    return _origin(source)


def _origin(name: str) -> Path | None:
    """Where the top-level module ``name`` would be imported from (None for a dotted name or none found)."""
    if "." in name or not name.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.has_location:
        return None
    return Path(spec.origin).resolve()


def _running_script(path: Path | None) -> ModuleType | None:
    """``__main__`` when it was run from ``path`` (``python path``), else None."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    return main if path is not None and main_file and _same_file(main_file, path) else None
