"""Campaign configs naming archive traces (``archive:NAME``): found in the data directory, the same runs as the
file named directly, and a missing trace stopped in one line before any run."""

from __future__ import annotations

from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.cli.main import main
from bftune.workloads.archive import Archive
from bftune.workloads.download import DownloadError
from archive_support import ONLINE, needs_shared
from locations import SHARED_WORKLOADS

import tomllib



def _campaign(trace: str, archive: Archive | None = None):
    text = ONLINE.format(trace=trace)
    return campaign_from_dict(tomllib.loads(text), "c.toml", text, archive)


@needs_shared
def test_an_archive_name_is_the_same_run_as_the_file_it_names():
    by_name = _campaign("archive:KTH-SP2")  # the data directory of the tests: ../shared/workloads (conftest)
    by_path = _campaign(str(SHARED_WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"))
    relative = _campaign("../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz")
    ids = [[s.run_id for s in c.specs] for c in (by_name, by_path, relative)]
    assert ids[0] == ids[1] == ids[2] and ids[0]
    assert by_name.specs[0].trace == by_path.specs[0].trace  # labels, tables and reports: the same as well
    assert _campaign("archive:kth_sp2", Archive(SHARED_WORKLOADS)).specs[0].run_id == ids[0][0]


def test_a_missing_archive_trace_is_one_line_naming_the_file_and_the_command(tmp_path, capsys, monkeypatch):
    def offline(name, dest_dir, base_url=None, *, timeout=60.0):
        raise DownloadError("download failed: no network")

    monkeypatch.setattr("bftune.workloads.download.download", offline)
    config = tmp_path / "c.toml"
    config.write_text(ONLINE.format(trace="archive:SDSC-BLUE"))
    data = tmp_path / "traces"
    data.mkdir()
    out = tmp_path / "out"
    assert main(["campaign", str(config), "--out", str(out), "--data", str(data), "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bftune: error")]
    assert len(err) == 1 and "[workload] trace: trace SDSC-BLUE: SDSC-BLUE-2000-4.2-cln.swf.gz is not in" in err[0]
    assert f"`bftune download SDSC-BLUE --dest {data}`" in err[0] and not out.exists()


def test_unknown_archive_names_and_bad_data_directories_are_one_line(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text(ONLINE.format(trace="archive:NOPE"))
    assert main(["campaign", str(config), "--out", str(tmp_path / "o"), "--data", str(tmp_path)]) == 2
    assert "[workload] trace: unknown trace 'NOPE'; known traces: KTH-SP2" in capsys.readouterr().err
    assert main(["campaign", str(config), "--out", str(tmp_path / "o"), "--data", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("not a directory (the directory of the archive traces; `bftune download NAME --dest DIR` "
                        "fills one)") and len(err.splitlines()) == 1
