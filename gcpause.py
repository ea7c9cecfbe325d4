"""Pausing Python's cyclic garbage collector around allocation-heavy phases.

Reading a 300,000-job trace or simulating it creates millions of small
objects (records, jobs, runs, tuples) that live until the phase ends.  Every
few hundred allocations CPython's cyclic collector runs, and its older
generations walk *all* of those live objects again and again: on CEA-Curie
that was a third of the whole run time.  These objects form no reference
cycles (plain records and lists), so reference counting frees everything
that dies; pausing the cyclic collector for the phase loses nothing but that
repeated walk.  The previous state is restored on exit, exceptions included.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
