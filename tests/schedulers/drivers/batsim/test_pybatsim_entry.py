"""pybatsim entry point ``schedulers/bftuneEasy.py``: run by pybatsim's own launcher, played by a test.

The test plays Batsim over loopback with a ZeroMQ REQ socket, so none of
this needs the real simulator.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq
from locations import REPO, TRANSCRIPTS

ENTRY = "schedulers/bftuneEasy.py"
DRIVER_FILE = REPO / "schedulers" / "drivers" / "batsim" / "driver.py"
VENV_BIN = Path(sys.executable).parent


def pybatsim() -> list[str]:
    """``uv run --no-sync pybatsim`` (falls back to the venv's script, the same program)."""
    if (VENV_BIN / "pybatsim").exists() and shutil.which("uv"):
        return ["uv", "run", "--no-sync", "pybatsim"]
    if (VENV_BIN / "pybatsim").exists():
        return [str(VENV_BIN / "pybatsim")]
    pytest.skip("pybatsim is not installed in this environment")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(options: dict | str, port: int, *extra: str) -> subprocess.Popen:
    opts = options if isinstance(options, str) else json.dumps(options)
    return subprocess.Popen([*pybatsim(), ENTRY, "-s", f"tcp://127.0.0.1:{port}", "-o", opts, *extra], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout: float = 30.0) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"pybatsim did not exit within {timeout} s:\n{out}\n{err}")
    return proc.returncode, out, err


class FakeBatsim:
    """The Batsim side of the socket: a REQ socket that sends and waits for each reply."""

    def __init__(self, port: int, timeout_ms: int = 30000) -> None:
        self.sock: zmq.Socket = zmq.Context.instance().socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
        self.sock.connect(f"tcp://127.0.0.1:{port}")

    def send(self, msg: dict | str):
        self.sock.send_string(msg if isinstance(msg, str) else json.dumps(msg))
        raw = self.sock.recv_string()
        try:
            return json.loads(raw)
        except ValueError:
            return raw

    def close(self) -> None:
        self.sock.close(0)


BEGINS = {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
    "nb_resources": 4, "nb_compute_resources": 4, "nb_storage_resources": 0, "allow_compute_sharing": False,
    "allow_storage_sharing": True, "config": {"dynamic-jobs-enabled": False},
    "compute_resources": [{"id": i, "name": f"h{i}"} for i in range(4)], "storage_resources": [],
    "workloads": {}, "profiles": {}}}]}
ENDS = {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_ENDS", "data": {}}]}


def test_pybatsim_runs_the_entry_against_recorded_batsim_messages():
    path = TRANSCRIPTS / "easy_bf_small.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not available (the ../shared checkout is missing)")
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    port = free_port()
    proc = start({"reservation": "machines"}, port)
    batsim = FakeBatsim(port)
    try:
        for request, recorded in zip(recs[::2], recs[1::2]):
            reply = batsim.send(request["msg"])
            # Same decisions as batsched, every event at Batsim's own timestamp.
            assert reply == recorded["msg"], f"reply to message {request['seq']}"
    finally:
        batsim.close()
    code, out, err = finish(proc)
    assert code == 0, err
    assert "Job submitted: 50 , scheduled: 50" in out
    assert "Traceback" not in err
    # In the pybatsim process, the scheduler's driver is this repository's file.
    assert f"bftune driver {DRIVER_FILE}" in err


@pytest.mark.parametrize("options, expected", [
    ({"policy": "NOPE"}, "invalid option: policy: "),
    ({"threshold": "soon"}, "invalid option: threshold"),
    ({"bogus": 1}, "invalid option: unknown option(s) bogus"),
    ([1, 2], "invalid option: options must be a JSON object"),
    ({"scheduler": "pv-easy", "predictor": "virtual:2"}, "invalid option: predictor: virtual:X needs X in [0, 1)"),
    ({"scheduler": "pv-easy", "reservation": "machines"}, "invalid option: reservation needs scheduler='easy'"),
])
def test_bad_option_is_a_clear_error_before_any_message(options, expected):
    # Hold the port: had pybatsim got as far as binding it would fail with "Address already in use".
    holder = zmq.Context.instance().socket(zmq.REP)
    holder.setsockopt(zmq.LINGER, 0)
    port = holder.bind_to_random_port("tcp://127.0.0.1")
    try:
        code, out, err = finish(start(options, port))
    finally:
        holder.close(0)
    assert code == 2
    assert f"bftuneEasy: error: {expected}" in err
    assert "Traceback" not in err and "Address already in use" not in err


def test_malformed_message_stops_cleanly_and_tells_batsim():
    port = free_port()
    proc = start({}, port)
    batsim = FakeBatsim(port)
    try:
        assert batsim.send(BEGINS) == {"now": 0.0, "events": []}
        reply = batsim.send({"now": 1.0, "events": [{"timestamp": 1.0, "type": "BOGUS", "data": {}}]})
    finally:
        batsim.close()
    assert isinstance(reply, str) and reply.startswith("bftune scheduler error: ProtocolError")
    code, _, err = finish(proc)
    assert code == 1
    assert "bftuneEasy: error: Batsim message at now=1.0, event #0 (BOGUS): unknown event type 'BOGUS'" in err
    assert "Traceback" not in err


