"""The campaign runner (issue 4): determinism, resume, failures, the CLI, Dask."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.runner import format_failures, run_campaign
from bftune.experiments.campaign.specs import RunSpec

TINY_ONLINE = CONFIG_DIR / "tiny_synthetic_online.toml"
TINY_OFFLINE = CONFIG_DIR / "tiny_synthetic_offline.toml"
ONLINE_TABLES = ["runs.csv", "periods.csv", "choices.csv", "summary_online.csv"]
OFFLINE_TABLES = ["runs.csv", "weeks.csv", "summary_offline.csv", "summary_best.csv"]


def tables(out: Path, names: list[str]) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in names}


@pytest.fixture(scope="module")
def online_run(run_campaign_once):
    """The tiny online campaign, run once on 2 local processes."""
    return run_campaign_once(TINY_ONLINE, "online")


@pytest.fixture(scope="module")
def offline_run(run_campaign_once):
    return run_campaign_once(TINY_OFFLINE, "offline")


@pytest.mark.slow
def test_same_config_and_seed_give_identical_tables(online_run, tmp_path):
    """A second run (inline this time) writes byte-identical tables."""
    campaign, _, first = online_run
    outcome = run_campaign(load_config(TINY_ONLINE), tmp_path, workers=1, progress=False)
    assert outcome.done == len(campaign.specs)
    assert tables(tmp_path, ONLINE_TABLES) == tables(first, ONLINE_TABLES)


@pytest.mark.slow
def test_resume_skips_finished_runs(online_run, tmp_path):
    campaign, _, first = online_run
    part = run_campaign(campaign, tmp_path, workers=2, specs=campaign.specs[:5], progress=False)
    assert (part.done, part.reused) == (5, 0)
    stamps = {p.name: json.loads(p.read_text())["finished_at"] for p in (tmp_path / "runs").glob("*.json")}
    assert len(stamps) == 5
    assert "5 of 12 stored" in (tmp_path / "report.md").read_text()
    err = io.StringIO()
    full = run_campaign(campaign, tmp_path, workers=2, stream=err)
    assert (full.done, full.reused, full.total) == (7, 5, 12)
    assert "5 already stored, 7 to run" in err.getvalue()
    for name, stamp in stamps.items():  # not recomputed
        assert json.loads((tmp_path / "runs" / name).read_text())["finished_at"] == stamp
    assert tables(tmp_path, ONLINE_TABLES) == tables(first, ONLINE_TABLES)
    again = run_campaign(campaign, tmp_path, workers=2, progress=False)
    assert (again.done, again.reused) == (0, 12)


@pytest.mark.slow
def test_a_crashing_run_is_reported_while_the_others_finish(tmp_path):
    campaign = load_config(TINY_ONLINE)
    good = len(campaign.specs)
    bad = copy.deepcopy(campaign.specs[1].to_dict())
    bad["options"]["policy"] = "NO_SUCH_POLICY"
    bad["labels"]["strategy"] = "broken"
    bad["run_id"] = ""
    campaign.specs.insert(3, RunSpec.from_dict(bad))
    outcome = run_campaign(campaign, tmp_path, workers=2, progress=False)
    assert outcome.done == good and len(outcome.failures) == 1 and outcome.exit_code == 1
    bad_id = campaign.specs[3].run_id
    record = json.loads((tmp_path / "failures" / f"{bad_id}.json").read_text())
    assert record["status"] == "failed"
    assert "NO_SUCH_POLICY" in record["error"] and "Traceback" in record["traceback"]
    assert record["spec"]["options"]["policy"] == "NO_SUCH_POLICY"
    assert record["spec"]["resample_seed"] == campaign.specs[1].resample_seed
    assert not (tmp_path / "runs" / f"{bad_id}.json").exists()
    text = format_failures(outcome.failures)
    assert bad_id in text and "NO_SUCH_POLICY" in text and f"resample seed {record['spec']['resample_seed']}" in text
    assert len(pd.read_csv(tmp_path / "runs.csv")) == good
    report = (tmp_path / "report.md").read_text()
    assert "1 failed" in report and "Failed runs" in report and bad_id in report
    # a re-run retries only the failed run
    again = run_campaign(campaign, tmp_path, workers=1, progress=False)
    assert (again.reused, again.done, len(again.failures)) == (good, 0, 1)


@pytest.mark.slow
def test_cli_runs_a_campaign_and_rebuilds_the_report(offline_run, tmp_path, capsys):
    from bftune.experiments.cli.main import main

    _, _, first = offline_run
    out = tmp_path / "cli"
    assert main(["campaign", str(TINY_OFFLINE), "--out", str(out), "--workers", "2", "--no-progress"]) == 0
    assert "16 runs done, 0 reused, 0 failed" in capsys.readouterr().out
    assert tables(out, OFFLINE_TABLES) == tables(first, OFFLINE_TABLES)
    (out / "report.md").unlink()
    (out / "summary_offline.csv").unlink()
    assert main(["campaign", "--report-only", str(out)]) == 0
    assert (out / "report.md").is_file()
    assert tables(out, OFFLINE_TABLES) == tables(first, OFFLINE_TABLES)
    assert main(["campaign", "--report-only", str(tmp_path / "nothing")]) == 2


# --- Dask --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_dask_local_cluster_gives_identical_tables(online_run, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, _, first = online_run
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        outcome = run_campaign(load_config(TINY_ONLINE), tmp_path, dask=cluster.scheduler_address,
                                  progress=False)
    assert outcome.exit_code == 0 and outcome.done == 12
    assert "Dask" in outcome.executor
    workers = {json.loads(p.read_text())["worker"] for p in (tmp_path / "runs").glob("*.json")}
    assert len(workers) >= 1
    assert tables(tmp_path, ONLINE_TABLES) == tables(first, ONLINE_TABLES)
