"""Study 004's report, section by section, from hand-made stored runs; its plan."""

from __future__ import annotations

from pathlib import Path

import pytest
from bftune.experiments.studies.s004 import acceptance, claims, plan, report, stored, table7
from bftune.workloads.archive import data_dir
from locations import SHARED_WORKLOADS

import tomllib

needs_shared = pytest.mark.skipif(not (SHARED_WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").exists(),
                                  reason="the ../shared workload archive is missing")


def test_paper_plan_uses_the_preset_and_the_ablation():
    plans = {p.name: tomllib.loads(p.config) for p in plan.plan("paper")}
    assert plans["main"]["classification"]["preset"] == "study004"
    assert plans["main_large"]["classification"]["variants"] == ["base", "rf", "class-clairvoyant"]
    assert {name for name in plans if name.startswith("abl_")} == {a[0] for a in plan.ABLATION}
    assert plans["abl_keep_overruns_live"]["workload"]["cleaning"] == "keep-overruns"
    # the text's weekly features, decoupled pipeline and weekly divider also on SDSC-BLUE (the trace whose
    # classifier errs less than the published one), and the safeguard's timing on every trace
    blue = [name for name, config in plans.items()
            if any("SDSC-BLUE" in t for t in config["classification"]["traces"]) and name.startswith("abl_")]
    assert sorted(blue) == sorted(["abl_converter_weekly", "abl_divider_week", "abl_safeguard_weekly",
                                   "abl_study004_text", *plan.MISS_READINGS])
    # the readings of issue 30 run on the cells that miss: FCFS and SAF on the main traces, SPF on SDSC-BLUE
    for name in plan.MISS_READINGS:
        section = plans[name]["classification"]
        assert section["policies"] == ["FCFS", "SAF"]
        assert section["trace_policies"] == {"SDSC-BLUE-2000-4.2-cln": ["SPF"]}
        assert ("class-clairvoyant" in section["variants"]) == (name in ("abl_threshold_20h",
                                                                         "abl_kill_current_divider"))
    assert plans["abl_categorical"]["classification"]["categorical_features"] == "request"
    assert plans["abl_kill_current_divider"]["classification"]["safeguard_divider"] == "current"
    assert plans["easypp"]["classification"]["variants"] == ["base", "easy++", "avg2"]
    # the safeguard's timing, tested on every trace x policy (the claim it bears on)
    weekly = plans["abl_safeguard_weekly"]["classification"]
    assert weekly["safeguard_period"] == "1w" and weekly["variants"] == ["base", "rf"]
    assert weekly["policies"] == ["FCFS", "WFP3", "SPF", "SAF"] and len(weekly["traces"]) == 5


@pytest.mark.slow
@needs_shared
def test_the_report_of_an_empty_directory_says_nothing_is_stored(tmp_path):
    assert "Traces run: none yet" in report.report(tmp_path, "quick", data_dir())


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


def test_acceptance_rows_name_each_miss_and_its_evidence(tmp_path):
    _write_study004_runs(tmp_path)
    text = acceptance.acceptance(tmp_path, "paper", stored.runs(tmp_path, "main"),
                                stored.quality(tmp_path, "main"), ["KTH-SP2"])
    assert ("| Tables 5-6 within 5 points, reading A (Table 5's precision and recall swapped) | met | 5 of 5 | - "
            "| - |") in text
    # reading B (Table 6's names swapped): precision 79, recall 90, FS/all 9.27, FL/all 4.03 - all four move out
    assert ("| Tables 5-6 within 5 points, reading B (Table 6's false large and false small swapped) | **not met** "
            "| 1 of 5 | KTH-SP2 precision +11.00; KTH-SP2 recall -11.00; KTH-SP2 FS/all -5.27; KTH-SP2 FL/all "
            "+5.27 | the reading, not the classifier: against reading A these cells change sides: KTH-SP2 FL/all "
            "in -> out;") in text
    # SPF-CI: (100 - 80) / 100 = 20 % against 59 %; class-clairvoyant 70 % reaches it; FCFS-CI 50 % on the mark
    assert ("| Table 7 within 10 points | **not met** | 1 of 2; 1 of 2 below the published value, 0 above; mean "
            "-19.5 points (-39.0 to +0.0) | KTH-SP2 SPF-CI -39.0 | perfect classes "
            "(class-clairvoyant) recover 50.0 points of these; they reach the published values") in text
    # Section 6.1's ranges, cell by cell: FCFS 50 % within 33-79, SPF -33.3 % below 3-32
    assert ("| rf within Section 6.1's range per policy (FCFS 33-79 %, SPF 3-32 %, SAF 10-51 %) | **not met** | 1 "
            "of 2 | KTH-SP2 SPF -33.3 % (below 3-32) | 1 below the published range, 0 above it") in text
    assert ("| rf improves AVGbsld for every trace x policy | **not met** | 1 of 2 | KTH-SP2 SPF -33.3 % "
            "(no safeguard +8.3 %) | the safeguard's kills: without them 1 of 1 improve") in text
    assert "| class-clairvoyant at least as good as rf | met | 2 of 2 | - | - |" in text
    assert "Quick scale" not in text
    assert "Quick scale" in acceptance.acceptance(tmp_path, "quick", None, None, [])
    assert "| Table 7 within 10 points | not measured | 0 of 0 |" in acceptance.acceptance(tmp_path, "quick", None,
                                                                                          None, [])


@pytest.mark.slow
def test_a_classifier_better_than_published_is_set_beside_the_weekly_ablation(tmp_path):
    _write_study004_runs(tmp_path)
    # live features: accuracy 92, precision 95, recall 89 (Table 5-6 standard reading for KTH-SP2: 86, 90, 79)
    _write_quality(tmp_path, "main", "1000,400,21,520,59,0.92,0.95,0.87")
    main, quality = stored.runs(tmp_path, "main"), stored.quality(tmp_path, "main")
    text = acceptance.acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert "KTH-SP2: our classifier errs less than the published one |" in text  # no ablation stored: no claim
    _write_quality(tmp_path, "abl_converter_weekly", "1000,350,40,517,93,0.867,0.897,0.790")
    text = acceptance.acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert ("with the study's weekly features instead of live ones (`abl_converter_weekly`) KTH-SP2 reads "
            "accuracy +0.7, precision -0.3, recall +0.0, FS/all +0.0, FL/all +0.0 (5 of 5 within): "
            "`abl_converter_weekly` accounts for the gap") in text
    # the text's other readings, when run on that trace, are set beside it; if none meets all five cells, none
    # is said to account for the gap
    _write_quality(tmp_path, "abl_converter_weekly", "1000,350,40,517,93,0.867,0.80,0.790")
    _write_quality(tmp_path, "abl_divider_week", "1000,350,40,517,93,0.90,0.90,0.86")
    text = acceptance.acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert "(`abl_converter_weekly`) KTH-SP2 reads accuracy +0.7, precision -10.0," in text
    assert ("; with the text's divider over the last week (`abl_divider_week`) KTH-SP2 reads accuracy +4.0, "
            "precision +0.0, recall +7.0") in text
    assert "(4 of 5 within): no documented reading meets all five, each misses at least one" in text
    assert "accounts for the gap" not in text


@pytest.mark.slow
@needs_shared
def test_easy_plus_plus_checks_the_base_and_names_it_where_perfect_classes_fall_short(tmp_path):
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
    text = report.report(tmp_path, "paper", data_dir())
    assert "| KTH-SP2 | 60.0 | 50.0 | 45.0 | - | 23 | +37.0 | 36 | 20.0 | 30.0 | 50 |" in text
    assert ("On KTH-SP2 (45.0 to 60.0 % against 23 %), EASY++ gains nothing like what the study measured under any "
            "of the three job sets") in text
    assert ("lie beyond even perfect classes and no classifier setting tested accounts for them; there EASY++, "
            "which has no classifier, gains KTH-SP2 60.0 % against the study's 23 % (Tsafrir et al.'s own: 36 %) "
            "over EASY-FCFS") in text
    # the original authors' figure (36 %): the default job set (45.0) is the closest of ours, within 10 points;
    # the study's own EASY++ (23 %) is not
    assert ("on the default job set: within 10 points on 1 of 1 traces, below on 0 (KTH-SP2 45.0 against 36 %). The "
            "study's own EASY++ lies within 10 points of it on 2 of 4 traces (not on KTH-SP2 23 against 36 %, "
            "CTC-SP2 1 against 37 %)") in text
    assert "agree with the original authors'" not in text
    # within 10 points on the study's job set: no such claim
    (tmp_path / "campaigns" / "easypp" / "runs.csv").write_text(
        "trace,policy,variant,status,avg_bsld,sum_bsld\n"
        "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\nKTH-SP2-1996-2.1-cln,FCFS,easy++,ok,1.0,80.0\n")
    (tmp_path / "campaigns" / "easypp_spec" / "runs.csv").write_text(
        "trace,policy,variant,status,avg_bsld,sum_bsld\n"
        "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,100.0\nKTH-SP2-1996-2.1-cln,FCFS,easy++,ok,1.0,90.0\n")
    text = report.report(tmp_path, "paper", data_dir())
    assert "gains nothing like" not in text and "On KTH-SP2 ours lies within 10 points" in text
    # no job set of ours within 10 points of the original authors' 36 % (20, 50, 10 %): the closest (50) named, no
    # conclusion drawn
    assert ("on overruns killed at walltime: within 10 points on 0 of 1 traces, below on 0 (KTH-SP2 50.0 against "
            "36 %)") in text
    assert "there EASY++" not in text


@pytest.mark.slow
def test_gap_text_takes_its_figures_from_the_ablation(tmp_path):
    _write_study004_runs(tmp_path)
    # the default job set: EASY-FCFS's AVGbsld 5.0 where the preset's is 10.0; weekly features: accuracy 80 vs 86
    spec = tmp_path / "campaigns" / "abl_spec"
    spec.mkdir(parents=True)
    (spec / "runs.csv").write_text("trace,policy,variant,status,avg_bsld,sum_bsld\n"
                                   "KTH-SP2-1996-2.1-cln,FCFS,base,ok,5.0,50.0\n")
    _write_quality(tmp_path, "abl_converter_weekly", "1000,300,50,500,150,0.80,0.86,0.67")
    text = report._gaps(tmp_path)
    assert "against the default job set by KTH-SP2 x2.00" in text
    # the weekly features' accuracy against Table 5, trace by trace (80.0 against 86: not within a point)
    assert ("With lag and aggregate features frozen at the weekly retraining - what the study's text says it did - "
            "accuracy is 80.0 against 86 (KTH-SP2, -6.0) (`abl_converter_weekly`), and not on KTH-SP2. Live "
            "features (the jobs finished by each submission) raise it by 6.0 points on the same job set.") in text
    assert "The published accuracy needs that freshness" not in text
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
            "45.0 -> 60.0 % (published FCFS-CI 50 %)") in report._gaps(tmp_path)
    assert "the main campaign's `classes.csv` shows it per reference class" in text
    (tmp_path / "campaigns" / "main" / "classes.csv").write_text(
        "trace,policy,variant,class,jobs,avg_bsld\n"
        + "".join(f"KTH-SP2-1996-2.1-cln,SAF,{v},small,10,{b}\nKTH-SP2-1996-2.1-cln,SAF,{v},large,10,1.0\n"
                  for v, b in (("base", 20.0), ("rf", 24.5), ("rf-no-safeguard", 19.25))))
    assert ("KTH-SP2 SAF, reference-small AVGbsld: base 20.0, rf 24.5, rf-no-safeguard 19.2"
            in report._gaps(tmp_path))
    empty = report._gaps(tmp_path / "none")
    assert "the paper-scale ablation measures by how much" in empty and "x2.00" not in empty


