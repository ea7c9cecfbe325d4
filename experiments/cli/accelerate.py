"""``bftune accelerate``: compile the decision core with mypyc into the build cache, and check it.

The same modules that run interpreted are compiled (``bftune.support.compiled.MODULES``),
from a temporary copy of this installation's sources, so the checkout never
holds an extension module that could shadow an edited ``.py``.  The build is
only kept if, on a synthetic workload read from an SWF file, it writes byte-identical out_jobs.csv to
the interpreted core under every algorithm and hook family (EASY orders and a
threshold, the selector, PV-EASY with a predictor, the classifier with kills), and
the Batsim driver gives the same replies to a short conversation with a kill
(:mod:`bftune.experiments.runs.driverprobe`).
Without mypy, setuptools or a C compiler the command says so in one line
(exit 1, or 0 with ``--if-possible``) and bftune keeps running interpreted.
"""

from __future__ import annotations

import argparse
import datetime
import filecmp
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bftune.support import compiled
from bftune.support.cachedir import cache_dir
from bftune.support.checkout import PACKAGE_ROOT, in_checkout
from bftune.support.children import run_guarded
from bftune.support.files import atomic_write_text
from bftune.experiments.cli.common import Parents

#: Folders of the installation that hold no source of the package.
SKIPPED = {".venv", "results", "tests", "__pycache__", "build", "dist", ".git", ".ci"}

#: The self-check's scheduler options: one per algorithm and hook family that the compiled core runs.
CHECKS = {
    "EASY-FCFS": [],
    "SAF/SPF + 40 h threshold, machines model": ["--primary", "SAF", "--backfill", "SPF", "--threshold", "40h",
                                                 "--reservation", "machines"],
    "full-feedback selector": ["--selector", "full", "--period", "1d", "--threshold", "40h"],
    "PV-EASY, Last Model": ["--scheduler", "pv-easy", "--predictor", "last", "--fairness"],
    "classifier with safeguard kills": ["--policy", "SPF", "--classifier", "rf"],
}
#: The self-check's workload (jobs, processors, seed of the embedded synthetic model), read back from an SWF file.
CHECK_WORKLOAD = (1500, 64, 5)


class AccelerateError(Exception):
    """The build cannot be made or failed its check; the message is one line for the user."""


def install_hint(root: Path = PACKAGE_ROOT) -> str:
    """How this installation gets mypy and setuptools: the checkout's dev group, or the wheel's extra."""
    if in_checkout(root):
        return "in the dev group of pyproject.toml: `uv sync`"
    return "install the extra: pip install 'bftune[accelerate]'"


def missing_tools() -> str | None:
    """What the build needs and this environment lacks, or None."""
    lacking = [name for name, module in (("mypy", "mypyc"), ("setuptools", "setuptools"))
               if importlib.util.find_spec(module) is None]
    if lacking:
        return f"needs {' and '.join(lacking)} ({install_hint()})"
    compiler = os.environ.get("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None:
        return f"needs a C compiler ({compiler!r} is not on PATH)"
    return None


def copy_sources(target: Path) -> list[Path]:
    """The package's ``.py`` files into ``target/bftune``, with the ``__init__.py`` files mypyc needs.

    mypyc names a module by its chain of ``__init__.py`` files; the project's
    top-level folders are namespace packages (none may shadow pybatsim's own
    ``schedulers``), so the copy gets empty ones.  Returns the compiled modules'
    paths relative to ``target``.
    """
    package = target / "bftune"
    for folder, dirs, files in os.walk(compiled.PACKAGE_ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.startswith(".") and not d.endswith(".egg-info")]
        relative = Path(folder).relative_to(compiled.PACKAGE_ROOT)
        for name in files:
            if name.endswith(".py"):
                (package / relative).mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(folder) / name, package / relative / name)
    sources = []
    for module in compiled.MODULES:
        path = Path(*module.split("."))
        for parent in path.parents:
            if parent != Path("."):
                (target / parent / "__init__.py").touch(exist_ok=True)
        sources.append(path.with_suffix(".py"))
    return sources


def compile_copy(root: Path, sources: list[Path]) -> dict[str, Path]:
    """mypyc over ``sources`` in ``root``; the extension module of each compiled module (and the runtime)."""
    status, output = run_guarded([sys.executable, "-m", "mypyc", "--ignore-missing-imports", *map(str, sources)],
                                 root)
    if status != 0:
        tail = [line for line in output.splitlines() if line.strip()][-3:]
        raise AccelerateError("mypyc failed: " + " | ".join(tail))
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    built = {module: root / Path(*module.split(".")).with_suffix(suffix) for module in compiled.MODULES}
    for path in root.glob(f"*__mypyc{suffix}"):  # the group's shared library, a top-level module
        built[path.name[: -len(suffix)]] = path
    absent = [str(p) for p in built.values() if not p.is_file()]
    if absent:
        raise AccelerateError(f"mypyc reported success but did not write {absent[0]}")
    return built


