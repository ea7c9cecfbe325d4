"""pybatsim entry point: ``pybatsim schedulers/bftuneEasy.py -o '{"policy": "SAF", "threshold": "40h"}'``.

pybatsim's launcher loads this file by path and instantiates ``BftuneEasy``
(the file name with its first letter upper-cased) with the ``-o`` options.
Why this file imports our code only as ``bftune.schedulers...``: pybatsim
installs a top-level ``schedulers`` package of its own, so ``import
schedulers.x`` means pybatsim's package; the launcher's attempt to import
``schedulers.bftuneEasy`` therefore fails and it falls back to loading this
file by path, which is what we want (and why the name must not collide with
any module of pybatsim's package).

What it does:

- the options are validated in ``__init__`` (pybatsim instantiates the
  scheduler before it binds its socket): a bad option prints one line and
  exits with status 2 before any message is exchanged;
- it plugs into pybatsim at the lowest level: when pybatsim hands it the
  ``Batsim`` object (``scheduler.bs = ...``, before the first message is
  read), it replaces that object's per-message routine with our own
  exchange (``bftune.schedulers.drivers.batsim.connection.Connection`` on pybatsim's
  socket, decisions by ``bftune.schedulers.drivers.batsim.driver.BatsimDriver``).
  pybatsim's own event parsing and its clock (``consume_time``) are never
  used: every reply is stamped with the ``now`` of the message it answers;
- pybatsim's default endpoint ``tcp://*:28000`` would listen on every
  interface; ``tcp://127.0.0.1:<port>`` is bound instead.  Give ``-s
  tcp://0.0.0.0:<port>`` to really listen everywhere.  A port in use is
  one line and exit status 2;
- pybatsim's ``-t/--timeout`` (ms, default 2000) is the longest wait for a
  Batsim message once the simulation has begun (no limit before the first
  message);
- a protocol error, a timeout or Batsim closing the connection prints one
  line (``bftuneEasy: error: ...``) and exits with status 1.  If Batsim is
  waiting for a reply it gets a non-JSON error text instead, so that it stops
  too (Batsim 4.2.1 aborts with "Invalid JSON message: could not be parsed")
  rather than waiting forever.
"""

from __future__ import annotations

import math
import os
import sys
import traceback
from typing import Any

import zmq
from batsim import network
from batsim.batsim import BatsimScheduler
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.drivers.batsim import driver as _driver_module
from bftune.schedulers.drivers.batsim.connection import (
    BatsimConnectionError,
    Connection,
)
from bftune.schedulers.drivers.batsim.driver import BatsimDriver, BatsimSetupError
from bftune.schedulers.drivers.batsim.protocol import ProtocolError

NAME = "bftuneEasy"


def _bind_localhost_by_default() -> None:
    """Make pybatsim bind ``tcp://127.0.0.1:<port>`` where it would bind ``tcp://*:<port>``; a port it cannot
    bind (in use) is one line and exit status 2, as with ``bftune batsim --port``.

    pybatsim creates its socket after instantiating the scheduler, so patching
    its ``NetworkHandler.bind`` here changes the address before anything
    listens (rebinding afterwards would drop a Batsim that connected in
    between).
    """
    if getattr(network.NetworkHandler.bind, "_bftune", False):
        return
    original = network.NetworkHandler.bind

    def bind(handler):
        endpoint = str(handler.socket_endpoint)
        if handler.type == zmq.REP and endpoint.startswith("tcp://*:"):
            port = endpoint.rsplit(":", 1)[1]
            handler.socket_endpoint = f"tcp://127.0.0.1:{port}"
            sys.stderr.write(f"{NAME}: listening on {handler.socket_endpoint} (not on every interface; "
                             f"use -s tcp://0.0.0.0:{port} for that)\n")
        try:
            return original(handler)
        except zmq.ZMQError as exc:  # a port in use, an address not of this machine: bad input, one line
            _fail(f"cannot listen on {handler.socket_endpoint}: {os.strerror(exc.errno)} (choose another port: "
                  "-s tcp://127.0.0.1:PORT)", status=2)

    bind._bftune = True  # type: ignore[attr-defined]  # the mark that it is installed (see above)
    network.NetworkHandler.bind = bind


