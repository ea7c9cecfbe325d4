"""bftune reproduce: the registered studies' plans are valid campaigns; the command runs, resumes and reports;
a study is a folder plus a registry line; archive traces come from the data directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.cli.main import main
from bftune.experiments.reproduce import command
from bftune.experiments.reproduce.study import CampaignPlan, Study
from bftune.experiments.studies import SCALES, STUDIES, Entry, study_presets
from bftune.workloads import archive
from bftune.workloads.catalogue import get_source
from bftune.workloads.download import DownloadError
from locations import SHARED_WORKLOADS

import tomllib

needs_shared = pytest.mark.skipif(not (SHARED_WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").exists(),
                                  reason="the ../shared workload archive is missing")
TOY = Path(__file__).parent / "fixtures" / "toy_study"


@needs_shared
@pytest.mark.parametrize("number", list(STUDIES))
@pytest.mark.parametrize("scale", SCALES)
def test_every_planned_campaign_is_a_valid_config(number, scale):
    plans = command.load_study(number).plan(scale)
    assert plans and len({p.name for p in plans}) == len(plans)
    for plan in plans:
        config = tomllib.loads(plan.config)
        sources = config.get("workload", {}).get("trace", "") + "".join(
            t for section in config.values() if isinstance(section, dict) for t in section.get("traces", []))
        assert "/" not in sources.replace("synthetic:", "")  # traces by catalogue name, never by path
        campaign = campaign_from_dict(config, f"{plan.name}.toml", plan.config)
        assert campaign.specs
        for spec in campaign.specs:
            # the data directory is ../shared/workloads (conftest): the same paths, hence run ids, as before
            if spec.trace_path is not None:
                assert Path(spec.trace_path).parent == SHARED_WORKLOADS.resolve()
                assert Path(spec.trace).parent == SHARED_WORKLOADS


def test_every_registered_study_loads():
    for number, entry in STUDIES.items():
        study = command.load_study(number)
        assert study.number == number and entry.title


def test_an_unknown_study_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["reproduce", "042", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: '042'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_a_registered_study_without_its_folder_says_so_and_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(STUDIES, "004", Entry(str(tmp_path / "nowhere"), "a study not implemented"))
    assert main(["reproduce", "004", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "study 004" in err and "__init__.py" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r" / "report.md").exists()


def test_reports_of_empty_directories_say_nothing_is_stored(tmp_path):
    nowhere = archive.Archive(tmp_path / "no-traces")  # an empty report reads no trace
    texts = {number: command.load_study(number).report(tmp_path, "quick", nowhere)
             for number in STUDIES if number != "004"}  # 004's Tables 1-3 read the traces: its own tests
    assert "Traces run: none yet" in texts["001"]
    assert "| KTH-SP2 | - | - | - | - | 29 | - |" in texts["000"]  # published value beside an empty cell, nothing invented
    assert "Not run yet" in texts["003"]
    assert "Not collected yet" in texts["002"]


# --- a study is one folder and one registry line -------------------------------------------------------------


@needs_shared
def test_a_toy_study_folder_and_one_registry_line_reproduce(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(STUDIES, "999", Entry(str(TOY), "a toy study"))
    out = tmp_path / "r"
    assert main(["reproduce", "999", "--out", str(out), "--workers", "1", "--no-progress",
                 "--data", str(SHARED_WORKLOADS)]) == 0
    report = (out / "report.md").read_text()
    assert report.startswith("# Reproduction of study 999: a toy study")
    assert "## Runs\n\nours 2, theirs 2" in report and "Scale `quick` (seconds)" in report
    size = (SHARED_WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").stat().st_size
    assert f"toy: KTH-SP2 has {size} bytes" in capsys.readouterr().out
    assert "999" in STUDIES and "toy-preset" in {p.name for p in study_presets()}  # found through the line


# --- the command on a tiny study -----------------------------------------------------------------------------

TINY = (TOY / "campaign.toml").read_text()  # the toy study's campaign: 2 runs, seconds


def _tiny_report(out: Path, scale: str, archive: archive.Archive) -> str:
    runs = (out / "campaigns" / "tiny" / "runs.csv").read_text().splitlines()
    return f"{len(runs) - 1} runs stored at scale {scale}"


@pytest.mark.slow
def test_run_study_then_resume_then_report_only(tmp_path, monkeypatch):
    extra_calls = []

    def extra(scale, out, execution):
        extra_calls.append((scale, execution.workers, execution.progress))
        return ["extra done"]

    tiny = Study("999", "a tiny study", "none.txt", plan=lambda scale: [CampaignPlan("tiny", TINY)],
                 report=_tiny_report, extra=extra, durations={"quick": "seconds"})
    monkeypatch.setattr(command, "load_study", lambda number: tiny)
    out = tmp_path / "r"
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    report = (out / "report.md").read_text()
    assert "2 runs stored at scale quick" in report and "Scale `quick` (seconds)" in report
    assert (out / "configs" / "tiny.toml").read_text() == TINY
    stored = sorted((out / "campaigns" / "tiny" / "runs").glob("*.json"))
    mtimes = [p.stat().st_mtime_ns for p in stored]
    # the same command resumes: nothing is run again
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert [p.stat().st_mtime_ns for p in stored] == mtimes
    assert extra_calls == [("quick", 1, False)] * 2
    (out / "report.md").unlink()
    assert main(["reproduce", "004", "--out", str(out), "--report-only"]) == 0
    assert extra_calls == [("quick", 1, False)] * 2 and (out / "report.md").exists()


@pytest.mark.slow
def test_only_runs_the_named_campaigns_without_extra_steps(tmp_path, monkeypatch, capsys):
    extra_calls = []

    def extra(scale, out, execution):
        extra_calls.append(scale)
        return ["extra done"]

    other = TINY.replace('name = "tiny"', 'name = "other"')
    tiny = Study("999", "a tiny study", "none.txt",
                 plan=lambda scale: [CampaignPlan("tiny", TINY), CampaignPlan("other", other)],
                 report=_tiny_report, extra=extra, durations={"quick": "seconds"})
    monkeypatch.setattr(command, "load_study", lambda number: tiny)
    out = tmp_path / "r"
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress", "--only", "tiny"]) == 0
    assert "ran only tiny (--only); extra steps skipped" in capsys.readouterr().out
    assert (out / "campaigns" / "tiny" / "runs.csv").exists() and not (out / "campaigns" / "other").exists()
    assert extra_calls == [] and "2 runs stored" in (out / "report.md").read_text()
    for only, message in (("tiny,nope", "--only: unknown nope; study 999 at scale quick has tiny, other"),
                          (",", "--only: no campaign named")):
        assert main(["reproduce", "004", "--out", str(out), "--only", only, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert main(["reproduce", "004", "--out", str(out), "--only", "tiny", "--report-only"]) == 2
    assert "--only: runs campaigns, --report-only runs none" in capsys.readouterr().err
    assert not (out / "campaigns" / "other").exists()


@pytest.mark.slow
def test_shard_runs_a_part_of_each_campaign_without_extra_steps(tmp_path, monkeypatch, capsys):
    extra_calls = []

    def extra(scale, out, execution):
        extra_calls.append(scale)
        return ["extra done"]

    tiny = Study("999", "a tiny study", "none.txt", plan=lambda scale: [CampaignPlan("tiny", TINY)],
                 report=_tiny_report, extra=extra, durations={"quick": "seconds"})
    monkeypatch.setattr(command, "load_study", lambda number: tiny)
    out = tmp_path / "r"
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress", "--shard", "1/2"]) == 0
    assert "ran shard 1/2 of each campaign (--shard" in capsys.readouterr().out
    assert len(list((out / "campaigns" / "tiny" / "runs").glob("*.json"))) == 1 and extra_calls == []
    assert "1 runs stored" in (out / "report.md").read_text()
    assert main(["reproduce", "004", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert extra_calls == ["quick"] and "2 runs stored" in (out / "report.md").read_text()
    assert main(["reproduce", "004", "--out", str(out), "--shard", "0/2", "--report-only"]) == 2
    assert "--shard: runs campaigns, --report-only runs none" in capsys.readouterr().err


def test_an_output_path_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["reproduce", "004", "--out", str(target), "--no-progress"]) == 2
    assert "not a directory" in capsys.readouterr().err


# --- the data directory --------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_data_directory_that_does_not_exist_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, how):
    missing = tmp_path / "no-such-dir"
    argv = ["reproduce", "000", "--out", str(tmp_path / "r"), "--no-progress"]
    if how == "option":
        argv += ["--data", str(missing)]
    else:
        monkeypatch.setenv("BFTUNE_DATA", str(missing))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{missing}: no such directory" in err
    assert ("--data" if how == "option" else "BFTUNE_DATA") in err
    assert not (tmp_path / "r").exists()


def _offline(name, dest_dir, base_url=None, *, timeout=60.0):
    raise DownloadError(f"https://archive.example/{name}: download failed: no network")


def test_a_missing_trace_is_downloaded_or_named_with_its_command_before_any_run(tmp_path, capsys, monkeypatch):
    data = tmp_path / "traces"
    data.mkdir()
    monkeypatch.setattr("bftune.workloads.download.download", _offline)
    out = tmp_path / "r"
    assert main(["reproduce", "000", "--out", str(out), "--data", str(data), "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bftune: error")]
    assert len(err) == 1
    assert "CTC-SP2-1996-3.1-cln.swf.gz is not in" in err[0] and "no network" in err[0]
    assert f"`bftune download CTC-SP2 --dest {data}`" in err[0]
    assert not (out / "campaigns").exists()  # nothing ran


@needs_shared
def test_a_missing_trace_is_fetched_with_the_verified_download(tmp_path, monkeypatch):
    fetched = []

    def mirror(name, dest_dir, base_url=None, *, timeout=60.0):
        fetched.append(name)
        source = SHARED_WORKLOADS / get_source(name).filename
        target = Path(dest_dir) / source.name
        target.write_bytes(source.read_bytes())
        return target

    monkeypatch.setattr("bftune.workloads.download.download", mirror)
    data = tmp_path / "traces"
    data.mkdir()
    path = archive.data_dir(str(data)).require("KTH-SP2")
    assert fetched == ["KTH-SP2"] and path == data / "KTH-SP2-1996-2.1-cln.swf.gz" and path.is_file()
    assert archive.data_dir(str(data)).require("kth_sp2") == path and fetched == ["KTH-SP2"]  # present: no fetch


def test_the_default_data_directory_is_the_users(monkeypatch, tmp_path):
    monkeypatch.delenv("BFTUNE_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert archive.data_dir().directory == tmp_path / "xdg" / "bftune" / "traces"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert archive.data_dir().directory == tmp_path / "home" / ".local" / "share" / "bftune" / "traces"
    monkeypatch.setenv("BFTUNE_DATA", str(tmp_path))
    assert archive.data_dir() == archive.Archive(tmp_path, "BFTUNE_DATA")
    assert archive.data_dir(os.path.relpath(tmp_path)).directory == tmp_path  # --data wins, made absolute
