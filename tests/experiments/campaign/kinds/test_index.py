"""Index-policy campaigns (issue 10): windows, scenarios, config validation, the tiny campaign end to end."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.campaign.kinds import index as kind
from bftune.experiments.runs.metrics import period_metrics
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.report import index as report
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord

DAY = 86400.0
TINY = CONFIG_DIR / "tiny_synthetic_index.toml"


def job(i, submit, runtime=100.0, procs=1):
    return JobRecord(id=i, submit=submit, procs=procs, runtime=runtime, walltime=2 * runtime)


def test_windows_are_full_non_overlapping_and_rebased():
    jobs = [job(1, 1000.0), job(2, 1000.0 + 3 * DAY), job(3, 1000.0 + 15 * DAY), job(4, 1000.0 + 29 * DAY),
            job(5, 1000.0 + 31 * DAY)]
    windows = kind.cut_windows(jobs, 15 * DAY)
    assert [[j.id for j in w] for w in windows] == [[1, 2], [3, 4]]  # the partial third window is dropped
    assert [j.submit for j in windows[1]] == [0.0, 14 * DAY]  # each window's own clock
    trace_clock = kind.cut_windows(jobs, 15 * DAY, clock="trace", limit=1)
    assert [j.submit for j in trace_clock[0]] == [1000.0, 1000.0 + 3 * DAY]
    assert kind.cut_windows([], 15 * DAY) == []


def test_lublin_sequences_use_actual_runtimes():
    trace = kind.lublin_trace(3, 64, 5, 15 * DAY)
    assert all(j.walltime == j.runtime for j in trace.jobs)
    m, windows = kind.source_windows("lublin:3:64:5", None, False, False, kind.window_split(15 * DAY, "window"))
    assert m == 64 and len(windows) == 3 and all(0 <= j.submit < 15 * DAY for w in windows for j in w)
    assert kind.scenario_options("SAF", False) == {"policy": "SAF", "backfill": False}


def config(**index) -> dict:
    return {"campaign": {"kind": "index"}, "index": {"traces": ["synthetic:2000:32:1"], "lublin_sequences": 1,
                                                     "lublin_procs": 32, **index}}


def test_expansion_and_bad_configs():
    c = campaign_from_dict(config(policies=["FCFS", "SAF", "Lin", "F2"]))
    runs = [(s.labels["scenario"], s.labels["policy"], s.labels["backfill"], s.labels["clock"]) for s in c.specs]
    # lublin: 4 policies + 2 r-dependent in the trace clock; archive: 4 x (EASY, none) + 2 in the trace clock
    assert len(runs) == 6 + 10 and ("lublin", "SAF", False, "window") in runs
    assert ("archive", "Lin", True, "trace") in runs and ("archive", "Lin", False, "trace") not in runs
    assert ("archive", "SAF", True, "trace") not in runs  # SAF does not read r
    assert len(campaign_from_dict(config(clock_ablation=False, no_backfilling=False)).specs) == 13 + 13
    for bad, message in [({"policies": ["FCFS", "nope"]}, "unknown policy 'nope'"),
                         ({"traces": [], "lublin_sequences": 0}, "nothing to evaluate"),
                         ({"window": "0s"}, "window"), ({"lublin_sequences": -1}, "lublin_sequences"),
                         ({"colour": 1}, "colour: unknown key"),
                         ({"policies": ["learned:/nonexistent.json"]}, "no such file")]:
        with pytest.raises(CampaignError, match=message):
            campaign_from_dict(config(**bad))


def test_a_run_equals_a_direct_simulation_of_each_window():
    c = campaign_from_dict(config(policies=["Lin"], clock_ablation=False, no_backfilling=False))
    spec = next(s for s in c.specs if s.labels["scenario"] == "archive")
    rec = kind.run(spec)
    m, windows = kind.source_windows(spec.trace, spec.trace_path, False, False, spec.split)
    for row, jobs in zip(rec["windows"], windows):
        direct = period_metrics(simulate(list(jobs), m, SchedulerConfig.from_options({"policy": "Lin"}).build(m)).runs,
                              10.0)
        assert row["avg_bsld"] == direct["avg_bsld"] and row["jobs"] == len(jobs)
    assert rec["summary"]["windows"] == len(windows)


@pytest.mark.slow
def test_tiny_campaign_end_to_end(run_campaign_once):
    _, outcome, out = run_campaign_once(TINY, "index")
    assert outcome.exit_code == 0 and outcome.done == outcome.total
    windows = pd.read_csv(out / "windows.csv")
    assert set(windows["scenario"]) == {"lublin", "archive"} and set(windows["clock"]) == {"window", "trace"}
    text = (out / "report.md").read_text()
    assert "Median AVGbsld per window" in text and "from best to worst" in text and "gain from backfilling" in text
    assert "study" not in text.lower() and "Figure" not in text  # a user's campaign: no study's claims
    assert (out / "plots" / "index_archive_easy.png").exists() and (out / "summary_index.csv").exists()


def test_report_pieces():
    idx = pd.MultiIndex.from_tuples([("archive", "KTH", True), ("archive", "KTH", False)],
                                    names=["scenario", "source", "backfill"])
    table = pd.DataFrame({"FCFS": [10.0, 80.0], "SAF": [5.0, 6.0], "Lin": [6.0, 7.0], "Qdr": [9.0, 70.0]},
                         index=idx)
    assert report.backfilling_gains(table) == ["- **KTH**: FCFS x8.00, Qdr x7.78, SAF x1.20, Lin x1.17"]
    assert report.rank_lines(table) == ["- **KTH** (archive): 1. SAF, 2. Lin, 3. Qdr, 4. FCFS"]
    frame = pd.DataFrame({"scenario": "lublin", "source": "s", "backfill": False, "policy": ["FCFS", "SAF"] * 3,
                          "jobs": 5, "avg_bsld": [4.0, 2.0, 6.0, 3.0, 8.0, 1.0]})
    assert report.medians(frame).loc[("lublin", "s", False)].tolist() == [6.0, 2.0]
    assert Path(report.__file__).name == "index.py"
