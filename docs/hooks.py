"""MkDocs hooks: the reference pages that come from the code, and the reports the site includes.

A page names what the hook puts in with an HTML comment on a line of its own:

``<!-- generated: NAME -->``
    replaced by text the code produces: ``options`` (the option table,
    ``bftune.schedulers.options.markdown_table``), ``cli`` (every sub-command's ``--help``, from the
    argparse parsers of ``experiments/cli/main.py``), ``policies`` (what ``bftune policies`` prints),
    ``layers`` (the layers and their allowed imports, from ``tests/helpers/layers.py``, which
    ``tests/test_imports.py`` enforces), ``layers-picture`` (an SVG of the layers as the code imports them), ``predictors`` and
    ``selectors`` (their registries), ``api``
    (the mkdocstrings directive for ``bftune.api``).
``<!-- include: PATH -->``
    replaced by the repository file PATH (a study's ``REPRODUCTION.md``, ``CHANGELOG.md``): the site
    shows the file itself, never a copy.  Its relative links are rewritten for the page: to a page of
    the site when they point at one (or at a file a page includes), to the path in code font when they
    point at another file of the repository; a link to nothing stops the build.
``<!-- checked: NAME -->``
    the markdown table that follows is hand-written (its words are the docs'), and its first column
    must name exactly what the code produces: ``summary-fields`` (every field of summary.json, found
    by running small simulations), ``out-jobs-columns``, ``files-local``, ``files-batsim``,
    ``files-compare`` (the files of a result directory, from the runners' own lists).  A field the
    code adds without a row, or a row for a field that is gone, stops the build.

The tutorial notebook (docs/tutorial.ipynb), which the mkdocs-jupyter plugin executes and renders, gets
its kernel (:func:`notebook_kernel`: this Python's) and its links to pages (:func:`notebook_page`) here.

Why hooks rather than a plugin: they need nothing installed beyond MkDocs, and they read the code that
the rest of the site documents.  ``tests/docs/test_site.py`` builds the site in strict mode.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import posixpath
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- (generated|include|checked): (\S+) -->[ \t]*$", re.MULTILINE)
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
#: Width of the --help texts (argparse reads COLUMNS): the page must not depend on the terminal.
HELP_WIDTH = "100"

_api_paths: list[str] = []
#: JUPYTER_PATH as it was before the build put the notebook's kernel first (:func:`notebook_kernel`).
_jupyter_path: list[str | None] = []


# --- events -------------------------------------------------------------------------------------


#: Folders of the repository that are not modules of the package (as setup.py leaves them out of the wheel).
NOT_PACKAGE = {"tests", "benchmarks", "docs", "build", "dist", "site", "__pycache__"}


@event_priority(100)  # before mkdocstrings reads its handlers' configuration
def on_config(config):
    """Let mkdocstrings find the package: the repository root *is* ``bftune``, under another name.

    Griffe looks for a folder called ``bftune``: a temporary one mirrors the package's modules
    (:func:`mirror_package`), whatever the checkout is called and however bftune is installed.
    """
    if not _api_paths:
        folder = tempfile.mkdtemp(prefix="bftune-docs-")
        mirror_package(Path(folder) / "bftune")
        _api_paths.append(folder)
    plugin = config.plugins.get("mkdocstrings")
    if plugin is not None:
        python = plugin.config.handlers.setdefault("python", {})
        python["paths"] = [*python.get("paths", []), *_api_paths]
    if config.plugins.get("mkdocs-jupyter") is not None and not _jupyter_path:
        _jupyter_path.append(os.environ.get("JUPYTER_PATH"))
        kernels = notebook_kernel(Path(_api_paths[0]) / "jupyter")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(kernels), _jupyter_path[0]) if p)
    return config


def mirror_package(target: Path) -> None:
    """``target``: the package's modules as links, with what Griffe needs to read the API as Python does.

    Two things differ from the repository.  Its sub-folders are namespace packages (no ``__init__.py``:
    docs/developer/packaging.md says why), which Griffe does not load inside a regular package, so the
    names ``bftune.api`` re-exports (``Trace``, ``SchedulerConfig``...) could not be resolved and went
    undocumented; each folder gets an empty ``__init__.py`` here.  And ``simulate``'s docstring lists the
    scheduler options from the option table when ``bftune.api`` is imported (what ``help()`` shows), which
    Griffe, reading the source, does not run: ``api.py`` is written here with that list in place.
    """
    from bftune import api

    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")) and d not in NOT_PACKAGE
                         and "egg-info" not in d and not (folder == str(ROOT) and d in NOT_PACKAGE))
        here = target / Path(folder).relative_to(ROOT)
        here.mkdir(parents=True, exist_ok=True)
        for name in files:
            if name.endswith((".py", ".pyi")) and not (folder == str(ROOT) and name == "setup.py"):
                os.symlink(Path(folder) / name, here / name)
        if not (here / "__init__.py").exists():
            (here / "__init__.py").write_text("")
    (target / "api.py").unlink()
    source = (ROOT / "api.py").read_text()
    (target / "api.py").write_text(source.replace("    <options>\n", api.option_parameters()))


def on_shutdown() -> None:
    for folder in _api_paths:
        shutil.rmtree(folder, ignore_errors=True)
    _api_paths.clear()
    if _jupyter_path:
        previous = _jupyter_path.pop()
        if previous is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = previous


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace every marker of the page (see the module's docstring)."""
    page_path = page.file.src_uri

    def replace(match: re.Match[str]) -> str:
        kind, name = match.group(1), match.group(2)
        if kind == "generated":
            if name not in GENERATED:
                raise PluginError(f"{page_path}: no generated text called {name!r} (known: {', '.join(GENERATED)})")
            return GENERATED[name]()
        if kind == "include":
            return include(name, page_path)
        return match.group(0)  # checked: below, on the whole page

    markdown = MARKER.sub(replace, markdown)
    for match in MARKER.finditer(markdown):
        if match.group(1) == "checked":
            check_table(markdown, match, page_path)
    return markdown


