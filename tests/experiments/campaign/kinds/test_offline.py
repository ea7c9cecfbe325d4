"""The offline-tuning kind (issue 4): the tiny campaign end to end, weeks simulated separately."""

from __future__ import annotations

import pandas as pd
import pytest
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.workloads import weekly_jobs

TINY_OFFLINE = CONFIG_DIR / "tiny_synthetic_offline.toml"


@pytest.fixture(scope="module")
def offline_run(run_campaign_once):
    return run_campaign_once(TINY_OFFLINE, "offline")


@pytest.mark.slow
def test_tiny_offline_campaign_end_to_end(offline_run):
    campaign, outcome, out = offline_run
    assert outcome.exit_code == 0
    # 2 x 2 pairs x 2 thresholds x 2 halves; FCFS-FCFS none is the baseline
    assert len(campaign.specs) == 16
    weeks = pd.read_csv(out / "weeks.csv", keep_default_na=False, na_values=[""])
    assert len(weeks) == 16 * 3
    assert set(weeks["week"]) == {0, 1, 2}
    summary = pd.read_csv(out / "summary_offline.csv", keep_default_na=False, na_values=[""])
    assert len(summary) == 16
    fcfs = summary[(summary.primary == "FCFS") & (summary.backfill == "FCFS")]
    # a threshold cannot change FCFS order: ratio exactly 1 in every week, under both thresholds
    assert (fcfs["rel_avg_wait_mean"] == 1.0).all() and (fcfs["rel_max_wait_d9"] == 1.0).all()
    other = summary[summary.primary == "SPF"]
    assert (other["rel_avg_wait_mean"] != 1.0).any()
    for col in ["rel_avg_wait_d1", "rel_avg_wait_d5", "rel_avg_wait_d9"]:
        assert (summary[col] > 0).all()
    assert (summary["rel_avg_wait_d1"] <= summary["rel_avg_wait_d9"]).all()
    best = pd.read_csv(out / "summary_best.csv")
    first = best[best.criterion == "lowest mean rel. AvgWait"]
    assert list(first["split"]) == ["train", "test"]
    train = summary[summary.split == "train"]
    assert first.iloc[0]["config"] == train.sort_values("rel_avg_wait_mean").iloc[0]["config"]
    report = (out / "report.md").read_text()
    assert "Best training configuration" in report and first.iloc[0]["config"] in report
    for plot in ("avgwait_maxwait.png", "pairs_heatmap.png"):
        assert (out / "plots" / plot).stat().st_size > 1000


def test_offline_weeks_are_simulated_separately_with_the_metrics_module(offline_run):
    """A stored week = summarize() of that week's jobs alone, from an empty machine."""
    from bftune.experiments.runs.metrics import summarize
    from bftune.experiments.runs.tables import runs_frame
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import simulate

    campaign, _, out = offline_run
    spec = next(s for s in campaign.specs if s.labels["config"] == "EASY-SPF-FCFS 20h" and s.split == "test")
    m, weeks = weekly_jobs(spec)
    assert len(weeks) == 3 and all(weeks)
    assert all(j.submit < weeks[1][0].submit for j in weeks[0])
    stored = pd.read_csv(out / "weeks.csv").query("run_id == @spec.run_id").set_index("week")
    for w in range(3):
        result = simulate(weeks[w], m, SchedulerConfig.from_options(spec.options).build(m))
        ref = summarize(runs_frame(result.runs), m, 10.0)
        assert stored.loc[w, "jobs"] == ref["jobs"] == len(weeks[w])
        assert stored.loc[w, "avg_wait"] == pytest.approx(ref["avg_wait"], rel=1e-12)
        assert stored.loc[w, "max_wait"] == ref["max_wait"]
        assert stored.loc[w, "avg_bsld"] == pytest.approx(ref["avg_bsld"], rel=1e-9)
