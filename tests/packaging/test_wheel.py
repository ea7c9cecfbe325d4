"""The package as users get it: a wheel and an sdist built, the wheel installed with plain pip into a fresh
virtual environment outside the checkout, and bftune used from there (command line and Python API).

Needs the package registry (pip downloads bftune's dependencies; its cache makes later runs quick).
Python 3.11 runs every command; 3.12 and 3.13, where this machine has them, the install and a simulation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from locations import KTH, REPO, SHARED_WORKLOADS
from uv_command import uv

OTHER_PYTHONS = ("python3.12", "python3.13")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([*uv(), "build", "--out-dir", str(out), str(REPO)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def working_python(name: str) -> str | None:
    """An interpreter called ``name`` that can make a virtual environment: on PATH, or one pyenv installed."""
    candidates = [shutil.which(name), *sorted(map(str, Path.home().glob(f".pyenv/versions/*/bin/{name}")))]
    for path in filter(None, candidates):
        done = subprocess.run([path, "-c", "import venv, ensurepip"], capture_output=True, timeout=60)
        if done.returncode == 0:
            return path
    return None


def install(python: str, wheel: Path, where: Path) -> Path:
    """A fresh virtual environment in ``where`` with the wheel installed by plain pip; its bin folder."""
    subprocess.run([python, "-m", "venv", str(where)], check=True, timeout=300)
    done = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", str(wheel)], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return where / "bin"


def run(command: list[str], cwd: Path, env: dict, timeout: int = 600) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done.stdout


def user_env(tmp: Path, bin_dir: Path) -> dict:
    """What a user's shell would have: the venv first on PATH, their own cache, nothing of the checkout's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BFTUNE_", "VIRTUAL_ENV", "PYTHON", "UV"))}
    env.update(PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", BFTUNE_CACHE_DIR=str(tmp / "cache"),
               HOME=str(tmp / "home"))
    return env


@pytest.mark.slow
def test_the_wheel_and_the_sdist_hold_the_package_and_its_data(dist):
    wheel = next(dist.glob("bftune-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("bftune/__init__.py", "bftune/api.py", "bftune/experiments/cli/main.py", "bftune/support/files.py",
                   "bftune/experiments/reproduce/command.py", "bftune/experiments/studies/s004/published.toml",
                   "bftune/schedulers/core/fits/Lin.json", "bftune/platforms/zero_lat_16.xml",
                   "bftune/experiments/configs/tiny_synthetic_offline.toml", "bftune/py.typed",
                   "bftune/experiments/tune/drift.json"):
        assert needed in names, needed
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("bftune/tests/", "bftune/benchmarks/", "bftune/docs/")) for n in names)
    # what tells a checkout from an installed wheel (bftune.support.checkout) stays out of the wheel
    assert not {"bftune/setup.py", "bftune/pyproject.toml", "bftune/LICENSE", "bftune/CITATION.cff"} & names
    sdist = next(dist.glob("bftune-*.tar.gz"))
    members = tarfile.open(sdist).getnames()
    assert any(m.endswith("/setup.py") for m in members) and any(m.endswith("/api.py") for m in members)


@pytest.mark.slow
def test_installed_with_plain_pip_every_command_runs_outside_the_checkout(dist, tmp_path):
    wheel = next(dist.glob("bftune-*.whl"))
    bin_dir = install(working_python("python3.11") or sys.executable, wheel, tmp_path / "venv")
    env = user_env(tmp_path, bin_dir)
    home = tmp_path / "home"
    home.mkdir()
    version = run(["bftune", "--version"], home, env)
    assert version.startswith("bftune ") and "core" in version
    assert "EASY" in run(["bftune", "demo"], home, env)
    run(["bftune", "simulate", "--synthetic", "2000", "--out", "X"], home, env)
    assert (home / "X" / "summary.json").exists()
    # the shipped campaign configs are package data, found by name outside the checkout
    assert "online_selection_quick" in run(["bftune", "campaign", "--list"], home, env)
    run(["bftune", "campaign", "tiny_synthetic_offline", "--out", "C", "--workers", "1", "--no-progress"], home, env)
    assert (home / "C" / "summary_offline.csv").exists()
    code = ("import bftune; print(bftune.simulate(bftune.read_workload(%r), policy='SAF', "
            "threshold='40h').summary['avg_wait'])")
    if KTH.exists():
        assert float(run(["python", "-c", code % str(KTH)], home, env)) > 0
        run(["bftune", "reproduce", "000", "--scale", "quick", "--data", str(SHARED_WORKLOADS), "--out", "Y"],
            home, env, timeout=900)
        report = (home / "Y" / "report.md").read_text()
        assert "Section 7.4" in report
        # what the user ran, not the project's `uv run` and ../shared (bftune.support.checkout)
        assert "    bftune reproduce 000 --scale quick" in report and "uv run" not in report
        assert "../shared/seeds" not in report
    else:
        pytest.skip(f"{KTH} is missing: the archive-trace commands were not run")


@pytest.mark.slow
@pytest.mark.parametrize("name", OTHER_PYTHONS)
def test_the_wheel_installs_on_other_pythons(dist, tmp_path, name):
    python = working_python(name)
    if python is None:
        pytest.skip(f"{name} is not on this machine")
    bin_dir = install(python, next(dist.glob("bftune-*.whl")), tmp_path / "venv")
    env = user_env(tmp_path, bin_dir)
    (tmp_path / "home").mkdir()
    run(["bftune", "simulate", "--synthetic", "1000", "--procs", "64", "--policy", "SAF", "--out", "X"],
        tmp_path / "home", env)
    assert (tmp_path / "home" / "X" / "out_jobs.csv").exists()