def test_section65_and_restarted_share_are_set_beside_the_published_figures(tmp_path):
    _write_study004_runs(tmp_path)
    main = stored.runs(tmp_path, "main")
    text = claims.per_policy(main, ["KTH-SP2"])
    # SPF: base 60, class-clairvoyant 30 -> 50 % against Section 6.5's 13 %; SDSC-SP2 not stored: not named
    assert "Section 6.5 gives class-clairvoyant over base SPF where perfect classes help least; ours: " \
           "KTH-SP2 50.0 % against 13 %." in text
    assert "Section 6.4" not in text.split("Section 6.5")[1]  # no kill counts stored: no restart share
    main["jobs"] = 1000
    main["killed_jobs"] = [0, 30, 0, 0, 45, 0, 0]  # the two rf rows: FCFS 3.0 %, SPF 4.5 %
    text = claims.per_policy(main, ["KTH-SP2"])
    assert ("at 2-4 % of all jobs at most (its own Table 6 gives false small shares of 4.0 % on these traces); "
            "our `rf` runs restart, in % of the jobs, over the policies: KTH-SP2 3.0-4.5.") in text


def test_ablation_table_names_each_trace_of_the_preset_once(tmp_path):
    _write_study004_runs(tmp_path)
    rows = [line for line in report._ablation(tmp_path).splitlines() if line.startswith("|")]
    preset = []
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] and not cells[0].startswith("preset"):
            break
        preset.append(cells[1])
    assert len(preset) == len(set(preset)) and "SDSC-BLUE" in preset and "HPC2N" in preset


