"""The semantics pages are where code and docs point for the rules: every cited anchor exists.

Code cites a rule as ``docs/semantics/<page>.md#<anchor>`` (a docstring, a comment) and the docs link to
``semantics/<page>.md#<anchor>``; MkDocs checks only the links of the site's own pages, so a renamed heading
would leave the citations in code pointing nowhere without this test.
"""

from __future__ import annotations

import pytest

import re
from pathlib import Path

from locations import REPO
from markdown.extensions.toc import slugify

SEMANTICS = REPO / "docs" / "semantics"
#: The sections every rule of the contract lives in: code cites them, so they must not move.
CONTRACT = {
    "workloads.md": {"cleaning", "resampling"},
    "scheduling.md": {"easy", "metrics", "pv-easy", "batsim-semantics"},
    "learning.md": {"online-selection", "classification", "learned-index-policies"},
}
CITATION = re.compile(r"semantics/([a-z-]+\.md)#([a-z0-9-]+)")
SKIPPED_DIRS = {".venv", ".git", "__pycache__", "site", "node_modules"}


def anchors(page: Path) -> set[str]:
    """The ids MkDocs gives the page's headings (the toc extension's default slugs), code blocks skipped."""
    ids: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            ids.add(slugify(line.lstrip("#").strip().replace("`", ""), "-"))
    return ids


def citing_files() -> list[Path]:
    return [p for p in REPO.rglob("*") if p.suffix in (".py", ".md") and p.is_file()
            and not SKIPPED_DIRS & set(p.relative_to(REPO).parts)]


def test_the_contract_sections_exist():
    for page, wanted in CONTRACT.items():
        assert wanted <= anchors(SEMANTICS / page), f"docs/semantics/{page}: missing {wanted - anchors(SEMANTICS / page)}"


def test_anchors_are_read_as_mkdocs_makes_them(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Title\n\n## Other job sets (`--cleaning`)\n\n```\n## not a heading\n```\n\n### PV-EASY\n")
    assert anchors(page) == {"title", "other-job-sets-cleaning", "pv-easy"}


@pytest.mark.slow
def test_every_cited_semantics_anchor_exists():
    pages = {page.name: anchors(page) for page in SEMANTICS.glob("*.md")}
    cited = 0
    broken = []
    for path in citing_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for page, anchor in CITATION.findall(line):
                cited += 1
                if anchor not in pages.get(page, set()):
                    broken.append(f"{path.relative_to(REPO)}:{number}: {page}#{anchor}")
    assert cited > 50  # the code does cite the pages (a changed citation form would otherwise pass silently)
    assert not broken, "citations of a missing section:\n" + "\n".join(broken)
