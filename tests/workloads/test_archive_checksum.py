"""Archive traces read through ``archive:NAME`` are checked against their pinned sha256 (cached by size, mtime,
ctime and inode), a file named by its path never is, and a data directory that is a symlink loop says so."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.cli.main import main
from bftune.support import cachedir
from bftune.workloads import download as dl
from bftune.workloads.archive import Archive, ChecksumMismatch, data_dir, file_sha256
from bftune.workloads.catalogue import CATALOGUE
from bftune.workloads.errors import WorkloadError
from archive_support import ONLINE, needs_shared
from locations import SHARED_WORKLOADS

import tomllib

KTH = CATALOGUE["kth_sp2"]
SDSC = CATALOGUE["sdsc_sp2"]
#: A small, valid SWF trace: what a user's own variant of KTH-SP2 might be.
VARIANT = gzip.compress(b"; MaxProcs: 4\n" + b"".join(
    f"{i} {10 * i} -1 {20 + i} 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n".encode() for i in range(1, 21)))



@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cache directory of this test's own (the checksum cache starts empty)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BFTUNE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def hashes(monkeypatch) -> list[str]:
    """The files hashed (``sha256_file`` calls), in order."""
    calls: list[str] = []
    real = dl.sha256_file

    def counting(path):
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(dl, "sha256_file", counting)
    return calls


def substituted(tmp_path: Path, data: bytes = VARIANT) -> tuple[Path, Path]:
    """A data directory holding ``data`` under KTH-SP2's file name: (directory, file)."""
    folder = tmp_path / "traces"
    folder.mkdir(exist_ok=True)
    path = folder / KTH.filename
    path.write_bytes(data)
    return folder, path


def test_a_substituted_trace_is_refused_in_one_line_naming_both_ways_out(tmp_path, cache):
    folder, path = substituted(tmp_path)
    with pytest.raises(ChecksumMismatch) as info:
        data_dir(str(folder)).require("KTH-SP2")
    message = str(info.value)
    assert isinstance(info.value, WorkloadError) and "\n" not in message
    found = file_sha256(path)
    assert str(path) in message and f"sha256 {found[:12]}" in message and f"expected {KTH.sha256[:12]}" in message
    assert f"`bftune download KTH-SP2 --dest {folder}`" in message
    assert "--trace PATH" in message and "instead of archive:KTH-SP2" in message
    # resolve(), what campaign configs and studies go through, the same
    with pytest.raises(ChecksumMismatch):
        data_dir(str(folder)).resolve("archive:kth_sp2")
    assert data_dir(str(folder)).resolve(str(path)) == str(path)  # a path is not an archive name: not checked


@needs_shared
def test_another_archive_trace_or_a_recompressed_copy_under_the_name_is_refused(tmp_path, cache):
    kth = (SHARED_WORKLOADS / KTH.filename).read_bytes()
    for data in ((SHARED_WORKLOADS / SDSC.filename).read_bytes(), gzip.compress(gzip.decompress(kth), 1)):
        folder, _ = substituted(tmp_path, data)
        with pytest.raises(ChecksumMismatch, match="is not the archive's KTH-SP2"):
            data_dir(str(folder)).require("KTH-SP2")
    folder, path = substituted(tmp_path, kth)  # the archive's own file: accepted
    assert data_dir(str(folder)).require("KTH-SP2") == path


def test_campaign_on_a_substituted_archive_trace_exits_2_and_runs_nothing(tmp_path, cache, capsys):
    folder, path = substituted(tmp_path)
    config = tmp_path / "c.toml"
    config.write_text(ONLINE.format(trace="archive:KTH-SP2"))
    out = tmp_path / "out"
    assert main(["campaign", str(config), "--out", str(out), "--data", str(folder), "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bftune: error")]
    assert len(err) == 1 and "[workload] trace" in err[0] and "is not the archive's KTH-SP2" in err[0]
    assert not out.exists()


def test_the_documented_way_to_use_a_variant_is_its_path(tmp_path, cache, hashes, capsys):
    """Named by its path, the same file is read without a check: in a config and on the command line."""
    _, path = substituted(tmp_path)
    text = ONLINE.format(trace=path)
    campaign = campaign_from_dict(tomllib.loads(text), "c.toml", text)
    assert campaign.specs and hashes == []
    assert main(["simulate", "--trace", str(path), "--out", str(tmp_path / "sim")]) == 0
    assert hashes == [] and (tmp_path / "sim").is_dir()


