"""Our own minimal ZeroMQ REP loop between Batsim and a ``BatsimDriver``.

Batsim connects a REQ socket to the scheduler's REP socket and sends one
message per simulated instant; every message gets exactly one reply.  This
loop adds what pybatsim's lacks:

- it binds to ``127.0.0.1`` unless told otherwise (a free port by default);
- a receive timeout once the simulation has begun (``timeout``), and an
  optional one for Batsim's first message (``first_timeout``);
- Batsim closing the connection mid-run is noticed at once (a ZeroMQ socket
  monitor reports the TCP disconnection), not only after the timeout;
- ``should_stop()`` is polled between messages, so a supervisor (the
  launcher's watchdog) can stop the loop when Batsim's process died;
- a failure while Batsim waits for a reply is answered with an error text
  that is not JSON, so a Batsim started by hand stops with a parse error
  instead of waiting forever; then the error is raised to the caller;
- a bound on one message (``max_message``, ZeroMQ's ``MAXMSGSIZE``): ZeroMQ
  drops a larger message unread, at its header, and the connection with it;
  Batsim reconnects at once (and would wait forever for its reply), which is
  how the loop tells it from Batsim closing or dying, and stops with an
  error naming the bound;
- ``busy_seconds`` counts the time from a received message to its sent
  reply (JSON decoding, the driver, JSON encoding, handing the reply to
  ZeroMQ): the scheduler's share; ``phases()`` splits it.

JSON goes through orjson: Batsim sends one message per simulated instant
(55,000 on KTH-SP2), and the standard library's codec took a fifth of the
scheduler's time there (``benchmarks/batsim.py``).  Its output is the same
JSON (floats as ``1.0``, no spaces), which Batsim parses alike.
"""

from __future__ import annotations

import time
from typing import Callable

import orjson
import zmq
from zmq.utils.monitor import recv_monitor_message

from bftune.schedulers.drivers.batsim.protocol import ProtocolError

DEFAULT_HOST = "127.0.0.1"


class BatsimConnectionError(RuntimeError):
    """Batsim stopped talking: timeout, closed connection, or a stop request."""


def bind_rep(endpoint: str | None = None, *, port: int | None = None, host: str = DEFAULT_HOST,
             context: zmq.Context | None = None, max_message: int | None = None) -> tuple[zmq.Socket, str]:
    """A bound REP socket and its actual endpoint (``tcp://127.0.0.1:<free port>`` by default).

    ``max_message``: the largest message accepted, in bytes (set before binding, as ZeroMQ requires):
    a larger one is never read into memory (a 240 MB message once cost 3.1 GB to receive and decode).
    """
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    if max_message is not None:
        sock.setsockopt(zmq.MAXMSGSIZE, max_message)
    try:
        if endpoint:
            sock.bind(endpoint)
        elif port:
            sock.bind(f"tcp://{host}:{port}")
        else:
            sock.bind_to_random_port(f"tcp://{host}")
    except zmq.ZMQError as exc:
        sock.close(0)
        where = endpoint or f"tcp://{host}:{port or '<random>'}"
        raise BatsimConnectionError(f"cannot listen on {where}: {exc}") from None
    return sock, sock.getsockopt_string(zmq.LAST_ENDPOINT)


