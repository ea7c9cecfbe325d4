"""The package's import graph and its layers: what ``tests/test_imports.py`` checks and the docs draw.

Kept apart from the test module so that the documentation's hook (``docs/hooks.py``) reads the same
tables and the same graph without importing pytest: the architecture page's table of layers and its
picture are generated from here, so they cannot drift from what the test enforces.

The layers (``LAYERS``) import each other only along the arrows of ``ALLOWED``: the decision core
imports no other layer; hooks extend it and may use learned parts; the two drivers know the core and
the workloads but neither the configuration nor each other (they are handed a core factory); the
configuration is the composition root of the scheduler. Above the product, ``experiments/`` is five
layers: one run and its outputs (runs), the campaign engine (campaigns), ``bftune tune`` (tune), the
published studies and ``bftune reproduce`` (studies), and the command line, which alone may import
the studies. The Python API stands beside the command line and knows no study. ``support/`` (files,
inputs, caches, child processes) imports nothing of bftune, so every layer may use it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SKIP = {".venv", ".git", "tests", "__pycache__", "build", "benchmarks", "docs"}  # benchmarks, docs: scripts, not modules


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(REPO.rglob("*.py")):
        rel = path.relative_to(REPO)
        if SKIP & set(rel.parts) or not all(part.isidentifier() for part in rel.with_suffix("").parts):
            continue
        if rel == Path("setup.py"):
            continue  # the build's package discovery, not a module of the package (the wheel leaves it out)  # hidden or scratch folders (a copy of the tree in .something/) are not modules
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(["bftune", *parts])] = path
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


#: Module prefix -> layer (the longest matching prefix wins).
LAYERS = {
    "bftune.schedulers.core": "core",
    "bftune.schedulers.hooks": "hooks",
    "bftune.schedulers.option": "option kinds",  # what an option is and its parsers (the hooks declare options)
    "bftune.schedulers.drivers": "drivers",
    "bftune.schedulers.drivers.local": "local driver",
    "bftune.schedulers.drivers.batsim": "batsim driver",
    "bftune.schedulers": "config",  # the option table and the configuration (the scheduler's composition root)
    "bftune.schedulers.bftuneEasy": "pybatsim entry",
    "bftune.learning": "learning",
    "bftune.workloads": "workloads",
    "bftune.platforms": "platforms",
    "bftune.experiments.runs": "runs",  # one run and its outputs: local, Batsim, compare, out_jobs, metrics, summary
    "bftune.experiments.campaign": "campaigns",  # the campaign engine, its kinds, stores and reports
    "bftune.experiments.tune": "tune",  # bftune tune: a recommendation raced on a site's own weeks
    "bftune.experiments.studies": "studies",  # the published studies: plug-in folders and their registry
    "bftune.experiments.reproduce": "studies",  # bftune reproduce's machinery, on the studies' plans
    "bftune.experiments.cli": "command line",  # bftune's parsers, one module per command
    "bftune.api": "python api",  # the package's public namespace: the top, beside the command line
    "bftune.support": "support",  # files, inputs, caches, the compiled-core loader, child processes, progress
}

#: The product below experiments/, which every experiment layer may use.
PRODUCT = {"core", "option kinds", "hooks", "drivers", "local driver", "batsim driver", "config", "learning",
           "workloads", "platforms", "support"}

#: layer -> the layers it may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "option kinds": {"core"},
    "hooks": {"core", "option kinds", "learning", "workloads"},
    "drivers": set(),
    "local driver": {"core", "workloads", "support"},
    "batsim driver": {"core", "workloads", "support"},
    "config": {"core", "option kinds", "hooks", "learning", "local driver", "workloads"},
    "pybatsim entry": {"config", "batsim driver", "support"},
    "learning": {"core", "workloads", "support"},
    "workloads": {"support"},
    "platforms": {"workloads", "support"},
    "runs": PRODUCT,
    "campaigns": PRODUCT | {"runs"},
    "tune": PRODUCT | {"runs", "campaigns"},
    "studies": PRODUCT | {"runs", "campaigns", "tune"},
    "command line": PRODUCT | {"pybatsim entry", "runs", "campaigns", "tune", "studies"},
    "package root": {"support", "python api"},
    "python api": PRODUCT | {"runs", "campaigns", "tune"},
    "support": set(),
}


def layer(module: str) -> str:
    if module == "bftune":
        return "package root"  # its __init__: the version, the compiled-core loader, the API's names
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS[max(prefixes, key=len)]


def arrows_against_the_layers(edges: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b} ({layer(a)} -> {layer(b)})" for a, targets in edges.items() for b in targets
                  if layer(a) != layer(b) and layer(b) not in ALLOWED[layer(a)])


def layer_arrows(edges: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    """(importing layer, imported layer) -> how many module imports make that arrow: the layers as the code has them."""
    out: dict[tuple[str, str], int] = {}
    for a, targets in edges.items():
        for b in targets:
            if layer(a) != layer(b):
                out[layer(a), layer(b)] = out.get((layer(a), layer(b)), 0) + 1
    return out
