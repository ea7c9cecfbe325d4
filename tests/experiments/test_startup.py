"""What the commands users run most import: no start-up weight they do not need.

pandas takes ~0.6 s to import, scikit-learn 1.6-3.6 s, pyzmq and matplotlib
more (python -X importtime on the project machine): `bftune simulate` writes
out_jobs.csv and summary.json without any of them.  Nor does it import numpy
(60 ms and 20 MiB of a 90 MiB CTC-SP2 run) to simulate a trace that is in the
parse cache, which is what users run again and again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate

HEAVY = ("pandas", "sklearn", "matplotlib", "zmq", "dask", "scipy")

PROBE = """
import json, sys
from bftune.experiments.cli.main import main
code = main(sys.argv[1:])
print("LOADED " + json.dumps({"code": code, "heavy": sorted(m for m in %r if m in sys.modules)}))
"""


def loaded(argv: list[str], cwd, heavy: tuple[str, ...] = HEAVY, env: dict | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE % (heavy,), *argv], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)
    line = [x for x in proc.stdout.splitlines() if x.startswith("LOADED ")]
    assert line, proc.stderr[-2000:]
    return json.loads(line[0][len("LOADED "):])


@pytest.mark.parametrize("argv", [
    ["simulate", "--synthetic", "300", "--procs", "32", "--out", "out"],
    ["simulate", "--synthetic", "300", "--procs", "32", "--policy", "SAF", "--threshold", "40h", "--kill-after", "1h",
     "--out", "out"],
    ["policies"],
    ["options"],
], ids=["simulate", "simulate-kills", "policies", "options"])
@pytest.mark.slow
def test_no_heavy_import(argv, tmp_path):
    got = loaded(argv, tmp_path)
    assert got["code"] == 0
    assert got["heavy"] == []
    if "--out" in argv:
        assert (tmp_path / "out" / "out_jobs.csv").exists() and (tmp_path / "out" / "summary.json").exists()


@pytest.mark.slow
def test_the_forest_engine_loads_only_when_the_forest_retrains(tmp_path):
    # A baseline that trains no forest never loads scikit-learn; the learned one does, at its
    # first weekly retraining (which also shows that the probe sees a heavy import).
    base = ["simulate", "--synthetic", "2000", "--procs", "32", "--classifier"]
    assert loaded(base + ["class-clairvoyant"], tmp_path)["heavy"] == []
    assert "sklearn" in loaded(base + ["rf"], tmp_path)["heavy"]


@pytest.mark.slow
@pytest.mark.parametrize("options", [[], ["--policy", "SAF", "--threshold", "40h", "--kill-after", "1h"],
                                     ["--scheduler", "pv-easy", "--predictor", "last"]],
                         ids=["fcfs", "saf-kills", "pv-easy"])
def test_a_cached_trace_simulates_without_numpy(options, tmp_path):
    # The first read of a trace parses it (numpy's parser) and fills the parse cache; every later
    # run of it reads the cache, simulates and writes its outputs without importing numpy.
    trace = generate(20_000, 64, 3)  # over a megabyte of SWF text: the vectorised, cached path
    write_swf(trace, tmp_path / "t.swf")
    argv = ["simulate", "--trace", "t.swf", *options, "--out"]
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(tmp_path / "cache")}  # an empty cache: the first run parses
    assert "numpy" in loaded(argv + ["first"], tmp_path, ("numpy",), env)["heavy"]  # the probe sees numpy
    second = loaded(argv + ["second"], tmp_path, ("numpy",) + HEAVY, env)
    assert second == {"code": 0, "heavy": []}
    assert (tmp_path / "first" / "out_jobs.csv").read_bytes() == (tmp_path / "second" / "out_jobs.csv").read_bytes()
