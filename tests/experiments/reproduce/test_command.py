"""bftune reproduce: the studies' plans are valid campaigns, the command runs, resumes and reports."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.cli import main
from bftune.experiments.reproduce import (claims004, command, registry, stored004, study000, study001, study002,
                                          study004, table7004)
from bftune.experiments.studies import s003 as study003
from bftune.experiments.reproduce.registry import SCALES, STUDIES
from bftune.experiments.reproduce.study import CampaignPlan, Study, SHARED_WORKLOADS
from locations import SHARED

import tomllib

needs_shared = pytest.mark.skipif(not (SHARED / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz").exists(),
                                  reason="the ../shared workload archive is missing")


@needs_shared
@pytest.mark.parametrize("module", [study000, study001, study002, study003, study004],
                         ids=["000", "001", "002", "003", "004"])
@pytest.mark.parametrize("scale", SCALES)
def test_every_planned_campaign_is_a_valid_config(module, scale):
    plans = module.STUDY.plan(scale)
    assert plans and len({p.name for p in plans}) == len(plans)
    for plan in plans:
        campaign = campaign_from_dict(tomllib.loads(plan.config), f"{plan.name}.toml", plan.config)
        assert campaign.specs
        for spec in campaign.specs:
            assert spec.trace_path is None or Path(spec.trace_path).is_relative_to(SHARED_WORKLOADS)


@needs_shared
def test_study004_paper_plan_uses_the_preset_and_the_ablation():
    plans = {p.name: tomllib.loads(p.config) for p in study004.plan("paper")}
    assert plans["main"]["classification"]["preset"] == "study004"
    assert plans["main_large"]["classification"]["variants"] == ["base", "rf", "class-clairvoyant"]
    assert {name for name in plans if name.startswith("abl_")} == {a[0] for a in study004.ABLATION}
    assert plans["abl_keep_overruns_live"]["workload"]["cleaning"] == "keep-overruns"
    # the text's weekly features, decoupled pipeline and weekly divider also on SDSC-BLUE (the trace whose
    # classifier errs less than the published one), and the safeguard's timing on every trace
    blue = [name for name, config in plans.items()
            if any("SDSC-BLUE" in t for t in config["classification"]["traces"]) and name.startswith("abl_")]
    assert sorted(blue) == ["abl_converter_weekly", "abl_divider_week", "abl_safeguard_weekly", "abl_study004_text"]
    # the safeguard's timing, tested on every trace x policy (the claim it bears on)
    weekly = plans["abl_safeguard_weekly"]["classification"]
    assert weekly["safeguard_period"] == "1w" and weekly["variants"] == ["base", "rf"]
    assert weekly["policies"] == ["FCFS", "WFP3", "SPF", "SAF"] and len(weekly["traces"]) == 5


def test_every_registered_study_loads():
    for number, (module, _) in STUDIES.items():
        assert module is not None and command.load_study(number).number == number


def test_a_study_without_a_module_says_so_and_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(registry.STUDIES, "004", (None, "a study not implemented"))
    assert main(["reproduce", "004", "--out", str(tmp_path / "r")]) == 2
    assert "study 004" in capsys.readouterr().err and not (tmp_path / "r" / "report.md").exists()


def test_reports_of_empty_directories_say_nothing_is_stored(tmp_path):
    assert "Traces run: none yet" in study004.STUDY.report(tmp_path, "quick")
    assert "Traces run: none yet" in study001.STUDY.report(tmp_path, "quick")
    text = study000.STUDY.report(tmp_path, "quick")
    assert "| KTH-SP2 | - | - | - | 29 | - |" in text  # published value beside an empty cell, nothing invented
    assert "Not run yet" in study003.STUDY.report(tmp_path, "quick")
    assert "Not collected yet" in study002.STUDY.report(tmp_path, "quick")


TINY = """[campaign]
kind = "classification"
name = "tiny"
seed = 3

