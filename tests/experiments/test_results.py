"""The one JSON rule of every file bftune writes (summary.json, compare.json, campaign files)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from bftune.experiments.runs.summary import jsonable, write_json


def test_nan_is_null_and_infinity_a_string(tmp_path):
    data = {"nan": math.nan, "inf": math.inf, "minus": -math.inf, "x": 1.5, 3: [np.float64(2.0), np.int64(4),
                                                                              np.bool_(True), (math.nan,)]}
    assert jsonable(data) == {"nan": None, "inf": "inf", "minus": "-inf", "x": 1.5, "3": [2.0, 4, True, [None]]}
    path = write_json(tmp_path / "x.json", data, indent=1)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text and text.endswith("\n")
    back = json.loads(text)
    assert back["nan"] is None and float(back["inf"]) == math.inf and float(back["minus"]) == -math.inf


def test_readers_get_the_values_back_through_a_table(tmp_path):
    """A campaign table built from such records reads back NaN and inf as floats."""
    rows = [jsonable({"a": math.nan, "b": math.inf}), jsonable({"a": 1.0, "b": 2.0})]
    (tmp_path / "t.csv").write_text(pd.DataFrame(rows).to_csv(index=False))
    df = pd.read_csv(tmp_path / "t.csv", keep_default_na=False, na_values=[""])
    assert math.isnan(df["a"][0]) and df["b"][0] == math.inf and df["b"].dtype == float
