"""Give large freed buffers back to the system: glibc's fixed mmap threshold.

glibc serves allocations above a threshold (numpy arrays, large strings and
byte buffers) with ``mmap`` and unmaps them when they are freed.  Its
threshold is dynamic, though: freeing such a buffer raises the threshold to
that buffer's size (up to 32 MiB on 64-bit systems), so the next buffers of
that size come from the heap, where freed space stays resident.  Reading a
trace frees tens of megabytes of parsing buffers before the simulation
starts; with the dynamic threshold they stayed in the process for the rest
of the run, under the simulation's and the summary's own memory (on
CTC-SP2 the peak of ``bftune simulate`` was ~10 % higher).  Setting the
threshold explicitly (to glibc's own default, 128 KiB) turns the dynamic
adjustment off.  Where there is no glibc ``mallopt`` this does nothing.
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
