"""The documentation site: it builds in strict mode, its generated pages come from the code, it loads nothing
from the network, a broken link or a stale table fails the build, and the README stays a short tour."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from docs_hooks import load as load_hooks
from locations import REPO

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocstrings")

README_MAX_LINES = 250


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` in a fresh process, as CI and a user run it."""
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=600, cwd=config.parent,
                          env={**_env(), "NO_MKDOCS_2_WARNING": "1"})


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = mkdocs_build(REPO / "mkdocs.yml", out)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-5000:]
    return out


@pytest.mark.slow
def test_the_site_builds_in_strict_mode_with_every_page(site):
    for page in ("index.html", "reference/options/index.html", "reference/cli/index.html",
                 "reference/outputs/index.html", "reproductions/s004/index.html", "changelog/index.html"):
        assert (site / page).is_file(), page


@pytest.mark.slow
def test_the_tutorial_page_shows_the_notebook_as_this_bftune_runs_it(site):
    """docs/tutorial.ipynb is kept without outputs; the build executes it (mkdocs-jupyter) and the page
    shows its tables and pictures, with its links to pages made the site's (docs/hooks.py)."""
    page = (site / "tutorial" / "index.html").read_text()
    assert "EASY(SAF+threshold(40h))" in page and "EASY(./mypolicy.py:score+threshold(40h))" in page
    assert page.count('src="data:image/png') >= 2
    assert 'href="../guides/python/"' in page and 'href="../guides/plugins/"' in page
    assert not re.search(r'href="[^":#]+\.md[#"]', page)  # every link to a page was rewritten
    assert '<script src="">' not in page and "mermaid.esm" not in page
    assert (site / "tutorial" / "tutorial.ipynb").is_file()  # the page's download link
    getting_started = (site / "getting-started" / "index.html").read_text()
    assert 'href="../tutorial/"' in getting_started


def test_generated_pages_hold_what_the_code_produces(site):
    from bftune.experiments.cli.main import build_parser
    from bftune.schedulers.options import OPTIONS

    options = (site / "reference" / "options" / "index.html").read_text()
    for name in OPTIONS:
        assert f"<code>{name}</code>" in options, name
    cli = (site / "reference" / "cli" / "index.html").read_text()
    commands = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for name in commands:
        assert f"bftune {name}" in cli, name
    assert "--threshold DURATION" in cli
    policies = (site / "concepts" / "policies" / "index.html").read_text()
    assert "UNICEF" in policies and "Lin" in policies
    layers = (site / "developer" / "architecture" / "index.html").read_text()
    assert "batsim driver" in layers and "may import" in layers
    picture = layers[layers.index('<div class="layers-picture">'):]
    picture = picture[:picture.index("</svg>")]
    for name in ("command line", "studies", "campaigns", "runs", "core", "support"):  # one box per layer, as text
        assert f">{name}<" in picture, name


@pytest.mark.slow
def test_the_api_page_documents_every_exported_name_with_its_roles_resolved(site):
    """The page once documented 8 of the 14 names (none of those bftune.api re-exports), showed
    ``:class:`Trace``` as text, and listed neither Result's fields nor simulate's options."""
    import bftune
    from bftune.schedulers.options import OPTIONS

    page = (site / "reference" / "python-api" / "index.html").read_text()
    for name in bftune.__all__:
        assert f'id="bftune.api.{name}"' in page, name
    assert not re.search(r":(class|func|meth|attr|data|exc|mod):", page)
    assert '<a class="autorefs autorefs-internal" href="#bftune.api.Trace"><code>Trace</code></a>' in page
    def text(start: str, end: str) -> str:  # a section of the page as its reader sees it, tags dropped
        html = page[page.index(f'id="{start}"'):page.index(f'id="{end}"')]
        return " ".join(re.sub(r"<[^>]+>", " ", html).split())

    fields = text("bftune.api.Result", "bftune.api.Result.write")
    assert "Attributes: Name Type Description jobs DataFrame" in fields
    for field in ("summary dict", "periods DataFrame or None", "config SchedulerConfig"):
        assert field in fields, field
    options = text("bftune.api.simulate", "bftune.api.synthetic")
    for name in OPTIONS:
        assert f" {name} " in options, name


def test_roles_link_to_the_entry_they_name_or_become_code():
    hooks = load_hooks()
    html = ('<h2 id="bftune.api.Trace"></h2><h3 id="bftune.api.SchedulerConfig.to_dict"></h3>'
            "<p>:class:<code>Trace</code>, :meth:<code>to_dict</code>, :func:<code>~bftune.workloads.slurm.read</code>,"
            " :attr:<code>Trace.jobs</code></p>")
    out = hooks.resolve_roles(html)
    assert '<a class="autorefs autorefs-internal" href="#bftune.api.Trace"><code>Trace</code></a>' in out
    assert 'href="#bftune.api.SchedulerConfig.to_dict"><code>to_dict</code>' in out
    assert "<code>read</code>" in out and 'href="#bftune.api.Trace"><code>Trace.jobs</code>' in out
    assert ":class:" not in out and ":func:" not in out


def test_the_studies_reports_are_included_not_copied(site):
    reports = sorted((REPO / "experiments" / "studies").glob("s*/REPRODUCTION.md"))
    assert len(reports) >= 5
    for report in reports + [REPO / "experiments" / "REPRODUCTION.md"]:
        rel = report.relative_to(REPO).as_posix()
        pages = [p for p in (REPO / "docs").rglob("*.md") if f"<!-- include: {rel} -->" in p.read_text()]
        assert len(pages) == 1, f"{rel} is included by {pages}, not by exactly one page"
        html = (site / pages[0].relative_to(REPO / "docs").with_suffix("") / "index.html")
        if html.name == "index.html" and pages[0].name == "index.md":
            html = site / pages[0].parent.relative_to(REPO / "docs") / "index.html"
        title = report.read_text().splitlines()[0].lstrip("# ").split(":")[0].strip()
        assert title in html.read_text(), f"{html} does not show {rel}"