@needs_shared
def test_the_check_is_cached_and_redone_when_the_file_changes(tmp_path, cache, hashes):
    folder, path = substituted(tmp_path, (SHARED_WORKLOADS / KTH.filename).read_bytes())
    for _ in range(3):
        assert data_dir(str(folder)).require("KTH-SP2") == path
    assert hashes == [str(path)]  # once, for three reads
    assert (cache / cachedir.CHECKSUMS).is_file()

    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # touched: the same bytes
    assert data_dir(str(folder)).require("KTH-SP2") == path
    assert len(hashes) == 2

    with open(path, "r+b") as fh:  # one byte changed, size kept, mtime set back: ctime still tells
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(ChecksumMismatch):
        data_dir(str(folder)).require("KTH-SP2")
    assert len(hashes) == 3


def test_a_mismatch_is_cached_too_and_a_replaced_file_is_rehashed(tmp_path, cache, hashes):
    folder, path = substituted(tmp_path)
    for _ in range(2):
        with pytest.raises(ChecksumMismatch):
            data_dir(str(folder)).require("KTH-SP2")
    assert len(hashes) == 1
    other = tmp_path / "other.swf.gz"
    other.write_bytes(VARIANT + b"\0")
    os.replace(other, path)  # another inode and size
    with pytest.raises(ChecksumMismatch):
        data_dir(str(folder)).require("KTH-SP2")
    assert len(hashes) == 2


@pytest.mark.parametrize("spoil", ["file in the way", "garbled", "wrong shape", "fifo"])
def test_an_unusable_cache_only_costs_a_hash(tmp_path, monkeypatch, hashes, spoil):
    folder, _ = substituted(tmp_path)
    cache = tmp_path / "cache"
    if spoil == "file in the way":
        cache.write_text("not a directory")
    else:
        target = cache / cachedir.CHECKSUMS
        target.parent.mkdir(parents=True)
        if spoil == "fifo":
            os.mkfifo(target)  # would block a plain open() for good
        else:
            target.write_text("{not json" if spoil == "garbled" else '{"format": 1, "files": {"x": 3}}')
    monkeypatch.setenv("BFTUNE_CACHE_DIR", str(cache))
    for _ in range(2):
        with pytest.raises(ChecksumMismatch):
            data_dir(str(folder)).require("KTH-SP2")
    # a cache that cannot be written is hashed at every read; any other is replaced by a good one at the first
    assert len(hashes) == (2 if spoil == "file in the way" else 1)


def test_unpinned_traces_and_stand_ins_are_not_checked(tmp_path, cache, hashes):
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / CATALOGUE["kit_fh2"].filename).write_bytes(VARIANT)
    assert data_dir(str(folder)).require("KIT-FH2").is_file()
    _, path = substituted(tmp_path)
    assert Archive(folder, verify=False).require("KTH-SP2") == path
    assert hashes == []


def test_something_else_under_a_trace_name_is_one_line(tmp_path, cache):
    folder = tmp_path / "traces"
    (folder / KTH.filename).mkdir(parents=True)
    with pytest.raises(WorkloadError, match=r"is a directory, not the trace's file; move it away"):
        data_dir(str(folder)).require("KTH-SP2")
    loop = folder / SDSC.filename
    loop.symlink_to(loop)
    with pytest.raises(WorkloadError, match="is a symbolic link loop, not the trace's file"):
        data_dir(str(folder)).require("SDSC-SP2")


def test_a_data_directory_that_is_a_symlink_loop_says_so(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    monkeypatch.setenv("BFTUNE_DATA", str(a))
    with pytest.raises(WorkloadError) as info:
        data_dir()
    assert "symbolic link loop" in str(info.value) and "no such directory" not in str(info.value)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    with pytest.raises(WorkloadError, match=f"a symbolic link to {tmp_path / 'gone'}, which does not exist"):
        data_dir(str(dangling))
    with pytest.raises(WorkloadError, match="no such directory"):
        data_dir(str(tmp_path / "typo"))


def test_the_command_line_reads_archive_names_checked_like_campaigns(tmp_path, cache, monkeypatch, capsys):
    """``bftune simulate --trace archive:KTH-SP2`` reads the data directory's file, checked as campaigns are."""
    folder, path = substituted(tmp_path)
    monkeypatch.setenv("BFTUNE_DATA", str(folder))
    for command in ("simulate", "replay", "tune"):  # every command that reads --trace resolves it alike
        assert main([command, "--trace", "archive:KTH-SP2", "--out", str(tmp_path / "sim")]) == 2, command
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("bftune: error: archive:KTH-SP2: ") and "is not the archive's KTH-SP2" in line
        assert not (tmp_path / "sim").exists()
    if (SHARED_WORKLOADS / KTH.filename).is_file():
        path.write_bytes((SHARED_WORKLOADS / KTH.filename).read_bytes())
        assert main(["simulate", "--trace", "archive:kth_sp2", "--out", str(tmp_path / "sim")]) == 0
        assert (tmp_path / "sim" / "out_jobs.csv").is_file()
