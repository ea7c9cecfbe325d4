"""Where bftune keeps what it can rebuild: compiled core builds and parsed traces.

``$BFTUNE_CACHE_DIR``, else ``$XDG_CACHE_HOME/bftune``, else ``~/.cache/bftune``.
Everything under it may be deleted at any time; bftune then rebuilds or
re-parses what it needs (a compiled core only by ``bftune accelerate``).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    explicit = os.environ.get("BFTUNE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bftune"
