"""``bftune tune`` end to end on small synthetic and archive-made workloads: outputs, forms, resume, errors."""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.runner import run_campaign
from bftune.experiments.cli.main import build_parser, config_from_args, main
from bftune.experiments.tune.candidates import BASELINE_OPTIONS, REQUIRES
from bftune.experiments.tune.weeks import Source, pool, run_task, task_source
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate
from bftune.experiments.tune.store import TUNE
from bftune.support.store import Store
from slurm_dump import swf_to_slurm

# --holdout 0: five weeks of log leave no validation period worth the name (test_validation.py judges one)
QUICK = ["--synthetic", "4000", "--procs", "16", "--policies", "FCFS,SPF,SAF,LCFS", "--weeks", "16",
         "--budget", "10m", "--workers", "1", "--no-progress", "--holdout", "0"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("tune") / "quick"
    assert main(["tune", *QUICK, "--out", str(out)]) == 0
    return out


def _record(out):
    return json.loads((out / "recommendation.json").read_text())


@pytest.mark.slow
def test_the_recommendation_and_every_form_of_it(quick, capsys):
    rec = _record(quick)
    for key in ("configuration", "objective", "gain", "interval", "data", "risk", "label", "requires", "command"):
        assert key in rec, key
    assert rec["objective"] == "avg_wait" and rec["data"]["trace"] == "synthetic:4000:16:1"
    lo, hi = rec["interval"]
    assert lo <= rec["gain"] <= hi
    assert 0 <= rec["risk"]["jobs_waiting_1h_longer"] <= 1 and rec["risk"]["max_wait_ratio"] > 0
    assert 0 <= rec["risk"]["p99_wait_s"] <= rec["risk"]["largest_wait_s"]  # the tail on the first screen
    assert rec["in_words"].startswith("EASY backfilling; the queue")
    config = SchedulerConfig.from_options(rec["configuration"])  # option-table names, as -o takes them
    assert json.loads((quick / "pybatsim_options.json").read_text()) == rec["configuration"]
    flags = shlex.split((quick / "simulate_flags.txt").read_text())
    assert "--trace" not in flags and "--synthetic" not in flags  # flags only: they run on any log
    args = build_parser().parse_args(["simulate", "--synthetic", "4000", "--procs", "16", *flags])
    # the flags make the very same configuration (--seed seeds a synthetic workload, and so the configuration)
    assert config_from_args(args).replace(seed=config.seed) == config
    ranking = list(csv.DictReader((quick / "ranking.csv").open()))
    assert len(ranking) == 16  # 4 x 4 pairs
    # the best, or the simplest of those the numbers cannot tell from it (analysis._simplest_of_the_best)
    assert ranking[0]["label"] == rec["label"] or rec["why"].startswith("the simplest of the")
    assert all(row["reason"] for row in ranking)
    html = (quick / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 4  # ranking, distributions, CDF, budget: embedded
    assert 'alt="wait CDF and tail"' in html and "the share of jobs waiting longer" in html
    sizes = rec["risk"]["by_size"]  # who loses, by job size: every testing job in one class
    assert sum(size["jobs"] for size in sizes) == rec["risk"]["jobs"] and "mean wait of jobs of" in html
    longest = rec["risk"]["largest_waits"]
    assert len(longest) == 10 and longest[0]["wait_s"] == rec["risk"]["largest_wait_s"]
    assert [j["wait_s"] for j in longest] == sorted((j["wait_s"] for j in longest), reverse=True)
    assert "The longest waits of the testing weeks" in html
    for remote in ('src="http', "src='http", "<link", "<script", "url(http", "@import"):
        assert remote not in html, remote  # nothing fetched from a network
    assert rec["label"] in html


@pytest.mark.slow
def test_the_campaign_toml_judges_the_same_weeks(quick, tmp_path):
    """The campaign made from campaign.toml (the offline kind, the same seed) simulates the very weeks tune did:
    the recommended pair's weekly AvgWait is identical on every training week tune ran it."""
    rec = _record(quick)
    campaign = load_config(quick / "campaign.toml")
    assert campaign.kind == "offline"
    outcome = run_campaign(campaign, tmp_path / "c", workers=1, progress=False, report=False)
    assert outcome.exit_code == 0
    label = rec["label"]
    ours = {int(r["week"]): float(r["avg_wait"]) for r in csv.DictReader((quick / "weeks.csv").open())
            if r["candidate"] == label and r["half"] == "train"}
    theirs = {int(r["week"]): float(r["avg_wait"]) for r in csv.DictReader((tmp_path / "c" / "weeks.csv").open())
              if r["config"] == label and r["split"] == "train" and r["avg_wait"]}
    assert len(ours) >= 8 and all(theirs[w] == pytest.approx(v, rel=1e-9) for w, v in ours.items())


@pytest.mark.slow
def _decisions(out):
    return Store(out, TUNE).read_identity()["decisions"]


def test_a_second_run_reuses_every_week_and_says_the_same(quick, tmp_path, capsys):
    before = _record(quick)
    decisions = _decisions(quick)
    assert decisions and all({"keep", "weeks", "pace", "elapsed_s"} <= set(d) for d in decisions)
    assert main(["tune", *QUICK, "--out", str(quick)]) == 0
    after = _record(quick)
    assert _decisions(quick) == decisions  # the stage decisions are the stored ones, not the clock's
    assert after["budget"]["weeks_simulated"] == 0 and after["budget"]["weeks_reused"] > 0
    for key in ("configuration", "gain", "interval", "risk"):
        assert after[key] == before[key], key
    # weeks lost (an interrupted run): only those are simulated again, and the outcome is the same
    runs = sorted((quick / "runs").glob("*.json"))
    for path in runs[::3]:
        path.unlink()
    assert main(["tune", *QUICK, "--out", str(quick)]) == 0
    again = _record(quick)
    assert 0 < again["budget"]["weeks_simulated"] and again["gain"] == before["gain"]


def test_weeks_do_not_depend_on_how_many_are_planned():
    """Resampling draws week after week: the first weeks of a longer plan are the weeks of a shorter one
    (what lets stored weeks serve any later plan)."""
    source = Source("synthetic:4000:16:1")
    m, short, _ = pool(source, "train", 5, 1)
    _, long, _ = pool(source, "train", 12, 1)
    assert [[(j.id, j.submit, j.user) for j in w] for w in short] == \
           [[(j.id, j.submit, j.user) for j in w] for w in long[:5]]


@pytest.mark.slow
def test_a_slurm_dump_tunes_like_its_swf(tmp_path, capsys):
    trace = generate(2500, 32, 1)
    swf = tmp_path / "t.swf"
    write_swf(trace, swf)
    dump = tmp_path / "sacct.txt"
    swf_to_slurm(swf, dump)
    common = ["--procs", "32", "--policies", "FCFS,SAF", "--weeks", "8", "--budget", "10m", "--workers", "1",
              "--no-progress"]
    assert main(["tune", "--trace", str(swf), *common, "--out", str(tmp_path / "a")]) == 0
    assert main(["tune", "--trace", str(dump), *common, "--out", str(tmp_path / "b")]) == 0
    a, b = _record(tmp_path / "a"), _record(tmp_path / "b")
    assert a["configuration"] == b["configuration"] and a["keep_easy_fcfs"] == b["keep_easy_fcfs"]
    assert a.get("gain") == pytest.approx(b.get("gain"))  # absent from both when EASY-FCFS is kept
    assert a["later_period"]["later_period_interval"] == pytest.approx(b["later_period"]["later_period_interval"])
    assert b["data"]["cleaning"]["job_step"] > 0


@pytest.mark.parametrize("argv, message", [
    (["--objective", "throughput"], "--objective 'throughput': not an objective"),
    (["--budget", "1s"], "too small to judge anything"),
    (["--candidates", "magic"], "'magic' is not a family"),
    (["--max-wait-increase", "lots"], "not a share"),
    (["--max-wait-increase", "1e309"], "must be below 10000 % (100); give none for no limit"),
    (["--max-wait-increase", "nan"], "'nan' is not a number"),
    (["--dask", "tls://127.0.0.1:9"], "tls:// needs Dask's TLS settings"),
    (["--policies", "NOPE"], "--policies"),
])
def test_bad_requests_are_one_line_and_status_2(tmp_path, capsys, argv, message):
    assert main(["tune", *QUICK, *argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_bad_logs_are_one_line_and_status_2(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n")
    short = tmp_path / "short.swf"
    write_swf(generate(300, 32, 1), short)  # a few days: no whole week in each half
    never = tmp_path / "never.txt"
    never.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n"
                     "1|2024-01-01T00:00:00|None|2024-01-01T01:00:00|01:00:00|1|CANCELLED\n")
    for path, message in ((empty, "no job record"), (short, "less than one whole week"),
                          (never, "no job left after cleaning (1 records; dropped: never_started=1)")):
        assert main(["tune", "--trace", str(path), "--procs", "32", "--out", str(tmp_path / "o"),
                     "--no-progress"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err and str(path) in err, err
    assert main(["tune", "--trace", str(short), "--timezone", "UTC", "--out", str(tmp_path / "o")]) == 2
    assert "only for Slurm" in capsys.readouterr().err


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_the_report_renders_in_a_real_browser(quick, tmp_path):
    """Headless Chromium, with no network, screenshots report.html: the page renders and is not blank."""
    shot = tmp_path / "report.png"
    profile = tempfile.mkdtemp(dir=tmp_path)
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--window-size=1200,3000", "--hide-scrollbars",
         f"--screenshot={shot}", (quick / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    from PIL import Image  # matplotlib's dependency

    image = Image.open(shot).convert("L")
    assert image.size == (1200, 3000)
    histogram = image.histogram()
    dark = sum(histogram[:128]) / (image.size[0] * image.size[1])
    assert 0.005 < dark < 0.5  # text and plots drawn on a light page, not an empty or black one
    shutil.copy(shot, quick / "report-screenshot.png")  # kept beside the report for a person to look at


@pytest.mark.slow
def test_other_families_run_and_say_what_they_require(tmp_path):
    out = tmp_path / "fam"
    assert main(["tune", "--synthetic", "4000", "--procs", "16", "--candidates", "selectors,pv-easy", "--weeks", "8", "--finalists", "2", "--workers", "1", "--no-progress",
                 "--out", str(out)]) == 0
    ranking = list(csv.DictReader((out / "ranking.csv").open()))
    assert {r["family"] for r in ranking} == {"selectors", "pv-easy"}
    html = (out / "report.html").read_text()
    for family in ("selectors", "pv-easy"):
        assert REQUIRES[family][:60] in html.replace("&#x27;", "'")
    rec = _record(out)
    assert rec["requires"] == REQUIRES[rec["family"]]


def test_warm_up_weeks_are_simulated_but_only_the_judged_week_counts():
    source = Source("synthetic:4000:16:1")
    _, weeks, _ = pool(source, "train", 8, 1)
    task = {"source": task_source(source), "split": "train", "pool": 8, "seed": 1, "tau": 10.0, "weeks": [3],
            "keep_jobs": True, "candidates": [
                {"key": "a", "family": "baseline", "options": BASELINE_OPTIONS, "warmup": 0},
                {"key": "b", "family": "baseline", "options": BASELINE_OPTIONS, "warmup": 2}]}
    result = run_task(task)
    alone, warmed = result["rows"]
    assert alone["jobs"] == warmed["jobs"] == len(weeks[3]) == len(warmed["waits"])
    costs = {c["candidate"]: c["jobs"] for c in result["costs"]}
    assert costs["b"] == len(weeks[1]) + len(weeks[2]) + len(weeks[3]) and costs["a"] == len(weeks[3])
    assert warmed["avg_wait"] >= alone["avg_wait"]  # the warm-up weeks' leftovers delay the judged week's jobs


@pytest.mark.slow
def test_dask_gives_the_same_recommendation(quick, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        argv = [a for a in QUICK if a not in ("--workers", "1")]
        assert main(["tune", *argv, "--dask", cluster.scheduler_address, "--out", str(tmp_path / "d")]) == 0
    a, b = _record(quick), _record(tmp_path / "d")
    assert b["budget"]["weeks_simulated"] > 0
    for key in ("configuration", "gain", "interval"):
        assert a[key] == b[key], key


@pytest.mark.slow
def test_the_outputs_are_one_set_an_interrupted_rerun_leaves_the_previous_one(tmp_path, monkeypatch):
    from bftune.experiments.tune import outputs, report

    out = tmp_path / "o"
    assert main(["tune", *QUICK, "--out", str(out)]) == 0
    before = {name: (out / name).read_bytes() for name in outputs.OUTPUTS}
    assert json.loads(before["recommendation.json"])["objective"] == "avg_wait"

    def interrupted(*args, **kwargs):  # a kill while the last output is made, after the others are
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "html_report", interrupted)
    assert main(["tune", *QUICK, "--objective", "avg_bsld", "--out", str(out)]) == 130  # as Ctrl-C
    assert {name: (out / name).read_bytes() for name in outputs.OUTPUTS} == before  # the old set, whole


def test_a_lost_cluster_is_one_line_and_the_stored_weeks_stay(tmp_path, monkeypatch, capsys):
    """A Dask scheduler killed during tune lost every run: that once ended in ``min() arg is an empty
    sequence`` and 61 lines (issue 42, item 8); it is one line saying the weeks are stored."""
    from bftune.experiments.tune import engine

    simulate = engine.run_task

    def lost(task):  # as a dead scheduler's futures: every task of the race lost (the pilot runs here)
        if sys._getframe(1).f_code.co_name == "pilot":
            return simulate(task)
        raise ConnectionError("Scheduler connection lost\nsecond line")

    monkeypatch.setattr(engine, "run_task", lost)
    assert main(["tune", *QUICK, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "were lost (ConnectionError: Scheduler connection lost)" in err, err
    assert "run the same command again to resume" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_report_opens_with_the_replay_of_the_log(tmp_path):
    """A log whose machine waited three times longer than EASY-FCFS simulated: the verdict is "far", said
    first in report.html (read by headless Chromium), in recommendation.json and in the notes (issue 38)."""
    import dataclasses

    from bftune.experiments.runs.local import run_local
    from bftune.experiments.runs.metrics import merged_runs
    from bftune.experiments.runs.outjobs import runs_columns

    trace = generate(4000, 16, seed=1)
    _, result = run_local(trace, SchedulerConfig.from_options({}))
    jobs = merged_runs(runs_columns(result.runs))
    waits = {int(name): wait for name, wait in zip(jobs["job"], jobs["wait"])}
    log = tmp_path / "log.swf"
    write_swf(trace.with_jobs([dataclasses.replace(j, wait=3 * waits[j.id] + 600) for j in trace.jobs]), log)
    argv = QUICK[4:]  # without --synthetic N --procs M
    assert main(["tune", "--trace", str(log), *argv, "--out", str(tmp_path / "o")]) == 0
    record = _record(tmp_path / "o")
    assert record["replay"]["verdict"] == "far" and "warning" in record["replay"]
    assert record["data"]["replay"]["jobs"] == 4000
    assert record["data"]["notes"][0].startswith("replay: the simulator does NOT reproduce this machine")
    profile = tempfile.mkdtemp(dir=tmp_path)
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", f"--user-data-dir={profile}", "--dump-dom",
                          (tmp_path / "o" / "report.html").as_uri()],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert dom.returncode == 0, dom.stderr[-2000:]
    first_section = dom.stdout.split("<h2")[1]
    assert "Does the simulator reproduce this machine?" in first_section and "<b>far</b>" in first_section
    assert "EASY-FCFS on the whole log" in first_section