[classification]
traces = ["synthetic:600:16:2"]
policies = ["FCFS"]
variants = ["base", "class-clairvoyant"]
"""


def _tiny_report(out: Path, scale: str) -> str:
    runs = (out / "campaigns" / "tiny" / "runs.csv").read_text().splitlines()
    return f"{len(runs) - 1} runs stored at scale {scale}"


def test_run_study_then_resume_then_report_only(tmp_path, monkeypatch):
    extra_calls = []

    def extra(scale, out, execution):
        extra_calls.append((scale, execution.workers, execution.progress))
        return ["extra done"]

    tiny = Study("999", "a tiny study", "none.txt", plan=lambda scale: [CampaignPlan("tiny", TINY)],
                 report=_tiny_report, extra=extra, durations={"quick": "seconds"})
    monkeypatch.setattr(command, "load_study", lambda number: tiny)
    out = tmp_path / "r"
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    report = (out / "report.md").read_text()
    assert "2 runs stored at scale quick" in report and "Scale `quick` (seconds)" in report
    assert (out / "configs" / "tiny.toml").read_text() == TINY
    stored = sorted((out / "campaigns" / "tiny" / "runs").glob("*.json"))
    mtimes = [p.stat().st_mtime_ns for p in stored]
    # the same command resumes: nothing is run again
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert [p.stat().st_mtime_ns for p in stored] == mtimes
    assert extra_calls == [("quick", 1, False)] * 2
    (out / "report.md").unlink()
    assert main(["reproduce", "004", "--out", str(out), "--report-only"]) == 0
    assert extra_calls == [("quick", 1, False)] * 2 and (out / "report.md").exists()


def test_only_runs_the_named_campaigns_without_extra_steps(tmp_path, monkeypatch, capsys):
    extra_calls = []

    def extra(scale, out, execution):
        extra_calls.append(scale)
        return ["extra done"]

    other = TINY.replace('name = "tiny"', 'name = "other"')
    tiny = Study("999", "a tiny study", "none.txt",
                 plan=lambda scale: [CampaignPlan("tiny", TINY), CampaignPlan("other", other)],
                 report=_tiny_report, extra=extra, durations={"quick": "seconds"})
    monkeypatch.setattr(command, "load_study", lambda number: tiny)
    out = tmp_path / "r"
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress", "--only", "tiny"]) == 0
    assert "ran only tiny (--only); extra steps skipped" in capsys.readouterr().out
    assert (out / "campaigns" / "tiny" / "runs.csv").exists() and not (out / "campaigns" / "other").exists()
    assert extra_calls == [] and "2 runs stored" in (out / "report.md").read_text()
    for only, message in (("tiny,nope", "--only: unknown nope; study 999 at scale quick has tiny, other"),
                          (",", "--only: no campaign named")):
        assert main(["reproduce", "004", "--out", str(out), "--only", only, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert main(["reproduce", "004", "--out", str(out), "--only", "tiny", "--report-only"]) == 2
    assert "--only: runs campaigns, --report-only runs none" in capsys.readouterr().err
    assert not (out / "campaigns" / "other").exists()


def test_shard_runs_a_part_of_each_campaign_without_extra_steps(tmp_path, monkeypatch, capsys):
    extra_calls = []

    def extra(scale, out, execution):
        extra_calls.append(scale)
        return ["extra done"]

    tiny = Study("999", "a tiny study", "none.txt", plan=lambda scale: [CampaignPlan("tiny", TINY)],
                 report=_tiny_report, extra=extra, durations={"quick": "seconds"})
    monkeypatch.setattr(command, "load_study", lambda number: tiny)
    out = tmp_path / "r"
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress", "--shard", "1/2"]) == 0
    assert "ran shard 1/2 of each campaign (--shard" in capsys.readouterr().out
    assert len(list((out / "campaigns" / "tiny" / "runs").glob("*.json"))) == 1 and extra_calls == []
    assert "1 runs stored" in (out / "report.md").read_text()
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert extra_calls == ["quick"] and "2 runs stored" in (out / "report.md").read_text()
    assert main(["reproduce", "004", "--out", str(out), "--shard", "0/2", "--report-only"]) == 2
    assert "--shard: runs campaigns, --report-only runs none" in capsys.readouterr().err


def test_an_output_path_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["reproduce", "004", "--out", str(target), "--no-progress"]) == 2
    assert "not a directory" in capsys.readouterr().err


QUALITY_HEADER = "trace,policy,variant,scope,n,tp,fp,tn,fn,accuracy,precision,recall\n"


def _write_quality(out: Path, campaign: str, counts: str) -> None:
    """Campaign ``campaign``'s classifier report: one KTH-SP2 FCFS rf row of ``counts`` (n,tp,...,recall)."""
    folder = out / "campaigns" / campaign
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "classification.csv").write_text(QUALITY_HEADER + f"KTH-SP2-1996-2.1-cln,FCFS,rf,overall,{counts}\n")


