"""Shared test fixtures.

The helpers shared by several test modules live in ``tests/helpers/``, which
pytest puts on ``sys.path`` (``pythonpath`` in pyproject.toml), so test modules
import them by name: ``import reference_easy`` (the slow, literal reference
EASY of SPEC section 2), ``import easy_support`` (run our simulator, a private
SWF reader, ...), ``import fake_batsim`` (a stand-in Batsim) and
``from locations import SHARED`` (where ../shared and its parts are).
"""

from __future__ import annotations

import easy_support
import pytest
import reference_easy


@pytest.fixture(scope="session")
def reference():
    return reference_easy


@pytest.fixture(scope="session")
def support():
    return easy_support


@pytest.fixture(scope="session")
def run_campaign_once(tmp_path_factory):
    """Run a shipped campaign config once, on 2 local processes: (campaign, outcome, out dir)."""
    from bftune.experiments import campaign as cp

    def run(config, name: str):
        out = tmp_path_factory.mktemp(name)
        campaign = cp.load_config(config)
        return campaign, cp.run_campaign(campaign, out, workers=2, progress=False), out

    return run
