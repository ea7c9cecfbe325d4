"""Where a campaign finds things: the repository root (relative trace paths) and the shipped configs.

The shipped configs are package data (``experiments/configs/*.toml``, in the wheel too): ``bftune campaign
NAME`` finds one by its name, wherever bftune is installed, and ``bftune campaign --list`` lists them.
"""

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


def shipped_configs() -> dict[str, Path]:
    """The shipped campaign configs by name (the file name without ``.toml``), sorted."""
    return {path.stem: path for path in sorted(CONFIG_DIR.glob("*.toml"))}


def config_summary(path: Path) -> str:
    """A config's one-line description: its leading comment, up to its first sentence's end."""
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("#"):
            break
        text = line.lstrip("#").strip()
        if not text or text.startswith(("uv run", "bftune ", "archive:NAME")):
            break
        lines.append(text)
    summary = " ".join(lines)
    end = summary.find(". ")
    return summary[:end + 1] if end >= 0 else summary


def find_config(given: str) -> Path | None:
    """The config ``given`` names: a file path, else a shipped config's name (``online_selection_quick``, with or
    without ``.toml``); None when it is neither."""
    path = Path(given)
    if path.exists():
        return path
    return shipped_configs().get(path.name.removesuffix(".toml") if path.parent == Path(".") else "")