def _write_study004_runs(out: Path) -> None:
    """A hand-made main campaign on KTH-SP2: classifier at Table 5-6's values, SPF made worse by the safeguard."""
    folder = out / "campaigns" / "main"
    folder.mkdir(parents=True)
    sums = {("FCFS", "base"): 100.0, ("FCFS", "rf"): 50.0, ("FCFS", "class-clairvoyant"): 40.0,
            ("SPF", "base"): 60.0, ("SPF", "rf"): 80.0, ("SPF", "rf-no-safeguard"): 55.0,
            ("SPF", "class-clairvoyant"): 30.0}
    lines = ["trace,policy,variant,status,avg_bsld,sum_bsld,sum_bsld_rows,sum_bsld_resubmitted"]
    lines += [f"KTH-SP2-1996-2.1-cln,{p},{v},ok,{s / 10},{s},{s},{s}" for (p, v), s in sums.items()]
    (folder / "runs.csv").write_text("\n".join(lines) + "\n")
    # Table 5-6 in the standard reading: accuracy 86, precision 90, recall 79, FS/all 4.0, FL/all 9.3
    _write_quality(out, "main", "1000,350,40,517,93,0.86,0.90,0.79")


def test_study004_acceptance_rows_name_each_miss_and_its_evidence(tmp_path):
    _write_study004_runs(tmp_path)
    text = study004._acceptance(tmp_path, "paper", stored004.runs(tmp_path, "main"),
                                stored004.quality(tmp_path, "main"), ["KTH-SP2"])
    assert "| Tables 5-6 within 5 points | met | 5 of 5 | - | - |" in text
    # SPF-CI: (100 - 80) / 100 = 20 % against 59 %; class-clairvoyant 70 % reaches it
    assert ("| Table 7 within 10 points | **not met** | 1 of 2 | KTH-SP2 SPF-CI -39.0 | perfect classes "
            "(class-clairvoyant) recover 50.0 points of these; they reach the published values") in text
    assert ("| rf improves AVGbsld for every trace x policy | **not met** | 1 of 2 | KTH-SP2 SPF -33.3 % "
            "(no safeguard +8.3 %) | the safeguard's kills: without them 1 of 1 improve") in text
    assert "| class-clairvoyant at least as good as rf | met | 2 of 2 | - | - |" in text
    assert "Quick scale" not in text
    assert "Quick scale" in study004._acceptance(tmp_path, "quick", None, None, [])
    assert "| Table 7 within 10 points | not measured | 0 of 0 |" in study004._acceptance(tmp_path, "quick", None,
                                                                                          None, [])


