"""The compiled core is used only when a build matches the sources exactly, and never breaks a run.

The loader's decisions are checked in fresh processes (each with its own
cache directory), since ``import bftune`` makes them.  The last test builds
the real thing with mypyc when this machine can, and checks that it decides
exactly as the interpreted core.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import fake_batsim
import pytest
from bftune.support import compiled
from processes import command, descendants, group_members, wait_until
from bftune.experiments.cli import accelerate

PROBE = ("import bftune.support.compiled as c, bftune.schedulers.core.engine as e; "
         "print('compiled' if c.active() else 'interpreted', e.__file__)")


#: PV-EASY and EASY-Last under the options that change the core's planning (venture backfilling's second step,
#: expired predictions kept), with the fairness monitor: every summary figure, printed.
VARIANTS = """
from bftune.experiments.runs.local import run_local
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.synthetic import generate
trace = generate(800, 32, seed=4)
for options in ({"scheduler": "pv-easy", "predictor": "last", "venture_fill": "shortest"},
                {"scheduler": "pv-easy", "predictor": "last", "venture_fill": "none", "overrun_estimate": "expired"},
                {"predictor": "last", "overrun_estimate": "expired"}):
    summary, _ = run_local(trace, SchedulerConfig.from_options({**options, "fairness": True}))
    print("variant", {k: v for k, v in summary.items() if k not in ("config", "simulation_seconds")})
"""


def ignore(line: str) -> None:
    """A log that says nothing."""


def run_probe(cache: Path, core: str = "auto") -> subprocess.CompletedProcess:
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(cache), compiled.SWITCH: core}
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True,
                          timeout=120)


def fake_build(cache: Path, key: str, files: dict[str, str], contents: bytes | None = None) -> Path:
    """A build directory with a manifest; with ``contents``, each file holds them and the manifest their digest."""
    directory = cache / "compiled" / key
    directory.mkdir(parents=True)
    manifest: dict = {"files": files}
    if contents is not None:
        for name in files.values():
            (directory / name).write_bytes(contents)
        manifest["digests"] = {module: compiled.file_digest(directory / name) for module, name in files.items()}
    (directory / compiled.MANIFEST).write_text(json.dumps(manifest))
    return directory


def current_key() -> str:
    return subprocess.run([sys.executable, "-c", "import bftune.support.compiled as c; print(c.source_key())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_without_a_build_the_core_runs_interpreted(tmp_path):
    done = run_probe(tmp_path / "empty")
    assert done.stdout.split() == ["interpreted", str(compiled.source_path("bftune.schedulers.core.engine"))]
    assert done.stderr == ""


def test_a_build_of_other_sources_is_ignored(tmp_path):
    fake_build(tmp_path, "0" * 20, {"bftune.schedulers.core.engine": "engine.so"})
    done = run_probe(tmp_path)
    assert done.stdout.split()[0] == "interpreted" and done.stderr == ""


def test_a_matching_intact_build_that_does_not_load_is_reported_and_ignored(tmp_path):
    """Its digests match (nothing was damaged), yet its libraries do not load: one line, interpreted."""
    files = {"abc__mypyc": "abc__mypyc.so", **{module: module + ".so" for module in compiled.MODULES}}
    directory = fake_build(tmp_path, current_key(), files, contents=b"not a shared library")
    done = run_probe(tmp_path)
    assert done.stdout.split()[0] == "interpreted"
    assert done.stdout.split()[1].endswith("engine.py")
    (line,) = done.stderr.splitlines()
    assert "does not load" in line and str(directory) in line and "bftune accelerate" in line


def test_the_batsim_driver_is_loaded_on_first_use_and_from_its_source_if_its_library_fails(tmp_path):
    """The driver is not imported by ``import bftune`` (start-up); if its compiled library does not load
    when Batsim is used, its source runs instead, with one line, and the driver works."""
    name = compiled.ON_DEMAND[0]
    (tmp_path / "driver.so").write_bytes(b"not a shared library")
    code = f"""
