"""Classification campaigns (issue 5): config validation, the tiny campaign end to end, determinism,
kills per variant, per-class AVGbsld over the same job sets, agreement with a direct simulation."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest
from config_errors import config_error
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.kinds.classification import CURVE_POINTS, curve, reference_classes
from bftune.experiments.campaign.runner import run_campaign
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.cli.main import main
from bftune.experiments.runs.presets import add_presets
from bftune.experiments.studies import study_presets
from locations import SHARED

# The configs below name a study's presets: the command line adds them; these tests call the library, so they
# add them as a notebook would (docs/guides/python.md).
add_presets(study_presets())

CONFIGS = CONFIG_DIR
TINY = CONFIGS / "tiny_synthetic_classification.toml"
TABLES = ["runs.csv", "classes.csv", "months.csv", "curves.csv", "classification.csv",
          "summary_classification.csv"]
SHARED = SHARED / "workloads"
VARIANTS = ["base", "rf", "rf-no-safeguard", "class-clairvoyant", "runtime-clairvoyant"]


def read(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / name, keep_default_na=False, na_values=[""])


@pytest.fixture(scope="module")
def tiny(run_campaign_once):
    """The tiny classification campaign, run once on 2 local processes."""
    return run_campaign_once(TINY, "classification")


# --- config ------------------------------------------------------------------------------------

HEAD = "[campaign]\nkind = 'classification'\n"
OK_TRACE = "[classification]\ntraces = ['synthetic:100:8']\n"
BAD_CONFIGS = [
    (HEAD, "[classification] traces: required key is missing"),
    (HEAD + "[classification]\ntraces = []\n", "[classification] traces"),
    (HEAD + "[classification]\ntraces = ['nowhere/none.swf']\n", "[classification] traces: 'nowhere/none.swf'"),
    (HEAD + "[classification]\ntraces = ['synthetic:ten:8']\n", "[classification] traces"),
    (HEAD + "[classification]\ntraces = ['synthetic:100:8', 'synthetic:100:8']\n", "[classification] traces"),
    (HEAD + OK_TRACE + "trace = 'x'\n", "[classification] trace: unknown key"),
    (HEAD + OK_TRACE + "policies = ['FCFS', 'NOPE']\n", "[classification] policies: unknown policy 'NOPE'"),
    (HEAD + OK_TRACE + "policies = ['SPF', 'spf']\n", "[classification] policies"),
    (HEAD + OK_TRACE + "variants = ['rf', 'oracle']\n", "[classification] variants: 'oracle' is not one of"),
    (HEAD + OK_TRACE + "variants = 'rf'\n", "[classification] variants"),
    (HEAD + OK_TRACE + "features = 'hourly'\n", "[classification] features"),
    (HEAD + OK_TRACE + "threshold = 'soon'\n", "[classification] threshold"),
    (HEAD + OK_TRACE + "reservation = 'maybe'\n", "[classification] reservation"),
    (HEAD + "tau = -5\n" + OK_TRACE, "[campaign] tau"),
    (HEAD + "[workload]\ntrace = 'synthetic:100:8'\n" + OK_TRACE, "[workload] trace: not with kind"),
    (HEAD + "[workload]\nprocs = 8\n" + OK_TRACE, "[workload] procs"),
    (HEAD + "[workload]\nlenient = 'yes'\n" + OK_TRACE, "[workload] lenient"),
    (HEAD + OK_TRACE + "[online]\nresamples = 3\n", "[top level] online"),
    (HEAD + OK_TRACE + "preset = 'zrigui'\n", "[classification] preset: 'zrigui' is not one of"),
    (HEAD + OK_TRACE + "learning = 'offline'\n", "[classification] learning"),
    (HEAD + OK_TRACE + "learning = 'decoupled'\nfeatures = 'live'\n", "[classification] learning: decoupled"),
    (HEAD + "[workload]\ncleaning = 'strong'\n" + OK_TRACE, "[workload] cleaning: 'strong' is not one of"),
    (HEAD + OK_TRACE + "divider_window = 'soon'\n", "[classification] divider_window"),
    (HEAD + OK_TRACE + "learning = 'decoupled'\ndivider_window = 'inf'\n",
     "[classification] divider_window: needs learning='online'"),
    (HEAD + "[workload]\ncleaning = 'keep-overruns'\n" + OK_TRACE, "[classification] traces: cleaning"),
    (HEAD + OK_TRACE + "variants = ['base']\nfeatures = 'live'\n",
     "[classification] features: applies to the variants rf, rf-no-safeguard"),
    (HEAD + OK_TRACE + "variants = ['base', 'rf-no-safeguard', 'runtime-clairvoyant']\nsafeguard_period = '1w'\n",
     "[classification] safeguard_period: applies to the variants rf, class-clairvoyant, rf-no-false-large, rf-no-false-small; this section runs only base"),
    (HEAD + OK_TRACE + "preset = 'study004'\n", "[classification] traces: cleaning 'batsim-converter'"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n" + OK_TRACE, "[top level] classification"),
]


@pytest.mark.parametrize("text,expected", BAD_CONFIGS, ids=[e for _, e in BAD_CONFIGS])
def test_config_errors_name_file_and_key(tmp_path, text, expected):
    assert expected in config_error(tmp_path, text)


def test_two_traces_with_the_same_table_name_are_refused(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "w.swf").write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n")
    path = tmp_path / "c.toml"
    path.write_text(HEAD + f"[classification]\ntraces = ['{tmp_path}/a/w.swf', '{tmp_path}/b/w.swf']\n")
    with pytest.raises(CampaignError, match=r"\[classification\] traces: .* same name 'w'"):
        load_config(path)


def test_defaults_and_expansion(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(HEAD + OK_TRACE)
    c = load_config(path)
    assert c.kind == "classification" and c.tau == 60.0  # the classifier study's tau
    assert c.settings["policies"] == ["FCFS", "WFP3", "SPF", "SAF"]
    assert c.settings["variants"] == VARIANTS
    assert len(c.specs) == 4 * 5
    assert [(s.labels["policy"], s.labels["variant"]) for s in c.specs[:6]] == \
        [("FCFS", v) for v in VARIANTS] + [("WFP3", "base")]
    by = {(s.labels["policy"], s.labels["variant"]): s.options for s in c.specs}
    assert by[("SPF", "base")] == {"policy": "SPF", "threshold": "inf", "reservation": "count"}
    assert by[("SPF", "rf")]["classifier"] == "rf" and by[("SPF", "rf")]["safeguard"] is True
    assert by[("SPF", "rf-no-safeguard")]["classifier"] == "rf"
    assert by[("SPF", "rf-no-safeguard")]["safeguard"] is False
    assert by[("SAF", "class-clairvoyant")]["classifier"] == "class-clairvoyant"
    assert by[("SAF", "runtime-clairvoyant")]["classifier"] == "runtime-clairvoyant"
    assert all(s.options.get("seed", 0) == 0 and s.weeks == 0 and s.split is None for s in c.specs)
    assert len({s.run_id for s in c.specs}) == len(c.specs)
    assert sum(s.labels["baseline"] for s in c.specs) == 4


# A hand-made SWF trace: 240 jobs on 8 processors, one every 30 minutes for 5 days; every fourth job
# overruns its request (runtime 900 s, request 600 s), the others run 60-1500 s and request 3600 s.
def small_swf(path: Path) -> Path:
    lines = ["; MaxProcs: 8", "; UnixStartTime: 0"]
    for i in range(1, 241):
        runtime, request = (900, 600) if i % 4 == 0 else (60 + 30 * (i % 48), 3600)
        lines.append(f"{i} {1800 * i} -1 {runtime} 2 -1 -1 2 {request} -1 1 {i % 5} 1 -1 -1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_presets_and_cleaning_in_a_campaign(tmp_path):
    swf = small_swf(tmp_path / "small.swf")
    head = HEAD + f"[classification]\ntraces = ['{swf}']\npolicies = ['FCFS']\n"
    plain = tmp_path / "plain.toml"
    plain.write_text(head)
    c = load_config(plain)
    assert (c.settings["preset"], c.settings["cleaning"], c.settings["features"], c.settings["learning"]) == \
        ("spec", "drop-overruns", "weekly", "online")  # the default preset's stored name: runs keep their ids
    assert all(s.cleaning == "drop-overruns" for s in c.specs)
    study = tmp_path / "study.toml"
    study.write_text(head + "preset = 'study004'\n")
    c2 = load_config(study)
    assert (c2.settings["cleaning"], c2.settings["features"], c2.settings["learning"]) == \
        ("batsim-converter", "live", "online")
    rf = next(s for s in c2.specs if s.labels["variant"] == "rf")
    assert rf.cleaning == "batsim-converter" and rf.options["features"] == "live" and "learning" not in rf.options
    assert c2.settings["divider_window"] == "inf" and rf.options["divider_window"] == "inf"
    assert not {s.run_id for s in c.specs} & {s.run_id for s in c2.specs}  # the cleaning is part of a run's identity
    # explicit keys win over the preset
    mixed = tmp_path / "mixed.toml"
    mixed.write_text(HEAD + "[workload]\ncleaning = 'keep-overruns'\n" + f"[classification]\ntraces = ['{swf}']\n"
                     "policies = ['FCFS']\npreset = 'study004-text'\n")
    c3 = load_config(mixed)
    assert (c3.settings["cleaning"], c3.settings["features"], c3.settings["learning"]) == \
        ("keep-overruns", "weekly", "decoupled")
    assert next(s for s in c3.specs if s.labels["variant"] == "rf").options["learning"] == "decoupled"
    # study004's divider window applies to online learning only: with decoupled learning it is left out
    decoupled = tmp_path / "decoupled.toml"
    decoupled.write_text(head + "preset = 'study004'\nlearning = 'decoupled'\nfeatures = 'weekly'\n")
    c4 = load_config(decoupled)
    assert c4.settings["divider_window"] == "1w"
    assert all("divider_window" not in s.options for s in c4.specs)
    # the default cleaning leaves the identity of runs stored before cleanings existed unchanged
    assert "cleaning" not in c.specs[0].identity() and c2.specs[0].identity()["cleaning"] == "batsim-converter"


@pytest.mark.parametrize("key, value, default, given_to", [
    ("divider_window", "inf", "1w", set(VARIANTS[1:])),  # every classified variant
    ("safeguard_period", "1w", "none (at the divider)", {"rf", "class-clairvoyant"}),  # those with a safeguard
    ("safeguard_divider", "current", "start", {"rf", "class-clairvoyant"}),
    ("aggregate_classes", "predicted", "true", {"rf", "rf-no-safeguard"}),  # those that train the forest
    ("categorical_features", "request", "none", {"rf", "rf-no-safeguard"}),
    ("relabel", "last-week-median", "none", {"rf", "rf-no-safeguard"}),
    ("calendar", "relative", "absolute", {"rf", "rf-no-safeguard"}),
])
def test_classifier_keys_in_a_campaign(tmp_path, key, value, default, given_to):
    """A key reaches the variants it means something to; its default stays out of the options, so run ids
    stored before the key existed hold, and the other variants keep their ids."""
    path = tmp_path / "c.toml"
    path.write_text(HEAD + OK_TRACE + "policies = ['FCFS']\n")
    plain = load_config(path)
    assert plain.settings[key] == default
    assert all(key not in s.options for s in plain.specs)
    path.write_text(HEAD + OK_TRACE + f"policies = ['FCFS']\n{key} = '{value}'\n")
    changed = load_config(path)
    assert changed.settings[key] == value
    by = {s.labels["variant"]: s for s in changed.specs}
    assert {v for v, s in by.items() if s.options.get(key) == value} == given_to
    assert {v for v, s in by.items() if s.run_id in {p.run_id for p in plain.specs}} == set(VARIANTS) - given_to
    path.write_text(HEAD + OK_TRACE + f"{key} = 'soon'\n")
    with pytest.raises(CampaignError, match=rf"\[classification\] {key}"):
        load_config(path)


def test_trace_policies_run_a_trace_with_its_own_policies(tmp_path):
    path = tmp_path / "c.toml"
    two = "[classification]\ntraces = ['synthetic:100:8', 'synthetic:120:8']\nvariants = ['base', 'avg2']\n"
    path.write_text(HEAD + two + "policies = ['FCFS', 'SAF']\ntrace_policies = {'synthetic:120:8' = ['spf']}\n")
    config = load_config(path)
    cells = {(s.labels["trace"], s.labels["policy"]) for s in config.specs}
    assert cells == {("synthetic:100:8", "FCFS"), ("synthetic:100:8", "SAF"), ("synthetic:120:8", "SPF")}
    assert config.settings["trace_policies"] == {"synthetic:120:8": ["SPF"]}
    # avg2: EASY++'s predictor with the policy's own backfilling order (EASY++ backfills the shortest first)
    avg2 = next(s for s in config.specs if s.labels["variant"] == "avg2" and s.labels["policy"] == "FCFS")
    assert avg2.options == {"policy": "FCFS", "threshold": "inf", "reservation": "count", "predictor": "avg2"}
    for bad, message in (("{'other' = ['SPF']}", "other is not one of this section's traces"),
                         ("{'synthetic:120:8' = []}", "expected a non-empty list"),
                         ("{'synthetic:120:8' = ['nope']}", "trace_policies")):
        path.write_text(HEAD + two + f"trace_policies = {bad}\n")
        with pytest.raises(CampaignError, match=message):
            load_config(path)


@pytest.mark.slow
def test_a_trace_run_with_some_policies_only_plots_without_warnings(tmp_path):
    """Its monthly plot has empty panels; the legend goes on the first panel that has lines (matplotlib
    warned "No artists with labels found" on every report of study 004's threshold ablation)."""
    path = tmp_path / "c.toml"
    path.write_text(HEAD + "[classification]\ntraces = ['synthetic:150:8', 'synthetic:160:8']\n"
                    "variants = ['base', 'avg2']\npolicies = ['FCFS', 'SAF']\n"
                    "trace_policies = {'synthetic:160:8' = ['SAF']}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outcome = run_campaign(load_config(path), tmp_path / "out", workers=1, progress=False)
    assert outcome.exit_code == 0
    assert list((tmp_path / "out" / "plots").glob("*.png"))


@pytest.mark.slow
def test_study_preset_campaign_runs_on_the_hand_made_trace(tmp_path):
    swf = small_swf(tmp_path / "small.swf")
    cfg = tmp_path / "study.toml"
    cfg.write_text(HEAD + f"[classification]\ntraces = ['{swf}']\npolicies = ['FCFS']\n"
                   "variants = ['base', 'rf', 'class-clairvoyant']\npreset = 'study004'\n")
    out = tmp_path / "out"
    outcome = run_campaign(load_config(cfg), out, workers=1, progress=False)
    assert outcome.exit_code == 0
    runs = read(out, "runs.csv")
    assert set(runs["variant"]) == {"base", "rf", "class-clairvoyant"}
    assert (runs["jobs"] == 240).all()  # the 60 overruns are kept (walltime 2 x runtime), not dropped
    quality = read(out, "classification.csv")
    assert list(quality[quality["scope"] == "overall"]["variant"]) == ["rf"]


@pytest.mark.slow
def test_the_zone_of_the_calendar_features_is_in_runs_csv_and_a_fallback_is_said_in_the_report(tmp_path):
    """A machine without the trace's time zone gives UTC calendar features: every run says which zone it used."""
    swf = small_swf(tmp_path / "small.swf")
    swf.write_text(swf.read_text().replace("; UnixStartTime: 0", "; UnixStartTime: 0\n; TimeZoneString: Mars/Olympus"))
    cfg = tmp_path / "c.toml"
    cfg.write_text(HEAD + f"[classification]\ntraces = ['{swf}']\npolicies = ['FCFS']\nvariants = ['base', 'rf']\n")
    out = tmp_path / "out"
    assert run_campaign(load_config(cfg), out, workers=1, progress=False).exit_code == 0
    runs = read(out, "runs.csv").set_index("variant")
    assert runs.loc["rf", "calendar_zone"] == "UTC"
    assert "unknown timezone 'Mars/Olympus'" in runs.loc["rf", "calendar_warning"]
    assert "**Calendar features of 1 run(s) on small: unknown timezone 'Mars/Olympus'" in (out / "report.md").read_text()
    paris = tmp_path / "paris.swf"
    paris.write_text(swf.read_text().replace("Mars/Olympus", "Europe/Paris"))
    cfg.write_text(cfg.read_text().replace(str(swf), str(paris)))
    out = tmp_path / "out2"
    assert run_campaign(load_config(cfg), out, workers=1, progress=False).exit_code == 0
    runs = read(out, "runs.csv").set_index("variant")
    assert runs.loc["rf", "calendar_zone"] == "Europe/Paris"
    assert "Calendar features of" not in (out / "report.md").read_text()


@pytest.mark.slow
def test_easy_plus_plus_variant_is_the_simulators_easy_with_avg2_and_shortest_predicted_backfilling(tmp_path):
    """Opt-in (not a default variant); the same run as ``bftune simulate --predictor avg2 --backfill SPF``."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(HEAD + "tau = 60\n[classification]\ntraces = ['synthetic:1500:32:3']\npolicies = ['FCFS']\n"
                   "variants = ['base', 'easy++']\n")
    campaign = load_config(cfg)
    assert [s.options for s in campaign.specs] == [
        {"policy": "FCFS", "threshold": "inf", "reservation": "count"},
        {"policy": "FCFS", "threshold": "inf", "reservation": "count", "predictor": "avg2", "backfill_policy": "SPF"}]
    out = tmp_path / "out"
    assert run_campaign(campaign, out, workers=1, progress=False).exit_code == 0
    runs = read(out, "runs.csv").set_index("variant")
    for variant, extra in (("base", []), ("easy++", ["--predictor", "avg2", "--backfill", "SPF"])):
        assert main(["simulate", "--synthetic", "1500", "--procs", "32", "--seed", "3", "--tau", "60", *extra,
                     "--out", str(tmp_path / variant)]) == 0
        summary = json.loads((tmp_path / variant / "summary.json").read_text())
        assert runs.loc[variant, "avg_bsld"] == pytest.approx(summary["avg_bsld"], rel=1e-12)
    assert runs.loc["easy++", "avg_bsld"] != runs.loc["base", "avg_bsld"]
    plain = tmp_path / "plain.toml"
    plain.write_text(HEAD + OK_TRACE)
    assert "easy++" not in load_config(plain).settings["variants"]


@pytest.mark.slow
def test_error_analysis_variants_sit_between_rf_and_class_clairvoyant(tmp_path):
    """Opt-in: rf with its false large / false small classes corrected; same runs as `bftune simulate`."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(HEAD + "tau = 60\nseed = 3\n[classification]\ntraces = ['synthetic:3000:32:3']\n"
                   "policies = ['FCFS']\nvariants = ['base', 'rf', 'rf-no-false-large', 'rf-no-false-small', 'class-clairvoyant']\n")
    campaign = load_config(cfg)
    options = {s.labels["variant"]: s.options for s in campaign.specs}
    assert options["rf-no-false-large"]["classifier"] == "rf-no-false-large"
    assert options["rf-no-false-small"]["safeguard"] is True
    out = tmp_path / "out"
    assert run_campaign(campaign, out, workers=1, progress=False).exit_code == 0
    runs = read(out, "runs.csv").set_index("variant")
    assert main(["simulate", "--synthetic", "3000", "--procs", "32", "--seed", "3", "--tau", "60",
                 "--classifier", "rf-no-false-small", "--out", str(tmp_path / "fs")]) == 0
    summary = json.loads((tmp_path / "fs" / "summary.json").read_text())
    assert runs.loc["rf-no-false-small", "avg_bsld"] == pytest.approx(summary["avg_bsld"], rel=1e-12)
    # correcting the false small jobs leaves only the divider's drift to kill for, as with true classes
    assert runs.loc["rf-no-false-small", "killed_jobs"] < runs.loc["rf", "killed_jobs"]
    assert len({runs.loc[v, "avg_bsld"] for v in ("rf", "rf-no-false-large", "rf-no-false-small")}) == 3
    assert set(read(out, "classification.csv")["variant"]) == {"rf"}


@pytest.mark.skipif(not (SHARED / "KTH-SP2-1996-2.1-cln.swf.gz").exists(),
                    reason="the ../shared workload archive is missing")
def test_shipped_paper_scale_config():
    c = load_config(CONFIGS / "classification.toml")
    assert c.kind == "classification" and c.tau == 60.0
    assert c.settings["traces"] == ["KTH-SP2-1996-2.1-cln", "CTC-SP2-1996-3.1-cln", "SDSC-SP2-1998-4.2-cln",
                                    "HPC2N-2002-2.2-cln"]
    assert len(c.specs) == 4 * 4 * 5


# --- reference classes ---------------------------------------------------------------------------


class J:
    def __init__(self, submit, runtime, walltime=None):
        self.submit, self.runtime, self.walltime = submit, runtime, walltime or runtime * 2


def test_reference_classes_follow_the_divider_rule():
    day = 86400.0
    jobs = [
        J(0, 100),  # nothing ended yet: unlabelled
        J(10, 300),  # nothing ended yet (job 0 ends at 100)
        J(100, 50),  # job 0 ended at exactly 100: window (100 - 7d, 100] holds it; divider 100 -> small
        J(400, 200),  # ends: 100 (p 100), 150 (p 50), 310 (p 300): median 100 -> large
        J(400, 99.5),  # small
        J(610, 150),  # ends <= 610: p 100, 50, 300, 99.5 (at 499.5), 200 (at 600): median 100 -> large
        J(2 * 7 * day, 10),  # every earlier job ended more than 7 days ago: unlabelled
        J(3 * 7 * day, 10, walltime=5),  # job 6 ended 7 d - 10 s ago: divider 10; p capped by the walltime: 5 < 10
    ]
    assert reference_classes(jobs) == [None, None, "small", "large", "small", "large", None, "small"]
    # even count: the mean of the two middle runtimes
    even = [J(0, 10), J(0, 30), J(100, 19.9), J(100, 20)]
    assert reference_classes(even) == [None, None, "small", "large"]


def test_curve_sampling_is_the_step_function():
    pts = curve([10.0, 20.0, 40.0], [1.0, 3.0, 6.0], origin=0.0, points=5)
    assert [p["day"] * 86400 for p in pts] == [0.0, 10.0, 20.0, 30.0, 40.0]
    assert [p["cumulative_bsld"] for p in pts] == [0.0, 1.0, 3.0, 3.0, 6.0]


# --- end to end ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_tiny_campaign_end_to_end(tiny):
    campaign, outcome, out = tiny
    assert outcome.failures == [] and outcome.done == len(campaign.specs) == 2 * 5
    for name in TABLES + ["report.md", "campaign.json"]:
        assert (out / name).is_file(), name
    runs = read(out, "runs.csv")
    assert list(runs["run_id"]) == [s.run_id for s in campaign.specs]
    assert list(runs["variant"]) == VARIANTS * 2 and set(runs["policy"]) == {"FCFS", "SAF"}
    assert (runs["jobs"] == 4500).all()
    # every table holds every run
    for name in ("classes.csv", "months.csv", "curves.csv"):
        assert set(read(out, name)["run_id"]) == set(runs["run_id"]), name
    curves = read(out, "curves.csv")
    assert (curves.groupby("run_id").size() == CURVE_POINTS).all()
    for run_id, g in curves.groupby("run_id"):
        row = runs.set_index("run_id").loc[run_id]
        assert g["cumulative_bsld"].is_monotonic_increasing and g["cumulative_bsld"].iloc[0] == 0.0
        assert g["cumulative_bsld"].iloc[-1] == pytest.approx(row["sum_bsld"], rel=1e-9)
        assert row["sum_bsld"] == pytest.approx(row["avg_bsld"] * row["jobs"], rel=1e-9)
    months = read(out, "months.csv")
    assert set(months["month"]) == {0, 1}  # about 37 days of submissions
    for run_id, g in months.groupby("run_id"):
        row = runs.set_index("run_id").loc[run_id]
        assert g["jobs"].sum() == row["jobs"]
        assert (g["avg_bsld"] * g["jobs"]).sum() / g["jobs"].sum() == pytest.approx(row["avg_bsld"], rel=1e-9)
    quality = read(out, "classification.csv")
    assert set(quality["variant"]) == {"rf", "rf-no-safeguard"}
    overall = quality[quality["scope"] == "overall"]
    assert len(overall) == 4 and overall["accuracy"].between(0.5, 1).all()
    weeks = quality[quality["scope"] == "week"]
    for run_id, g in weeks.groupby("run_id"):
        o = overall.set_index("run_id").loc[run_id]
        assert g["n"].sum() == o["n"] and g["tp"].sum() == o["tp"] and g["fn"].sum() == o["fn"]
    assert weeks[weeks["week"] == 0]["model"].eq("none").all()  # the first week: no model yet
    # which jobs were misclassified: false large ones ran less than their divider, false small ones at least it
    assert (overall["fl_median_over_divider"] < 1).all() and (overall["fs_median_over_divider"] >= 1).all()
    assert overall["fl_under_60s"].between(0, 1).all() and weeks["fl_median_runtime"].isna().all()
    summary = read(out, "summary_classification.csv")
    assert (summary[summary["variant"] == "base"]["rel_improvement"] == 0.0).all()
    r = summary.set_index(["policy", "variant"])
    expect = (r.loc[("FCFS", "base"), "avg_bsld"] - r.loc[("FCFS", "rf"), "avg_bsld"]) / r.loc[("FCFS", "base"),
                                                                                              "avg_bsld"]
    assert r.loc[("FCFS", "rf"), "rel_improvement"] == pytest.approx(expect)
    report = (out / "report.md").read_text()
    for section in ("## Final AVGbsld and relative improvement over base", "## Cumulative bounded slowdown over time",
                    "## AVGbsld per class", "## Killed jobs and wasted processor-time", "## Monthly AVGbsld",
                    "## Classification quality", "10 of 10 stored"):
        assert section in report, section
    plots = ["cumbsld_synthetic_4500_64_1_FCFS.png", "cumbsld_synthetic_4500_64_1_SAF.png",
             "monthly_synthetic_4500_64_1.png", "weekly_accuracy_synthetic_4500_64_1.png"]
    for plot in plots:
        assert f"plots/{plot}" in report
        assert (out / "plots" / plot).stat().st_size > 1000


def test_kills_per_variant(tiny):
    _, _, out = tiny
    runs = read(out, "runs.csv")
    for variant in ("base", "rf-no-safeguard", "runtime-clairvoyant"):
        v = runs[runs["variant"] == variant]
        assert (v["killed_runs"] == 0).all() and (v["killed_jobs"] == 0).all(), variant
        assert (v["wasted_work"] == 0).all() and (v["safeguard_kills"] == 0).all(), variant
        # no kill: one run per job, so the row-by-row sums are the merged sum (docs/semantics/scheduling.md#metrics)
        assert v["sum_bsld_rows"].to_numpy() == pytest.approx(v["sum_bsld"].to_numpy()), variant
        assert v["sum_bsld_resubmitted"].to_numpy() == pytest.approx(v["sum_bsld"].to_numpy()), variant
    rf = runs[runs["variant"] == "rf"]
    # a rerun waits from its registration (the kill) in the row-by-row readings, and killed runs add rows
    assert (rf["sum_bsld_resubmitted"] < rf["sum_bsld"]).all()
    assert (rf["sum_bsld_rows"] > rf["sum_bsld_resubmitted"]).all()
    assert (rf["killed_runs"] > 0).all() and (rf["killed_jobs"] > 0).all()
    assert (rf["wasted_work"] > 0).all() and (rf["wasted_share"] > 0).all()
    assert (rf["safeguard_kills"] == rf["killed_runs"]).all()
    classes = read(out, "classes.csv")
    killed = classes[(classes["variant"] == "rf") & (classes["class"] == "all")]
    assert list(killed["killed_jobs"]) == list(rf["killed_jobs"])
    assert killed["wasted_work"].to_numpy() == pytest.approx(rf["wasted_work"].to_numpy())


@pytest.mark.slow
def test_per_class_avgbsld_uses_the_same_job_sets(tiny):
    """Every variant is split into the same reference classes; the stored per-class AVGbsld is that of
    a direct simulation's jobs grouped by the trace's reference classes."""
    from bftune.experiments.runs.local import run_local
    from bftune.experiments.runs.metrics import bounded_slowdown
    from bftune.experiments.runs.tables import job_table, runs_frame
    from bftune.schedulers.config import SchedulerConfig
    from bftune.workloads.synthetic import generate

    campaign, _, out = tiny
    classes = read(out, "classes.csv")
    counts = classes.pivot_table(index="run_id", columns="class", values="jobs")
    assert (counts.nunique() == 1).all()  # the same class sizes in every run
    trace = generate(4500, 64, 1)
    ref = reference_classes(trace.jobs)
    assert counts.iloc[0]["small"] == ref.count("small") and counts.iloc[0]["large"] == ref.count("large")
    assert counts.iloc[0]["unlabelled"] == ref.count(None)
    assert ref.count("small") > 1000 and ref.count("large") > 1000
    cls_of = {j.id: c or "unlabelled" for j, c in zip(trace.jobs, ref)}
    stored_runs = read(out, "runs.csv").set_index("run_id")
    seen = {}
    for spec in campaign.specs:
        if spec.labels["policy"] != "FCFS" or spec.labels["variant"] not in ("base", "rf"):
            continue
        summary, result = run_local(trace, SchedulerConfig.from_options(spec.options), tau=60.0)
        row = stored_runs.loc[spec.run_id]
        assert row["avg_bsld"] == pytest.approx(summary["avg_bsld"], rel=1e-12)
        assert row["killed_runs"] == summary["killed_runs"]
        assert row["wasted_work"] == pytest.approx(summary["wasted_work"])
        jobs = job_table(runs_frame(result.runs))
        jobs["bsld"] = bounded_slowdown(jobs, 60.0)
        jobs["class"] = [cls_of[int(j)] for j in jobs["job"]]
        seen[spec.labels["variant"]] = {c: set(g["job"]) for c, g in jobs.groupby("class")}
        stored = classes[classes["run_id"] == spec.run_id].set_index("class")
        for c, g in jobs.groupby("class"):
            assert stored.loc[c, "jobs"] == len(g)
            assert stored.loc[c, "avg_bsld"] == pytest.approx(g["bsld"].mean(), rel=1e-12)
        if spec.labels["variant"] == "rf":
            quality = read(out, "classification.csv")
            o = quality[(quality["run_id"] == spec.run_id) & (quality["scope"] == "overall")].iloc[0]
            assert o["accuracy"] == pytest.approx(summary["classification"]["overall"]["accuracy"], rel=1e-12)
            assert o["tp"] == summary["classification"]["overall"]["tp"]
    assert seen["base"] == seen["rf"]


@pytest.mark.slow
def test_same_config_and_seed_give_identical_tables(tiny, tmp_path):
    """A second run (inline this time, the first ran on 2 processes) writes byte-identical tables."""
    campaign, _, first = tiny
    outcome = run_campaign(load_config(TINY), tmp_path, workers=1, progress=False)
    assert outcome.done == len(campaign.specs)
    for name in TABLES:
        assert (tmp_path / name).read_bytes() == (first / name).read_bytes(), name


@pytest.mark.slow
def test_report_only_rebuilds_from_the_tables(tiny, tmp_path):
    import shutil

    from bftune.experiments.cli.main import main

    _, _, first = tiny
    out = tmp_path / "copy"
    shutil.copytree(first, out)
    (out / "report.md").unlink()
    (out / "summary_classification.csv").unlink()
    shutil.rmtree(out / "plots")
    assert main(["campaign", "--report-only", str(out)]) == 0
    assert (out / "report.md").read_text() == (first / "report.md").read_text()
    assert (out / "summary_classification.csv").read_bytes() == (first / "summary_classification.csv").read_bytes()
    assert (out / "plots" / "monthly_synthetic_4500_64_1.png").is_file()


@pytest.mark.slow
def test_partial_campaign_reports_what_is_stored(tiny, tmp_path):
    """Runs missing (among them every base run): the report says so and has no improvement for the others."""
    campaign, _, _ = tiny
    specs = [s for s in campaign.specs if s.labels["policy"] == "SAF" and s.labels["variant"] in
             ("rf", "runtime-clairvoyant")]
    outcome = run_campaign(campaign, tmp_path, workers=1, specs=specs, progress=False)
    assert outcome.done == 2
    report = (tmp_path / "report.md").read_text()
    assert "2 of 10 stored" in report and "no stored `base` run" in report and "Incomplete campaign" in report
    summary = read(tmp_path, "summary_classification.csv")
    assert summary["rel_improvement"].isna().all() and not math.isnan(summary["avg_bsld"].iloc[0])