def test_study004_a_classifier_better_than_published_is_set_beside_the_weekly_ablation(tmp_path):
    _write_study004_runs(tmp_path)
    # live features: accuracy 92, precision 95, recall 89 (Table 5-6 standard reading for KTH-SP2: 86, 90, 79)
    _write_quality(tmp_path, "main", "1000,400,21,520,59,0.92,0.95,0.87")
    main, quality = stored004.runs(tmp_path, "main"), stored004.quality(tmp_path, "main")
    text = study004._acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert "KTH-SP2: our classifier errs less than the published one |" in text  # no ablation stored: no claim
    _write_quality(tmp_path, "abl_converter_weekly", "1000,350,40,517,93,0.867,0.897,0.790")
    text = study004._acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert ("with the study's weekly features instead of live ones (`abl_converter_weekly`) KTH-SP2 reads "
            "accuracy +0.7, precision -0.3, recall +0.0, FS/all +0.0, FL/all +0.0 (5 of 5 within): "
            "`abl_converter_weekly` accounts for the gap") in text
    # the text's other readings, when run on that trace, are set beside it; if none meets all five cells, none
    # is said to account for the gap
    _write_quality(tmp_path, "abl_converter_weekly", "1000,350,40,517,93,0.867,0.80,0.790")
    _write_quality(tmp_path, "abl_divider_week", "1000,350,40,517,93,0.90,0.90,0.86")
    text = study004._acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert "(`abl_converter_weekly`) KTH-SP2 reads accuracy +0.7, precision -10.0," in text
    assert ("; with the text's divider over the last week (`abl_divider_week`) KTH-SP2 reads accuracy +4.0, "
            "precision +0.0, recall +7.0") in text
    assert "(4 of 5 within): no documented reading meets all five: the published classifier lies between ours" in text
    assert "accounts for the gap" not in text


def test_study004_easy_plus_plus_checks_the_base_and_names_it_where_perfect_classes_fall_short(tmp_path):
    """Table 7's EASY++ column: ours per job set beside the study's; a Table 7 cell beyond class-clairvoyant
    on a trace where EASY++ is far from the study's names that evidence."""
    _write_study004_runs(tmp_path)
    main = tmp_path / "campaigns" / "main" / "runs.csv"
    # FCFS-CI on KTH-SP2: rf 20 %, class-clairvoyant 30 %, against the published 50 %
    main.write_text(main.read_text().replace("FCFS,rf,ok,5.0,50.0,50.0,50.0", "FCFS,rf,ok,8.0,80.0,80.0,80.0")
                    .replace("FCFS,class-clairvoyant,ok,4.0,40.0,40.0,40.0",
                             "FCFS,class-clairvoyant,ok,7.0,70.0,70.0,70.0"))
    gains = {"easypp": 60.0, "easypp_keep_overruns": 50.0, "easypp_spec": 45.0}  # published KTH-SP2: 23 %
    for name, gain in gains.items():
        folder = tmp_path / "campaigns" / name
        folder.mkdir(parents=True)
        easypp = 100.0 * (1 - gain / 100)
        folder.joinpath("runs.csv").write_text(
            "trace,policy,variant,status,avg_bsld,sum_bsld\n"
            f"KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\nKTH-SP2-1996-2.1-cln,FCFS,easy++,ok,1.0,{easypp}\n")
    report = study004.report(tmp_path, "paper")
    assert "| KTH-SP2 | 60.0 | 50.0 | 45.0 | 23 | +37.0 | 36 | 20.0 | 30.0 | 50 |" in report
    assert ("On KTH-SP2 (45.0 to 60.0 % against 23 %), EASY++ gains nothing like what the study measured under any "
            "of the three job sets") in report
    assert ("lie beyond even perfect classes and no classifier setting tested accounts for them; there EASY++, "
            "which has no classifier, gains KTH-SP2 60.0 % against the study's 23 % (Tsafrir et al.'s own: 36 %) "
            "over EASY-FCFS") in report
    # the original authors' figure (36 %): SPEC's job set (45.0) is the closest of ours, within 10 points;
    # the study's own EASY++ (23 %) is not
    assert ("ours on SPEC's job set lies within 10 points on 1 of 1 traces (KTH-SP2 45.0 against 36 %); the "
            "study's own EASY++ lies within 10 points of it on 2 of 4 (not on KTH-SP2 23 against 36 %, CTC-SP2 1 "
            "against 37 %). So on SPEC's job set our EASY and EASY++ agree with the original authors' figures") in report
    # within 10 points on the study's job set: no such claim
    (tmp_path / "campaigns" / "easypp" / "runs.csv").write_text(
        "trace,policy,variant,status,avg_bsld,sum_bsld\n"
        "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\nKTH-SP2-1996-2.1-cln,FCFS,easy++,ok,1.0,80.0\n")
    (tmp_path / "campaigns" / "easypp_spec" / "runs.csv").write_text(
        "trace,policy,variant,status,avg_bsld,sum_bsld\n"
        "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\nKTH-SP2-1996-2.1-cln,FCFS,easy++,ok,1.0,90.0\n")
    report = study004.report(tmp_path, "paper")
    assert "gains nothing like" not in report and "On KTH-SP2 ours lies within 10 points" in report
    # no job set of ours within 10 points of the original authors' 36 % (20, 50, 10 %): the closest (50) named, no
    # conclusion drawn
    assert "ours on overruns killed at walltime lies within 10 points on 0 of 1 traces (KTH-SP2 50.0 against 36 %)" in report
    assert "agree with the original authors'" not in report  # no conclusion without agreement
    assert "there EASY++" not in report


