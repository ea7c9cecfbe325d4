"""``bftune learn-index``: outputs, resume, executor independence, bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.campaign.index_collection import run_collection
from bftune.learning.index.collect import Settings
from bftune.schedulers.core.policies import get_policy
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate

def args(**options) -> list[str]:
    """``learn-index`` arguments: a tiny synthetic collection unless overridden (None drops an option)."""
    opts = {"source": "synthetic", "windows": 3, "trials": 300, "synthetic_jobs": 2000, "workers": 1} | options
    out = ["learn-index", "--no-progress"]
    for key, value in opts.items():
        if value is not None:
            out += [f"--{key.replace('_', '-')}", str(value)]
    return out


@pytest.mark.slow
def test_outputs_and_resume(tmp_path, capsys):
    out = tmp_path / "li"
    assert main(args(out=out)) == 0
    printed = capsys.readouterr().out
    assert "3 windows run (900 trials" in printed and "trials/s" in printed
    scores = pd.read_csv(out / "scores.csv")
    assert len(scores) == 96 and list(scores.columns[:6]) == ["window", "job", "p", "q", "r", "score"]
    assert scores.groupby("window")["score"].sum().tolist() == pytest.approx([1.0] * 3)
    assert (scores.groupby("window")["r"].min() == 0).all()  # r relative to the first arrival of Q
    for family in ("Lin", "Qdr", "Cub", "Qua"):
        policy = get_policy(f"learned:{out / 'fits' / (family + '.json')}")
        assert len(policy.terms) == {"Lin": 4, "Qdr": 8, "Cub": 13, "Qua": 19}[family]
    assert "| Qua | 19 |" in (out / "fits.md").read_text()
    assert (out / "plots" / "scores.png").exists() and (out / "plots" / "fitted.png").exists()
    assert len(pd.read_csv(out / "coefficients.csv")) == 19
    # resume: nothing to do; then one lost window is recomputed, identically
    before = (out / "scores.csv").read_text()
    assert main(args(out=out)) == 0
    assert "0 windows run" in capsys.readouterr().out
    (out / "windows" / "00001.json").unlink()
    assert main(args(out=out)) == 0
    assert "1 windows run" in capsys.readouterr().out and (out / "scores.csv").read_text() == before
    # other settings in the same directory: refused, naming the setting
    assert main(args(out=out, trials=400)) == 2
    assert "holds a collection with trials = 300, not 400" in capsys.readouterr().err


def test_executors_give_identical_scores(tmp_path):
    from distributed import Client

    s = Settings(source="synthetic", windows=2, trials=200, procs=128, synthetic_jobs=1500, seed=4)
    a = run_collection(s, tmp_path / "a", workers=1, progress=False)
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        b = run_collection(s, tmp_path / "b", dask=client, progress=False)
    assert a.done == b.done == 2 and not a.failures and not b.failures
    for name in ("00000.json", "00001.json"):
        ra, rb = (json.loads((tmp_path / d / "windows" / name).read_text()) for d in "ab")
        assert ra["score"] == rb["score"] and ra["ids"] == rb["ids"]


@pytest.mark.slow
def test_trace_source_and_bad_input(tmp_path, capsys):
    trace = generate(300, 64, 2)
    swf = tmp_path / "t.swf"
    write_swf(trace, swf)
    assert main(args(source=swf, windows=2, procs=64, trials=50, synthetic_jobs=None, out=tmp_path / "ok")) == 0
    capsys.readouterr()
    cases = [
        ({"windows": 300}, "room for only 253"),
        ({"queue": 400}, "larger than the trace (300 jobs)"),
        ({"procs": 2}, "--procs 2: smaller than job"),
        ({"trials": 0}, "--trials: expected a positive integer"),
        ({"windows": 0}, "--windows: expected a positive integer"),
        ({"workers": 0}, "--workers must be at least 1"),
        ({"source": tmp_path / "missing.swf"}, "missing.swf: no such file"),
    ]
    for extra, message in cases:
        options = {"source": swf, "windows": 1, "procs": 64, "trials": 50, "synthetic_jobs": None,
                   "out": tmp_path / "bad"} | extra
        assert main(args(**options)) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (extra, err)


@pytest.mark.slow
def test_a_directory_in_use_is_refused_before_any_work(tmp_path, capsys):
    """Two collections in one directory at once: the second stops at once, naming the holder (the campaigns' lock)."""
    import os

    from bftune.experiments.campaign.store import DirectoryLock

    out = tmp_path / "li"
    out.mkdir()
    with DirectoryLock(out):
        assert main(args(out=out)) == 2
    err = capsys.readouterr().err
    assert f"in use by another collection (pid {os.getpid()} " in err and not (out / "windows").exists()
    assert main(args(out=out)) == 0  # released: the same command runs
