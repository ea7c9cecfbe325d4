"""The online-selection kind (issue 4): the tiny campaign end to end, and a row equal to a direct simulation."""

from __future__ import annotations

import pandas as pd
import pytest
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.specs import derive_seed

TINY_ONLINE = CONFIG_DIR / "tiny_synthetic_online.toml"
ONLINE_TABLES = ["runs.csv", "periods.csv", "choices.csv", "summary_online.csv"]


@pytest.fixture(scope="module")
def online_run(run_campaign_once):
    """The tiny online campaign, run once on 2 local processes."""
    return run_campaign_once(TINY_ONLINE, "online")


def test_tiny_online_campaign_end_to_end(online_run):
    campaign, outcome, out = online_run
    assert outcome.failures == [] and outcome.exit_code == 0
    assert outcome.done == len(campaign.specs) == 2 * (3 + 3)
    for name in ONLINE_TABLES + ["report.md", "campaign.json"]:
        assert (out / name).is_file(), name
    for plot in ("relative_wait.png", "policy_share.png", "cumulative_wait.png"):
        assert (out / "plots" / plot).stat().st_size > 1000
    runs = pd.read_csv(out / "runs.csv", keep_default_na=False, na_values=[""])
    assert len(runs) == 12
    assert list(runs["run_id"]) == [s.run_id for s in campaign.specs]  # spec order, not completion order
    assert set(runs["strategy"]) == {"FCFS", "SPF", "SAF", "random/1d", "full/1d", "bandit/1d"}
    periods = pd.read_csv(out / "periods.csv")
    sums = periods.groupby("run_id")["sum_wait"].sum()
    for _, row in runs.iterrows():
        assert sums[row["run_id"]] == pytest.approx(row["total_wait"], rel=1e-12)
        assert row["total_wait"] == pytest.approx(row["avg_wait"] * row["jobs"], rel=1e-9)
    choices = pd.read_csv(out / "choices.csv")
    assert set(choices["strategy"]) == {"random/1d", "full/1d", "bandit/1d"}
    assert set(choices["policy"]) <= {"FCFS", "SPF", "SAF"}
    # 2 weeks of daily periods: at least 13 choices per run
    assert (choices.groupby("run_id").size() >= 13).all()
    summary = pd.read_csv(out / "summary_online.csv", keep_default_na=False, na_values=[""])
    base = summary[summary["strategy"] == "FCFS"].iloc[0]
    assert base["rel_total_wait"] == 0.0 and base["rel_max_wait"] == 0.0
    spf = summary[summary["strategy"] == "SPF"].iloc[0]
    expect = (runs[runs.strategy == "SPF"]["total_wait"].sum() / runs[runs.strategy == "FCFS"]["total_wait"].sum()) - 1
    assert spf["rel_total_wait"] == pytest.approx(expect)
    report = (out / "report.md").read_text()
    assert "full/1d" in report and "plots/policy_share.png" in report and "12 of 12 stored" in report


def test_online_run_matches_a_direct_simulation(online_run):
    """A campaign row is exactly what run_local gives on the same resampled trace."""
    from bftune.experiments.local_run import run_local
    from bftune.schedulers.config import SchedulerConfig
    from bftune.workloads.resample import resample
    from bftune.workloads.synthetic import generate

    campaign, _, out = online_run
    spec = next(s for s in campaign.specs if s.labels["strategy"] == "full/1d" and s.labels["resample"] == 1)
    trace = resample(generate(4500, 16, 3), 2, derive_seed(7, "online", 1))
    summary, _ = run_local(trace, SchedulerConfig.from_options(spec.options), tau=10.0)
    row = pd.read_csv(out / "runs.csv").set_index("run_id").loc[spec.run_id]
    assert row["avg_wait"] == summary["avg_wait"] and row["max_wait"] == summary["max_wait"]
    assert spec.options["seed"] == spec.resample_seed
