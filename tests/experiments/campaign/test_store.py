"""The campaign directory: the lock, leftovers, the manifest, and --report-only after a cut-short rebuild."""

from __future__ import annotations

import errno
import json
import os
import shutil

import pytest
from bftune.experiments.campaign import runner
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import (MANIFEST, DirectoryLock, open_out_dir, outputs_intact, publish,
                                               remove_leftovers)
from bftune.experiments.cli.main import main
from bftune.support.files import locked_temp_file

TINY_OFFLINE = CONFIG_DIR / "tiny_synthetic_offline.toml"
TABLES = ["runs.csv", "weeks.csv"]


@pytest.fixture(scope="module")
def offline_run(run_campaign_once):
    return run_campaign_once(TINY_OFFLINE, "offline")


def test_the_lock_is_exclusive_and_names_its_holder(tmp_path):
    with DirectoryLock(tmp_path):
        with pytest.raises(CampaignError, match=rf"in use by another campaign \(pid {__import__('os').getpid()} "):
            with DirectoryLock(tmp_path):
                pass
    with DirectoryLock(tmp_path):  # released with its holder
        pass


def test_out_paths_that_cannot_be_used(tmp_path):
    (tmp_path / "f").write_text("x")
    for path, expected in ((tmp_path / "f", "not a directory"), (tmp_path / "f" / "sub", "cannot use it"),
                           ("", "empty path"), ("  ", "empty path")):
        with pytest.raises(CampaignError, match=expected):
            open_out_dir(path)
    assert open_out_dir(tmp_path / "new" / "dir").is_dir()


def test_leftovers_of_killed_writes_are_removed(tmp_path):
    out = open_out_dir(tmp_path / "o")
    (out / "plots").mkdir()
    leftovers = [out / ".runs.csv.x1y2z3w4.tmp", out / "runs" / ".abc.json.q1w2e3r4.tmp",
                 out / "plots" / ".p.png.a1s2d3f4.tmp"]
    for p in leftovers:
        p.write_text("partial")
    keep = [out / "runs" / "abc.json", out / ".campaign.lock"]
    for p in keep:
        p.write_text("{}")
    fd, live = locked_temp_file(out / "runs", "def.json", ".tmp")  # a writer still at work keeps its file
    try:
        assert remove_leftovers(out) == 3
        assert not any(p.exists() for p in leftovers) and all(p.exists() for p in keep) and live.exists()
    finally:
        os.close(fd)
    assert remove_leftovers(out) == 1 and not live.exists()


def test_manifest_lists_every_output(offline_run):
    _, _, out = offline_run
    files = json.loads((out / MANIFEST).read_text())["files"]
    assert {"runs.csv", "weeks.csv", "report.md", "summary_offline.csv", "summary_best.csv",
            "plots/avgwait_maxwait.png"} <= set(files)
    assert outputs_intact(out, list(files))


@pytest.mark.slow
def test_report_only_rebuilds_tables_whose_rebuild_was_cut_short(offline_run, tmp_path):
    _, _, first = offline_run
    out = tmp_path / "copy"
    shutil.copytree(first, out)
    (out / MANIFEST).unlink()  # as if killed while rewriting the tables...
    (out / "weeks.csv").write_text("run_id\n")  # ...after a partial write
    assert not outputs_intact(out, TABLES)
    assert main(["campaign", "--report-only", str(out)]) == 0
    for name in TABLES + ["report.md"]:
        assert (out / name).read_bytes() == (first / name).read_bytes(), name
    assert outputs_intact(out, TABLES)


@pytest.mark.slow
def test_report_only_keeps_tables_the_manifest_vouches_for(offline_run, tmp_path):
    _, _, first = offline_run
    out = tmp_path / "copy"
    shutil.copytree(first, out)
    shutil.rmtree(out / "runs")  # a directory shared without its runs: the tables are all there is
    path = publish(out, tables=False)
    assert path.read_bytes() == (first / "report.md").read_bytes()


def test_a_full_device_is_one_line_and_keeps_what_is_stored(monkeypatch, tmp_path):
    """ENOSPC while storing a run, or while rebuilding the tables: a CampaignError (exit 2), no traceback."""
    campaign = load_config(TINY_OFFLINE)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))

    monkeypatch.setattr(runner, "publish", full)
    with pytest.raises(CampaignError, match="No space left on device.*every run is stored"):
        runner.run_campaign(campaign, tmp_path / "a", workers=1, specs=campaign.specs[:1], progress=False)
    assert len(list((tmp_path / "a" / "runs").glob("*.json"))) == 1
    monkeypatch.setattr(runner, "store_result", full)
    with pytest.raises(CampaignError, match="No space left on device.*0 runs stored before are kept"):
        runner.run_campaign(campaign, tmp_path / "b", workers=1, specs=campaign.specs[:1], progress=False)


@pytest.mark.slow
def test_a_directory_reused_by_another_kind_keeps_none_of_the_old_kinds_tables(offline_run, tmp_path):
    """The offline campaign's weeks.csv and summaries stayed beside the online campaign's tables."""
    out = tmp_path / "out"
    shutil.copytree(offline_run[2], out)
    online = load_config(CONFIG_DIR / "tiny_synthetic_online.toml")
    runner.run_campaign(online, out, workers=1, progress=False)
    files = {p.name for p in out.iterdir()}
    assert not {"weeks.csv", "summary_best.csv", "summary_offline.csv"} & files
    assert {"runs.csv", "choices.csv", "periods.csv", "report.md", "summary_online.csv"} <= files
    assert set(json.loads((out / MANIFEST).read_text())["files"]) == {
        str(p.relative_to(out)) for p in [*out.iterdir(), *(out / "plots").iterdir()]
        if p.is_file() and p.name not in ("campaign.json", MANIFEST, ".campaign.lock")}
    assert len(list((out / "runs").glob("*.json"))) > len(online.specs)  # the offline runs stay stored
