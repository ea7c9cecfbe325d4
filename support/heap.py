"""The ``bftune`` process's set-up: give large freed buffers back to the system (glibc's fixed mmap threshold).

glibc serves allocations above a threshold (numpy arrays, large strings and
byte buffers) with ``mmap`` and unmaps them when they are freed.  Its
threshold is dynamic, though: freeing such a buffer raises the threshold to
that buffer's size (up to 32 MiB on 64-bit systems), so the next buffers of
that size come from the heap, where freed space stays resident.  Reading a
trace frees tens of megabytes of parsing buffers before the simulation
starts; with the dynamic threshold they stayed in the process for the rest
of the run, under the simulation's and the summary's own memory.  Setting
the threshold explicitly (to glibc's own default, 128 KiB) turns the dynamic
adjustment off.  Where there is no glibc ``mallopt`` this does nothing.

The console script (``experiments/cli/main.py``, ``entry``) calls it first, for
its own process only: a library user's process is left as it is.  What it
buys, measured 2026-11-25 (peak resident memory of a fresh ``bftune simulate
--trace T --out DIR``, EASY-FCFS, GNU time's figure, the same runs with and
without the call, alternately; out_jobs.csv identical): CTC-SP2 75.7 MiB
against 76.4 with the parse cache warm (what users run after a trace's first
read), 90.7 against 92.5 with ``BFTUNE_TRACE_CACHE=off`` (the first read);
CEA-Curie 250 against 261 MiB (warm).  It costs 0.03 to 0.2 s more system
time (more ``mmap``/``munmap``) and no measurable user time (CTC-SP2 1.19-1.29
against 1.21-1.35 s, two shared cores under load 5).  When it was introduced
(CHANGELOG.md) it took CTC-SP2's peak from 89 to 82 MiB; the parser has
freed less since.
"""

from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
DEFAULT_THRESHOLD = 128 * 1024


def fix_mmap_threshold(threshold: int = DEFAULT_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold for this process; whether it could (False without glibc)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # no C library to ask, or no mallopt in it
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, threshold) == 1
