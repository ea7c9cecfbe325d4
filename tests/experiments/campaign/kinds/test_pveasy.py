"""PV-EASY campaigns: config validation, the tiny campaign end to end, agreement with a direct simulation,
options for every run, per-job tables and the venture steps' table, and the shipped paper-scale configs."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from bftune.experiments.campaign.config import campaign_from_dict, load_config
from bftune.experiments.campaign.kinds import jobtables
from bftune.experiments.campaign.kinds.pveasy import main_options, virtual_options
from bftune.experiments.campaign.runner import run_campaign
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.specs import CampaignError, RunSpec
from bftune.experiments.runs.local import run_local
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.synthetic import generate
from locations import SHARED

TINY = CONFIG_DIR / "tiny_synthetic_pv_easy.toml"


def read(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / name, keep_default_na=False, na_values=[""])


@pytest.fixture(scope="module")
def tiny(run_campaign_once):
    return run_campaign_once(TINY, "pv_easy")


def config(text: str):
    return campaign_from_dict(tomllib.loads(text), "t.toml", text)


HEAD = "[campaign]\nkind = 'pv-easy'\n"
OK = "[pv-easy]\ntraces = ['synthetic:100:8']\n"


@pytest.mark.parametrize("text, message", [
    (HEAD, "[pv-easy] traces: required key is missing"),
    (HEAD + OK + "procs = [8, 16]\n", "[pv-easy] procs: expected one machine size per trace"),
    (HEAD + "[pv-easy]\ntraces = ['synthetic:100:8']\nprocs = [8]\n", "a synthetic trace sets its machine size"),
    (HEAD + OK + "cleaning = 'all'\n", "[pv-easy] cleaning: 'all' is not one of"),
    (HEAD + OK + "schedulers = ['EASY', 'SJF']\n", "[pv-easy] schedulers: 'SJF' is not one of"),
    (HEAD + OK + "schedulers = []\n", "nothing to run"),
    (HEAD + OK + "virtual_errors = [0.1, 1.0]\n", "[pv-easy] virtual_errors: expected numbers in [0, 1)"),
    (HEAD + OK + "virtual_errors = [0.1, 0.1]\n", "listed twice"),
    (HEAD + OK + "virtual_errors = [0.1]\nvirtual_seeds = 0\n", "[pv-easy] virtual_seeds"),
    (HEAD + OK + "policy = 'NOPE'\n", "[pv-easy] policy: unknown policy 'NOPE'"),
    (HEAD + OK + "fairness = 'yes'\n", "[pv-easy] fairness"),
    (HEAD + OK + "trace = 'x'\n", "[pv-easy] trace: unknown key"),
    (HEAD + OK + "options = 3\n", "[pv-easy] options: expected a table of scheduler options"),
    (HEAD + OK + "options = {nope = 1}\n", "[pv-easy] options: nope: unknown option"),
    (HEAD + OK + "options = {policy = 'SPF'}\n", "[pv-easy] options: policy: give it as the section's own key"),
    (HEAD + OK + "options = {venture_fill = 'all'}\n", "[pv-easy] options.venture_fill: expected one of"),
    (HEAD + OK + "options = {venture_fill = 'none'}\n", "[pv-easy] options: venture_fill needs scheduler='pv-easy'"),
    (HEAD + OK + "virtual_errors = [0.1]\noptions = {predictor = 'exact'}\n",
     "[pv-easy] options: predictor: it would replace the virtual predictor"),
    (HEAD + OK + "job_tables = 1\n", "[pv-easy] job_tables: expected true or false"),
])
def test_bad_configs_name_the_key(text, message):
    with pytest.raises(CampaignError, match=re.escape(message)):
        config(text)


def test_expansion_of_the_study():
    camp = config(HEAD + OK + "virtual_errors = [0, 0.2]\nvirtual_seeds = 3\n")
    labels = [(s.labels["strategy"], s.labels["error"], s.labels["seed"]) for s in camp.specs]
    assert labels[:3] == [("EASY", None, None), ("EASY-Last", None, None), ("PV-EASY", None, None)]
    assert len(camp.specs) == 3 + (1 + 3) * 3  # x = 0 is exact: one run, whatever the seed
    assert all(s.cleaning == "ran" and s.options["fairness"] for s in camp.specs)
    assert main_options("PV-EASY", "FCFS") == {"policy": "FCFS", "scheduler": "pv-easy", "predictor": "last"}
    assert virtual_options("SJF-EASY", "FCFS", 0.2, 3) == {"policy": "FCFS", "predictor": "virtual:0.2", "seed": 3,
                                                           "backfill_policy": "SPF"}
    # the cleaning is part of a run's identity; the default cleaning is not (older run ids stay valid)
    spec = camp.specs[0]
    assert "cleaning" in spec.identity()
    plain = RunSpec(**{**spec.to_dict(), "cleaning": "spec", "run_id": ""})
    assert "cleaning" not in plain.identity() and plain.run_id != spec.run_id


@pytest.mark.slow
def test_tiny_campaign_end_to_end(tiny):
    campaign, outcome, out = tiny
    assert not outcome.failures and outcome.done == len(campaign.specs) == 2 * (3 + 3 * 3)
    runs = read(out, "runs.csv")
    pv = runs[runs["strategy"] == "PV-EASY"]
    assert (pv["fair_strict_fairness_violations"] == 0).all() and (pv["fair_reservation_violations"] == 0).all()
    assert (pv["restarted_jobs"] > 0).all() and (pv["wasted_load"] > 0).all()
    easy = runs[(runs["strategy"] == "EASY") & (runs["predictor"] == "walltime")]
    assert (easy["fair_reservation_violations"] == 0).all() and (easy["restarted_jobs"] == 0).all()
    assert set(runs["cleaning"]) == {"ran"}
    report = (out / "report.md").read_text()
    assert "## Targets" in report and "**0 of 8**" in report
    assert "## The virtual predictor" in report and (out / "plots" / "virtual_predictor.png").exists()
    summary = read(out, "summary_pv_easy.csv")
    assert set(summary["strategy"]) == {"FCFS-EASY", "SJF-EASY", "PV-EASY"}
    assert summary.loc[summary["error"] == 0.4, "runs"].eq(2).all()


def test_a_campaign_run_equals_a_direct_simulation(tiny):
    _, _, out = tiny
    runs = read(out, "runs.csv")
    row = runs[(runs["trace"] == "synthetic:600:64:1") & (runs["strategy"] == "PV-EASY")
               & (runs["predictor"] == "last")].iloc[0]
    summary, _ = run_local(generate(600, 64, 1), SchedulerConfig.from_options(
        {"scheduler": "pv-easy", "predictor": "last", "policy": "FCFS", "fairness": True}))
    assert row["avg_bsld"] == pytest.approx(summary["avg_bsld"], rel=1e-12)
    assert row["fair_blocked_jobs"] == summary["fairness"]["blocked_jobs"]
    assert row["restarted_jobs"] == summary["restarted_jobs"]


def test_options_go_to_every_run_and_win_over_the_strategys():
    camp = config(HEAD + OK + "schedulers = ['EASY-Last', 'PV-EASY']\noptions = {predictor = 'exact', "
                  "overrun_estimate = 'expired'}\n")
    assert [(s.labels["strategy"], s.labels["predictor"]) for s in camp.specs] == [("EASY-Last", "exact"),
                                                                                  ("PV-EASY", "exact")]
    assert all(s.options["predictor"] == "exact" and s.options["overrun_estimate"] == "expired" for s in camp.specs)
    assert camp.settings["options"] == {"predictor": "exact", "overrun_estimate": "expired"}
    plain = config(HEAD + OK + "schedulers = ['EASY-Last', 'PV-EASY']\n")
    assert {s.run_id for s in plain.specs}.isdisjoint(s.run_id for s in camp.specs)


def test_job_tables_are_kept_in_the_records_and_agree_with_the_summary(tmp_path):
    text = HEAD + "[pv-easy]\ntraces = ['synthetic:300:32:5']\nschedulers = ['EASY', 'PV-EASY']\njob_tables = true\n"
    camp = config(text)
    assert all(s.outputs == [jobtables.FIELD] for s in camp.specs)
    assert {s.run_id for s in camp.specs}.isdisjoint(s.run_id for s in config(text.replace("job_tables = true",
                                                                                          "")).specs)
    outcome = run_campaign(camp, tmp_path, workers=1, progress=False)
    assert not outcome.failures
    runs = read(tmp_path, "runs.csv").set_index("strategy")
    for spec in camp.specs:
        jobs = jobtables.read(tmp_path, spec.run_id)
        row = runs.loc[spec.labels["strategy"]]
        assert list(jobs.columns) == ["job", "submit", "procs", "runtime", "start", "requeue", "kills",
                                      "venture_step", "blocked", "blocked_one_pass", "blocked_at"]
        assert len(jobs) == 300 and jobs["job"].is_monotonic_increasing
        bsld = ((jobs["start"] + jobs["runtime"] - jobs["submit"]) / jobs["runtime"].clip(lower=10)).clip(lower=1)
        assert bsld.mean() == pytest.approx(row["avg_bsld"], rel=1e-12)
        assert jobs["blocked"].sum() == row["fair_blocked_jobs"]
        assert jobs["blocked_one_pass"].sum() == row["fair_blocked_jobs_one_pass"]
        assert jobs["blocked_at"].notna().sum() == row["fair_blocked_jobs"]
        assert (jobs["blocked_at"].dropna() <= jobs.loc[jobs["blocked_at"].notna(), "start"]).all()
        assert (jobs["kills"] > 0).sum() == row["restarted_jobs"]
        since = jobs["start"] + jobs["runtime"] - jobs["requeue"]
        assert ((since / jobs["runtime"].clip(lower=10)).clip(lower=1)).mean() == \
            pytest.approx(row["avg_bsld_from_requeue"], rel=1e-12)
    pv = jobtables.read(tmp_path, camp.specs[1].run_id)
    assert set(pv["venture_step"]) == {"none", "predicted", "fill"} and (pv["requeue"] > pv["submit"]).any()
    assert set(jobtables.read(tmp_path, camp.specs[0].run_id)["venture_step"]) == {"none"}  # EASY tags nothing
    starts = read(tmp_path, "starts.csv")
    pv_starts = starts[starts["strategy"] == "PV-EASY"].set_index("venture_step")
    assert pv_starts["killed"].sum() == runs.loc["PV-EASY", "killed_runs"]
    assert pv_starts["runs"].sum() == 300 + runs.loc["PV-EASY", "killed_runs"]
    assert jobtables.read(tmp_path, "0" * 16) is None


@pytest.mark.parametrize("name", ["pv_easy_study", "pv_easy_fairness", "pv_easy_prediction", "pv_easy_virtual"])
def test_shipped_paper_scale_configs(name):
    if not (SHARED / "workloads" / "CTC-SP2-1996-3.1-cln.swf.gz").exists():
        pytest.skip("../shared/workloads is not available")
    camp = load_config(CONFIG_DIR / f"{name}.toml")
    traces = {s.labels["trace"] for s in camp.specs}
    assert traces == {"CTC-SP2-1996-3.1-cln", "SDSC-BLUE-2000-4.2-cln"}
    assert {s.procs for s in camp.specs} == {430, 1152} and {s.cleaning for s in camp.specs} == {"ran"}
    expected = {"pv_easy_study": 252, "pv_easy_fairness": 4, "pv_easy_prediction": 6, "pv_easy_virtual": 246}
    assert len(camp.specs) == expected[name]
    assert json.dumps(camp.meta())  # campaign.json is plain JSON
