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
def paused_gc(freeze: bool = False) -> Iterator[None]:
    """The collector paused for the block.

    ``freeze``: on the way out, every object then alive is moved out of the
    collector's sight for good (``gc.freeze``) before it resumes.  Objects
    allocated while it was paused still count towards its next collection,
    so the first allocation after it resumes walks all of them: 7 ms for
    CTC-SP2's 70,025 records, 13 ms of collections over a ``bftune
    simulate`` run.  For a command that keeps what it read until it exits
    (the trace of ``bftune simulate``), freezing loses nothing; a
    long-running process must not ask for it (a cycle among frozen objects
    would never be collected).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