def test_the_site_loads_nothing_from_the_network(site):
    remote = re.compile(r"""<(?:script|img|iframe)[^>]*\ssrc=["']?(?:https?:)?//|<link[^>]*rel=["']?(?:stylesheet|preload|preconnect)[^>]*href=["']?(?:https?:)?//""")
    offenders = []
    for path in list(site.rglob("*.html")) + list(site.rglob("*.css")):
        text = path.read_text(errors="replace")
        if remote.search(text) or re.search(r"url\(\s*['\"]?(?:https?:)?//", text) or "fonts.googleapis" in text \
                or re.search(r"""import\(\s*["'](?:https?:)?//""", text):  # a script's module from a CDN
            offenders.append(str(path.relative_to(site)))
    assert offenders == []


def test_a_broken_link_fails_the_build(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [a page that is not there](missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: t
        strict: true
        hooks:
          - {REPO / 'docs' / 'hooks.py'}
        """))
    proc = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "missing.md" in proc.stderr


def test_an_included_report_that_links_to_nothing_stops_the_build(tmp_path, monkeypatch):
    hooks = load_hooks()
    (tmp_path / "report.md").write_text("# R\n\n[the index](../../GONE.md)\n")
    monkeypatch.setattr(hooks, "ROOT", tmp_path)
    with pytest.raises(hooks.PluginError, match="GONE.md"):
        hooks.include("report.md", "reproductions/x.md")
    # a link to a repository file that is not a page becomes its path in code font
    (tmp_path / "src.py").write_text("")
    (tmp_path / "report.md").write_text("[code](src.py) and [`src.py`](src.py)\n")
    assert hooks.include("report.md", "reproductions/x.md") == "code (`src.py`) and `src.py`\n"


def test_a_notebooks_links_become_the_sites_and_a_link_to_nothing_stops_the_build(tmp_path):
    """MkDocs does not read a notebook's Markdown: the hook rewrites its links to pages, and checks them."""
    from mkdocs.structure.files import File, Files

    hooks = load_hooks()
    page, target = (File(path, str(tmp_path), str(tmp_path / "site"), True)
                    for path in ("tutorial.md", "guides/python.md"))
    files = Files([page, target])
    html = '<a href="guides/python.md#x">p</a> <a href="https://example.org/a.md">w</a><script src=""> </script>'
    assert hooks.notebook_page(html, page, files) == \
        '<a href="../guides/python/#x">p</a> <a href="https://example.org/a.md">w</a>'
    with pytest.raises(hooks.PluginError, match="guides/gone.md"):
        hooks.notebook_page('<a href="guides/gone.md">gone</a>', page, files)


def test_a_checked_table_that_misses_a_column_stops_the_build():
    hooks = load_hooks()
    page = (REPO / "docs" / "reference" / "outputs.md").read_text()
    stale = page.replace("| `metadata` | empty |\n", "")
    with pytest.raises(hooks.PluginError, match="metadata"):
        hooks.on_page_markdown(stale, _page("reference/outputs.md"), None, None)


def test_the_summary_fields_check_wants_every_field_documented(monkeypatch):
    hooks = load_hooks()
    monkeypatch.setattr(hooks, "produced_summary_fields",
                        lambda: frozenset({"jobs", "fairness", "fairness.x", "fairness.x.deep"}))
    table = "| field | what |\n|---|---|\n| `jobs` | jobs |\n| `fairness` | the monitor |\n| `fairness.x` | b |\n"
    batsim = "".join(f"| `{f}` | batsim |\n" for f in hooks.BATSIM_ONLY)
    with pytest.raises(hooks.PluginError, match=r"fairness\.x\.deep"):
        hooks.check_summary_fields(_documented(hooks, table + batsim), "p.md")
    hooks.check_summary_fields(_documented(hooks, table.replace("| b |", "| b, with `deep` |") + batsim), "p.md")
    with pytest.raises(hooks.PluginError, match="undocumented"):
        hooks.check_summary_fields(_documented(hooks, table.replace("| `jobs` | jobs |\n", "") + batsim), "p.md")


def _documented(hooks, table: str) -> dict[str, str]:
    rows = hooks._table_after(table, 0)
    out = {}
    for cells in rows:
        for name in re.findall(r"`([^`]+)`", cells[0]):
            out[name] = " ".join(cells[1:])
    return out


def _page(src_uri: str):
    from types import SimpleNamespace

    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


def test_the_readme_is_a_short_tour():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move the detail into docs/"
    text = "\n".join(lines)
    assert "python3 -m uv run bftune demo" in text and "python3 -m uv run pytest" in text
    assert re.search(r"\bissue \d+", text) is None


def test_the_user_docs_carry_no_issue_numbers(site):
    """Issue numbers mean nothing to a user: not in a page, an included report or the changelog."""
    pattern = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
    offenders = [str(p.relative_to(site)) for p in site.rglob("*.html") if pattern.search(p.read_text())]
    assert offenders == []


@pytest.mark.slow
def test_the_python_guide_examples_run():
    """Every ```python block of the Python guide that follows a `<!-- tested -->` line runs as it is."""
    text = (REPO / "docs" / "guides" / "python.md").read_text()
    blocks = re.findall(r"^<!-- tested -->\n```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert blocks, "the Python guide has no tested example"
    for block in blocks:
        proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300,
                              env={**_env(), "BFTUNE_CORE": "interpreted"})
        assert proc.returncode == 0, proc.stderr[-3000:]
