"""The product knows no study: no study's number, table or figure, no issue number, no `../shared`.

A study is a plug-in folder (``experiments/studies/``, with ``bftune reproduce``'s machinery in
``experiments/reproduce/``); the product layers and the command's help texts describe what the code does,
in general terms. Where the project's development data lives (``../shared``) is the tests' and benchmarks'
business: the product names archive traces by catalogue name (``archive:KTH-SP2``). Issue numbers belong in
commit messages and the changelog, not in code.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from locations import REPO

#: What the product may not say, each with why.
PATTERNS = {
    "a study by number": re.compile(r"\bstud(?:y|ies)\s+0\d\d\b|\bs00\d\b", re.IGNORECASE),
    "a definite study": re.compile(r"\bthe (?:study|studies|paper)\b|(?<!\ba )(?<!\bone )\bstudy's\b", re.IGNORECASE),
    "a table or figure of a publication": re.compile(r"\b(?:Table|Figure|Fig\.|Section)s?\s+\d"),
    "an issue number": re.compile(r"\bissues?\s+#?\d+|(?:(?<=\s)|(?<=\())#\d{1,4}(?=[,;)\]]|\s*$)", re.IGNORECASE),
    "the project's development data": re.compile(r"\.\./shared|shared/(?:seeds|workloads|batsim)"),
}

#: The product: every layer below the studies, the command line, the shipped configs, the API.
PRODUCT = ("schedulers", "learning", "workloads", "platforms", "support", "experiments/runs", "experiments/campaign",
           "experiments/tune", "experiments/cli", "experiments/configs", "api.py", "__init__.py")
#: Where studies are the subject: the command that reproduces them.
ABOUT_STUDIES = {Path("experiments/cli/reproduce.py")}


def findings(text: str, where: str) -> list[str]:
    """Each line's matches, a phrase that runs on into the next line (a wrapped docstring or comment) included."""
    out = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        following = lines[number].lstrip(" \t#*-\"'") if number < len(lines) else ""
        window = f"{line} {following}"
        for what, pattern in PATTERNS.items():
            match = pattern.search(line) or next(
                (m for m in pattern.finditer(window) if m.start() < len(line) < m.end()), None)
            if match:
                out.append(f"{where}:{number}: {what}: {match.group(0)!r} in {line.strip()[:120]!r}")
    return out


def product_files() -> list[Path]:
    files = []
    for root in PRODUCT:
        path = REPO / root
        candidates = [path] if path.is_file() else [*path.rglob("*.py"), *path.rglob("*.toml"), *path.rglob("*.md")]
        files += [p for p in candidates if "__pycache__" not in p.parts and p.relative_to(REPO) not in ABOUT_STUDIES]
    return sorted(files)


def test_the_scanner_sees_each_kind_of_study_material():
    planted = "\n".join([
        "# the kind of study 004 (see its Table 7)",
        "help='number of windows (the study: 440)'",
        "reads ../shared/workloads/KTH-SP2.swf.gz",
        "fixed in issue 12",
        "a rerun (#30)",
        "as the PV-EASY study's Figure 4",
    ])
    wrapped = "runs that were not killed.  Study\n    004 does not say which it did"
    assert [f.split(": ")[1] for f in findings(wrapped, "x")] == ["a study by number"]
    kinds = {line.split(": ")[1] for line in findings(planted, "x")}
    assert kinds == set(PATTERNS)
    assert len(findings(planted, "x")) >= 6
    # and what the product legitimately says
    clean = "\n".join(['run "0000015#1"', "Batsim message at now=30.0, event #1 (JOB_SUBMITTED)", "a study's presets",
                       "color:#444", "the out_jobs table", "weeks of the trace"])
    assert findings(clean, "x") == []


def test_no_product_source_names_a_study_an_issue_or_shared():
    found = [f for path in product_files() for f in findings(path.read_text(), str(path.relative_to(REPO)))]
    assert found == [], "\n".join(found)


def _parsers() -> dict[str, argparse.ArgumentParser]:
    from bftune.experiments.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"bftune": parser, **{f"bftune {name}": p for name, p in sub.choices.items() if name != "reproduce"}}


@pytest.mark.parametrize("command", sorted(_parsers()))
def test_no_help_text_names_a_study_an_issue_or_shared(command):
    from bftune.experiments.runs.presets import DEFAULT, PRESETS

    text = re.sub(r"\s+", " ", _parsers()[command].format_help())  # argparse wraps lines: a phrase may span two
    # `--preset` lists the presets the command line adds from the studies' folders, in their own words
    for preset in sorted(PRESETS.values(), key=lambda p: -len(p.name)):
        if preset is not DEFAULT:
            text = text.replace(re.sub(r"\s+", " ", preset.summary), "").replace(preset.name, "")
    assert findings(text, command) == []
