"""The executors behind the one concurrent.futures loop: inline, local processes (and their faults)."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures.process import BrokenProcessPool

import campaign_support
import pytest
from bftune.experiments.campaign.executors import InlineExecutor, ProcessPool, check_workers, completed
from bftune.experiments.campaign.specs import CampaignError


def test_inline_runs_in_order_and_returns_errors_as_results():
    def fn(item):
        if item == 2:
            raise ValueError("two")
        return item * 10

    out = list(completed(InlineExecutor(), fn, [1, 2, 3], capacity=1))
    assert [i for i, _ in out] == [1, 2, 3]
    assert out[0][1] == 10 and isinstance(out[1][1], ValueError) and out[2][1] == 30


def test_inline_lets_an_interrupt_through():
    def fn(item):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        list(completed(InlineExecutor(), fn, [1]))


@pytest.mark.slow
def test_a_dead_worker_fails_only_its_run_and_is_replaced():
    pool = ProcessPool(2)
    try:
        items = [{"sleep": 0.3}, {"sleep": 0.1, "crash": True}, *({"sleep": 0.2} for _ in range(4))]
        results = dict((id(i), r) for i, r in completed(pool, campaign_support.pid_after, items, pool.capacity))
    finally:
        pool.shutdown()
    crashed = results.pop(id(items[1]))
    assert isinstance(crashed, BrokenProcessPool)
    assert all(isinstance(r, int) for r in results.values()) and len(results) == 5
    assert pool.replaced == 1
    assert len(set(results.values())) == 2  # the surviving process and the replacement (the dead one returned none)


def test_a_run_lost_before_it_started_is_run_again():
    """The worker dies while idle; the next run, submitted before or after the pool notices, still runs."""
    pool = ProcessPool(1)
    try:
        [(_, pid)] = list(completed(pool, campaign_support.pid_after, [{}], 1))
        os.kill(pid, signal.SIGKILL)
        [(_, result)] = list(completed(pool, campaign_support.pid_after, [{}], 1))
    finally:
        pool.shutdown()
    assert isinstance(result, int) and result != pid


def test_shutdown_without_waiting_stops_workers_at_once():
    pool = ProcessPool(1)
    future = pool.submit(campaign_support.pid_after, {"sleep": 30})
    while not future.running():
        time.sleep(0.01)
    t0 = time.monotonic()
    pool.shutdown(wait=False)
    assert time.monotonic() - t0 < 10  # long before the 30 s run would end
    assert future.done() and isinstance(future.exception(), BrokenProcessPool)


@pytest.mark.slow
def test_shutdown_without_waiting_ends_a_worker_that_holds_the_gil(tmp_path):
    """The watch thread cannot run while a long C call holds the GIL; the worker is terminated after the grace."""
    pool = ProcessPool(1)
    started = tmp_path / "started"
    future = pool.submit(campaign_support.hold_gil, {"n": 10**11, "started": str(started)})  # minutes of one C call
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # from the marker to the call: a few bytecodes
    [process] = pool._pools[0][0]._processes.values()
    pool.shutdown(wait=False)
    assert not process.is_alive() and process.exitcode == -signal.SIGTERM
    assert future.done() and isinstance(future.exception(), BrokenProcessPool)


def test_worker_counts_are_checked():
    assert check_workers(1) == 1
    for bad in (0, -1, 10**6):
        with pytest.raises(CampaignError, match="--workers"):
            check_workers(bad)


@pytest.mark.parametrize("address, advice", [
    ("tls://127.0.0.1:9", "tls:// needs Dask's TLS settings"),
    ("ucx://127.0.0.1:9", "ucx:// needs Dask's UCX support"),
])
def test_schemes_dask_cannot_open_here_are_one_line(address, advice):
    """``tls://`` without TLS settings and ``ucx://`` without UCX were TypeErrors from inside Dask (issue 42)."""
    pytest.importorskip("distributed")
    from bftune.experiments.campaign.executors import dask_backend

    with pytest.raises(CampaignError, match="cannot connect to the scheduler") as err:
        dask_backend(address)
    assert advice in str(err.value) and "\n" not in str(err.value)


def test_scheme_checks_say_what_is_missing_before_dask_starts(monkeypatch):
    """The check runs before a Client: its answer must not depend on Dask's IO loop (CI saw it not start)."""
    dask = pytest.importorskip("dask")
    from bftune.experiments.campaign import executors

    assert executors.dask_scheme_missing("tcp") == ""
    with dask.config.set({"distributed.comm.tls.ca-file": None}):
        assert "TLS settings" in executors.dask_scheme_missing("tls")
    with dask.config.set({"distributed.comm.tls.ca-file": "ca.pem", "distributed.comm.tls.client.cert": "c.pem"}):
        assert executors.dask_scheme_missing("tls") == ""
    monkeypatch.setattr(executors.importlib.util, "find_spec", lambda name: object() if name == "ucxx" else None)
    assert executors.dask_scheme_missing("ucx") == ""
    monkeypatch.setattr(executors.importlib.util, "find_spec", lambda name: None)
    assert "UCX" in executors.dask_scheme_missing("ucx")
