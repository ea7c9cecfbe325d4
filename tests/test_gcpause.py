"""Pausing the cyclic collector (bftune.support.gcpause): its state comes back, and freezing hides survivors."""

from __future__ import annotations

import gc

import pytest

from bftune.support.gcpause import paused_gc


@pytest.fixture(autouse=True)
def restore_collector():
    was = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


def test_the_collector_is_paused_inside_and_restored_after():
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()  # a caller's own pause is left alone


def test_the_collector_comes_back_after_an_exception():
    gc.enable()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()


def test_freeze_moves_what_survives_out_of_the_collectors_walks():
    gc.enable()
    gc.unfreeze()
    before = gc.get_freeze_count()
    with paused_gc(freeze=True):
        kept = [[i] for i in range(1000)]  # 1,001 tracked containers that outlive the block
    assert gc.get_freeze_count() >= before + len(kept)
    assert gc.isenabled()
    assert gc.get_count()[0] < 1000  # the next collection will not walk them again


def test_without_freeze_nothing_is_frozen():
    gc.unfreeze()
    with paused_gc():
        kept = [[i] for i in range(100)]
    assert gc.get_freeze_count() == 0 and kept