def mypy_version() -> str:
    """mypy's version, imported here only: ``importlib.metadata`` would add 25 ms to every bftune start-up."""
    from mypy.version import __version__

    return __version__


def install_build(built: dict[str, Path], key: str, directory: Path) -> Path:
    """Copy the extensions into ``directory/key``, all at once (a half-copied build is never seen).

    The manifest records each file's size and digest (``bftune.support.compiled.verified_files`` checks them before
    any load: a build damaged later is ignored, not loaded).  A failure (a full disk) removes the partial
    copy and is one line naming ``directory``.
    """
    target = directory / key
    staging: Path | None = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=directory))
        files, digests = {}, {}
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        for module, path in built.items():  # named by the full module name: no two basenames can collide
            shutil.copy2(path, staging / (module + suffix))
            files[module] = module + suffix
            digests[module] = compiled.file_digest(staging / files[module])
        atomic_write_text(staging / compiled.MANIFEST, json.dumps({
            "files": files, "digests": digests, "python": sys.version.split()[0], "mypy": mypy_version(),
            "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "sources": str(compiled.PACKAGE_ROOT)}, indent=1) + "\n")
    except OSError as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise AccelerateError(f"cannot write the build into {directory}: {exc.strerror or exc}") from None
    try:
        os.replace(staging, target)
    except OSError:  # another process installed the same build first
        shutil.rmtree(staging, ignore_errors=True)
    return target


def bftune_command() -> list[str]:
    return [sys.executable, "-m", "bftune.experiments.cli.main"]


def self_check(work: Path, cache: Path) -> None:
    """Every :data:`CHECKS` configuration, interpreted and compiled (the build in ``cache``), must write the
    same out_jobs.csv."""
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(cache)}
    if not loads_compiled({**env, compiled.SWITCH: "auto"}):
        raise AccelerateError("self-check: a fresh process does not load the new build "
                              "(were the sources edited during the build?)")
    # From a file, as users simulate archive traces: the check then also covers reading an SWF (the records are
    # built in bulk there), not only the generator's path.  Imported here: the generator imports numpy, and
    # every bftune command imports this module for its sub-command's parser.
    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    workload = write_swf(generate(*CHECK_WORKLOAD), work / "check.swf")
    for number, (label, options) in enumerate(CHECKS.items()):
        outs = {}
        for core in ("interpreted", "auto"):
            out = work / f"{number}-{core}"
            command = bftune_command() + ["simulate", "--trace", str(workload), *options, "--out", str(out)]
            status, output = run_guarded(command, work, {**env, compiled.SWITCH: core})
            if status != 0:
                last = (output.strip().splitlines() or ["no message"])[-1]
                raise AccelerateError(f"self-check {label} ({core} core) failed: {last}")
            outs[core] = out / "out_jobs.csv"
        if not filecmp.cmp(outs["interpreted"], outs["auto"], shallow=False):
            raise AccelerateError(f"self-check {label}: the compiled core wrote a different out_jobs.csv")
    replies = {}
    for core in ("interpreted", "auto"):
        status, output = run_guarded([sys.executable, "-m", "bftune.experiments.runs.driverprobe"], work,
                                     {**env, compiled.SWITCH: core})
        if status != 0:
            last = (output.strip().splitlines() or ["no message"])[-1]
            raise AccelerateError(f"self-check Batsim driver ({core} core) failed: {last}")
        replies[core] = output
    if replies["interpreted"] != replies["auto"]:
        raise AccelerateError("self-check Batsim driver: the compiled driver replied differently")


def loads_compiled(env: dict[str, str]) -> bool:
    """Whether a fresh process with ``env`` imports the core from a compiled build."""
    code = "import bftune.schedulers.core.engine as m; print(m.__file__)"
    status, output = run_guarded([sys.executable, "-c", code], Path.cwd(), env)
    return status == 0 and output.strip().endswith(importlib.machinery.EXTENSION_SUFFIXES[0])


def build(check: bool = True, log=print) -> Path:
    """Compile, check and install the build for the current sources; its directory.  Up to date: nothing to do.

    The build is checked from a cache of its own and only then copied into the user's, so that no bftune
    process ever loads a build that has not passed its check.  Its key is that of the sources copied for
    the build: a source edited meanwhile makes it stale at once, never mislabelled.
    """
    target = compiled.build_dir()
    if os.path.lexists(target / compiled.MANIFEST):
        try:
            compiled.verified_files(target)
        except compiled.BuildError as exc:
            log(f"bftune accelerate: the build in {target} is damaged ({exc}); replacing it")
            shutil.rmtree(target, ignore_errors=True)
        else:
            log(f"bftune accelerate: up to date ({target})")
            return target
    reason = missing_tools()
    if reason:
        raise AccelerateError(reason)
    log(f"bftune accelerate: compiling {len(compiled.MODULES)} modules with mypyc (about a minute)...")
    try:
        with tempfile.TemporaryDirectory(prefix="bftune-accelerate-") as tmp:
            root = Path(tmp) / "src"
            sources = copy_sources(root)
            key = compiled.source_key(root / "bftune")
            built = compile_copy(root, sources)
            if check:
                log(f"bftune accelerate: checking it against the interpreted core ({len(CHECKS)} configurations)...")
                trial = Path(tmp) / "cache"
                install_build(built, key, trial / "compiled")
                self_check(Path(tmp) / "check", trial)
            target = install_build(built, key, cache_dir() / "compiled")
    except OSError as exc:  # a full temporary directory: named, not one of its files
        raise AccelerateError(f"cannot build in the temporary directory {tempfile.gettempdir()} (TMPDIR): "
                              f"{exc.strerror or exc}") from None
    log(f"bftune accelerate: built {target}; bftune now runs the compiled core "
        f"({compiled.SWITCH}=interpreted turns it off)")
    return target


def status() -> str:
    """Which core this process runs (``import bftune`` already decided: :func:`bftune.support.compiled.install`)."""
    finder = compiled.active()
    current = compiled.build_dir()
    if finder is not None:
        state = f"compiled ({finder.directory})"
    elif os.environ.get(compiled.SWITCH) == "interpreted":
        state = f"interpreted ({compiled.SWITCH}=interpreted)"
    elif os.path.lexists(current / compiled.MANIFEST):
        state = "interpreted (the build for these sources is not used; bftune accelerate replaces it)"
    else:
        state = "interpreted (no usable build for these sources: bftune accelerate)"
    others = [b for b in (cache_dir() / "compiled").glob("*/" + compiled.MANIFEST) if b.parent != current]
    return f"core: {state}; {len(others)} build(s) of other sources in {cache_dir() / 'compiled'}"


def remove_stale(everything: bool) -> int:
    """Delete the cache's builds of other sources (all of them with ``everything``); how many."""
    current = compiled.build_dir()
    removed = 0
    for path in (cache_dir() / "compiled").glob("*"):
        if path.is_dir() and (everything or path != current):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def cmd_accelerate(args: argparse.Namespace) -> int:
    actions = [flag for flag, given in (("--status", args.status), ("--prune", args.prune),
                                        ("--remove", args.remove)) if given]
    building = [flag for flag, given in (("--no-check", args.no_check), ("--if-possible", args.if_possible)) if given]
    if len(actions) > 1 or (actions and building):
        first, second = (actions + building)[:2]
        print(f"bftune accelerate: error: {first} and {second} do not go together: --status, --prune and "
              "--remove each do one thing and build nothing (--no-check and --if-possible are for building)",
              file=sys.stderr)
        return 2
    if args.status:
        print(status())
        return 0
    if args.remove or args.prune:
        print(f"bftune accelerate: removed {remove_stale(everything=args.remove)} build(s)")
        if args.prune and not (compiled.build_dir() / compiled.MANIFEST).is_file():
            print("bftune accelerate: these sources have no build (bftune runs interpreted); "
                  "`bftune accelerate` makes one")
        return 0
    try:
        build(check=not args.no_check)
    except AccelerateError as exc:
        print(f"bftune accelerate: {exc}; bftune runs interpreted", file=sys.stderr)
        return 0 if args.if_possible else 1
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "accelerate", help="compile the decision core with mypyc (optional; falls back to interpreted)",
        description="Compile the decision core and the local event loop with mypyc into the build cache "
                    f"({cache_dir() / 'compiled'}; BFTUNE_CACHE_DIR moves it), check that it decides "
                    "exactly as the interpreted core, and use it from then on. Editing a compiled module "
                    "makes the build stale: bftune then runs interpreted until the next accelerate. "
                    f"{compiled.SWITCH}=interpreted turns a build off. A damaged build is never loaded (its "
                    "files' digests are checked first) and is replaced by the next accelerate. Exit status: 0 "
                    "built or up to date, 1 the build could not be made (reason on stderr), 2 flags that do not "
                    "go together.")
    p.add_argument("--if-possible", action="store_true",
                   help="exit 0 when the build cannot be made here (no mypy, setuptools or C compiler)")
    p.add_argument("--no-check", action="store_true", help="skip the self-check against the interpreted core")
    p.add_argument("--status", action="store_true", help="say which core runs and which builds are cached")
    p.add_argument("--prune", action="store_true",
                   help="remove the builds of other sources (it builds nothing: says so when these sources have "
                        "none)")
    p.add_argument("--remove", action="store_true", help="remove every build (bftune runs interpreted)")
    p.set_defaults(func=cmd_accelerate)
    return p
