"""Reading study 004's stored campaign tables: short trace names, failed runs left out, the study's measure."""

from __future__ import annotations

from bftune.experiments.studies.s004 import stored


def test_runs_keep_ok_rows_under_short_names_and_improvement_is_the_studys_measure(tmp_path):
    folder = tmp_path / "campaigns" / "main"
    folder.mkdir(parents=True)
    (folder / "runs.csv").write_text(
        "trace,policy,variant,status,avg_bsld,sum_bsld\n"
        "KTH-SP2-1996-2.1-cln,FCFS,base,ok,10.0,200.0\n"
        "KTH-SP2-1996-2.1-cln,FCFS,rf,ok,6.0,120.0\n"
        "KTH-SP2-1996-2.1-cln,SPF,rf,failed,,\n"
        "synthetic:100:8,FCFS,base,ok,0.0,0.0\n")
    runs = stored.runs(tmp_path, "main")
    assert list(runs["trace"]) == ["KTH-SP2", "KTH-SP2", "synthetic:100:8"]  # unknown traces keep their label
    assert stored.improvement(runs, "KTH-SP2", "FCFS", "rf") == 40.0  # (200 - 120) / 200, cumulative bsld
    assert stored.improvement(runs, "KTH-SP2", "SPF", "rf") is None  # the failed run is not there
    assert stored.improvement(runs, "synthetic:100:8", "FCFS", "base") is None  # no base to divide by
    assert stored.runs(tmp_path, "absent") is None
    assert stored.both(stored.runs, tmp_path)["variant"].tolist() == ["base", "rf", "base"]


def test_span_reads_one_value_or_a_range_without_negative_zero():
    assert stored.span([]) == "-"
    assert stored.span([2.0, 2.04]) == "2.0"
    assert stored.span([-0.04, 3.0]) == "0.0 to 3.0"
