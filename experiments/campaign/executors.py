"""Where runs execute, behind the standard ``concurrent.futures.Executor`` interface, and the one loop over it.

- ``--workers 1``: :class:`InlineExecutor`, every run in this process (handy
  for profiling);
- ``--workers N``: :class:`ProcessPool`, N spawned local processes;
- ``--dask ADDRESS``: ``distributed.Client(ADDRESS).get_executor()``.

:func:`completed` submits runs (at most ``capacity`` at a time) and yields
each one's result, or the exception that lost it, as it finishes; the
coordinator (``runner.py``) does the rest the same way for all three.

Worker processes and faults:

- a worker whose coordinator dies - even by SIGKILL - exits at once: each
  worker watches the coordinator's end of a pipe (and its parent's sentinel)
  from a thread and calls ``os._exit`` when it closes.  The same pipe, closed
  by the coordinator, stops every worker at once on an interrupt;
- workers ignore SIGINT: Ctrl-C reaches the whole process group, and the
  coordinator alone decides (it keeps what is stored and stops the workers);
- a worker that cannot hear the pipe is terminated: the watch thread needs
  the GIL, which compiled code (``bftune accelerate``) or one long C call
  holds for as long as it runs - a SIGTERM'd campaign once went on for 50 s
  this way.  The coordinator gives the workers :data:`STOP_GRACE_S` to exit,
  then terminates (and, failing that, kills) whichever is left;
- one dead worker fails one run: each local process is its own
  one-process ``ProcessPoolExecutor``, and each holds at most one run at a
  time.  A ``ProcessPoolExecutor`` with N processes would, when one dies,
  fail every pending run and terminate the other processes
  (``BrokenProcessPool``); here only the dead process's pool breaks, its one
  run is reported failed, and the pool is replaced before the next run.
  On Dask, lost workers are Dask's business (it reschedules their tasks and
  gives up on a task after ``distributed.scheduler.allowed-failures``);
- workers never import the coordinator's ``__main__``: multiprocessing's
  spawn runs the parent's script again in every child (to find what it
  pickled by reference), and a script that starts a campaign without
  ``if __name__ == "__main__":`` then starts it again in each worker, which
  fails with pages of tracebacks.  A run needs nothing of the script (its
  item is data, its function bftune's, and a user's policy is found by its
  import path), so the pool's processes start with ``__main__`` hidden
  (:class:`ScriptlessContext`): a script works with or without the guard.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import multiprocessing.context
import os
import sys
import signal
import threading
import time
import types
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Callable, Iterable, Iterator

from bftune.experiments.campaign.limits import default_workers, max_workers
from bftune.experiments.campaign.specs import CampaignError

#: Exit status of a worker that stopped because its coordinator died or told it to stop.
WORKER_STOPPED = 75

#: Seconds the workers have to exit on their own once told to stop, before they are terminated.
STOP_GRACE_S = 2.0


class InlineExecutor(Executor):
    """Runs each submission at once, in this process (``--workers 1``)."""

    description = "inline (1 process)"
    capacity = 1

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # an interrupt is not a run's failure: it propagates
            future.set_exception(exc)
        return future


_started = None  # in a worker process: the flag its pool clears before each run (see ProcessPool)


def _worker_init(stop: Connection, started) -> None:
    """Worker initializer: ignore SIGINT; exit as soon as the coordinator closes ``stop`` or dies."""
    global _started
    _started = started
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    waitables: list = [stop]
    parent = multiprocessing.parent_process()
    if parent is not None:
        waitables.append(parent.sentinel)

    def watch() -> None:
        multiprocessing.connection.wait(waitables)
        os._exit(WORKER_STOPPED)

    threading.Thread(target=watch, name="bftune-coordinator-watch", daemon=True).start()


def _start(fn: Callable, item: Any) -> Any:
    """In a worker: say that the run has started, then run it."""
    assert _started is not None, "_start runs in a pool's worker, which _initialize set up"
    _started.value = 1
    return fn(item)


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with its "leaked semaphore" warning silenced.

    When the coordinator is killed, the tracker removes the pools' semaphores and says they "appear to be
    leaked": nothing is left (``/dev/shm`` is clean afterwards), so the line only alarms.  The tracker is a
    process of its own whose command line takes this process's ``-W`` options; if it already runs (started
    by an import), this does nothing and the warning stays possible.
    """
    from multiprocessing import resource_tracker

    option = "ignore:resource_tracker:UserWarning"
    sys.warnoptions.append(option)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(option)


