"""The whole package, tests included, passes mypy (a dev dependency: it also builds the compiled core).

The repository root is the package ``bftune`` whatever the checkout's folder is called, so mypy reads
it through a link named ``bftune`` in a scratch directory; its cache stays there too.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from locations import REPO

pytest.importorskip("mypy", reason="mypy is in the dev dependency group (uv sync installs it)")


@pytest.mark.slow
def test_the_package_passes_mypy(tmp_path):
    (tmp_path / "bftune").symlink_to(REPO, target_is_directory=True)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "-p", "bftune", "--config-file", str(REPO / "pyproject.toml"),
         "--no-error-summary", "--cache-dir", str(tmp_path / "cache")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 and not errors, "\n".join(errors) or done.stdout + done.stderr