def test_error_costs_split_table7_cells_by_the_kind_of_error(tmp_path):
    _write_study004_runs(tmp_path)
    main, quality = stored.runs(tmp_path, "main"), stored.quality(tmp_path, "main")
    assert "Not run at this scale" in table7.error_costs(tmp_path, main, quality)
    folder = tmp_path / "campaigns" / table7.ERROR_KINDS
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
    text = table7.error_costs(tmp_path, main, quality)
    assert "| KTH-SP2 | FCFS-CI | 50.0 | 52.0 | 58.0 | 60.0 | 50 | 4.0 | 4.0 | 9.3 | 9.3 | - | - |" in text
    # which jobs are false large, where the rf run stored it
    (tmp_path / "campaigns" / "main" / "classification.csv").write_text(
        "trace,policy,variant,scope,n,tp,fp,tn,fn,accuracy,precision,recall,fl_median_over_divider,fl_under_60s\n"
        "KTH-SP2-1996-2.1-cln,FCFS,rf,overall,1000,350,40,517,93,0.86,0.90,0.79,0.228,0.324\n")
    quality = stored.quality(tmp_path, "main")
    text = table7.error_costs(tmp_path, main, quality)
    assert "| KTH-SP2 | FCFS-CI | 50.0 | 52.0 | 58.0 | 60.0 | 50 | 4.0 | 4.0 | 9.3 | 9.3 | 0.23 | 32.4 |" in text
    assert "| KTH-SP2 | SPF-CI | 20.0 | 25.0 | 65.0 | 70.0 | 59 |" in text
    assert ("Correcting the false large classes raises rf, and by more than correcting the false small ones, in 2 of 2 "
            "cells (KTH-SP2 FCFS-CI, KTH-SP2 SPF-CI): the cost of our learned classifier lies mostly in the small "
            "jobs") in text
    assert "lowers it" not in text  # every correction raises rf here
    assert "differs from the published one (Table 6, standard reading) by 0.0 points" in text
    # a correction that lowers rf is said, and the cell does not count as recovered by it
    runs = (folder / "runs.csv").read_text().replace("KTH-SP2-1996-2.1-cln,SPF,rf-no-false-large,ok,3.5,35.0",
                                                     "KTH-SP2-1996-2.1-cln,SPF,rf-no-false-large,ok,8.2,82.0")
    (folder / "runs.csv").write_text(runs)
    lowered = table7.error_costs(tmp_path, main, quality)
    assert "in 1 of 2 cells (KTH-SP2 FCFS-CI); correcting the false large classes lowers it on KTH-SP2 SPF-CI (-2.0)" \
        in lowered
    (folder / "runs.csv").write_text(runs.replace(",8.2,82.0", ",3.5,35.0"))
    accept = acceptance.acceptance(tmp_path, "paper", main, quality, ["KTH-SP2"])
    assert ("recover 50.0 points of these (correcting only the false large classes: 45.0; only the false small "
            "ones: 5.0; section \"What the classifier's errors cost\")") in accept