import importlib.machinery, importlib.util, sys
from pathlib import Path
from bftune.support import compiled
from bftune.schedulers.config import SchedulerConfig
location = {str(tmp_path / "driver.so")!r}
loader = compiled.OnDemandLoader(importlib.machinery.ExtensionFileLoader({name!r}, location), Path({str(tmp_path)!r}))
spec = importlib.util.spec_from_file_location({name!r}, location, loader=loader)
module = sys.modules[{name!r}] = importlib.util.module_from_spec(spec)  # as an import does
spec.loader.exec_module(module)
driver = module.BatsimDriver(SchedulerConfig().build)
print(module.__file__, type(driver).__name__)
"""
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, compiled.SWITCH: "interpreted"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(compiled.source_path(name)), "BatsimDriver"]
    (line,) = done.stderr.splitlines()
    assert f"the compiled {name} in {tmp_path} does not load" in line and "running its source" in line
    assert name in compiled.MODULES  # compiled all the same, with the core


def test_a_build_missing_one_module_is_not_used_at_all(tmp_path):
    files = {module: module + ".so" for module in compiled.MODULES[1:]}  # every module but the first
    fake_build(tmp_path, current_key(), files, contents=b"")
    done = run_probe(tmp_path)
    assert done.stdout.split()[0] == "interpreted"
    assert f"{compiled.MODULES[0]} is missing" in done.stderr


@pytest.mark.parametrize("damage", ["a file's bytes", "a file's size", "no digests", "manifest not JSON",
                                    "manifest a FIFO", "a file a directory"])
def test_a_build_that_cannot_be_verified_is_never_loaded(tmp_path, damage):
    """Verified before any load: a file whose size or digest is not the manifest's (written when the build
    passed its check), or a manifest that cannot vouch for the files, is one line and interpreted."""
    files = {"abc__mypyc": "abc__mypyc.so", **{module: module + ".so" for module in compiled.MODULES}}
    directory = fake_build(tmp_path, current_key(), files, contents=b"\x7fELF a library" * 100)
    manifest = directory / compiled.MANIFEST
    if damage == "a file's bytes":
        (directory / "abc__mypyc.so").write_bytes(b"\x7fELF a librarz" + b"\x7fELF a library" * 99)
    elif damage == "a file's size":
        (directory / "abc__mypyc.so").write_bytes(b"\x7fELF")
    elif damage == "no digests":
        manifest.write_text(json.dumps({"files": files}))
    elif damage == "manifest not JSON":
        manifest.write_text("{")
    elif damage == "manifest a FIFO":
        manifest.unlink()
        os.mkfifo(manifest)
    else:
        (directory / "abc__mypyc.so").unlink()
        (directory / "abc__mypyc.so").mkdir()
    done = run_probe(tmp_path)  # a FIFO would block a plain open(): run_probe's timeout-free run must end
    assert done.stdout.split()[0] == "interpreted"
    (line,) = done.stderr.splitlines()
    assert "is not used" in line and str(directory) in line and "running interpreted" in line


def test_an_unknown_switch_value_is_named_and_auto_taken(tmp_path):
    done = run_probe(tmp_path / "empty", core="compiled-please")
    assert done.stdout.split()[0] == "interpreted"  # nothing built there
    assert done.stderr.strip() == "bftune: BFTUNE_CORE='compiled-please' is not one of auto, interpreted; taking auto"


def test_the_key_is_the_sources_and_changes_with_any_of_them(tmp_path):
    copy = tmp_path / "bftune"
    for module in compiled.MODULES:
        target = compiled.source_path(module, copy)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(compiled.source_path(module).read_bytes())
    assert compiled.source_key(copy) == compiled.source_key()  # where the sources are does not matter
    edited = compiled.source_path("bftune.schedulers.core.easy", copy)
    edited.write_bytes(edited.read_bytes() + b"\n# edited\n")
    assert compiled.source_key(copy) != compiled.source_key()


def test_every_compiled_module_exists_and_no_package_init_is_compiled():
    for module in compiled.MODULES:
        assert compiled.source_path(module).is_file(), module
        assert not module.endswith("__init__")


def test_prune_removes_other_builds_and_says_when_these_sources_have_none(tmp_path):
    """--prune builds nothing: after an edit it would leave bftune interpreted without a word."""
    key = current_key()
    fake_build(tmp_path, "0" * 20, {"bftune.schedulers.core.engine": "engine.so"})
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "bftune.experiments.cli.main", "accelerate", "--prune"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    assert "removed 1 build(s)" in done.stdout and "these sources have no build" in done.stdout
    assert not (tmp_path / "compiled" / ("0" * 20)).exists()
    fake_build(tmp_path, key, {"bftune.schedulers.core.engine": "engine.so"})
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    assert "removed 0 build(s)" in done.stdout and "no build" not in done.stdout
    assert (tmp_path / "compiled" / key).is_dir()


def test_without_a_compiler_accelerate_says_why_in_one_line(tmp_path):
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(tmp_path), "CC": "no-such-compiler-here"}
    command = [sys.executable, "-m", "bftune.experiments.cli.main", "accelerate"]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if accelerate.missing_tools() and "compiler" not in (accelerate.missing_tools() or ""):
        pytest.skip(f"this environment lacks the build tools: {accelerate.missing_tools()}")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith("bftune runs interpreted")
    assert "no-such-compiler-here" in done.stderr
    done = subprocess.run(command + ["--if-possible"], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "C compiler" in done.stderr
    assert not (tmp_path / "compiled").exists()


CLI = [sys.executable, "-m", "bftune.experiments.cli.main"]
needs_build_tools = pytest.mark.skipif(accelerate.missing_tools() is not None,
                                       reason=f"cannot build the compiled core here: {accelerate.missing_tools()}")


@pytest.fixture(scope="session")
def real_build(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """``bftune accelerate`` (with its self-check) once per session, in a cache of its own: (cache, its run).

    Tests copy the cache (:func:`copy_of`) before they change anything in it.
    """
    cache = tmp_path_factory.mktemp("compiled") / "cache"
    done = subprocess.run(CLI + ["accelerate"], env={**os.environ, "BFTUNE_CACHE_DIR": str(cache)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return cache, done


def copy_of(cache: Path, target: Path) -> tuple[Path, Path]:
    """A copy of a cache holding one build: (the copy, its build directory)."""
    shutil.copytree(cache, target, symlinks=True)
    (build,) = (target / "compiled").iterdir()
    return target, build


@pytest.mark.slow
@needs_build_tools
def test_accelerate_builds_a_core_that_decides_as_the_interpreted_one(real_build, tmp_path):
    cache, done = copy_of(real_build[0], tmp_path / "cache")
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(cache)}
    assert "checking it against the interpreted core" in real_build[1].stdout  # the self-check ran (and passed)
    assert run_probe(cache).stdout.split()[0] == "compiled"
    assert run_probe(cache).stderr == ""  # intact: verified without a word
    assert run_probe(cache, core="interpreted").stdout.split()[0] == "interpreted"
    status = subprocess.run(CLI + ["accelerate", "--status"], env={**env, compiled.SWITCH: "auto"},
                            capture_output=True, text=True, check=True).stdout
    assert status.startswith("core: compiled")
    again = subprocess.run(CLI + ["accelerate"], env=env, capture_output=True, text=True, check=True)
    assert "up to date" in again.stdout
    # Independently of the self-check: a configuration it does not run, with kills and a selector.
    outs = []
    for core in ("interpreted", "auto"):
        out = tmp_path / core
        subprocess.run(CLI + ["simulate", "--synthetic", "2500", "--procs", "96", "--seed", "9", "--policy", "SAF",
                              "--selector", "noisy", "--period", "2d", "--threshold", "20h", "--out", str(out)],
                       env={**env, compiled.SWITCH: core}, check=True, capture_output=True)
        outs.append((out / "out_jobs.csv").read_bytes())
    assert outs[0] == outs[1]
    # The options that change the core's planning decide alike compiled and interpreted.
    rows = [subprocess.run([sys.executable, "-c", VARIANTS], env={**env, compiled.SWITCH: core}, check=True,
                           capture_output=True, text=True).stdout for core in ("interpreted", "auto")]
    assert rows[0] == rows[1] and rows[0].count("variant") == 3
    removed = subprocess.run(CLI + ["accelerate", "--remove"], env=env, capture_output=True, text=True, check=True)
    assert "removed 1 build" in removed.stdout
    assert run_probe(cache).stdout.split()[0] == "interpreted"


def _truncate(path: Path, size: int) -> None:
    os.truncate(path, size)


def _scribble(path: Path) -> None:
    """Random bytes over a third of the file, its size unchanged (a disk or a stray write's damage)."""
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(size // 3)
        f.write(random.Random(7).randbytes(size // 3))


#: The damage of issue 32: each crashed or broke every command (ImportError 'file too short', a bus
#: error, a segmentation fault in simulate while --status said "compiled").
DAMAGE = {
    "a module's library emptied": lambda build: _truncate(next(build.glob("bftune.schedulers.core.easy.*")), 0),
    "the main library half-truncated": lambda build: _truncate(
        next(build.glob("*__mypyc*")), next(build.glob("*__mypyc*")).stat().st_size // 2),
    "random bytes in the main library": lambda build: _scribble(next(build.glob("*__mypyc*"))),
}


@pytest.mark.slow
@needs_build_tools
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_real_build_breaks_no_command(real_build, tmp_path, damage):
    """Every command runs interpreted with one line saying so; --status, --prune and --remove work; the next
    accelerate replaces the build (here without a compiler: it removes it, then says why it cannot build)."""
    cache, build = copy_of(real_build[0], tmp_path / "cache")
    DAMAGE[damage](build)
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(cache), compiled.SWITCH: "auto"}
    commands = [["policies"], ["simulate", "--synthetic", "300", "--procs", "16", "--out", str(tmp_path / "o")],
                ["accelerate", "--status"], ["accelerate", "--prune"]]
    for args in commands:
        done = subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (args, done.returncode, done.stderr)
        (line,) = done.stderr.splitlines()
        assert "is not used" in line and str(build) in line and "running interpreted" in line, line
        if args == ["accelerate", "--status"]:
            assert done.stdout.startswith("core: interpreted (the build for these sources is not used")
    assert (tmp_path / "o" / "out_jobs.csv").is_file()
    rebuilt = subprocess.run(CLI + ["accelerate"], env={**env, "CC": "no-such-compiler-here"}, capture_output=True,
                             text=True, timeout=300)
    assert rebuilt.returncode == 1 and "is damaged" in rebuilt.stdout and "C compiler" in rebuilt.stderr
    assert not build.exists()
    removed = subprocess.run(CLI + ["accelerate", "--remove"], env=env, capture_output=True, text=True, timeout=300)
    assert removed.returncode == 0 and removed.stderr == ""


@pytest.mark.parametrize("flags", [["--status", "--remove"], ["--status", "--prune"], ["--prune", "--remove"],
                                   ["--no-check", "--remove"], ["--if-possible", "--status"]])
def test_accelerate_flags_that_do_not_go_together_are_refused(tmp_path, flags):
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(CLI + ["accelerate", *flags], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "do not go together" in line and all(flag in line for flag in flags)


def test_a_build_that_cannot_be_installed_leaves_nothing_and_names_the_cache(tmp_path, monkeypatch):
    """A full disk while copying the build: no partial compiled/<key>.XXXX left, one line naming the cache."""
    source = tmp_path / "built.so"
    source.write_bytes(b"library")
    monkeypatch.setattr(accelerate, "mypy_version", lambda: "test")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(args[1]))

    monkeypatch.setattr(accelerate.shutil, "copy2", full)
    target = tmp_path / "cache" / "compiled"
    with pytest.raises(accelerate.AccelerateError, match=f"cannot write the build into {target}: No space left"):
        accelerate.install_build({"m": source}, "key", target)
    assert list(target.iterdir()) == []


@pytest.mark.slow
@pytest.mark.skipif(accelerate.missing_tools() is not None,
                    reason=f"cannot build the compiled core here: {accelerate.missing_tools()}")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_mypyc_dies_with_accelerate_and_nothing_half_built_is_used(tmp_path, signum):
    cache = tmp_path / "cache"
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(cache)}
    proc = subprocess.Popen([sys.executable, "-m", "bftune.experiments.cli.main", "accelerate"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        def mypyc() -> list[int]:
            return [p for p in descendants(proc.pid) if "mypyc" in command(p)]

        found = wait_until(lambda: mypyc() or proc.poll() is not None, 60, "mypyc did not start")
        assert proc.poll() is None, "accelerate ended before it could be stopped"
        pgid = os.getpgid(found[0])
        assert pgid != os.getpgid(proc.pid)  # mypyc runs in a group of its own, under the watchdog
        proc.send_signal(signum)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    wait_until(lambda: not group_members(pgid), 15, "mypyc outlived bftune accelerate")
    assert run_probe(cache).stdout.split()[0] == "interpreted"


@pytest.mark.slow
@needs_build_tools
def test_a_build_that_fails_its_check_is_never_installed(real_build, tmp_path, monkeypatch):
    # mypyc's output is the session's real build (the same sources): a second compile would cost a minute of CI
    (build,) = (real_build[0] / "compiled").iterdir()
    files = json.loads((build / compiled.MANIFEST).read_text())["files"]
    monkeypatch.setattr(accelerate, "compile_copy",
                        lambda root, sources: {module: build / name for module, name in files.items()})
    monkeypatch.setenv("BFTUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(accelerate, "CHECKS", {"a configuration that cannot run": ["--policy", "NO-SUCH"]})
    with pytest.raises(accelerate.AccelerateError, match="self-check a configuration that cannot run"):
        accelerate.build(log=ignore)
    assert not (tmp_path / "cache" / "compiled").exists()


@pytest.mark.slow
@needs_build_tools
def test_the_compiled_batsim_driver_serves_a_whole_run(real_build, tmp_path):
    """``bftune batsim`` on the compiled core (the driver is compiled too) writes what the interpreted one writes,
    kills and reruns included: against the Batsim stand-in, so that no real Batsim is needed."""
    cache, _ = copy_of(real_build[0], tmp_path / "cache")
    fake = fake_batsim.write_executable(tmp_path / "bin")
    outs = []
    for core in ("interpreted", "auto"):
        out = tmp_path / f"batsim-{core}"
        subprocess.run(CLI + ["batsim", "--synthetic", "400", "--procs", "16", "--seed", "3", "--kill-after", "30m",
                              "--batsim", str(fake), "--out", str(out)],
                       env={**os.environ, "BFTUNE_CACHE_DIR": str(cache), compiled.SWITCH: core}, check=True,
                       capture_output=True)
        outs.append((out / "out_jobs.csv").read_bytes())
        assert json.loads((out / "summary.json").read_text())["batsim"]["driver"]["killed"] > 0
    assert outs[0] == outs[1]


class _Unreadable(type(Path())):  # type: ignore[misc]
    """A cache path as a non-root user sees root's ``~/.cache/bftune`` (mode 700) left by a `sudo` run."""

    def is_dir(self) -> bool:
        raise PermissionError(13, "Permission denied", str(self))


def test_an_unreadable_cache_directory_runs_the_interpreted_core_with_one_line(monkeypatch, capsys):
    """``import bftune`` (so every command and ``--version``) crashed on it (issue 42, item 8); root cannot be
    refused a directory, hence the stand-in path."""
    if compiled.active() is not None:
        pytest.skip("this process already runs a compiled core")
    monkeypatch.setenv(compiled.SWITCH, "auto")
    monkeypatch.setattr(compiled, "cache_dir", lambda: _Unreadable("/root/.cache/bftune"))
    assert compiled.install() is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line == ("bftune: cannot read the cache directory /root/.cache/bftune (Permission denied); running the "
                    "interpreted core")
