"""Shared test fixtures.

The helpers shared by several test modules live in ``tests/helpers/``, which
pytest puts on ``sys.path`` (``pythonpath`` in pyproject.toml), so test modules
import them by name: ``import reference_easy`` (the slow, literal reference
EASY of docs/semantics/scheduling.md#easy), ``import easy_support`` (run our simulator, a private
SWF reader, ...), ``import fake_batsim`` (a stand-in Batsim) and
``from locations import SHARED`` (where ../shared and its parts are).  The
archive traces' data directory (``BFTUNE_DATA``) is ../shared/workloads.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# Tests patch and subclass the core's modules, which a compiled build (bftune accelerate) would not
# allow: they run the interpreted core, whatever the cache holds (tests/test_compiled.py checks the
# compiled one).  Set before anything imports bftune; subprocesses inherit it.
os.environ["BFTUNE_CORE"] = "interpreted"
# Nor do they read or fill the user's cache (parsed traces, builds): one of their own, removed at exit.
os.environ["BFTUNE_CACHE_DIR"] = tempfile.mkdtemp(prefix="bftune-test-cache-")
atexit.register(shutil.rmtree, os.environ["BFTUNE_CACHE_DIR"], True)

from locations import SHARED_WORKLOADS  # noqa: E402 - after the environment above

# Archive traces (`archive:NAME` in configs, `bftune reproduce`) come from ../shared/workloads, never from the
# user's data directory or the network; without it, the tests that need traces skip.
if SHARED_WORKLOADS.is_dir():
    os.environ["BFTUNE_DATA"] = str(SHARED_WORKLOADS)

import easy_support
import pytest
import reference_easy
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.runner import run_campaign


@pytest.fixture(scope="session")
def reference():
    return reference_easy


@pytest.fixture(scope="session")
def support():
    return easy_support


@pytest.fixture(scope="session")
def run_campaign_once(tmp_path_factory):
    """Run a shipped campaign config once per session, on 2 local processes: (campaign, outcome, out dir).

    Several test modules share the result (tests only read the directory).
    """
    done: dict = {}

    def run(config, name: str):
        if config not in done:
            out = tmp_path_factory.mktemp(name)
            campaign = load_config(config)
            done[config] = campaign, run_campaign(campaign, out, workers=2, progress=False), out
        return done[config]

    return run
