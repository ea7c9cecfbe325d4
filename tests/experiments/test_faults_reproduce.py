"""``reproduce --report-only`` works only on a reproduction's directory that nothing else holds (issue 32).

It used to write a report of dashes (exit 0) into a directory that a
running ``reproduce`` was filling, or into any unrelated directory, and on
a missing one its error named a temporary file.  A reproduction now holds
its directory as a campaign does (``DirectoryLock``).
"""

from __future__ import annotations

import json
import os

import pytest
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import DirectoryLock
from bftune.experiments.cli.main import main
from bftune.experiments.reproduce import command


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def reproduction_dir(path):
    """What a reproduction leaves: configs and a stored campaign."""
    (path / "campaigns" / "KTH-SP2").mkdir(parents=True)
    (path / "campaigns" / "KTH-SP2" / "campaign.json").write_text(json.dumps({"kind": "offline", "specs": []}))
    (path / "configs").mkdir()
    return path


def test_report_only_on_a_missing_directory_names_it(tmp_path, capsys):
    missing = tmp_path / "no-such-reproduction"
    assert main(["reproduce", "000", "--report-only", "--out", str(missing)]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"bftune: error: {missing}: no such reproduction directory")
    assert os.listdir(tmp_path) == []


def test_report_only_on_an_unrelated_directory_writes_nothing(tmp_path, capsys):
    (tmp_path / "thesis.tex").write_text("years of work")
    assert main(["reproduce", "000", "--report-only", "--out", str(tmp_path)]) == 2
    assert one_error_line(capsys).startswith(f"bftune: error: {tmp_path}: not a reproduction directory")
    assert os.listdir(tmp_path) == ["thesis.tex"]


@pytest.mark.parametrize("report_only", [True, False], ids=["--report-only", "a second reproduce"])
def test_a_directory_held_by_a_running_reproduction_is_refused(tmp_path, capsys, report_only):
    out = reproduction_dir(tmp_path / "r")
    with DirectoryLock(out):  # as a running `bftune reproduce` holds it
        before = sorted(os.listdir(out))
        assert main(["reproduce", "000", "--out", str(out), *(["--report-only"] if report_only else [])]) == 2
    assert "in use by another campaign" in one_error_line(capsys)
    assert sorted(os.listdir(out)) == before  # no report of dashes


def test_a_running_reproduction_holds_its_directory(tmp_path, monkeypatch, capsys):
    out = tmp_path / "r"
    held = []

    def run_study(study, scale, out_dir, *args, **kwargs):
        try:
            with DirectoryLock(out_dir):
                held.append(False)
        except CampaignError:
            held.append(True)
        return [], []

    monkeypatch.setattr(command, "run_study", run_study)
    monkeypatch.setattr(command, "write_report", lambda study, scale, out_dir, *args: out_dir / "report.md")
    assert main(["reproduce", "000", "--out", str(out), "--no-progress"]) == 0
    assert held == [True]
