"""The published figures of study 004 (Zrigui et al., JPDC 2022) on the traces we have, and how Tables 5-6 read.

The figures are data, ``published.toml`` of this folder (transcribed from
``../shared/seeds/004_444fe9ecbecc8f85.txt``; KIT-FH2 and MetaCentrum2-zegox
are left out: not in the catalogue's shared copies); this module loads them
under the names the report uses.  Values are percentages as printed.

Reading Tables 5 and 6 (see ``REPRODUCTION.md`` of this folder): as printed,
they contradict each other (a false small rate FS/(FS+TS) of 6.29 % on
CTC-SP2 would make the precision TS/(TS+FS) 93.7 %, not the 82 % of Table 5).
They fit together only if Table 6's two rates are shares of *all* evaluated
jobs (then FL + FS = 100 - accuracy within 1 point on four of the five
traces, 2.6 on HPC2N) *and* one pair of names is swapped: either Table 5's
"Precision"/"Recall" columns or Table 6's "False Large"/"False Small" (with
either swap, TS/(TS+FL) and TS/(TS+FS) give back Table 5 within rounding,
3 points on HPC2N; the arithmetic cannot tell which).  The text points both
ways: Section 4.3.2 says FS "tends to be smaller than" FL and compares FS
with the underestimation rates of another method (5-8 %), which fits Table
6's names (A: Table 5's two columns swapped); Table 6's own caption ("7-11%
of Large jobs are misclassified while 4-8% of Small jobs are") and the
introduction's "precision ratio between 78% and 89%" (the printed "Precision"
column spans 78-90 over the seven traces, the printed "Recall" 77-91) fit
Table 5 as printed (B: Table 6's two names swapped).  A says the
study's classifier errs more often by delaying small jobs than by killing
large ones; B the reverse (7-11 % of the jobs killed and restarted).  The
acceptance compares with A (:func:`standard_table5`) and also states what B
changes (:func:`other_reading`).  :data:`TABLE5` keeps the printed order.
"""

from __future__ import annotations

from bftune.experiments.reproduce.study import published

_FIGURES = published(__file__)
#: Table 1: every record of the archive files.
JOBS: dict[str, int] = _FIGURES["jobs"]
#: Table 2: the divider (median runtime, s) and the shares (%) of small non-premature / premature jobs.
TABLE2: dict[str, tuple[float, ...]] = {t: tuple(v) for t, v in _FIGURES["table2"].items()}
#: Table 3: shares (%) of the total area of large, small non-premature and small premature jobs.
TABLE3: dict[str, tuple[float, ...]] = {t: tuple(v) for t, v in _FIGURES["table3"].items()}
#: Table 5 as printed: accuracy, "precision", "recall" (%).
TABLE5: dict[str, tuple[int, ...]] = {t: tuple(v) for t, v in _FIGURES["table5"].items()}
#: Table 6 as printed: "False Large", "False Small" (%).
TABLE6: dict[str, tuple[float, ...]] = {t: tuple(v) for t, v in _FIGURES["table6"].items()}
#: Table 7's first column: EASY++ over EASY-FCFS (%) as the study evaluated it.
TABLE7_EASY_PLUS_PLUS: dict[str, int] = _FIGURES["table7_easy_plus_plus"]
#: Table 7's brackets: EASY++ as its original authors (Tsafrir et al.) evaluated it (%).
TABLE7_EASY_PLUS_PLUS_ORIGINAL: dict[str, int] = _FIGURES["table7_easy_plus_plus_original"]
#: Table 7: improvement (%) of the cumulative bsld over EASY-FCFS, classification-idempotent with FCFS / SPF.
TABLE7: dict[str, tuple[int, ...]] = {t: tuple(v) for t, v in _FIGURES["table7"].items()}
#: Section 6.1 (all seven traces): ranges (%) of the improvement over the same base policy.
SECTION61_RANGES: dict[str, tuple[int, ...]] = {p: tuple(v) for p, v in _FIGURES["section61_ranges"].items()}
#: Section 6.5: class-clairvoyant over base SPF (%).
CLASS_CLAIRVOYANT_SPF: dict[str, int] = _FIGURES["class_clairvoyant_spf"]


def standard_table5(trace: str) -> dict[str, float]:
    """Table 5/6 in standard terms (small = positive): the reading explained in the module docstring.

    ``precision`` = TS/(TS+FS) is the printed "Recall" column, ``recall`` =
    TS/(TS+FL) the printed "Precision"; ``false_small_share`` = FS/all and
    ``false_large_share`` = FL/all are Table 6's "False Small" and "False Large".
    """
    acc, printed_precision, printed_recall = TABLE5[trace]
    false_large, false_small = TABLE6[trace]
    return {"accuracy": acc, "precision": printed_recall, "recall": printed_precision,
            "false_small_share": false_small, "false_large_share": false_large}


def other_reading(trace: str) -> dict[str, float]:
    """Table 5/6 in standard terms under reading B (module docstring): Table 5 as printed, Table 6's "False Large"
    and "False Small" swapped (its 7-11 % column is the share of jobs falsely called small)."""
    acc, printed_precision, printed_recall = TABLE5[trace]
    false_large, false_small = TABLE6[trace]
    return {"accuracy": acc, "precision": printed_precision, "recall": printed_recall,
            "false_small_share": false_large, "false_large_share": false_small}


#: The two readings of Tables 5-6 (module docstring), by the words the report uses for them.
READINGS = {"Table 5's precision and recall swapped": standard_table5,
            "Table 6's false large and false small swapped": other_reading}
