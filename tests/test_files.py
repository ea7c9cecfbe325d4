"""Atomic file writes (bftune.files)."""

from __future__ import annotations

import os

import pytest
from bftune import files as atomic
from bftune.files import atomic_write_bytes, atomic_write_text


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