#: A Sphinx role as the docstrings write it (``:class:`Trace```), once Markdown has made its target code.
ROLE = re.compile(r":(?:class|func|meth|attr|data|exc|mod|obj):<code>~?([\w.]+)</code>")
ANCHOR = re.compile(r'\bid="(bftune\.[\w.]+)"')


def on_page_content(html: str, page, config, files) -> str:
    """Resolve the docstrings' Sphinx roles on the page mkdocstrings renders them on (:func:`resolve_roles`);
    make a notebook's page a page of this site (:func:`notebook_page`)."""
    if page.file.src_uri.endswith(".ipynb"):
        return notebook_page(html, page.file, files)
    return resolve_roles(html) if ROLE.search(html) else html


# --- the tutorial notebook (docs/tutorial.ipynb, rendered by mkdocs-jupyter) -------------------------------

#: A link of a notebook's Markdown to a page, as Jupyter and GitHub follow it: a relative ``.md`` path.
NOTEBOOK_LINK = re.compile(r'href="(?![a-z][a-z0-9+.-]*:|/|#)([^"#?]+\.md)(#[^"]*)?"')
#: What nbconvert's page template loads that the tutorial does not use, and that would reach the network or
#: fetch nothing: MathJax with no address (``<script src="">`` requests the page itself; the notebook has no
#: maths) and the loader of Mermaid diagrams from a CDN (it has no diagram).
NOTEBOOK_UNUSED = re.compile(r'<script src="">\s*</script>|<script type="module">(?:(?!</script>).)*?mermaid'
                             r'(?:(?!</script>).)*</script>', re.S)


def notebook_kernel(folder: Path) -> str:
    """A kernel ``python3`` that runs this Python, quietly: the Jupyter data folder that holds it.

    mkdocs-jupyter executes the tutorial with the kernel called ``python3``; the one Jupyter finds first
    could be another environment's (a user-wide kernel), without bftune.  This one runs ``sys.executable``,
    the build's own environment, and keeps the kernel's log to errors: ipykernel warns at every start that
    its local TCP sockets are not encrypted, a line that says nothing about the page (and that the strict
    build's check for warnings would take for one).  Its matplotlib backend is the notebook's, which draws
    the figures into the page, whatever MPLBACKEND the build has (``Agg`` on a CI would drop them).
    :func:`on_config` puts the folder first on JUPYTER_PATH.
    """
    from ipykernel.kernelspec import write_kernel_spec

    write_kernel_spec(folder / "kernels" / "python3", extra_arguments=["--IPKernelApp.log_level=ERROR"],
                      overrides={"env": {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}})
    return str(folder)


