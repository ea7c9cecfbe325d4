"""The whole repository passes ruff with the rules of pyproject.toml's [tool.ruff] (as editors and CI read them)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from locations import REPO

pytest.importorskip("ruff", reason="ruff is in the dev dependency group (uv sync installs it)")


@pytest.mark.slow
def test_the_repository_passes_ruff():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
