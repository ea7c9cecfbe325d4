"""Where a campaign finds things: the repository root (relative trace paths) and the shipped configs."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "experiments" / "configs"


#: Sources that a campaign generates rather than reads (``synthetic:N:M[:SEED]``, the index kind's
#: ``lublin:...``): their text is their identity, wherever the checkout lies.
GENERATED = ("synthetic:", "lublin:")


def trace_key(trace: str) -> str:
    """A trace source as a run's identity: a file as its absolute, normalised path, a generated source as is.

    A relative path is relative to the repository root (as in a config), so ``traces/X.swf.gz``
    and the same file named absolutely are one run, not two. Symbolic links are left alone: resolving them
    would tie a run's id to how a machine mounts its traces, and runs are copied between machines.
    """
    if trace.startswith(GENERATED):
        return trace
    path = Path(trace).expanduser()
    return os.path.normpath(path if path.is_absolute() else REPO_ROOT / path)
