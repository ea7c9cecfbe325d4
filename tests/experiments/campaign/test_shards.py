"""``--shard PARTS/N``: a campaign split among machines without Dask, then merged by copying run files."""

from __future__ import annotations

import shutil

import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.kinds.online import replay_group
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.shards import Shard
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.cli.main import main

TINY_ONLINE = CONFIG_DIR / "tiny_synthetic_online.toml"
TABLES = ["runs.csv", "periods.csv", "choices.csv", "summary_online.csv"]


@pytest.mark.parametrize("text, parts, count", [
    ("0/2", {0}, 2), ("1/2", {1}, 2), (" 0-3,7/8 ", {0, 1, 2, 3, 7}, 8), ("2-2/3", {2}, 3), ("0/1", {0}, 1)])
def test_parse(text, parts, count):
    shard = Shard.parse(text)
    assert (shard.parts, shard.count) == (frozenset(parts), count)


@pytest.mark.parametrize("text, message", [
    ("2/2", "not within 0 to 1"), ("0/0", "N must be 1 to"), ("1", "give PARTS/N"), ("a/2", "'a' is not a part"),
    ("3-1/4", "not within 0 to 3"), ("0/x", "give PARTS/N"), ("-1/2", "is not a part number")])
def test_bad_shards_are_one_line_naming_the_option(text, message):
    with pytest.raises(CampaignError, match="--shard") as caught:
        Shard.parse(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_describe_writes_ranges():
    assert Shard.parse("0-3,5,7-8/16").describe() == "shard 0-3,5,7-8/16"


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_parts_cover_the_campaign_once_in_its_order_and_keep_replay_groups_together(count):
    specs = load_config(TINY_ONLINE).specs
    parts = [Shard.parse(f"{k}/{count}").select(specs) for k in range(count)]
    ids = [s.run_id for part in parts for s in part]
    assert sorted(ids) == sorted(s.run_id for s in specs) and len(set(ids)) == len(specs)
    order = {s.run_id: i for i, s in enumerate(specs)}
    for part in parts:
        assert [order[s.run_id] for s in part] == sorted(order[s.run_id] for s in part)
    where = {s.run_id: k for k, part in enumerate(parts) for s in part}
    groups: dict = {}
    for spec in specs:
        group = replay_group(spec)
        if group is not None:
            groups.setdefault(group, set()).add(where[spec.run_id])
    assert groups  # the tiny config has full and noisy feedback
    assert all(len(g) == 1 for g in groups.values())  # full and noisy feedback of one resample: one part
    if count > 1:
        assert all(parts)  # 12 runs dealt round-robin leave no part empty
    both = Shard.parse(f"0-{count - 1}/{count}").select(specs)
    assert [s.run_id for s in both] == [s.run_id for s in specs]


@pytest.mark.slow
def test_two_parts_merged_by_copying_give_the_unsharded_tables(tmp_path, capsys):
    """The workflow of shards.py: each part in its own directory, run files copied, the same command again."""
    whole, first, second = tmp_path / "whole", tmp_path / "a", tmp_path / "b"
    assert main(["campaign", str(TINY_ONLINE), "--out", str(whole), "--workers", "1", "--no-progress"]) == 0
    for part, out in (("0/2", first), ("1/2", second)):
        assert main(["campaign", str(TINY_ONLINE), "--out", str(out), "--workers", "2", "--no-progress",
                     "--shard", part]) == 0
    printed = capsys.readouterr().out
    assert "(shard 0/2 of 12)" in printed and "(shard 1/2 of 12)" in printed
    stored = [len(list((out / "runs").glob("*.json"))) for out in (first, second)]
    assert sum(stored) == 12 and all(stored)
    for path in (second / "runs").glob("*.json"):
        shutil.copy(path, first / "runs" / path.name)
    assert main(["campaign", str(TINY_ONLINE), "--out", str(first), "--workers", "2", "--no-progress"]) == 0
    assert "0 runs done, 12 reused, 0 failed, of 12" in capsys.readouterr().out
    for name in TABLES:
        assert (first / name).read_bytes() == (whole / name).read_bytes(), name


def test_shard_with_report_only_or_a_bad_value_exits_2(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["campaign", str(TINY_ONLINE), "--out", str(out), "--shard", "2/2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--shard '2/2'" in err and len(err.strip().splitlines()) == 1 and not (out / "runs").exists()
    assert main(["campaign", "--report-only", str(out), "--shard", "0/2"]) == 2
    assert "--shard: runs part of a campaign, --report-only runs none" in capsys.readouterr().err
