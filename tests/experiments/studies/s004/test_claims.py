"""Study 004's Section 6 claims, set beside ours from hand-made stored runs."""

from __future__ import annotations

import pandas as pd
from bftune.experiments.studies.s004 import claims


def test_figure8_sets_the_class_extremes_beside_the_caption():
    rows = [("KTH-SP2", "FCFS", "small", 50.0, 20.0), ("KTH-SP2", "FCFS", "large", 4.0, 3.0),
            ("KTH-SP2", "SAF", "small", 20.0, 22.0), ("KTH-SP2", "SAF", "large", 2.0, 2.5)]
    classes = pd.DataFrame([{"trace": t, "policy": p, "class": c, "variant": v, "avg_bsld": b}
                            for t, p, c, base, rf in rows for v, b in (("base", base), ("rf", rf))])
    text = claims.figure8(classes)
    assert "the small jobs' by up to 60.0 % (KTH-SP2 FCFS), and the large jobs' rises by at most 25.0 % " \
           "(KTH-SP2 SAF)." in text
    assert claims.figure8(classes[classes["class"] == "small"]) == ""
    assert claims.figure8(None) == ""


def test_section65_compares_the_two_clairvoyant_baselines():
    sums = {("SPF", "base"): 100.0, ("SPF", "class-clairvoyant"): 80.0, ("SPF", "runtime-clairvoyant"): 60.0,
            ("SAF", "base"): 100.0, ("SAF", "class-clairvoyant"): 70.0, ("SAF", "runtime-clairvoyant"): 75.0}
    main = pd.DataFrame([{"trace": "KTH-SP2", "policy": p, "variant": v, "sum_bsld": b} for (p, v), b in sums.items()])
    text = claims.section65(main)
    assert "KTH-SP2 20.0 % against 13 %" in text
    assert ("in ours runtime-clairvoyant is ahead in 1 of 2 trace x policy, by -5.0 to 20.0 points (most on "
            "KTH-SP2 SPF).") in text
