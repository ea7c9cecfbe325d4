"""Atomic files, result directories replaced as a set, leftovers, output checks (bftune.support.files)."""

from __future__ import annotations

import errno
import fcntl
import os

import pytest
from bftune.support import files as atomic
from bftune.support.files import (
    MARKER,
    OutputError,
    atomic_write_bytes,
    atomic_write_many,
    atomic_write_text,
    check_output_dir,
    check_output_file,
    check_writable_dir,
    clean_leftovers,
    result_dir,
)


def test_writes_and_replaces_without_leftovers(tmp_path):
    path = tmp_path / "out.txt"
    assert atomic_write_text(path, "first\n") == path
    assert path.read_text() == "first\n"
    atomic_write_bytes(path, b"second")
    assert path.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["out.txt"]
    assert path.stat().st_mode & 0o777 == 0o666 & ~atomic._UMASK


def test_failure_keeps_the_old_file_and_removes_the_temp(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_missing_directory_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        atomic_write_text(tmp_path / "no" / "such" / "dir.txt", "x")


# --- result directories: replaced as a set -------------------------------------------------------


def write_set(directory, tag: str) -> None:
    (directory / "a.csv").write_text(f"a {tag}\n")
    (directory / "b.json").write_text(f"b {tag}\n")


def read_set(directory) -> dict:
    return {p.name: p.read_text() for p in sorted(directory.iterdir()) if p.name != MARKER}


def test_a_result_directory_appears_whole(tmp_path):
    out = tmp_path / "deep" / "res"
    with result_dir(out) as stage:
        assert stage.parent == out.parent and stage.name.startswith(".res.part-")
        write_set(stage, "new")
        assert not out.exists()  # nothing under the final name before the end
    assert read_set(out) == {"a.csv": "a new\n", "b.json": "b new\n"}
    assert (out / MARKER).exists()
    assert sorted(os.listdir(out.parent)) == ["res"]
    assert out.stat().st_mode & 0o777 == 0o777 & ~atomic._UMASK


def test_success_replaces_the_old_set_and_failure_keeps_it(tmp_path):
    out = tmp_path / "res"
    with result_dir(out) as stage:
        write_set(stage, "old")
    with pytest.raises(RuntimeError):
        with result_dir(out) as stage:
            (stage / "a.csv").write_text("a half\n")
            raise RuntimeError("killed between the two files")
    assert read_set(out) == {"a.csv": "a old\n", "b.json": "b old\n"}
    with result_dir(out) as stage:
        write_set(stage, "new")
    assert read_set(out) == {"a.csv": "a new\n", "b.json": "b new\n"}
    assert sorted(os.listdir(tmp_path)) == ["res"]


def test_keep_failed_moves_the_attempt_aside_until_a_success(tmp_path):
    out = tmp_path / "res"
    for attempt in ("first", "second"):
        with pytest.raises(KeyboardInterrupt):
            with result_dir(out, keep_failed=True) as stage:
                (stage / "log").write_text(attempt)
                raise KeyboardInterrupt
        assert not out.exists() and (tmp_path / "res.failed" / "log").read_text() == attempt
    with result_dir(out, keep_failed=True) as stage:
        write_set(stage, "new")
    assert sorted(os.listdir(tmp_path)) == ["res"]


def test_two_renames_where_there_is_no_atomic_exchange(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    out = tmp_path / "res"
    for tag in ("old", "new"):
        with result_dir(out) as stage:
            write_set(stage, tag)
    assert read_set(out) == {"a.csv": "a new\n", "b.json": "b new\n"}
    assert sorted(os.listdir(tmp_path)) == ["res"]
    # A crash between the two renames: the old set waits under .res.old-*; the next run restores it.
    old = tmp_path / ".res.old-abcd1234"
    os.rename(out, old)
    assert clean_leftovers(tmp_path, "res") == [old]
    assert read_set(out) == {"a.csv": "a new\n", "b.json": "b new\n"}


def test_the_swap_is_atomic_on_this_system(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    if not atomic.exchange(a, b):
        pytest.skip("no atomic exchange here (the two-rename path is tested above)")
    assert (b / "x").read_text() == "a" and not (a / "x").exists()


def test_foreign_directories_are_never_swept_away(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError, match="holds 'thesis.tex', which is not part of an earlier result"):
        result_dir(home)
    # ...but a result of an earlier version (no marker) is recognised by its names.
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    write_set(legacy, "old")
    with result_dir(legacy, replaces=("a.csv", "b.json")) as stage:
        write_set(stage, "new")
    assert read_set(legacy)["a.csv"] == "a new\n"


def test_a_result_directory_that_another_command_wrote_into_is_never_replaced(tmp_path):
    out = tmp_path / "D"
    with result_dir(out, replaces=("a.csv", "b.json")) as stage:
        write_set(stage, "first")
    assert (out / atomic.MARKER).read_text().splitlines()[1:] == ["#kind a.csv,b.json", "a.csv", "b.json"]  # whose, what
    (out / "runs").mkdir()  # a campaign's stored runs, written into the directory later
    (out / "runs" / "0123.json").write_text("{}")
    with pytest.raises(OutputError, match="holds 'runs', which is not part of an earlier result"):
        result_dir(out, replaces=("a.csv", "b.json"))
    assert (out / "runs" / "0123.json").exists() and (out / "a.csv").read_text() == "a first\n"
    # a marker of an earlier version lists nothing: only the caller's own names may then be replaced
    (out / atomic.MARKER).write_text("written by bftune; replaced as a whole by the next run\n")
    with pytest.raises(OutputError, match="holds 'runs'"):
        result_dir(out, replaces=("a.csv", "b.json"))


def test_a_directory_written_into_during_the_work_is_not_replaced_at_its_end(tmp_path):
    out = tmp_path / "D"
    with result_dir(out, replaces=("a.csv", "b.json")) as stage:
        write_set(stage, "first")
    with pytest.raises(OutputError, match="now holds 'report.md', which this command did not write"):
        with result_dir(out, replaces=("a.csv", "b.json")) as stage:
            write_set(stage, "second")
            (out / "report.md").write_text("a campaign's report, written meanwhile")
    assert (out / "report.md").exists() and (out / "a.csv").read_text() == "a first\n"


def test_leftovers_of_dead_writers_are_cleaned_and_live_ones_kept(tmp_path):
    dead_dir = tmp_path / ".res.part-deadbeef"
    dead_dir.mkdir()
    (dead_dir / "out_jobs.csv").write_text("833 of 27992 jobs")
    dead_file = tmp_path / ".res.x1y2z3w4.tmp"
    dead_file.write_text("half")
    live = tmp_path / ".res.part-alive123"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a writer that is still running
    other = tmp_path / ".other.part-deadbeef"
    other.mkdir()
    user_file = tmp_path / ".res.notes"
    user_file.write_text("mine")
    try:
        removed = clean_leftovers(tmp_path, "res")
    finally:
        os.close(fd)
    assert sorted(removed) == sorted([dead_dir, dead_file])
    assert live.exists() and other.exists() and user_file.exists()


def test_temporaries_are_locked_while_written(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):  # at the moment of the rename, a cleaner must not take the temporary
        seen.append(clean_leftovers(tmp_path))
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spy)
    atomic_write_many({tmp_path / "w.json": b"{}", tmp_path / "p.xml": b"<p/>"})
    assert seen == [[], []]
    assert sorted(os.listdir(tmp_path)) == ["p.xml", "w.json"]


def test_a_set_of_files_is_written_before_any_rename(tmp_path, monkeypatch):
    (tmp_path / "w.json").write_text("old")
    calls = []
    real_write = atomic._write_all

    def full_disk(fd, data):
        calls.append(data)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write(fd, data)

    monkeypatch.setattr(atomic, "_write_all", full_disk)
    with pytest.raises(OSError) as info:
        atomic_write_many({tmp_path / "w.json": b"new", tmp_path / "p.xml": b"<p/>"})
    assert info.value.filename == str(tmp_path / "p.xml")  # the error names the file
    assert sorted(os.listdir(tmp_path)) == ["w.json"] and (tmp_path / "w.json").read_text() == "old"


@pytest.mark.parametrize("make, check, message", [
    (lambda p: p.write_text(""), check_output_dir, "exists and is not a directory"),
    (lambda p: p.mkdir(), check_output_file, "is a directory"),
    (lambda p: p.write_text(""), check_writable_dir, "exists and is not a directory"),
])
def test_checks_name_the_path(tmp_path, make, check, message):
    target = tmp_path / "target"
    make(target)
    with pytest.raises(OutputError, match=message):
        check(str(target), "--out")
    with pytest.raises(OutputError, match="--out: empty path"):
        check("", "--out")
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputError, match="f is not a directory"):  # a file where a directory must be
        check(str(tmp_path / "f" / "x"), "--out")
    assert not any(name.endswith(".probe") for name in os.listdir(tmp_path))


def test_chunks_are_written_whole_or_not_at_all(tmp_path):
    path = tmp_path / "big.csv"
    assert atomic.atomic_write_chunks(path, (f"{i}\n".encode() for i in range(1000))) == path
    assert path.read_text() == "".join(f"{i}\n" for i in range(1000))
    path.write_text("old")

    def failing():
        yield b"partial"
        raise RuntimeError("formatter failed")

    with pytest.raises(RuntimeError, match="formatter failed"):
        atomic.atomic_write_chunks(path, failing())
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["big.csv"]


def test_a_write_error_names_the_file_not_its_temporary(tmp_path):
    from bftune.support.write_errors import shown_path, write_failure

    assert shown_path(tmp_path / ".weeks.csv.ab12cd34.tmp") == tmp_path / "weeks.csv"
    assert shown_path(tmp_path / ".out.part-ab12cd34") == tmp_path / "out"
    assert shown_path(tmp_path / "weeks.csv") == tmp_path / "weeks.csv"
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / ".r.json.ab12cd34.tmp"))
    assert write_failure(full, tmp_path, "3 runs are kept") == (
        f"{tmp_path}/r.json: cannot write it (No space left on device); 3 runs are kept: free some space, then run "
        "the same command again")
    assert write_failure(OSError(errno.EIO, "Input/output error"), tmp_path, "kept").endswith(
        "(Input/output error); kept: run the same command again")


