"""The import graph: the layers' allowed arrows, no cycle (function-level imports included), every module alone.

The layers and their arrows are in ``tests/helpers/layers.py`` (the docs draw them from there).
So a module can always be imported on its own, in a fresh interpreter, and a layer can be read
without the ones above it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from layers import arrows_against_the_layers, cycles, graph, modules


@pytest.mark.slow
def test_layers_import_only_along_the_allowed_arrows():
    assert arrows_against_the_layers(graph()) == []


def test_the_layer_check_sees_a_forbidden_arrow():
    edges = {"bftune.schedulers.drivers.batsim.driver": {"bftune.schedulers.config", "bftune.schedulers.core.jobs"},
             "bftune.schedulers.core.engine": {"bftune.learning.classifier"},
             "bftune.schedulers.config": {"bftune.schedulers.drivers.local.simulator"}}
    assert arrows_against_the_layers(edges) == [
        "bftune.schedulers.core.engine -> bftune.learning.classifier (core -> learning)",
        "bftune.schedulers.drivers.batsim.driver -> bftune.schedulers.config (batsim driver -> config)"]


@pytest.mark.slow
def test_no_import_cycle():
    assert cycles(graph()) == []


def test_the_checker_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(m for m in modules() if not m.endswith("bftuneEasy")))
def test_every_module_imports_alone_in_a_fresh_interpreter(name):
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
