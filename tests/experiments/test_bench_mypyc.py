"""The mypyc ablation script keeps applying to the sources (compiling itself needs mypy: not run here)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from bftune.experiments import bench_mypyc


def test_the_copy_holds_the_tracked_sources_with_every_adjustment(tmp_path):
    package = tmp_path / "bftune"
    bench_mypyc.copy_package(package)
    for pattern in bench_mypyc.COMPILED:
        assert list(package.glob(pattern)), pattern
    assert not (package / ".venv").exists() and not (package / "results").exists()
    bench_mypyc.adjust(package)  # exits naming the file if a source no longer holds the text to change
    assert "class OracleMissingError(Exception):" in (package / "schedulers/core/engine.py").read_text()
    assert (package / "schedulers/__init__.py").exists()
    assert not (bench_mypyc.ROOT / "schedulers/__init__.py").exists()  # the checkout itself is untouched


def test_a_stale_adjustment_names_its_file(tmp_path):
    package = tmp_path / "bftune"
    (package / "schedulers/core").mkdir(parents=True)
    (package / "schedulers/core/engine.py").write_text("class Renamed(RuntimeError): pass\n")
    with pytest.raises(SystemExit, match="schedulers/core/engine.py no longer contains"):
        bench_mypyc.adjust(package)


@pytest.mark.skipif(bench_mypyc.mypyc_available(), reason="mypyc is installed here")
def test_without_mypyc_it_says_how_to_run_it():
    proc = subprocess.run([sys.executable, "-m", "bftune.experiments.bench_mypyc"], capture_output=True, text=True)
    assert proc.returncode == 2 and "uv run --with mypy" in proc.stderr and len(proc.stderr.splitlines()) == 1
