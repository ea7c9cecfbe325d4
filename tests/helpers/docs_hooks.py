"""The documentation site's hooks module (docs/hooks.py), loaded by path for the tests that check it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType, SimpleNamespace

from locations import REPO

HOOKS = REPO / "docs" / "hooks.py"


def load() -> ModuleType:
    """docs/hooks.py as a module (once per process; MkDocs loads it the same way, by path)."""
    name = "bftune_docs_hooks"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HOOKS)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def render(page: str) -> str:
    """The Markdown of docs/PAGE after the hooks, as MkDocs hands it on."""
    source = (REPO / "docs" / page).read_text()
    return load().on_page_markdown(source, SimpleNamespace(file=SimpleNamespace(src_uri=page)), None, None)
