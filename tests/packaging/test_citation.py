"""The license and the citation a published package carries: MIT with its copyright line, and a CITATION.cff
that cites bftune and, as the work it reproduces, the five studies of ``bftune reproduce``."""

from __future__ import annotations

import tomllib

import bftune
import pytest
from bftune.experiments.reproduce.command import load_study
from bftune.experiments.studies import STUDIES
from locations import REPO

yaml = pytest.importorskip("yaml", reason="PyYAML comes with MkDocs (the dev group)")


def test_the_license_is_mit_as_the_metadata_says():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 the bftune authors" in text
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]


def test_the_citation_cites_bftune_and_the_five_studies_it_reproduces():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["license"] == "MIT"
    assert cff["version"] == bftune.__version__ and cff["authors"] == [{"name": "the bftune authors"}]
    by_study = {ref["notes"].split(":")[0].removeprefix("Study "): ref for ref in cff["references"]}
    assert sorted(by_study) == sorted(STUDIES)  # one reference per study of `bftune reproduce`
    for number, ref in by_study.items():
        assert ref["title"] and ref["authors"] and ref["type"], number
        if number != "003":  # our copy of study 003 lacks its title page: the method's name stands for it
            assert load_study(number).title.lower() == ref["title"].lower(), number
    assert by_study["004"]["doi"] == "10.1016/j.jpdc.2022.01.003"