def test_study004_gap_text_takes_its_figures_from_the_ablation(tmp_path):
    _write_study004_runs(tmp_path)
    # SPEC's job set: EASY-FCFS's AVGbsld 5.0 where the preset's is 10.0; weekly features: accuracy 80 vs 86
    spec = tmp_path / "campaigns" / "abl_spec"
    spec.mkdir(parents=True)
    (spec / "runs.csv").write_text("trace,policy,variant,status,avg_bsld,sum_bsld\n"
                                   "KTH-SP2-1996-2.1-cln,FCFS,base,ok,5.0,50.0\n")
    _write_quality(tmp_path, "abl_converter_weekly", "1000,300,50,500,150,0.80,0.86,0.67")
    text = study004._gaps(tmp_path)
    assert "against SPEC's job set by KTH-SP2 x2.00" in text
    assert "accuracy is 6.0 points lower than with the classes of the jobs finished" in text
    assert "and 6.0 points below Table 5" in text
    # class-clairvoyant: FCFS 60 % >= 50 % published, SPF 70 % >= 59 %: nothing lies beyond it
    assert "class-clairvoyant reaches every published learned improvement" in text
    assert "`abl_divider_week` (the text's week) is not stored at this scale" in text
    # the text's week: rf 40 %, class-clairvoyant 45 % (base 100), accuracy 80 (Tables 5-6: 2 of 5 within 5
    # points) against the main campaign's 50 %, 60 % and 5 of 5
    week = tmp_path / "campaigns" / "abl_divider_week"
    week.mkdir(parents=True)
    (week / "runs.csv").write_text("trace,policy,variant,status,avg_bsld,sum_bsld\n"
                                   "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\n"
                                   "KTH-SP2-1996-2.1-cln,FCFS,rf,ok,6.0,60.0\n"
                                   "KTH-SP2-1996-2.1-cln,FCFS,class-clairvoyant,ok,5.5,55.0\n")
    _write_quality(tmp_path, "abl_divider_week", "1000,350,40,450,160,0.80,0.90,0.69")
    assert ("KTH-SP2: Tables 5-6 cells within 5 points 2 -> 5 of 5, rf 40.0 -> 50.0 %, class-clairvoyant "
            "45.0 -> 60.0 % (published FCFS-CI 50 %)") in study004._gaps(tmp_path)
    assert "the main campaign's `classes.csv` shows it per reference class" in text
    (tmp_path / "campaigns" / "main" / "classes.csv").write_text(
        "trace,policy,variant,class,jobs,avg_bsld\n"
        + "".join(f"KTH-SP2-1996-2.1-cln,SAF,{v},small,10,{b}\nKTH-SP2-1996-2.1-cln,SAF,{v},large,10,1.0\n"
                  for v, b in (("base", 20.0), ("rf", 24.5), ("rf-no-safeguard", 19.25))))
    assert ("KTH-SP2 SAF, reference-small AVGbsld: base 20.0, rf 24.5, rf-no-safeguard 19.2"
            in study004._gaps(tmp_path))
    empty = study004._gaps(tmp_path / "none")
    assert "the paper-scale ablation measures by how much" in empty and "x2.00" not in empty


