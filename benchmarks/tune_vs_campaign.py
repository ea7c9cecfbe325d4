"""Issue 31's acceptance check: ``bftune tune``'s recommendation against study 000's full offline campaign.

Give the campaign directory (``bftune campaign`` of a study-000 config: the 49
EASY-Pr-Pb pairs at 20 h on 250 resampled weeks per half, seed 1 - what
``bftune reproduce 000 --scale paper`` runs per trace) and the tune directory
(``bftune tune`` on the same trace, seed 1, so the same resampled weeks).  It
prints the campaign's best training pair and its testing gain with a paired
bootstrap interval (the tune's method), the tune's recommendation and its
interval, whether each gain lies in the other's interval, the recommendation's
gain on all of the campaign's testing weeks, and both CPU times (the campaign's
runs' ``cpu_s`` against the tune's figures in ``recommendation.json``; time the
tune command itself with ``/usr/bin/time`` for its whole CPU time).

    uv run python benchmarks/tune_vs_campaign.py CAMPAIGN_DIR TUNE_DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path

import numpy as np
from bftune.experiments.tune.stats import RECOMMENDATION_RESAMPLES, bootstrap_ci, ratio

BASELINE = "EASY-FCFS-FCFS none"


def weekly(campaign: Path, split: str) -> dict[str, dict[int, float]]:
    """config -> week -> AvgWait, from the campaign's weeks.csv."""
    out: dict[str, dict[int, float]] = {}
    with (campaign / "weeks.csv").open() as fh:
        for row in csv.DictReader(fh):
            if row["split"] == split:
                value = float(row["avg_wait"]) if row["avg_wait"] else math.nan
                out.setdefault(row["config"], {})[int(row["week"])] = value
    return out


def gain(table: dict[str, dict[int, float]], config: str) -> tuple[float, tuple[float, float]]:
    """Mean gain against the baseline over the weeks, and its paired bootstrap interval."""
    weeks = sorted(table[config])
    r = ratio(np.array([table[config][w] for w in weeks]), np.array([table[BASELINE][w] for w in weeks]))
    low, high = bootstrap_ci(r, 1, RECOMMENDATION_RESAMPLES)
    return 1 - float(np.nanmean(r)), (1 - high, 1 - low)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("campaign", type=Path)
    p.add_argument("tune", type=Path)
    args = p.parse_args(argv)
    rec = json.loads((args.tune / "recommendation.json").read_text())
    train, test = weekly(args.campaign, "train"), weekly(args.campaign, "test")
    best = max((c for c in train if c != BASELINE), key=lambda c: gain(train, c)[0])
    best_gain, best_ci = gain(test, best)
    low, high = rec["interval"]
    ours_gain, ours_ci = gain(test, rec["label"])
    cpu = sum(json.loads(f.read_text()).get("cpu_s", 0.0) for f in (args.campaign / "runs").glob("*.json"))
    budget = rec["budget"]
    print(f"campaign: best training pair {best}; testing gain {100 * best_gain:.2f} % "
          f"[{100 * best_ci[0]:.1f}, {100 * best_ci[1]:.1f}] over {len(test[best])} weeks; runs' CPU {cpu:.1f} s")
    print(f"tune: {rec['label']}; testing gain {100 * rec['gain']:.2f} % [{100 * low:.1f}, {100 * high:.1f}] over "
          f"{rec['testing_weeks']} weeks; the campaign's best gain in this interval: {low <= best_gain <= high}; "
          f"this gain in the campaign best's interval: {best_ci[0] <= rec['gain'] <= best_ci[1]}")
    print(f"the recommendation on all {len(test[rec['label']])} of the campaign's testing weeks: "
          f"{100 * ours_gain:.2f} % [{100 * ours_ci[0]:.1f}, {100 * ours_ci[1]:.1f}]")
    print(f"tune's simulations: {budget['weeks_simulated']:,} candidate-weeks, {budget.get('worker_cpu_s', 0):.1f} s "
          f"of CPU in the simulations ({100 * budget.get('worker_cpu_s', 0) / cpu:.1f} % of the campaign's)")
    return 0 if low <= best_gain <= high else 1


if __name__ == "__main__":
    raise SystemExit(main())
