"""Study 002's claims checked on a hand-made summary_index.csv: every figure stated is the one computed."""

from __future__ import annotations

import pandas as pd
from bftune.experiments.studies.s002 import claims

POLICIES = ["FCFS", "SAF", "F2", "Lin", "Qdr", "Cub", "Qua", "SPF"]


def summary(tmp_path):
    rows = [
        ("lublin", "lf", False, [100, 10, 12, 11, 90, 120, 50, 20]),
        ("archive", "T1", True, [40, 10, 11, 12, 30, 35, 38, 13]),
        ("archive", "T1", False, [400, 12, 13, 14, 60, 70, 76, 26]),
        ("archive", "T2", True, [40, 12, 11, 30, 20, 35, 38, 13]),
    ]
    frame = pd.DataFrame([dict(zip(["scenario", "source", "backfill"], r[:3]), **dict(zip(POLICIES, r[3])),
                               clock="window") for r in rows])
    frame.to_csv(tmp_path / "summary_index.csv", index=False)
    return claims.load(tmp_path)


def test_each_claim_states_ranks_and_ratios(tmp_path):
    table = summary(tmp_path)
    assert claims.lin_best(table) == ["lf: Lin ranks 2 of 8; Lin/SAF = 1.10, Lin/F2 = 0.92"]
    assert claims.complex_like_fcfs(table) == [
        "lf: Qdr ranks 6 of 8 (Qdr/FCFS = 0.90, Qdr/Lin = 8.2); Cub ranks 8 of 8 (Cub/FCFS = 1.20, Cub/Lin = 10.9); "
        "Qua ranks 5 of 8 (Qua/FCFS = 0.50, Qua/Lin = 4.5)"]
    assert claims.saf_f2_lin_best(table) == ["T1: SAF 1, F2 2, Lin 3 of 8", "T2: SAF 2, F2 1, Lin 5 of 8 (ahead of "
                                             "Lin: Qdr, SPF)", "the three best on 1 of 2 traces"]
    assert claims.backfilling_helps_fcfs(table) == ["T1: FCFS x10.0 (the 1. largest gain of 8; median gain x2.0)"]


def test_the_report_quotes_the_study_and_says_when_nothing_ran(tmp_path):
    summary(tmp_path)
    text = claims.markdown(tmp_path)
    assert text.count("| Figure ") == 4 and "consistently demonstrate superior performance" in text
    assert "Not run yet" in claims.markdown(tmp_path / "none")