class ScriptlessProcess(multiprocessing.context.SpawnProcess):
    """A spawned process that does not run the parent's script (see the module docstring)."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:  # noqa: N802 - multiprocessing's name
        # Spawn reads what to import as __main__ from sys.modules["__main__"] (its __spec__, else its
        # __file__) while it starts the child; a stand-in without either tells it to import nothing.  The
        # swap lasts as long as the start, in the thread that starts the process.
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            return multiprocessing.context.SpawnProcess._Popen(process_obj)
        finally:
            if main is not None:
                sys.modules["__main__"] = main


class ScriptlessContext(multiprocessing.context.SpawnContext):
    """The spawn context whose processes do not import the parent's ``__main__``."""

    Process = ScriptlessProcess


class ProcessPool(Executor):
    """``workers`` spawned local processes, each its own one-process pool (see the module docstring).

    Each pool has a shared flag that its process raises when it starts a
    run, so a run lost with its process is known to have started or not
    (:meth:`never_started`).  ``shutdown(wait=False)`` stops the workers at
    once, abandoning the runs they hold (as Dask's executor cancels its
    running tasks); ``wait=True`` lets them finish first.
    """

    def __init__(self, workers: int) -> None:
        self.capacity = workers
        self.description = f"{workers} local processes"
        self._context = ScriptlessContext()  # spawn: safe even if this process runs threads
        _quiet_resource_tracker()
        self._stop_reader, self._stop_writer = self._context.Pipe(duplex=False)
        self._pools: list[tuple[ProcessPoolExecutor, Any]] = [self._new_pool() for _ in range(workers)]
        self._held: list[set[Future]] = [set() for _ in range(workers)]
        self._flag_of: dict[Future, Any] = {}
        self.replaced = 0  # pools replaced after their process died

    def _new_pool(self) -> tuple[ProcessPoolExecutor, Any]:
        started = self._context.Value("b", 0, lock=False)
        pool = ProcessPoolExecutor(max_workers=1, mp_context=self._context, initializer=_worker_init,
                                   initargs=(self._stop_reader, started))
        return pool, started

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        if kwargs or len(args) != 1:
            raise TypeError("ProcessPool.submit takes fn and one argument")
        for held in self._held:  # forget the runs that finished (the caller has their results)
            done = [f for f in held if f.done()]
            held.difference_update(done)
            for f in done:
                self._flag_of.pop(f, None)
        i = min(range(len(self._pools)), key=lambda k: len(self._held[k]))
        idle = not self._held[i]
        try:
            future = self._submit(i, idle, fn, args[0])
        except BrokenProcessPool:  # its process died since its last run: a fresh one takes over
            self._pools[i][0].shutdown(wait=True)
            self._pools[i] = self._new_pool()
            self.replaced += 1
            future = self._submit(i, idle, fn, args[0])
        self._held[i].add(future)
        return future

    def _submit(self, i: int, idle: bool, fn: Callable, item: Any) -> Future:
        pool, started = self._pools[i]
        if idle:
            started.value = 0
        future = pool.submit(_start, fn, item)
        if idle:
            self._flag_of[future] = started
        return future

    def never_started(self, future: Future) -> bool:
        """Whether ``future``, lost with its process, had not started yet (then it may simply be retried)."""
        started = self._flag_of.pop(future, None)
        return started is not None and started.value == 0 and isinstance(future.exception(), BrokenProcessPool)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if not wait:
            self._stop_writer.close()  # every worker whose watch thread can run exits now
            self._end_processes(STOP_GRACE_S)
        for pool, _ in self._pools:
            pool.shutdown(wait=True, cancel_futures=cancel_futures or not wait)
        self._stop_writer.close()
        self._stop_reader.close()

    def _end_processes(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the workers to exit, then terminate, then kill, those left.

        ``ProcessPoolExecutor`` keeps its processes in ``_processes`` (Python
        3.14 adds ``terminate_workers`` for this); without it the pools' own
        shutdown still waits for the runs to end.
        """
        processes = [p for pool, _ in self._pools for p in (getattr(pool, "_processes", None) or {}).values()]
        left = _wait_exited(processes, grace)
        for end in ("terminate", "kill"):
            for process in left:
                getattr(process, end)()
            left = _wait_exited(left, grace)


def _wait_exited(processes: list, timeout: float) -> list:
    """The processes still alive after waiting up to ``timeout`` seconds for all of them to exit."""
    deadline = time.monotonic() + timeout
    left = [p for p in processes if p.is_alive()]
    while left and (remaining := deadline - time.monotonic()) > 0:
        multiprocessing.connection.wait([p.sentinel for p in left], timeout=remaining)
        left = [p for p in left if p.is_alive()]
    return left


@dataclass
class Backend:
    """An executor, how many runs to give it at a time (None: all), its name, and how to let it go."""

    executor: Executor
    capacity: int | None
    description: str
    close: Callable[[], None] = lambda: None


def check_workers(workers: int | None) -> int:
    """``--workers``, checked before any work: 1 to :func:`max_workers`."""
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise CampaignError(f"--workers must be at least 1, got {workers}")
    if workers > max_workers():
        raise CampaignError(f"--workers {workers} is too many for {os.cpu_count()} cores: at most {max_workers()}")
    return workers


def open_backend(workers: int | None = None, dask=None) -> Backend:
    """Local processes (``workers``; 1 = inline) or the Dask scheduler at ``dask`` (an address or a Client)."""
    if dask is not None:
        return dask_backend(dask)
    workers = check_workers(workers)
    if workers == 1:
        return Backend(InlineExecutor(), 1, InlineExecutor.description)
    pool = ProcessPool(workers)
    return Backend(pool, workers, pool.description)


#: The address schemes of Dask's communication backends (``distributed.comm.registry``).
DASK_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


def dask_address(text: str, what: str = "--dask") -> str:
    """A Dask scheduler's address, checked before any work (without importing Dask): ``[SCHEME://]HOST:PORT``.

    The one parser of ``--dask`` for ``campaign``, ``learn-index`` and ``reproduce``: ``notanaddress``,
    ``''`` and ``foo://x`` are one line (:class:`CampaignError`) here rather than a traceback from Dask's
    connection code.  The scheme defaults to ``tcp``, as Dask's does.
    """
    address = text.strip()
    example = "give the scheduler's address, e.g. tcp://host:8786"
    if not address:
        raise CampaignError(f"{what}: empty address; {example}")
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in DASK_SCHEMES:
        raise CampaignError(f"{what} {text}: unknown scheme {scheme!r} (Dask knows {', '.join(DASK_SCHEMES)}); "
                            f"{example}")
    if scheme == "inproc":
        if not rest:
            raise CampaignError(f"{what} {text}: no address after inproc://; {example}")
        return address
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise CampaignError(f"{what} {text}: not HOST:PORT with a port in 1..65535; {example}")
    return address


def dask_client(address: str):
    """A ``distributed.Client`` of the scheduler at ``address``, or one line saying why not.

    Dask's own errors are not all ``OSError``: ``tls://`` without Dask's TLS settings is a ``TypeError``
    (no ``ssl_context``), ``ucx://`` without the UCX package an abstract-class ``TypeError``, an address its
    parser refuses a ``ValueError``.
    """
    from distributed import Client

    scheme = address.partition("://")[0] if "://" in address else "tcp"
    hint = {"tls": "; tls:// needs Dask's TLS settings (distributed.comm.tls: ca-file, client cert and key)",
            "ucx": "; ucx:// needs Dask's UCX support (the distributed-ucxx package) on this machine",
            }.get(scheme, "")
    missing = dask_scheme_missing(scheme)
    if missing:
        raise CampaignError(f"--dask {address}: cannot connect to the scheduler ({missing}){hint}")
    try:
        return Client(address, timeout="20s")
    except (OSError, ValueError, TypeError, ImportError, RuntimeError, AssertionError) as exc:
        # AssertionError: Dask's IO-loop thread that did not start in its 10 s (a loaded machine)
        reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise CampaignError(f"--dask {address}: cannot connect to the scheduler ({reason}){hint}") from None


def dask_scheme_missing(scheme: str) -> str:
    """What this machine lacks to open ``scheme://`` (empty when nothing is known to be missing).

    Checked before a ``Client`` is made, so that the answer does not depend on Dask starting its IO loop
    (a thread that may take more than Dask's 10 s to start on a loaded machine, and then fails with a bare
    ``AssertionError``).
    """
    if scheme == "ucx" and not any(importlib.util.find_spec(name) is not None
                                   for name in ("distributed_ucxx", "ucxx", "ucp")):
        return "no UCX package is installed"
    if scheme == "tls":
        import dask

        tls = dask.config.get("distributed.comm.tls", default={}) or {}
        client = tls.get("client") or {}
        if not (tls.get("ca-file") and client.get("cert")):
            return "no TLS settings: distributed.comm.tls.ca-file and client.cert are unset"
    return ""


def dask_backend(address) -> Backend:
    """The executor of a Dask cluster (``Client.get_executor``); runs are all submitted at once."""
    if isinstance(address, str):
        address = dask_address(address)
    try:
        from distributed import Client  # optional dependency: bftune[dask]
    except ImportError:  # pragma: no cover - dask is in the dev group
        raise CampaignError("--dask needs dask.distributed: install bftune[dask]") from None
    if isinstance(address, Client):
        client, own = address, False
    else:
        client, own = dask_client(address), True
    workers = client.scheduler_info().get("workers", {})
    # pure=False: a fresh key per submission, so a long-lived cluster never hands back an older attempt
    return Backend(client.get_executor(pure=False), None,
                   f"Dask cluster {client.scheduler.address} ({len(workers)} workers)",
                   client.close if own else (lambda: None))


def completed(executor: Executor, fn: Callable[[Any], Any], items: Iterable[Any],
              capacity: int | None = None, attempts: int = 3) -> Iterator[tuple[Any, Any]]:
    """Run ``fn(item)`` for every item; yield ``(item, result)`` as each finishes.

    ``result`` is the exception when the run was lost (a dead worker...).  At
    most ``capacity`` runs are submitted at a time (None: all at once, for a
    scheduler that balances them itself); runs are submitted in order.  A run
    lost before it started (the executor's ``never_started``, if it has one)
    is submitted again, up to ``attempts`` times in all.
    """
    pending = iter(items)
    retry: list[Any] = []
    tries: dict[int, int] = {}
    flying: dict[Future, Any] = {}
    never_started = getattr(executor, "never_started", None)

    def fill() -> None:
        while capacity is None or len(flying) < capacity:
            item = retry.pop(0) if retry else next(pending, _END)
            if item is _END:
                return
            flying[executor.submit(fn, item)] = item

    fill()
    while flying:
        done, _ = wait(flying, return_when=FIRST_COMPLETED)
        for future in [f for f in flying if f in done]:  # in submission order
            item = flying.pop(future)
            try:
                result = future.result()
            except Exception as exc:
                if never_started is not None and never_started(future):
                    tries[id(item)] = tries.get(id(item), 1) + 1
                    if tries[id(item)] <= attempts:
                        retry.append(item)
                        continue
                result = exc
            yield item, result
        fill()


_END = object()