def test_study001_claims_are_tested_on_both_tables(tmp_path):
    """A hand-made KTH-SP2 summary where the bandit's daily period is worse than its weekly one."""
    values = {"FCFS": 0.0, "SPF": -0.20, "random/1w": -0.04, "random/1d": -0.06, "full/1w": -0.16,
              "full/1d": -0.15, "noisy/1w": -0.16, "noisy/1d": -0.14, "bandit/1w": -0.10, "bandit/1d": -0.08}
    folder = tmp_path / "campaigns" / "KTH-SP2"
    folder.mkdir(parents=True)
    lines = ["strategy,family,rel_total_wait,resamples"]
    lines += [f"{k},{'fixed' if '/' not in k else 'selector'},{v},60" for k, v in values.items()]
    (folder / "summary_online.csv").write_text("\n".join(lines) + "\n")
    text = study001.STUDY.report(tmp_path, "paper")
    assert "the two agree on 3 of 4" in text
    # worst of full and noisy: -14 against the best fixed policy's -20: 6 points; the study's 16 - 11 = 5
    assert "| KTH-SP2 | full and noisy feedback: worst gap to the best fixed policy (points) | 6.0 | - | 5.0 | - |" \
        in text
    assert ("| KTH-SP2 | daily periods better than weekly for the bandit | no (-8.0 >= -10.0) | - "
            "| yes (-10.0 < -7.0) | **no** |") in text
    assert ("| KTH-SP2 | bandit between full feedback and random, weekly periods | yes (-16.0 < -10.0; -10.0 < -4.0) "
            "| - | yes (-12.0 < -7.0; -7.0 < -6.0) | yes |") in text


def test_study001_claim_intervals_come_from_paired_resamples():
    """Every resample: FCFS waits 100, bandit/1d 80, bandit/1w 90 -> the difference is -10 points in every draw;
    random/1d's difference varies with the draw (-20 or +20 points)."""
    rows = []
    for i in range(4):
        rows += [(i, "FCFS", 100.0), (i, "bandit/1d", 80.0), (i, "bandit/1w", 90.0),
                 (i, "random/1d", 70.0 if i % 2 else 110.0), (i, "random/1w", 90.0)]
    runs = pd.DataFrame(rows, columns=["resample", "strategy", "total_wait"])
    bandit, rand = (next(c for c in study001.CLAIMS if c.text.endswith(who)) for who in ("the bandit", "random"))
    assert study001._margins(runs, bandit) == "[-10.0, -10.0]"
    low, high = (float(x) for x in study001._margins(runs, rand).strip("[]").split(","))
    assert -20.0 <= low < 0.0 < high <= 20.0
    assert study001._margins(runs[runs["strategy"] != "FCFS"], bandit) == "-"
    assert study001._margins(None, bandit) == "-"


@needs_shared
@pytest.mark.parametrize("module", [study000, study001], ids=["000", "001"])
def test_cea_curie_runs_on_the_studys_machine_size(module):
    """Studies 000 and 001 list CEA-Curie with 80,640 cores; the shared file says MaxProcs 93,312."""
    plans = {p.name: tomllib.loads(p.config) for p in module.plan("paper")}
    assert plans["CEA-Curie"]["workload"]["procs"] == 80640
    assert all("procs" not in config["workload"] for name, config in plans.items() if name != "CEA-Curie")