def _as_a_user(monkeypatch) -> None:
    """Permission checks of a non-root user (the tests run as root, whom the kernel lets remove anything)."""
    real_unlink, real_rmdir = os.unlink, os.rmdir

    def check(name) -> None:
        parent = os.path.dirname(os.path.abspath(name))
        if not os.stat(parent).st_mode & 0o200:
            raise PermissionError(errno.EACCES, "Permission denied", name)

    def unlink(name, *, dir_fd=None):
        check(name)
        real_unlink(name)

    def rmdir(name, *, dir_fd=None):
        check(name)
        real_rmdir(name)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "rmdir", rmdir)


def test_a_result_the_user_made_read_only_is_removed_whole_once_replaced(tmp_path, monkeypatch):
    """Issue 42, item 12: a read-only result directory, once replaced, left an undeletable ``.NAME.part-*``."""
    from bftune.support.files import remove_tree

    old = tmp_path / ".oldro.part-ab12cd34"
    (old / "plots").mkdir(parents=True)
    for name in ("out_jobs.csv", "summary.json", "plots/a.png"):
        (old / name).write_text("x")
    for path in (old / "plots", old):  # chmod -R a-w
        for child in path.iterdir():
            child.chmod(0o444) if child.is_file() else None
        path.chmod(0o555)
    _as_a_user(monkeypatch)
    remove_tree(old)
    assert not old.exists()
