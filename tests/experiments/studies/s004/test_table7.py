"""Study 004's Table 7 and its two checks (kinds of classifier error, EASY++), from hand-made stored runs."""

from __future__ import annotations

from pathlib import Path

from bftune.experiments.studies.s004 import stored, table7

KTH = "KTH-SP2-1996-2.1-cln"
CTC = "CTC-SP2-1996-3.1-cln"


def _runs(folder: Path, rows: list[tuple[str, str, str, float]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["trace,policy,variant,status,avg_bsld,sum_bsld,sum_bsld_rows,sum_bsld_resubmitted"]
    lines += [f"{t},{p},{v},ok,{s / 10},{s},{s},{s}" for t, p, v, s in rows]
    (folder / "runs.csv").write_text("\n".join(lines) + "\n")


def test_table7_sets_ours_beside_the_published_cell_and_the_class_clairvoyant_bound(tmp_path):
    _runs(tmp_path / "campaigns" / "main", [(KTH, "FCFS", "base", 100.0), (KTH, "FCFS", "rf", 60.0),
                                            (KTH, "FCFS", "class-clairvoyant", 45.0), (KTH, "SPF", "rf", 30.0)])
    text = table7.table7(stored.runs(tmp_path, "main"), ["KTH-SP2", "HPC2N"])
    # rf 40 % against the published 50 %, class-clairvoyant 55 %; SPF-CI over EASY-FCFS: 70 % against 59 %
    assert "| KTH-SP2 | FCFS-CI | 40.0 | 50 | -10.0 | 40.0 | 40.0 | 55.0 |" in text
    assert "| KTH-SP2 | SPF-CI | 70.0 | 59 | +11.0 |" in text
    assert "HPC2N" not in text  # not in Table 7


def test_easy_plus_plus_is_set_beside_the_original_authors_job_set_by_job_set(tmp_path):
    # original authors (Table 7's brackets): KTH-SP2 36 %, CTC-SP2 37 %; the study's own: 23 % and 1 %
    gains = {"easypp": (10.0, 80.0), "easypp_keep_overruns": (30.0, 45.0), "easypp_spec": (40.0, 35.0)}
    for name, (kth, ctc) in gains.items():
        _runs(tmp_path / "campaigns" / name, [(KTH, "FCFS", "base", 100.0), (KTH, "FCFS", "easy++", 100.0 - kth),
                                              (CTC, "FCFS", "base", 100.0), (CTC, "FCFS", "easy++", 100.0 - ctc)])
    all_gains = table7.easy_plus_plus_gains(tmp_path)
    assert all_gains["KTH-SP2"] == [10.0, 30.0, 40.0] and all_gains["SDSC-SP2"] == [None, None, None]
    text = table7.easy_plus_plus(tmp_path, stored.runs(tmp_path, "main"))
    assert "| KTH-SP2 | 10.0 | 30.0 | 40.0 | - | 23 | -13.0 | 36 |" in text  # avg2 alone not stored
    # every job set is stated, with its side: no job set is said to "agree" with the original authors
    assert ("our EASY++ lies, on converter's job set: within 10 points on 0 of 2 traces, below on 1 (KTH-SP2 10.0 "
            "against 36 %, CTC-SP2 80.0 against 37 %); on overruns killed at walltime: within 10 points on 2 of 2 "
            "traces, below on 1") in text
    assert ("on the default job set: within 10 points on 2 of 2 traces, below on 1 (KTH-SP2 40.0 against 36 %, CTC-SP2 "
            "35.0 against 37 %)") in text
    assert "The study's own EASY++ lies within 10 points of it on 2 of 4 traces (not on KTH-SP2 23 against 36 %" in text
    assert "agree" not in text
    # EASY++ as the study's text describes it (avg2 predictions, FCFS backfilling) gets its own column
    _runs(tmp_path / "campaigns" / "easypp", [(KTH, "FCFS", "base", 100.0), (KTH, "FCFS", "easy++", 90.0),
                                              (KTH, "FCFS", "avg2", 95.0)])
    assert "| KTH-SP2 | 10.0 | 30.0 | 40.0 | 5.0 | 23 | -13.0 | 36 |" in table7.easy_plus_plus(tmp_path, None)


def test_table7_states_its_bias_not_only_its_pass_count(tmp_path):
    _runs(tmp_path / "campaigns" / "main", [(KTH, "FCFS", "base", 100.0), (KTH, "FCFS", "rf", 55.0),
                                            (KTH, "SPF", "rf", 45.0), (CTC, "FCFS", "base", 100.0),
                                            (CTC, "FCFS", "rf", 40.0), (CTC, "SPF", "rf", 20.0)])
    # KTH-SP2 45 - 50 = -5, 55 - 59 = -4; CTC-SP2 60 - 79 = -19, 80 - 85 = -5: all four below, mean -8.25
    text = table7.table7(stored.runs(tmp_path, "main"), ["KTH-SP2", "CTC-SP2"])
    assert ("Ours lies below the published value in 4 of 4 cells and above it in 0 (mean -8.2 points, -19.0 to "
            "-4.0); 3 of 4 lie within 10 points.") in text


def test_error_kinds_not_run_says_so(tmp_path):
    assert table7.error_parts(tmp_path, None) == {}
    assert f"Not run at this scale (campaign `{table7.ERROR_KINDS}`" in table7.error_costs(tmp_path, None, None)