def test_study004_section65_and_restarted_share_are_set_beside_the_published_figures(tmp_path):
    _write_study004_runs(tmp_path)
    main = stored004.runs(tmp_path, "main")
    text = claims004.per_policy(main, ["KTH-SP2"])
    # SPF: base 60, class-clairvoyant 30 -> 50 % against Section 6.5's 13 %; SDSC-SP2 not stored: not named
    assert "Section 6.5 gives class-clairvoyant over base SPF where perfect classes help least; ours: " \
           "KTH-SP2 50.0 % against 13 %." in text
    assert "Section 6.4" not in text.split("Section 6.5")[1]  # no kill counts stored: no restart share
    main["jobs"] = 1000
    main["killed_jobs"] = [0, 30, 0, 0, 45, 0, 0]  # the two rf rows: FCFS 3.0 %, SPF 4.5 %
    text = claims004.per_policy(main, ["KTH-SP2"])
    assert ("at 2-4 % of all jobs at most (its own Table 6 gives false small shares of 4.0 % on these traces); "
            "our `rf` runs restart, in % of the jobs, over the policies: KTH-SP2 3.0-4.5.") in text


def test_study004_ablation_table_names_each_trace_of_the_preset_once(tmp_path):
    _write_study004_runs(tmp_path)
    rows = [line for line in study004._ablation(tmp_path).splitlines() if line.startswith("|")]
    preset = []
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] and not cells[0].startswith("preset"):
            break
        preset.append(cells[1])
    assert len(preset) == len(set(preset)) and "SDSC-BLUE" in preset and "HPC2N" in preset


def test_study004_error_costs_split_table7_cells_by_the_kind_of_error(tmp_path):
    _write_study004_runs(tmp_path)
    main, quality = stored004.runs(tmp_path, "main"), stored004.quality(tmp_path, "main")
    assert "Not run at this scale" in table7004.error_costs(tmp_path, main, quality)
    folder = tmp_path / "campaigns" / table7004.ERROR_KINDS
    folder.mkdir(parents=True)
    # over EASY-FCFS (100): FCFS rf 50 %, no false small 52 %, no false large 58 %, class-clairvoyant 60 %;
    # SPF rf 20 %, 25 %, 65 %, 70 %
    (folder / "runs.csv").write_text(
        "trace,policy,variant,status,avg_bsld,sum_bsld\n"
        "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\n"
        "KTH-SP2-1996-2.1-cln,FCFS,rf-no-false-small,ok,4.8,48.0\n"
        "KTH-SP2-1996-2.1-cln,FCFS,rf-no-false-large,ok,4.2,42.0\n"
        "KTH-SP2-1996-2.1-cln,SPF,rf-no-false-small,ok,7.5,75.0\n"
        "KTH-SP2-1996-2.1-cln,SPF,rf-no-false-large,ok,3.5,35.0\n")
    text = table7004.error_costs(tmp_path, main, quality)
    assert "| KTH-SP2 | FCFS-CI | 50.0 | 52.0 | 58.0 | 60.0 | 50 | 4.0 | 4.0 | 9.3 | 9.3 | - | - |" in text
    # which jobs are false large, where the rf run stored it
    (tmp_path / "campaigns" / "main" / "classification.csv").write_text(
        "trace,policy,variant,scope,n,tp,fp,tn,fn,accuracy,precision,recall,fl_median_over_divider,fl_under_60s\n"
        "KTH-SP2-1996-2.1-cln,FCFS,rf,overall,1000,350,40,517,93,0.86,0.90,0.79,0.228,0.324\n")
    quality = stored004.quality(tmp_path, "main")
    text = table7004.error_costs(tmp_path, main, quality)
    assert "| KTH-SP2 | FCFS-CI | 50.0 | 52.0 | 58.0 | 60.0 | 50 | 4.0 | 4.0 | 9.3 | 9.3 | 0.23 | 32.4 |" in text
    assert "| KTH-SP2 | SPF-CI | 20.0 | 25.0 | 65.0 | 70.0 | 59 |" in text
    assert ("recovers more than correcting the false small ones in 2 of 2 cells (KTH-SP2 FCFS-CI, KTH-SP2 SPF-CI): "
            "the cost of our learned classifier lies mostly in the small jobs") in text
    assert "differs from the published one by 0.0 points" in text
    accept = study004._acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert ("recover 50.0 points of these (correcting only the false large classes: 45.0; only the false small "
            "ones: 5.0; section \"What the classifier's errors cost\")") in accept