def _fail(message: str, status: int = 1) -> None:
    sys.stderr.write(f"{NAME}: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(status)


class BftuneEasy(BatsimScheduler):
    """EASY(Pr, Pb, Theta) from ``bftune`` behind pybatsim's launcher."""

    #: the module implementing the protocol mapping (tests check which file it is)
    driver_module = _driver_module

    def __init__(self, options: dict | None = None) -> None:
        options = {} if options is None else options
        super().__init__(options)
        try:
            self.config = SchedulerConfig.from_options(options)
        except ConfigError as exc:
            _fail(f"invalid option: {exc}", status=2)
        self.driver = BatsimDriver(self.config.build)
        _bind_localhost_by_default()
        self.connection: Connection | None = None
        self._bs: Any = None  # pybatsim's Batsim object (untyped)
        sys.stderr.write(f"{NAME}: {self.config.describe()} (bftune driver {_driver_module.__file__})\n")

    # pybatsim sets ``scheduler.bs`` before reading the first message.
    @property
    def bs(self):
        return self._bs

    @bs.setter
    def bs(self, batsim) -> None:
        self._bs = batsim
        if getattr(batsim, "running_simulation", False):
            _fail("pybatsim's --protect mode is not supported: bftuneEasy speaks the protocol itself")
        self._attach(batsim)

    def _attach(self, batsim) -> None:
        network = batsim.network
        sock = network.connection
        timeout_ms = getattr(network, "timeout", None)
        timeout = None
        if isinstance(timeout_ms, (int, float)) and timeout_ms > 0 and math.isfinite(timeout_ms):
            timeout = timeout_ms / 1000.0
        self.connection = Connection(sock, timeout=timeout, first_timeout=None)
        batsim._read_bat_msg = self._exchange  # pybatsim's loop calls it once per message

    def _exchange(self) -> bool:
        connection = self.connection
        assert connection is not None, "pybatsim calls it after setting bs, which attaches the connection"
        try:
            more = connection.exchange(self.driver)
        except (ProtocolError, BatsimSetupError, BatsimConnectionError) as exc:
            self._close()
            _fail(str(exc))
        except KeyboardInterrupt:
            self._close()
            _fail("interrupted", status=130)
        except Exception as exc:  # a bug on our side: keep the traceback
            self._close()
            traceback.print_exc()
            _fail(f"internal error: {type(exc).__name__}: {exc}")
        if not more:
            self._finish()
        return more

    def _finish(self) -> None:
        bs, stats = self._bs, self.driver.stats
        # pybatsim's launcher prints and checks these counters after the run.
        bs.nb_jobs_submitted = stats.submitted + stats.rejected
        bs.nb_jobs_submitted_from_batsim = stats.submitted - stats.reruns
        bs.nb_jobs_scheduled = stats.started
        bs.nb_jobs_rejected = stats.rejected
        bs.nb_jobs_killed = stats.killed
        bs.nb_jobs_timeout = stats.walltime_reached
        bs.nb_jobs_completed = stats.completed
        bs.nb_jobs_successful = stats.completed - stats.killed - stats.walltime_reached
        bs.running_simulation = False
        for warning in self.driver.warnings:
            sys.stderr.write(f"{NAME}: warning: {warning}\n")
        share = self.driver.stats.busy_seconds
        sys.stderr.write(f"{NAME}: {stats.messages} messages, {stats.passes} passes, "
                         f"{share:.3f} s in the decision driver\n")
        self._close()

    def _close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        if self._bs is not None:
            self._bs.network.connection = None
