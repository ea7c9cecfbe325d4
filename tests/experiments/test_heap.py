"""glibc's mmap threshold (bftune.support.heap): set where glibc is, harmless elsewhere."""

from __future__ import annotations

import ctypes
import subprocess
import sys

from bftune.support import heap


def test_fixing_the_threshold_in_a_fresh_process():
    code = "from bftune.support.heap import fix_mmap_threshold; print(fix_mmap_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    glibc = hasattr(ctypes.CDLL(None), "mallopt") and sys.platform.startswith("linux")
    assert out == ("True" if glibc else "False")


def test_no_c_library_is_not_an_error(monkeypatch):
    def no_library(name):
        raise OSError("no C library here")

    monkeypatch.setattr(heap.ctypes, "CDLL", no_library)
    assert heap.fix_mmap_threshold() is False
