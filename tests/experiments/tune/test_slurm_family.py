"""tune's slurm family and what it answers (issue 40): the grid on top of the site's slurm.conf, the site's
setting as the baseline, the three settings side by side, slurm.conf.diff or slurm.conf.fragment."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.tune.candidates import build, parse_families
from bftune.experiments.tune import slurmfamily
from bftune.experiments.tune.slurmfamily import BACKFILLS, MAX_AGES, WEIGHTS, grid, not_expressible
from bftune.experiments.tune.slurmrace import spare_from_budget, spare_from_test, spared, with_best_of_each_side
from bftune.experiments.tune.stats import Verdict
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.slurmconf import parse_slurm_conf, read_slurm_conf

SITE = Path(__file__).parents[2] / "schedulers" / "data" / "slurm.conf"
QUICK = ["--synthetic", "3000", "--procs", "24", "--policies", "FCFS,SAF", "--weeks", "8", "--budget", "1h",
         "--workers", "1", "--no-progress", "--holdout", "0", "--candidates", "pairs,slurm"]
#: the whole Slurm grid (32 settings) on one week per half: the interpreted Slurm model simulates about a week
#: of this workload a second, and 8 weeks made this one test 5 minutes of CI's 30
WHOLE_GRID = [*QUICK[:QUICK.index("--weeks") + 1], "1", *QUICK[QUICK.index("--weeks") + 2:]]


def test_the_grid_is_the_documented_size_and_keeps_the_sites_other_keys():
    site = read_slurm_conf(SITE).options
    family = grid(site)
    with_age = sum(1 for w in WEIGHTS if w.age)
    assert len(family) == (with_age * len(MAX_AGES) + len(WEIGHTS) - with_age) * len(BACKFILLS) == 32
    assert len({label for label, _ in family}) == 32
    for _, options in family:
        config = SchedulerConfig.from_options(options)
        assert config["default_queue_depth"] == 200 and config["priority_weight_partition"] == 1000
        assert config["priority_decay_half_life"] == 14 * 86400
    assert len(build(parse_families("pairs,slurm"), ("FCFS", "SAF"), ("20h",), site)) == 4 + 32


def test_without_a_site_the_family_starts_from_bftunes_slurm_defaults():
    options = dict(grid(None)[0][1])
    assert SchedulerConfig.from_options(options)["default_queue_depth"] == 100


def test_what_slurm_cannot_express_is_derived_from_the_easy_options():
    said = not_expressible({"policy": "SPF", "backfill_policy": "LEXP", "threshold": "20h"})
    assert said[1] == "a separate backfill order (LEXP) is not expressible: Slurm backfills in priority order"
    assert said[2].startswith("a waiting-time threshold Theta (20h): approximated by PriorityWeightAge/PriorityMaxAge")
    assert not_expressible({"policy": "FCFS"}) == []
    assert any("predictor" in line for line in not_expressible({"predictor": "last"}))
    assert not_expressible({"scheduler": "slurm"}) == []


def test_the_best_slurm_setting_is_spared_by_the_test_and_the_budget():
    candidates = build(parse_families("pairs,slurm"), ("FCFS", "SAF"), ("20h",))
    pairs, slurm = candidates[:4], candidates[4:]
    objective = {c.key: np.array([0.5 + 0.01 * i]) for i, c in enumerate(candidates)}
    best = spared(("pairs", "slurm"), candidates, objective, candidates)
    assert best == slurm[0].key
    assert spared(("slurm",), candidates, objective, candidates) is None  # nothing to set it beside
    dropped = {best: Verdict("worse", 0.001, 0.01, pairs[0].key),
               slurm[1].key: Verdict("worse", 0.001, 0.01, pairs[0].key),
               slurm[2].key: Verdict("max_wait", 0.001, 0.01, pairs[0].key)}
    spare_from_test(best, dropped)
    assert list(dropped) == [slurm[1].key, slurm[2].key]
    spare_from_test(slurm[2].key, dropped)  # over the MaxWait limit: not spared
    assert slurm[2].key in dropped
    alive = list(candidates)
    assert spare_from_budget(best, alive, 2) == 3 and alive[2].key == best and len(alive) == len(candidates)
    assert spare_from_budget(best, alive, 3) == 3  # already kept
    finalists = with_best_of_each_side(("pairs", "slurm"), pairs + slurm, pairs[:2])
    assert finalists == [*pairs[:2], slurm[0]]
    assert with_best_of_each_side(("pairs",), pairs, pairs[:2]) == pairs[:2]


@pytest.mark.slow
def test_tune_with_a_sites_slurm_conf_writes_the_diff_and_the_three_settings(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["tune", *WHOLE_GRID, "--slurm-conf", str(SITE), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "slurm.conf: ignored 32 keys not about priority or backfill" in printed.err
    assert "against site's slurm.conf" in printed.err
    assert "site's current setting" in printed.out and "gap best EASY - best Slurm" in printed.out
    record = json.loads((out / "recommendation.json").read_text())
    assert record["baseline"]["label"] == "site's slurm.conf"
    slurm = record["slurm"]
    assert slurm["site"]["configuration"]["priority_weight_fairshare"] == 10000
    assert slurm["best_slurm"]["label"].startswith("Slurm ") and slurm["best_easy"]["family"] == "pairs"
    for entry in (slurm["best_slurm"], slurm["best_easy"]):
        low, high = entry["interval"]
        assert low <= entry["gain"] <= high
    assert slurm["gap"]["gap"] == pytest.approx(slurm["best_easy"]["gain"] - slurm["best_slurm"]["gain"], abs=1e-9)
    diff = (out / "slurm.conf.diff").read_text()
    assert not (out / "slurm.conf.fragment").exists()
    # the diff applied to the site's file gives the best Slurm setting
    patched = _patched(SITE.read_text(), diff)
    assert parse_slurm_conf(patched).config() == SchedulerConfig.from_options(slurm["best_slurm"]["configuration"])
    report = (out / "report.html").read_text()
    assert 'id="slurm"' in report and "the best EASY" in report and "the site&#x27;s current setting" in report
    ranking = (out / "ranking.csv").read_text()
    assert ranking.count(",slurm,") == 32


@pytest.mark.slow
def test_tune_without_a_slurm_conf_writes_a_fragment_against_easy_fcfs(tmp_path, monkeypatch):
    # the fragment and the baseline are what this checks; the whole grid is raced by the test above (a tenth
    # of its cost: the interpreted Slurm model simulates about a week a second)
    whole_grid = slurmfamily.grid
    monkeypatch.setattr(slurmfamily, "grid", lambda site=None: whole_grid(site)[:3])
    out = tmp_path / "t"
    assert main(["tune", *QUICK, "--out", str(out)]) == 0
    record = json.loads((out / "recommendation.json").read_text())
    assert record["slurm"]["site"]["label"] == "EASY-FCFS-FCFS"
    fragment = (out / "slurm.conf.fragment").read_text()
    assert parse_slurm_conf(fragment).config() == SchedulerConfig.from_options(
        record["slurm"]["best_slurm"]["configuration"])
    assert not (out / "slurm.conf.diff").exists()


def _patched(text: str, diff: str) -> str:
    """The unified diff applied to ``text`` (the lines before the first ``---`` are comments, as patch skips)."""
    lines = text.splitlines()
    body = diff.splitlines()
    body = body[next(i for i, line in enumerate(body) if line.startswith("---")) + 2:]
    out, at = [], 0
    for line in body:
        if line.startswith("@@"):
            start = int(line.split()[1].split(",")[0][1:]) - 1
            out += lines[at:start]
            at = start
        elif line.startswith((" ", "-")):
            assert lines[at] == line[1:]
            if line.startswith(" "):
                out.append(line[1:])
            at += 1
        elif line.startswith("+"):
            out.append(line[1:])
    return "\n".join(out + lines[at:]) + "\n"
