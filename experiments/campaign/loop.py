"""The one resumable executor loop: campaigns (``runner.py``) and ``bftune learn-index`` run on it.

A caller describes its work (:class:`Work`): the items its directory does not
hold yet (resume is the caller's: it skips what it has stored), the function
that runs one item in a worker, and how the coordinator stores a finished
record.  :func:`run_work` opens the backend (``executors.py``: inline, local
processes or Dask), draws the one progress line, turns an item lost with its
worker into the caller's failure record, stores every record as soon as it
arrives, and on an interrupt (SIGINT, or SIGTERM through the CLI) stops the
workers at once, says how many items are stored and how to resume, and
re-raises.  Locking the directory stays with the caller, whose lock also
covers what it writes before and after the loop; every caller keeps its
directory in the one resumable store (:mod:`bftune.support.store`: the lock,
the leftovers, one atomic file per finished item, its identity file), each in
its own layout, and stores through it in ``Work.store``.

A caller that runs in stages (``bftune tune``: each stage's items depend on
the last's results) opens one :class:`Session` and hands it to every
:func:`run_work`: its workers and its progress line last the whole command
instead of one call.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO

from bftune.experiments.campaign.executors import Backend, completed, open_backend
from bftune.support.progress import Progress


@dataclass
class Work:
    """One invocation's items and what its caller does with them."""

    fn: Callable[[Any], dict]  # runs one item in a worker (module level: it travels to processes and Dask)
    items: Iterable[Any]  # the items to run, in submission order (may be made as they are pulled)
    count: int  # how many ``items`` holds
    total: int  # items of the whole task, those stored before included
    lost: Callable[[Any, BaseException], dict]  # the failure record of an item whose worker died or was lost
    store: Callable[[dict], bool]  # stores one finished record (in the coordinator); whether it succeeded
    header: Callable[[str], str]  # the opening line, given the backend's description
    stored_in: str  # where the stored items are, for the note on an interrupt
    noun: str = "runs"  # what an item is called in that note
    label: str = ""  # the progress line's label
    detail: Callable[[int, float], str] | None = None  # the progress line's detail, from (succeeded, seconds)


@dataclass
class Ran:
    """What :func:`run_work` did: the backend's description, seconds, items that succeeded and failed."""

    executor: str
    wall_s: float
    done: int
    failed: int


class Session:
    """A backend and a progress line kept across several :func:`run_work` calls (opened at the first)."""

    def __init__(self, workers: int | None, dask, bar: Progress) -> None:
        self.workers, self.dask, self.bar = workers, dask, bar
        self.backend: Backend | None = None

    def open(self) -> Backend:
        if self.backend is None:
            self.backend = open_backend(self.workers, self.dask)
        return self.backend

    def close(self, finished: bool) -> None:
        """Stop the workers (at once unless ``finished``) and end the progress line."""
        self.bar.close()
        if self.backend is not None:
            self.backend.executor.shutdown(wait=finished)
            self.backend.close()
            self.backend = None


def run_work(work: Work, *, workers: int | None = None, dask=None, progress: bool = True,
             stream: TextIO | None = None, session: Session | None = None) -> Ran:
    """Run ``work.items`` on a backend, storing each record as it finishes (see the module docstring).

    With a ``session``, its backend and progress line serve (and stay open; the caller closes the session), and
    ``work.store`` draws the line.
    """
    stream = stream if stream is not None else sys.stderr
    t0 = time.monotonic()
    if session is not None:
        backend, bar = session.open(), session.bar
    else:
        backend = open_backend(workers if work.count else 1, dask if work.count else None)
        if progress:
            stream.write(work.header(backend.description) + "\n")
        bar = Progress(work.total, work.total - work.count, stream, enabled=progress, label=work.label)
        bar.draw(force=True)
    ran = Ran(executor=backend.description, wall_s=0.0, done=0, failed=0)
    finished = False
    try:
        for item, result in completed(backend.executor, work.fn, work.items, backend.capacity):
            if isinstance(result, BaseException):
                result = work.lost(item, result)
            ok = work.store(result)
            ran.done += ok
            ran.failed += not ok
            if session is not None:
                continue  # the caller's store draws the session's line (its items may count several units)
            if work.detail is not None:
                bar.detail = work.detail(ran.done, time.monotonic() - t0)
            bar.update(ok)
        finished = True
    except KeyboardInterrupt:
        if session is not None:  # its owner says what is stored, over all its calls
            session.close(False)
            raise
        bar.close()
        stream.write(f"interrupted: {work.total - work.count + ran.done} of {work.total} {work.noun} are stored in "
                     f"{work.stored_in}; run the same command again to resume\n")
        raise
    finally:
        if session is None:
            backend.executor.shutdown(wait=finished)  # not finished: stop the workers now
            backend.close()
    if session is None:
        bar.close()
    ran.wall_s = time.monotonic() - t0
    return ran
