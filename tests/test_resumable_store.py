"""The one resumable store (``support/store.py``): items and failures, what is read back, identity, lock, refusals."""

from __future__ import annotations

import os

import pytest
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import CAMPAIGN, open_out_dir
from bftune.experiments.tune.store import TUNE, open_dir
from bftune.support.store import JsonForm, Layout, Store, StoreError

WINDOWS = Layout(what="collection", identity="collection.json", items="windows", file="{:05d}.json",
                 item_form=JsonForm(indent=None, separators=(",", ":")))


def test_an_item_replaces_its_failure_and_is_read_back_in_file_order(tmp_path):
    store = Store.open(tmp_path / "d", WINDOWS)
    store.make_folders()
    store.keep_failure(3, {"index": 3, "status": "failed"})
    assert (tmp_path / "d" / "failures" / "00003.json").exists()
    store.keep(3, {"index": 3, "status": "ok"})
    store.keep(1, {"index": 1, "status": "ok"})
    assert (tmp_path / "d" / "windows" / "00003.json").read_text() == '{"index":3,"status":"ok"}\n'
    assert not (tmp_path / "d" / "failures" / "00003.json").exists()
    (tmp_path / "d" / "windows" / "00002.json").write_text('{"index": 2, "status"')  # cut short: run again
    (tmp_path / "d" / "windows" / "00004.json").write_text("[4]")  # not an item
    assert [rec["index"] for _, rec in store.records()] == [1, 3]
    assert store.read_key(2) is None and store.read_key(1) == {"index": 1, "status": "ok"}


def test_the_identity_file_is_read_back_or_named_when_unreadable(tmp_path):
    store = Store.open(tmp_path, WINDOWS)
    assert store.read_identity() is None
    store.write_identity({"settings": {"trials": 3}})
    assert store.read_identity() == {"settings": {"trials": 3}}
    (tmp_path / "collection.json").write_text("{")
    with pytest.raises(StoreError, match=r"collection.json: unreadable \("):
        store.read_identity()


def test_strict_forms_refuse_nan_and_lenient_forms_write_it():
    assert JsonForm(indent=None, strict=False, newline=False).text({"x": float("nan")}) == '{"x": NaN}'
    with pytest.raises(ValueError):
        JsonForm().text({"x": float("nan")})


def test_the_lock_names_the_caller_and_raises_the_layouts_error(tmp_path):
    with Store(tmp_path, CAMPAIGN).lock():
        with pytest.raises(CampaignError, match=rf"in use by another tune run \(pid {os.getpid()} "):
            with Store(tmp_path, TUNE).lock():
                pass


def test_a_campaign_and_a_tune_do_not_share_a_directory(tmp_path):
    """Both keep runs/ and write weeks.csv: one would overwrite the other's table and mix its runs."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "tune.json").write_text("{}")
    with pytest.raises(CampaignError, match=r"holds a tune run \(tune.json\), not a campaign: use another --out"):
        open_out_dir(tmp_path / "t")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "campaign.json").write_text("{}")
    with pytest.raises(CampaignError, match=r"holds a campaign \(campaign.json\), not a tune run"):
        open_dir(tmp_path / "c")
    assert not (tmp_path / "c" / "runs").exists()
