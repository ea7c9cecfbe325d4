"""Shared test fixtures.

With ``--import-mode=importlib`` test files cannot import each other (nor this
conftest) by module name, so the shared code lives in plain modules loaded by
path:

- ``tests/reference_easy.py``: the slow, literal reference EASY (SPEC section 2);
- ``tests/easy_support.py``: helpers (run our simulator, a private SWF reader, ...).

Fixtures ``reference`` and ``support`` give them to tests; test modules that
need them at import time (hypothesis strategies, parametrisation) call
``load_by_path`` the same way (see the top of test_easy_reference.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent


def load_by_path(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


# Registered at conftest import, before any test module is collected, so test
# modules simply `import bftune_tests_easy_support` / `bftune_tests_reference_easy`.
load_by_path("bftune_tests_reference_easy", TESTS_DIR / "reference_easy.py")
load_by_path("bftune_tests_easy_support", TESTS_DIR / "easy_support.py")


@pytest.fixture(scope="session")
def reference():
    return load_by_path("bftune_tests_reference_easy", TESTS_DIR / "reference_easy.py")


@pytest.fixture(scope="session")
def support():
    return load_by_path("bftune_tests_easy_support", TESTS_DIR / "easy_support.py")


@pytest.fixture(scope="session")
def run_campaign_once(tmp_path_factory):
    """Run a shipped campaign config once, on 2 local processes: (campaign, outcome, out dir)."""
    from bftune.experiments import campaign as cp

    def run(config, name: str):
        out = tmp_path_factory.mktemp(name)
        campaign = cp.load_config(config)
        return campaign, cp.run_campaign(campaign, out, workers=2, progress=False), out

    return run
