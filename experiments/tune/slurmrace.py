"""The Slurm family in the race: the best Slurm setting kept beside the best EASY, and the two set side by side.

Apart from :mod:`slurmfamily` (the grid and its words), which the command line's parser reads: this part needs
the tune's statistics (numpy), which ``bftune simulate`` must not import (tests/experiments/test_startup.py).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from bftune.experiments.campaign.specs import derive_seed
from bftune.experiments.tune.slurmfamily import not_expressible, sentence, shown
from bftune.experiments.tune.stats import RECOMMENDATION_RESAMPLES, bootstrap_ci, nanmean


# --- in the race ---------------------------------------------------------------------------------------------


def spared(families: tuple[str, ...], alive: list, objective: Mapping[str, Any], order: list) -> str | None:
    """The Slurm setting kept in the race when other families race too: the best of its family by mean ratio.

    A Slurm site is told the best setting its scheduler can take beside the best EASY, on the same testing
    weeks: the racing test ("clearly worse than the leader") and the budget's halving spare this one
    candidate (the engine's ``_train``), which costs one candidate's weeks.
    """
    if "slurm" not in families or len(families) < 2:
        return None
    slurm = [c for c in alive if c.family == "slurm"]
    if not slurm:
        return None

    def by_mean(c) -> tuple[float, int]:
        mean = nanmean(objective[c.key])
        return (math.inf if math.isnan(mean) else mean), order.index(c)

    return min(slurm, key=by_mean).key


def spare_from_test(key: str | None, dropped: dict) -> None:
    """The spared setting (:func:`spared`) kept when the racing test finds it worse than the leader (a MaxWait
    over the limit still drops it)."""
    if key is not None and key in dropped and dropped[key].reason == "worse":
        del dropped[key]


def spare_from_budget(key: str | None, alive: list, keep: int) -> int:
    """How many of ``alive`` (sorted, best first) the next stage keeps once the spared setting is kept too: it is
    moved just after the ``keep`` best, one candidate more than the budget keeps."""
    keys = [c.key for c in alive]
    if key is None or key not in keys[keep:]:
        return keep
    alive.insert(keep, alive.pop(keys.index(key)))
    return keep + 1


def with_best_of_each_side(families: tuple[str, ...], ranked: list, finalists: list) -> list:
    """The finalists, plus the best Slurm setting and the best other candidate of ``ranked`` (survivors by mean
    ratio) when they are not among them: judged on the testing half too, so that the report sets them side by
    side on the same weeks."""
    out = list(finalists)
    if "slurm" not in families:
        return out
    for slurm in (True, False):
        best = next((c for c in ranked if (c.family == "slurm") == slurm), None)
        if best is not None and best not in out:
            out.append(best)
    return out


def best_of(rows: list[dict], slurm: bool) -> dict | None:
    """The best-ranked row of the Slurm family (``slurm``) or of the other families that ran."""
    for row in rows:
        if (row["family"] == "slurm") == slurm and "train_gain" in row:
            return row
    return None


def figures(race, row: dict, testing: bool, weeks: int) -> dict:
    """A row's gain and interval: the testing half's (``testing``: both sides are finalists), else on the first
    ``weeks`` training weeks (those both sides ran, so that the two columns and the gap are on the same weeks)."""
    if testing:
        return {"gain": row["test_gain"], "interval": list(row["test_interval"]), "half": "testing",
                "weeks": row["test_weeks"]}
    s = race.settings
    ratios = race.ratios("train", race.by_key()[row["key"]], weeks, s.objective)
    low, high = bootstrap_ci(ratios, derive_seed(s.seed, "tune-slurm-side", row["key"]), RECOMMENDATION_RESAMPLES)
    return {"gain": 1.0 - float(nanmean(ratios)), "interval": [1.0 - high, 1.0 - low], "half": "training",
            "weeks": int(weeks)}


def gap(race, easy: dict, slurm: dict) -> dict:
    """The best EASY's gain minus the best Slurm setting's, with a paired bootstrap interval over shared weeks.

    On the testing half when both are finalists, else on the training weeks both ran; per week, the
    difference of their ratios to the baseline (the same resampled week under both).
    """
    s = race.settings
    by_key = race.by_key()
    a, b = by_key[easy["key"]], by_key[slurm["key"]]
    if easy.get("finalist") and slurm.get("finalist"):
        split, weeks = "test", race.test_weeks
    else:
        split, weeks = "train", min(easy["train_weeks"], slurm["train_weeks"])
    diff = race.ratios(split, b, weeks, s.objective) - race.ratios(split, a, weeks, s.objective)
    low, high = bootstrap_ci(diff, derive_seed(s.seed, "tune-slurm-gap", a.key + b.key), RECOMMENDATION_RESAMPLES)
    return {"gap": float(nanmean(diff)), "interval": [low, high], "half": "testing" if split == "test" else "training",
            "weeks": int(weeks),
            "meaning": "gain of the best EASY minus gain of the best Slurm setting (mean over the same weeks of "
                       "ratio(Slurm) - ratio(EASY)); positive: EASY does better"}


def comparison(race, rows: list[dict]) -> dict | None:
    """The site's current setting, the best Slurm setting and the best EASY side by side (None: no slurm family)."""
    slurm = best_of(rows, True)
    if slurm is None:
        return None
    base = race.baselines[0]
    easy = best_of(rows, False)
    testing = bool(slurm.get("finalist") and (easy is None or easy.get("finalist")))
    weeks = min(slurm["train_weeks"], easy["train_weeks"] if easy is not None else slurm["train_weeks"])
    out: dict[str, Any] = {
        "site": {"label": base.label, "configuration": shown(base.options), "gain": 0.0, "interval": [0.0, 0.0],
                 "in_words": sentence(base.options) if base.options.get("scheduler") == "slurm" else
                 "EASY backfilling in submission order (no slurm.conf given)"},
        "best_slurm": {"label": slurm["label"], "configuration": shown(slurm["options"]),
                       "in_words": sentence(slurm["options"]), **figures(race, slurm, testing, weeks)},
    }
    if easy is not None:
        out["best_easy"] = {"label": easy["label"], "family": easy["family"], "configuration": dict(easy["options"]),
                            **figures(race, easy, testing, weeks), "not_expressible": not_expressible(easy["options"])}
        out["gap"] = gap(race, easy, slurm)
    return out