def test_invalid_json_is_a_clear_error():
    port = free_port()
    proc = start({}, port)
    batsim = FakeBatsim(port)
    try:
        batsim.send(BEGINS)
        batsim.send("{not json")
    finally:
        batsim.close()
    code, _, err = finish(proc)
    assert code == 1 and "is not valid JSON" in err and "Traceback" not in err


@pytest.mark.slow
def test_timeout_after_the_simulation_began():
    port = free_port()
    proc = start({}, port, "-t", "500")
    batsim = FakeBatsim(port)
    try:
        batsim.send(BEGINS)
        t0 = time.monotonic()
        code, _, err = finish(proc, timeout=20)
    finally:
        batsim.close()
    assert code == 1 and time.monotonic() - t0 < 10
    assert "no message from Batsim for 0.5 s" in err and "Traceback" not in err


def test_batsim_closing_the_socket_mid_run_is_noticed_at_once():
    port = free_port()
    proc = start({}, port, "-t", "600000")
    batsim = FakeBatsim(port)
    batsim.send(BEGINS)
    t0 = time.monotonic()
    batsim.close()
    code, _, err = finish(proc, timeout=20)
    assert code == 1 and time.monotonic() - t0 < 10
    assert "Batsim closed the connection in the middle of the simulation" in err


def _listening_addresses(port: int) -> set[str]:
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.split(":")
            if int(hexport, 16) == port and state == "0A":  # LISTEN
                out.add(addr)
    return out


def test_default_wildcard_endpoint_is_rebound_to_localhost():
    port = free_port()
    proc = subprocess.Popen([*pybatsim(), ENTRY, "-s", f"tcp://*:{port}"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    batsim = FakeBatsim(port)
    try:
        assert batsim.send(BEGINS) == {"now": 0.0, "events": []}
        if Path("/proc/net/tcp").exists():
            assert _listening_addresses(port) == {"0100007F"}  # 127.0.0.1 only, not 0.0.0.0
        assert batsim.send(ENDS) == {"now": 0.0, "events": []}
    finally:
        batsim.close()
    code, _, err = finish(proc)
    assert code == 0, err
    assert f"listening on tcp://127.0.0.1:{port}" in err


# --- which `schedulers` is which -------------------------------------------------------------------


def test_import_resolution_in_the_test_process():
    import bftune.schedulers.core.engine as core
    import bftune.schedulers.drivers.batsim.driver as driver

    import schedulers  # pybatsim's top-level package

    assert Path(driver.__file__).resolve() == DRIVER_FILE
    assert Path(core.__file__).resolve() == REPO / "schedulers" / "core" / "engine.py"
    assert Path(schedulers.__file__).resolve().parts[-3:] == ("site-packages", "schedulers", "__init__.py")
    assert Path(schedulers.__file__).resolve().parent != REPO / "schedulers"


REPORT = """
import json, sys
def report():
    import schedulers
    import bftune.schedulers.drivers.batsim.driver as d
    print("RESOLVED " + json.dumps({"bare": schedulers.__file__, "driver": d.__file__}), flush=True)
"""


def test_import_resolution_in_the_bftune_cli_process():
    script = VENV_BIN / "bftune"
    if not script.exists():
        pytest.skip("the bftune console script is not installed")
    # The CLI ends self-contained commands with os._exit (no atexit): report from there too.
    code = REPORT + (f"import atexit, os, runpy\natexit.register(report)\n_exit = os._exit\n"
                     f"os._exit = lambda c: (report(), _exit(c))\nsys.argv = ['bftune', 'policies']\n"
                     f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESOLVED ")][0]
    got = json.loads(line[len("RESOLVED "):])
    assert Path(got["driver"]).resolve() == DRIVER_FILE
    assert Path(got["bare"]).resolve().parts[-3:] == ("site-packages", "schedulers", "__init__.py")


def test_import_resolution_in_pybatsims_launcher():
    code = ("import json, sys\nfrom batsim.tools.launcher import instanciate_scheduler\n"
            f"s = instanciate_scheduler({ENTRY!r}, {{}})\n"
            "print('RESOLVED ' + json.dumps({'driver': type(s).driver_module.__file__,\n"
            "      'bare': sys.modules['schedulers'].__file__, 'cls': type(s).__name__,\n"
            "      'ours': sys.modules['bftune.schedulers.drivers.batsim.driver'].__file__}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": ""})
    assert proc.returncode == 0, proc.stderr
    got = json.loads([x for x in proc.stdout.splitlines() if x.startswith("RESOLVED ")][0][len("RESOLVED "):])
    assert got["cls"] == "BftuneEasy"
    assert Path(got["driver"]).resolve() == DRIVER_FILE == Path(got["ours"]).resolve()
    assert Path(got["bare"]).resolve().parts[-3:] == ("site-packages", "schedulers", "__init__.py")
