"""The online-selection kind (issue 4): the tiny campaign end to end, and a row equal to a direct simulation."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.kinds import online
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.runner import run_campaign
from bftune.experiments.campaign.specs import derive_seed
from bftune.schedulers.drivers.local.simulator import PeriodReplay

TINY_ONLINE = CONFIG_DIR / "tiny_synthetic_online.toml"
ONLINE_TABLES = ["runs.csv", "periods.csv", "choices.csv", "summary_online.csv"]


@pytest.fixture(scope="module")
def online_run(run_campaign_once):
    """The tiny online campaign, run once on 2 local processes."""
    return run_campaign_once(TINY_ONLINE, "online")


@pytest.mark.slow
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
    from bftune.experiments.runs.local import run_local
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


SHARING = """[campaign]
kind = "online"
name = "sharing"
seed = 7

[workload]
trace = "synthetic:3000:16:3"

[online]
resamples = 2
weeks = 2
threshold = "40h"
fixed = ["FCFS"]
selectors = ["full", "noisy", "random"]
periods = ["1d"]
candidates = ["FCFS", "SPF", "SAF"]
"""


@pytest.mark.slow
def test_full_and_noisy_feedback_share_their_period_replays(tmp_path, monkeypatch):
    """Run in order on one process, noisy feedback reuses the replays of its resample's full feedback (the
    periods whose jobs ended alike under both), the stored results equal unshared runs of the same specs, and
    no table is stored."""
    path = tmp_path / "sharing.toml"
    path.write_text(SHARING)
    campaign = load_config(path)
    assert len({online.replay_group(s) for s in campaign.specs} - {None}) == 2  # one per resample
    computed = [0]
    replay = PeriodReplay._replay

    def counting(self, jobs, m, policy):
        computed[0] += 1
        return replay(self, jobs, m, policy)

    monkeypatch.setattr(PeriodReplay, "_replay", counting)
    outcome = run_campaign(campaign, tmp_path / "out", workers=1, progress=False)
    assert outcome.exit_code == 0
    shared = computed[0]
    alone = {}
    for spec in campaign.specs:
        computed[0] = 0
        alone[spec.run_id] = online.run(spec)  # no table: every replay computed
        alone[spec.run_id]["replays"] = computed[0]
    by = {s.labels["strategy"]: [alone[x.run_id]["replays"] for x in campaign.specs
                                 if x.labels["strategy"] == s.labels["strategy"]] for s in campaign.specs}
    full, noisy = sum(by["full/1d"]), sum(by["noisy/1d"])
    assert full <= shared < full + noisy  # random feedback replays nothing
    computed[0] = 0
    run_campaign(campaign, tmp_path / "unshared", workers=1, progress=False, share_replays=False)
    assert computed[0] == full + noisy
    for table in ("runs.csv", "choices.csv", "periods.csv"):
        assert (tmp_path / "out" / table).read_bytes() == (tmp_path / "unshared" / table).read_bytes(), table
    for spec in campaign.specs:
        stored = json.loads((tmp_path / "out" / "runs" / f"{spec.run_id}.json").read_text())
        assert "shared_replays" not in stored and "shared_replays" not in stored["spec"]
        assert stored["summary"] == alone[spec.run_id]["summary"]
        assert stored["choices"] == alone[spec.run_id]["choices"]