def notebook_page(html: str, file, files) -> str:
    """A notebook's HTML as a page of the site: its links to pages resolved, nothing loaded that it does not use.

    The notebook's Markdown links to pages by their files (``guides/python.md``), which Jupyter and GitHub
    follow; MkDocs does not read a notebook's Markdown, so its links are rewritten here to the pages' URLs,
    and one to no page stops the build, as a broken link of a Markdown page does.
    """

    def link(match: re.Match[str]) -> str:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(file.src_uri), match.group(1)))
        target = files.get_file_from_path(path)
        if target is None:
            raise PluginError(f"{file.src_uri}: a link to {match.group(1)}, which is no page of the site")
        return f'href="{target.url_relative_to(file)}{match.group(2) or ""}"'

    return NOTEBOOK_UNUSED.sub("", NOTEBOOK_LINK.sub(link, html))


def resolve_roles(html: str) -> str:
    """``:class:`Trace``` -> a link to the object's entry on the page; a role to nothing there -> its name.

    The docstrings keep Sphinx's roles (what ``help()`` readers and the code's other docstrings use);
    mkdocstrings leaves them as text.  A role links to the entry whose path is its target, or ends with
    it (``to_dict`` inside SchedulerConfig's docstring: the one entry ending ``.to_dict``), or to the
    entry of the object the target belongs to (``Result.jobs``, a field listed in Result's entry); a
    target documented elsewhere (an internal module) is shown as its last name, in code.
    """
    anchors = set(ANCHOR.findall(html))

    def anchor(target: str) -> str | None:
        while target:
            exact = [a for a in (target, f"bftune.api.{target}") if a in anchors]
            ending = sorted(a for a in anchors if a.endswith(f".{target}"))
            if exact or len(ending) == 1:
                return (exact or ending)[0]
            target = target.rpartition(".")[0] if "." in target and not target.startswith("bftune.") else ""
        return None

    def link(match: re.Match[str]) -> str:
        target = match.group(1)
        found = anchor(target) or anchor(target.rpartition(".")[2])
        shown = target.rpartition(".")[2] if match.group(0).count("~") or target.startswith("bftune.") else target
        code = f"<code>{shown}</code>"
        return f'<a class="autorefs autorefs-internal" href="#{found}">{code}</a>' if found else code

    return ROLE.sub(link, html)


# --- generated text -----------------------------------------------------------------------------


def options_table() -> str:
    from bftune.schedulers.options import markdown_table

    return markdown_table()


def subcommands() -> dict[str, argparse.ArgumentParser]:
    from bftune.experiments.cli.main import build_parser

    parser = build_parser()
    for action in parser._actions:  # argparse keeps its sub-parsers in this one action
        if isinstance(action, argparse._SubParsersAction):
            return {"": parser, **action.choices}
    raise PluginError("experiments/cli/main.py's parser has no sub-commands")


