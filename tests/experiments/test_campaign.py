"""Campaigns (issue 4): config validation, end-to-end tiny campaigns, determinism, resume, failures, Dask."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from bftune.experiments import campaign as cp
from locations import SHARED

CONFIGS = cp.CONFIG_DIR
KTH = SHARED / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
needs_kth = pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is not available (the ../shared checkout is missing)")
TINY_ONLINE = CONFIGS / "tiny_synthetic_online.toml"
TINY_OFFLINE = CONFIGS / "tiny_synthetic_offline.toml"
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


# --- config validation ---------------------------------------------------------------------

BAD_CONFIGS = [
    ("[workload]\ntrace = 'synthetic:10:4'\n", "[campaign]"),
    ("[campaign]\nname = 'x'\n[workload]\ntrace = 'synthetic:10:4'\n", "[campaign] kind"),
    ("[campaign]\nkind = 'sideways'\n[workload]\ntrace = 'synthetic:10:4'\n", "[campaign] kind"),
    ("[campaign]\nkind = 'online'\nseed = 'abc'\n[workload]\ntrace = 'synthetic:10:4'\n", "[campaign] seed"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'nowhere/none.swf'\n", "[workload] trace"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:ten:4'\n", "[workload] trace"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nresample = 3\n",
     "[online] resample: unknown key"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nresamples = 0\n",
     "[online] resamples"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nfixed = ['FCFS', 'NOPE']\n",
     "[online] fixed: unknown policy 'NOPE'"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\ncandidates = ['SPF', 'spf']\n",
     "[online] candidates"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nselectors = ['fixed']\n",
     "[online] selectors"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nepsilon = 2.0\n",
     "[online] epsilon"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nperiods = ['1 fortnight']\n",
     "[online] periods"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nweeks = 3\n",
     "[top level] offline"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nthresholds = ['soon']\n",
     "[offline] thresholds"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nweeks = 2.5\n",
     "[offline] weeks"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nsplits = ['validation']\n",
     "[offline] splits"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nreservation = 'maybe'\n",
     "[offline] reservation"),
    ("[campaign\nkind = 'offline'\n", "not valid TOML"),
]


@pytest.mark.parametrize("text,expected", BAD_CONFIGS, ids=[e for _, e in BAD_CONFIGS])
def test_config_errors_name_file_and_key(tmp_path, text, expected):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(cp.CampaignError) as info:
        cp.load_config(path)
    message = str(info.value)
    assert str(path) in message
    assert expected in message


def test_cli_reports_config_error_and_exit_code(tmp_path, capsys):
    from bftune.experiments.cli import main

    path = tmp_path / "bad.toml"
    path.write_text("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nfixed = ['NOPE']\n")
    assert main(["campaign", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.toml: [online] fixed" in err and "NOPE" in err
    assert not (tmp_path / "out").exists()


@needs_kth
def test_shipped_configs_expand_to_the_paper_campaigns():
    offline = cp.load_config(CONFIGS / "offline_tuning.toml")
    assert offline.kind == "offline"
    # 49 pairs x 5 thresholds x 2 halves; the baseline FCFS-FCFS none is one of them
    assert len(offline.specs) == 49 * 5 * 2
    assert sum(s.labels["baseline"] for s in offline.specs) == 2
    assert {s.labels["split"] for s in offline.specs} == {"train", "test"}
    assert {s.weeks for s in offline.specs} == {250}
    assert len({s.run_id for s in offline.specs}) == len(offline.specs)
    # one resampling per half: every run of a half shares its seed
    assert len({(s.split, s.resample_seed) for s in offline.specs}) == 2

    online = cp.load_config(CONFIGS / "online_selection.toml")
    assert online.kind == "online"
    per_trace = 12 + 4 * 2
    assert len(online.specs) == 60 * per_trace
    assert {s.weeks for s in online.specs} == {104}
    strategies = online.settings["strategies"]
    assert strategies[:12] == ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF"]
    assert set(strategies[12:]) == {f"{s}/{p}" for s in ("random", "full", "noisy", "bandit") for p in ("1d", "1w")}
    assert all(s.options["threshold"] == "40h" for s in online.specs)
    base = [s for s in online.specs if s.labels["baseline"]]
    assert len(base) == 60 and all(s.options["policy"] == "FCFS" and "selector" not in s.options for s in base)
    assert len({s.resample_seed for s in online.specs}) == 60

    quick = cp.load_config(CONFIGS / "online_selection_quick.toml")
    assert len(quick.specs) == 3 * per_trace


def test_run_ids_are_stable_and_depend_on_what_matters():
    a = cp.load_config(TINY_ONLINE).specs
    b = cp.load_config(TINY_ONLINE).specs
    assert [s.run_id for s in a] == [s.run_id for s in b]
    spec = a[0]
    other = copy.deepcopy(spec.to_dict())
    other["labels"] = {"renamed": True}
    other["run_id"] = ""
    assert cp.RunSpec.from_dict(other).run_id == spec.run_id  # labels are not identity
    other["resample_seed"] += 1
    assert cp.RunSpec.from_dict(other).run_id != spec.run_id


# --- end to end ------------------------------------------------------------------------------


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
    trace = resample(generate(4500, 16, 3), 2, cp.derive_seed(7, "online", 1))
    summary, _ = run_local(trace, SchedulerConfig.from_options(spec.options), tau=10.0)
    row = pd.read_csv(out / "runs.csv").set_index("run_id").loc[spec.run_id]
    assert row["avg_wait"] == summary["avg_wait"] and row["max_wait"] == summary["max_wait"]
    assert spec.options["seed"] == spec.resample_seed


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
    from bftune.experiments.metrics import summarize
    from bftune.experiments.tables import runs_frame
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import simulate

    campaign, _, out = offline_run
    spec = next(s for s in campaign.specs if s.labels["config"] == "EASY-SPF-FCFS 20h" and s.split == "test")
    m, weeks = cp.weekly_jobs(spec)
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


# --- determinism, resume, failures ------------------------------------------------------------


def test_same_config_and_seed_give_identical_tables(online_run, tmp_path):
    """A second run (inline this time) writes byte-identical tables."""
    campaign, _, first = online_run
    outcome = cp.run_campaign(cp.load_config(TINY_ONLINE), tmp_path, workers=1, progress=False)
    assert outcome.done == len(campaign.specs)
    assert tables(tmp_path, ONLINE_TABLES) == tables(first, ONLINE_TABLES)


def test_resume_skips_finished_runs(online_run, tmp_path):
    campaign, _, first = online_run
    part = cp.run_campaign(campaign, tmp_path, workers=2, specs=campaign.specs[:5], progress=False)
    assert (part.done, part.reused) == (5, 0)
    stamps = {p.name: json.loads(p.read_text())["finished_at"] for p in (tmp_path / "runs").glob("*.json")}
    assert len(stamps) == 5
    assert "5 of 12 stored" in (tmp_path / "report.md").read_text()
    err = io.StringIO()
    full = cp.run_campaign(campaign, tmp_path, workers=2, stream=err)
    assert (full.done, full.reused, full.total) == (7, 5, 12)
    assert "5 already stored, 7 to run" in err.getvalue()
    for name, stamp in stamps.items():  # not recomputed
        assert json.loads((tmp_path / "runs" / name).read_text())["finished_at"] == stamp
    assert tables(tmp_path, ONLINE_TABLES) == tables(first, ONLINE_TABLES)
    again = cp.run_campaign(campaign, tmp_path, workers=2, progress=False)
    assert (again.done, again.reused) == (0, 12)


def test_a_crashing_run_is_reported_while_the_others_finish(tmp_path):
    campaign = cp.load_config(TINY_ONLINE)
    good = len(campaign.specs)
    bad = copy.deepcopy(campaign.specs[1].to_dict())
    bad["options"]["policy"] = "NO_SUCH_POLICY"
    bad["labels"]["strategy"] = "broken"
    bad["run_id"] = ""
    campaign.specs.insert(3, cp.RunSpec.from_dict(bad))
    outcome = cp.run_campaign(campaign, tmp_path, workers=2, progress=False)
    assert outcome.done == good and len(outcome.failures) == 1 and outcome.exit_code == 1
    bad_id = campaign.specs[3].run_id
    record = json.loads((tmp_path / "failures" / f"{bad_id}.json").read_text())
    assert record["status"] == "failed"
    assert "NO_SUCH_POLICY" in record["error"] and "Traceback" in record["traceback"]
    assert record["spec"]["options"]["policy"] == "NO_SUCH_POLICY"
    assert record["spec"]["resample_seed"] == campaign.specs[1].resample_seed
    assert not (tmp_path / "runs" / f"{bad_id}.json").exists()
    text = cp.format_failures(outcome.failures)
    assert bad_id in text and "NO_SUCH_POLICY" in text and f"resample seed {record['spec']['resample_seed']}" in text
    assert len(pd.read_csv(tmp_path / "runs.csv")) == good
    report = (tmp_path / "report.md").read_text()
    assert "1 failed" in report and "Failed runs" in report and bad_id in report
    # a re-run retries only the failed run
    again = cp.run_campaign(campaign, tmp_path, workers=1, progress=False)
    assert (again.reused, again.done, len(again.failures)) == (good, 0, 1)


def test_cli_runs_a_campaign_and_rebuilds_the_report(offline_run, tmp_path, capsys):
    from bftune.experiments.cli import main

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


def test_progress_bar_shows_counts_and_eta():
    stream = io.StringIO()
    bar = cp.Progress(10, already=2, stream=stream, interval=0.0)
    bar.update(True)
    bar.update(False)
    text = stream.getvalue()
    assert "4/10" in text and "1 failed" in text and "2 stored" in text and "ETA" in text
    assert "--:--" not in text.splitlines()[-1]


# --- Dask --------------------------------------------------------------------------------------


def test_dask_local_cluster_gives_identical_tables(online_run, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, _, first = online_run
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        outcome = cp.run_campaign(cp.load_config(TINY_ONLINE), tmp_path, dask=cluster.scheduler_address,
                                  progress=False)
    assert outcome.exit_code == 0 and outcome.done == 12
    assert "Dask" in outcome.executor
    workers = {json.loads(p.read_text())["worker"] for p in (tmp_path / "runs").glob("*.json")}
    assert len(workers) >= 1
    assert tables(tmp_path, ONLINE_TABLES) == tables(first, ONLINE_TABLES)