class Connection:
    """One REP socket serving one Batsim; ``exchange(driver)`` handles one message."""

    def __init__(self, socket: zmq.Socket, *, timeout: float | None = 120.0, first_timeout: float | None = None,
                 poll_interval: float = 0.2, should_stop: Callable[[], str | None] | None = None,
                 watch_disconnect: bool = True) -> None:
        self.socket = socket
        self.timeout = timeout
        self.first_timeout = first_timeout
        self.poll_ms = max(1, int(poll_interval * 1000))
        self.should_stop = should_stop
        self.poller = zmq.Poller()
        self.poller.register(socket, zmq.POLLIN)
        self.monitor: zmq.Socket | None = None
        #: The bound on one message (bytes; None: none), from the socket (see ``bind_rep``).
        bound = socket.getsockopt(zmq.MAXMSGSIZE)
        self.max_message: int | None = bound if isinstance(bound, int) and bound >= 0 else None
        if watch_disconnect:
            # ACCEPTED too: a reconnection right after a disconnection is ZeroMQ's drop of a message
            # over the bound (see ``_after_disconnect``).
            self.monitor = socket.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_ACCEPTED)
            self.poller.register(self.monitor, zmq.POLLIN)
        self.busy_seconds = 0.0
        self.decode_seconds = 0.0
        self.encode_seconds = 0.0
        self.send_seconds = 0.0
        self.messages = 0
        self.last_message = time.monotonic()
        self.closed = False

    @property
    def endpoint(self) -> str:
        return self.socket.getsockopt_string(zmq.LAST_ENDPOINT)

    def _wait(self, driver) -> None:
        """Block until a message is ready; raise on timeout, disconnection or stop."""
        start = time.monotonic()
        while True:
            ready = dict(self.poller.poll(self.poll_ms))
            if self.socket in ready:
                return
            if self.monitor is not None and self.monitor in ready:
                event = recv_monitor_message(self.monitor)
                if event["event"] == zmq.EVENT_DISCONNECTED and not driver.finished:
                    self._after_disconnect(driver)
            if self.should_stop is not None:
                reason = self.should_stop()
                if reason:
                    raise BatsimConnectionError(reason)
            limit = self.timeout if driver.started else self.first_timeout
            if limit is not None and time.monotonic() - start > limit:
                if driver.started:
                    raise BatsimConnectionError(
                        f"no message from Batsim for {limit:g} s (last one at simulated t={driver.now:g}, "
                        f"{self.messages} messages exchanged): Batsim stalled or died")
                raise BatsimConnectionError(f"Batsim did not connect to {self.endpoint} within {limit:g} s")

    def _after_disconnect(self, driver) -> None:
        """Batsim's connection dropped while we waited for its message: say why, or return to waiting.

        A dying Batsim closes its socket just before it exits: the supervisor is given a moment to say so
        (exit code) rather than "closed".  A Batsim that reconnects at once did not close anything: ZeroMQ
        dropped its message, over ``max_message`` (it has no other event for it).  A Batsim that closed its
        socket without a word is an error once the simulation began; before it, the wait goes on (until
        the first message's timeout).
        """
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            if self.should_stop is not None:
                reason = self.should_stop()
                if reason:
                    raise BatsimConnectionError(reason)
            assert self.monitor is not None
            if self.monitor.poll(20, zmq.POLLIN):
                event = recv_monitor_message(self.monitor)
                if event["event"] == zmq.EVENT_ACCEPTED and self.max_message is not None:
                    raise BatsimConnectionError(
                        f"Batsim's message #{self.messages} was larger than {self.max_message:,} bytes, "
                        f"the bound on one message of this run (see docs/reference/limits.md): "
                        f"it was dropped unread")
        if driver.started:
            raise BatsimConnectionError(
                f"Batsim closed the connection in the middle of the simulation (last message at "
                f"t={driver.now:g}, {self.messages} messages exchanged, no SIMULATION_ENDS)")

    def exchange(self, driver) -> bool:
        """Receive one message, answer it; False once the simulation has ended."""
        self._wait(driver)
        raw = self.socket.recv()
        self.last_message = time.monotonic()
        t0 = time.perf_counter()
        try:
            if self.max_message is not None and len(raw) > self.max_message:  # inproc: ZeroMQ checks no size
                raise ProtocolError(f"message #{self.messages} from Batsim has {len(raw):,} bytes, more than "
                                    f"{self.max_message:,}, the bound on one message (see docs/reference/limits.md)")
            try:
                msg = orjson.loads(raw)
            except (ValueError, RecursionError) as exc:  # orjson: integers beyond 64 bits, nesting too deep
                text = raw[:200].decode("utf-8", "replace")
                raise ProtocolError(f"message #{self.messages} from Batsim is not valid JSON ({exc}): {text!r}") from None
            t1 = time.perf_counter()
            reply = driver.handle(msg)
            t2 = time.perf_counter()
            data = orjson.dumps(reply)
        except BaseException as exc:
            self._abort(exc)
            raise
        t3 = time.perf_counter()
        self.socket.send(data)
        t4 = time.perf_counter()
        self.messages += 1
        self.decode_seconds += t1 - t0
        self.encode_seconds += t3 - t2
        self.send_seconds += t4 - t3
        self.busy_seconds += t4 - t0
        return not driver.finished

    def phases(self, driver) -> dict[str, float]:
        """Where the scheduler's time went (seconds): JSON decoding, the driver (checking messages, applying
        events, the core's passes) and JSON encoding, handing replies to ZeroMQ."""
        stats = driver.stats
        events = stats.busy_seconds - stats.parse_seconds - stats.decide_seconds
        return {"decode": self.decode_seconds, "parse": stats.parse_seconds, "events": events,
                "decide": stats.decide_seconds, "encode": self.encode_seconds, "send": self.send_seconds}

    def _abort(self, exc: BaseException) -> None:
        """Answer the pending request with a non-JSON error text: Batsim stops on it."""
        try:
            self.socket.send_string(f"bftune scheduler error: {type(exc).__name__}: {exc}", zmq.NOBLOCK)
        except zmq.ZMQError:
            pass

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.monitor is not None:
            try:
                self.socket.disable_monitor()
            except zmq.ZMQError:
                pass
            self.monitor.close(0)
        self.socket.close(0)


def serve(driver, connection: Connection, on_message: Callable[[object], None] | None = None) -> None:
    """Answer Batsim until SIMULATION_ENDS; the connection is closed in any case."""
    try:
        while connection.exchange(driver):
            if on_message is not None:
                on_message(driver)
    finally:
        connection.close()