def cli_help() -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parts = []
        for name, parser in subcommands().items():
            title = f"bftune {name}" if name else "bftune"
            parts.append(f"### `{title}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
        return "\n".join(parts)
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def policies_text() -> str:
    from bftune.experiments.cli.policies import cmd_policies

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cmd_policies(argparse.Namespace())
    return f"```text\n{out.getvalue().rstrip()}\n```"


@cache
def layers_module() -> ModuleType:
    """``tests/helpers/layers.py``: the layers, their arrows and the import graph, as the test enforces them."""
    path = ROOT / "tests" / "helpers" / "layers.py"
    spec = importlib.util.spec_from_file_location("bftune_docs_layers", path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layers_picture() -> str:
    """The layers drawn as an inline SVG (``docs/layers_picture.py``, loaded beside this file)."""
    return sibling("layers_picture").picture(layers_module())


@cache
def sibling(name: str) -> ModuleType:
    """A module of ``docs/`` beside this one (MkDocs loads hooks by path: ``docs/`` is not on ``sys.path``)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"bftune_docs_{name}", path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layers_text() -> str:
    """The layers and their arrows as ``tests/helpers/layers.py`` holds them (what ``tests/test_imports.py`` checks)."""
    layers = layers_module()
    modules: dict[str, list[str]] = {}
    for prefix, layer in layers.LAYERS.items():
        modules.setdefault(layer, []).append(prefix)
    rows = ["| layer | modules | may import |", "|---|---|---|"]
    for layer, allowed in layers.ALLOWED.items():
        mods = ", ".join(f"`{m}`" for m in modules.get(layer, []))
        rows.append(f"| {layer} | {mods} | {', '.join(sorted(allowed)) or 'no other layer'} |")
    return "\n".join(rows)


def predictors_text() -> str:
    """The runtime predictors' registry (``learning/predictors.py``): name and what each predicts."""
    from bftune.learning.predictors import PREDICTOR_KINDS

    rows = ["| predictor | what it predicts |", "|---|---|"]
    rows += [f"| `{kind.spelling}` | {kind.summary} |" for kind in PREDICTOR_KINDS.values()]
    return "\n".join(rows)


def selectors_text() -> str:
    """The online selectors' registry (``learning/selectors.py``): name and how each chooses."""
    from bftune.learning.selectors import SELECTOR_KINDS

    rows = ["| selector | how it chooses the next period's policy |", "|---|---|"]
    rows += [f"| `{kind.name}` | {kind.summary} |" for kind in SELECTOR_KINDS.values()]
    return "\n".join(rows)


def api_text() -> str:
    """The Python API page's body: mkdocstrings renders ``bftune.api`` and every name it exports."""
    from bftune import api

    members = "\n".join(f"        - {name}" for name in api.__all__)
    return f"""::: bftune.api
    options:
      heading_level: 3
      docstring_style: numpy
      members:
{members}
"""


GENERATED = {
    "options": options_table,
    "cli": cli_help,
    "policies": policies_text,
    "layers": layers_text,
    "layers-picture": layers_picture,
    "predictors": predictors_text,
    "selectors": selectors_text,
    "api": api_text,
}


# --- included files -----------------------------------------------------------------------------


@cache
def included_files() -> dict[str, str]:
    """Repository path of every included file -> the docs page that includes it."""
    out = {}
    for page in sorted(DOCS.rglob("*.md")):
        for match in MARKER.finditer(page.read_text()):
            if match.group(1) == "include":
                out[match.group(2)] = page.relative_to(DOCS).as_posix()
    return out


def include(path: str, page_path: str) -> str:
    source = ROOT / path
    if not source.is_file():
        raise PluginError(f"{page_path}: included file {path} does not exist")
    text = source.read_text()
    base = posixpath.dirname(path)

    def relink(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)  # a web address or an anchor of the same page
        file_part, _, anchor = target.partition("#")
        repo_path = posixpath.normpath(posixpath.join(base, file_part))
        page = None
        if repo_path.startswith("docs/"):
            page = repo_path[len("docs/"):]
        elif repo_path in included_files():
            page = included_files()[repo_path]
        if page is not None:
            if not (DOCS / page).is_file():
                raise PluginError(f"{path} (in {page_path}) links to {target}: no such page")
            rel = posixpath.relpath(page, posixpath.dirname(page_path))
            return f"[{label}]({rel}{'#' + anchor if anchor else ''})"
        if (ROOT / repo_path).exists():
            return label if label.strip("`") == repo_path else f"{label} (`{repo_path}`)"
        raise PluginError(f"{path} (in {page_path}) links to {target}, which does not exist")

    return LINK.sub(relink, text)


# --- checked tables -----------------------------------------------------------------------------


def check_table(markdown: str, match: re.Match[str], page_path: str) -> None:
    name = match.group(2)
    if name not in CHECKED:
        raise PluginError(f"{page_path}: no checked table called {name!r} (known: {', '.join(CHECKED)})")
    rows = _table_after(markdown, match.end())
    if not rows:
        raise PluginError(f"{page_path}: the marker 'checked: {name}' is not followed by a table")
    documented = {}
    for cells in rows:
        names = re.findall(r"`([^`]+)`", cells[0])
        if not names:
            raise PluginError(f"{page_path}: a row of the {name} table names nothing in code font: {cells[0]!r}")
        for field in names:
            documented[field] = " ".join(cells[1:])
    CHECKED[name](documented, page_path)


def _table_after(markdown: str, start: int) -> list[list[str]]:
    lines = markdown[start:].lstrip("\n").splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue  # the separator line
        rows.append(cells)
    return rows[1:]  # without the header


def _same(documented: set[str], produced: set[str], what: str, page_path: str) -> None:
    missing, stale = sorted(produced - documented), sorted(documented - produced)
    if missing or stale:
        raise PluginError(f"{page_path}: the {what} table is out of date: "
                          f"undocumented {missing or 'none'}; documented but not produced {stale or 'none'}")


def check_out_jobs_columns(documented: dict[str, str], page_path: str) -> None:
    from bftune.experiments.runs.outjobs import COLUMNS

    _same(set(documented), set(COLUMNS), "out_jobs.csv columns", page_path)


def _check_files(constant: str, module: str):
    def check(documented: dict[str, str], page_path: str) -> None:
        import importlib

        from bftune.support.files import MARKER as RESULT_MARKER

        files = set(getattr(importlib.import_module(module), constant)) | {RESULT_MARKER}
        _same(set(documented), files, f"{constant} files", page_path)

    return check


#: summary.json fields the local simulations below cannot produce: those of a Batsim run (checked in
#: the source of experiments/runs/batsim.py instead).
BATSIM_ONLY = ("scheduler_seconds", "scheduler_share", "batsim", "warnings")


@cache
def produced_summary_fields() -> frozenset[str]:
    """Every field path (``a.b``; ``a[].b`` inside lists) of summary.json over a few small simulations.

    The configurations cover every section a run can add: plain EASY, a selector of each family,
    the classifier, PV-EASY with a predictor and the fairness monitor, a virtual predictor, kills.
    """
    from bftune.experiments.runs.local import run_local
    from bftune.schedulers.config import SchedulerConfig
    from bftune.workloads.synthetic import generate

    trace = generate(900, 16, 1)  # 16 processors: a few weeks, so that the classifier retrains
    configs: tuple[dict[str, Any], ...] = ({}, {"selector": "full", "period": "1d"}, {"selector": "noisy", "period": "1d"},
               {"selector": "bandit", "period": "1d"}, {"selector": "random", "period": "1d"},
               {"classifier": "rf", "policy": "SAF"}, {"scheduler": "pv-easy", "predictor": "last", "fairness": True},
               {"predictor": "virtual:0.2", "backfill_policy": "SPF"}, {"kill_after": "1h"})
    fields: set[str] = set()
    for options in configs:
        summary, _ = run_local(trace, SchedulerConfig.from_options(options))
        fields |= _paths(summary)
    return frozenset(fields)


def _paths(value, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.add(path)
            out |= _paths(item, path)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                out |= _paths(item, prefix + "[]")
    return out


#: Sections whose keys are names from elsewhere (option names, cleaning rules, policy names): the
#: section's row says where they come from, and their keys are not listed one by one.
OPEN_SECTIONS = ("config", "cleaning", "periods[].costs", "periods[].previous.simulated_waits",
                 "classification.weeks[].importances")


def check_summary_fields(documented: dict[str, str], page_path: str) -> None:
    """Rows for the fields of depth 1 and 2; deeper fields are named in their nearest documented parent's row."""
    produced = {f for f in produced_summary_fields() if not any(f.startswith(s + ".") for s in OPEN_SECTIONS)}
    shallow = {f for f in produced if f.replace("[]", "").count(".") <= 1}
    batsim_source = (ROOT / "experiments" / "runs" / "batsim.py").read_text()
    for field in BATSIM_ONLY:
        if f'"{field}"' not in batsim_source:
            raise PluginError(f"{page_path}: summary.json's {field!r} is no longer written by experiments/runs/batsim.py")
    _same(set(documented), shallow | set(BATSIM_ONLY), "summary.json fields", page_path)
    for field in sorted(produced - shallow):
        parent = field
        while parent not in documented:
            parent = re.sub(r"(\[\])?\.[^.]+$|\[\]$", "", parent)
        leaf = re.split(r"[.\[\]]+", field.rstrip("[]"))[-1]
        if f"`{leaf}`" not in documented[parent]:
            raise PluginError(f"{page_path}: summary.json's {field} is not named (`{leaf}`) in the row of {parent}")


CHECKED = {
    "summary-fields": check_summary_fields,
    "out-jobs-columns": check_out_jobs_columns,
    "files-local": _check_files("LOCAL_RESULT", "bftune.experiments.runs.local"),
    "files-batsim": _check_files("BATSIM_RESULT", "bftune.experiments.runs.batsim"),
    "files-compare": _check_files("COMPARE_RESULT", "bftune.experiments.runs.batsim"),
}
