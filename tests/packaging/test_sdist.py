"""The source distribution as published: built without a warning, holding the package, its data, the
license, the changelog and the citation, and none of the test suite (docs/developer/packaging.md says why).

It once carried 6 of the 126 test files (setuptools' default takes ``tests/test*.py``) without the helpers
they import, left the changelog out, and every build warned that ``project.license`` as a table is
deprecated.  Needs the package registry for the isolated build's setuptools (its cache makes it quick).
"""

from __future__ import annotations

import email.parser
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest
from locations import REPO
from uv_command import uv


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("sdist")
    done = subprocess.run([*uv(), "build", "--sdist", "--out-dir", str(out), str(REPO)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return next(out.glob("bftune-*.tar.gz")), done.stdout + done.stderr


def members(path: Path) -> set[str]:
    """The sdist's files, relative to its top folder."""
    with tarfile.open(path) as archive:
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


@pytest.mark.slow
def test_the_build_says_nothing_is_deprecated(sdist):
    _, log = sdist
    assert "deprecat" not in log.lower(), [line for line in log.splitlines() if "eprecat" in line]


@pytest.mark.slow
def test_the_sdist_holds_the_package_license_changelog_and_citation_and_no_tests(sdist):
    path, _ = sdist
    files = members(path)
    for needed in ("LICENSE", "CHANGELOG.md", "CITATION.cff", "README.md", "pyproject.toml", "setup.py", "py.typed",
                   "api.py", "experiments/configs/tiny_synthetic_offline.toml", "schedulers/core/fits/Lin.json"):
        assert needed in files, needed
    assert not [f for f in files if f.startswith(("tests/", "benchmarks/", "docs/"))]  # the whole suite or none
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True).stdout.split()
    modules = [f for f in tracked if not f.startswith(("tests/", "benchmarks/", "docs/")) and (REPO / f).exists()]
    assert modules and not [m for m in modules if m not in files]  # every module of the package


@pytest.mark.slow
def test_the_metadata_names_the_license_the_authors_and_where_to_read_more(sdist):
    path, _ = sdist
    with tarfile.open(path) as archive:
        info = archive.extractfile(f"{path.name.removesuffix('.tar.gz')}/PKG-INFO")
        assert info is not None
        metadata = email.parser.Parser().parsestr(info.read().decode())
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    assert metadata["Author"] == "the bftune authors"
    urls = {url.split(",")[0] for url in metadata.get_all("Project-URL")}
    assert {"Documentation", "Source", "Changelog"} <= urls
    classifiers = metadata.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    build = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    assert build == ["setuptools>=77"]  # the first that reads `license` as an SPDX expression (PEP 639)
