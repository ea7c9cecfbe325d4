"""What bftune tells a user to type depends on how it is installed: ``uv run`` and ``uv sync`` in a checkout,
``bftune`` and the ``accelerate`` extra from a wheel (which has no pyproject.toml and no ../shared)."""

from __future__ import annotations

import argparse
import tomllib

import pytest
from bftune.experiments.cli import accelerate
from bftune.experiments.reproduce import command as reproduce
from bftune.support import checkout
from locations import REPO


@pytest.fixture
def wheel_root(tmp_path):
    """A package folder as a wheel installs it: modules and data, none of the repository's own files."""
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "api.py").write_text("")
    return tmp_path


def test_a_checkout_is_told_from_an_installed_wheel(wheel_root):
    assert checkout.in_checkout(REPO) and checkout.in_checkout()  # the tests run from the checkout
    assert not checkout.in_checkout(wheel_root)
    assert checkout.command("simulate --synthetic 10", REPO) == "uv run bftune simulate --synthetic 10"
    assert checkout.command("simulate --synthetic 10", wheel_root) == "bftune simulate --synthetic 10"


def test_accelerate_says_how_to_get_its_tools_where_it_runs(wheel_root):
    """From a wheel it said to `uv sync` a pyproject.toml the user does not have."""
    assert accelerate.install_hint(REPO) == "in the dev group of pyproject.toml: `uv sync`"
    hint = accelerate.install_hint(wheel_root)
    assert hint == "install the extra: pip install 'bftune[accelerate]'" and "uv" not in hint


def test_the_accelerate_extra_installs_the_tools_of_the_dev_group():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    extra = project["project"]["optional-dependencies"]["accelerate"]
    dev = project["dependency-groups"]["dev"]
    mypy = next(d for d in dev if d.startswith("mypy=="))
    assert mypy in extra and any(d.startswith("setuptools") for d in extra)  # mypyc's version: the one checked


def test_a_reproduction_report_cites_what_its_user_ran(monkeypatch):
    """A report made from the wheel cited `uv run bftune ...` and `../shared/seeds/...`."""
    args = argparse.Namespace(study="000", scale="quick", out="Y")
    study = reproduce.load_study("000")
    argv = ["bftune", "reproduce", "000", "--scale", "quick", "--out", "Y"]
    assert reproduce.command_line(args, argv) == "uv run bftune reproduce 000 --scale quick --out Y"
    monkeypatch.setattr(checkout, "in_checkout", lambda root=checkout.PACKAGE_ROOT: False)
    assert reproduce.command_line(args, argv) == "bftune reproduce 000 --scale quick --out Y"
    assert reproduce.command_line(args, ["bftune"]) == "bftune reproduce 000 --scale quick --out Y"
    cited = reproduce.source(study)
    assert "../shared" not in cited and study.title in cited
