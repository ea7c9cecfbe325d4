"""Study 002's Table 2 beside our fits: read from the stored fits, while learn-index's own output names no study."""

from __future__ import annotations

import json

import numpy as np
from bftune.experiments.studies.s002 import table2
from bftune.learning.index import regression as rg
from bftune.learning.index.report import markdown

COLLECTION = {"source": "synthetic", "windows": 2, "trials": 10, "procs": 64, "warmup": 16, "queue": 32, "seed": 1,
              "tau": 10.0}


def _fits():
    rng = np.random.default_rng(5)
    p, q, r = np.exp(rng.uniform(0, 11, 300)), rng.integers(1, 65, 300).astype(float), rng.uniform(0, 3e4, 300)
    # Lin's signs: + constant, + p, - q, + r (the study's: +, +, +, -)
    return rg.fit_all(p, q, r, 0.03 + 1e-7 * p - 2e-5 * q + 1e-9 * r, {"collection": COLLECTION})


def test_the_study_columns_come_from_the_stored_fits_and_the_published_file(tmp_path):
    fits = _fits()
    (tmp_path / "fits").mkdir()
    assert table2.load(tmp_path) is None  # nothing stored yet
    for fit in fits:
        (tmp_path / "fits" / f"{fit.family}.json").write_text(json.dumps(fit.to_json()))
    text = table2.markdown(table2.load(tmp_path))
    assert "Score collection: source synthetic, 2 windows of |S| = 16 + |Q| = 32 jobs, 10 trials each, m = 64, " \
           "tau = 10.0 s, seed 1; 300 rows (the study: 14081)." in text
    lin = fits[0]
    assert (f"| Lin | 4 | {lin.mae:.3e} | 4.480e-03 | {rg.format_number(max(lin.vif.values()))} | 2/4 |") in text
    assert f"| p | {lin.coefficients[1]:.3g} / 1.15e-07 |" in text
    assert f"| {rg.format_number(lin.vif['p'])} / 1.3 |" in text
    assert "| p*q^3 | – | – | – |" in text  # only Qua has the quartic terms


def test_learn_index_output_names_no_study():
    text = markdown(_fits(), COLLECTION)
    assert "study" not in text.lower() and "14081" not in text and "0.0324" not in text
    assert "| Lin | 4 |" in text and "300 rows." in text
