"""Study 003's published figures: ``published.toml`` (Tables 1-6 per trace it used), read once."""

from __future__ import annotations

import tomllib
from pathlib import Path

#: trace short name -> table -> key -> value (shares as fractions).
PUBLISHED: dict[str, dict[str, dict[str, float]]] = tomllib.loads((Path(__file__).parent / "published.toml").read_text())


def value(trace: str, table: str, key: str) -> float | None:
    """The study's figure ``key`` of ``table`` for ``trace`` (None: the study gives none)."""
    return PUBLISHED.get(trace, {}).get(table, {}).get(key)
