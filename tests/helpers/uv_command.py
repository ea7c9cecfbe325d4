"""uv as the tests that build the package call it: the one the README's set-up installs."""

from __future__ import annotations

import os
import shutil


def uv() -> list[str]:
    """uv, as `uv run` names it (UV), on PATH, or as the module the README's set-up installs."""
    if os.environ.get("UV"):
        return [os.environ["UV"]]
    if shutil.which("uv"):
        return ["uv"]
    return ["python3", "-m", "uv"]
