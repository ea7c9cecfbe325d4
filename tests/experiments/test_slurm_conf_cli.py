"""``--slurm-conf`` on the commands that take scheduler options (issue 40): the site's file is the configuration,
flags beside it override its keys, and its problems are one line (exit 2)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import merged_runs
from bftune.experiments.runs.outjobs import runs_columns
from bftune.schedulers.slurmconf import read_slurm_conf
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate

SITE = Path(__file__).parents[1] / "schedulers" / "data" / "slurm.conf"
#: The site's file as flags (tests/schedulers/data/slurm.conf).
SITE_FLAGS = ["--scheduler", "slurm", "--priority-type", "priority/multifactor", "--priority-weight-age", "1000",
              "--priority-weight-fairshare", "10000", "--priority-weight-job-size", "500",
              "--priority-weight-partition", "1000", "--priority-decay-half-life", "14d", "--bf-window", "2d",
              "--bf-max-job-test", "1000", "--default-queue-depth", "200"]


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_simulate_with_the_file_is_simulate_with_its_keys_as_flags(tmp_path, capsys):
    common = ["simulate", "--synthetic", "600", "--procs", "24"]
    assert main([*common, "--slurm-conf", str(SITE), "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "slurm.conf: ignored 32 keys not about priority or backfill: ClusterName, SlurmctldHost" in err
    assert "SchedulerParameters:bf_continue" in err and "24 CPUs on 4 nodes" in err
    assert main([*common, *SITE_FLAGS, "--out", str(tmp_path / "b")]) == 0
    a, b = _summary(tmp_path / "a"), _summary(tmp_path / "b")
    assert a["config"] == b["config"] and a["avg_wait"] == b["avg_wait"]
    assert a["config"]["priority_weight_fairshare"] == 10000


def test_a_flag_beside_the_file_overrides_its_key(tmp_path):
    assert main(["simulate", "--synthetic", "300", "--procs", "24", "--slurm-conf", str(SITE), "--bf-window", "1d",
                 "--priority-weight-age", "7", "--out", str(tmp_path / "a")]) == 0
    config = _summary(tmp_path / "a")["config"]
    assert config["bf_window"] == "1d" and config["priority_weight_age"] == 7
    assert config["priority_weight_fairshare"] == 10000  # the file's, not overridden


@pytest.mark.parametrize("extra, message", [
    (["--scheduler", "easy"], "--scheduler: --slurm-conf sets the scheduler (slurm)"),
    (["--policy", "SPF"], "--policy needs a --scheduler other than slurm"),
])
def test_mixing_what_a_slurm_conf_cannot_mean_is_one_line(tmp_path, capsys, extra, message):
    assert main(["simulate", "--synthetic", "100", "--slurm-conf", str(SITE), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1]


def test_a_bad_value_in_the_file_names_its_line(tmp_path, capsys):
    bad = tmp_path / "slurm.conf"
    bad.write_text(SITE.read_text().replace("PriorityWeightJobSize=500", "PriorityWeightJobSize=-5"))
    assert main(["simulate", "--synthetic", "100", "--slurm-conf", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"bftune: error: {bad}:39: PriorityWeightJobSize: expected a whole number, got '-5'")


def test_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["simulate", "--synthetic", "100", "--slurm-conf", str(tmp_path / "nope.conf")]) == 2
    assert "nope.conf: cannot read" in capsys.readouterr().err


def test_replay_simulates_the_sites_setting(tmp_path):
    """A log whose waits are the site's setting's: replayed with its slurm.conf, every job is within 10 minutes."""
    trace = generate(800, 24, 3)
    _, result = run_local(trace, read_slurm_conf(SITE).config())
    jobs = merged_runs(runs_columns(result.runs))
    waits = {int(name): wait for name, wait in zip(jobs["job"], jobs["wait"])}
    swf = tmp_path / "log.swf"
    write_swf(trace.with_jobs([dataclasses.replace(j, wait=waits[j.id]) for j in trace.jobs]), swf)
    records = {}
    for name, extra in (("site", ["--slurm-conf", str(SITE)]), ("easy", [])):
        assert main(["replay", "--trace", str(swf), *extra, "--out", str(tmp_path / name)]) == 0
        records[name] = json.loads((tmp_path / name / "replay.json").read_text())
    assert records["site"]["config"].startswith("SLURM(age=1000,size=500,fs=10000")
    assert records["site"]["within_10_min"] == 1.0
    assert records["easy"]["within_10_min"] < 0.95
