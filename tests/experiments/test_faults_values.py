"""Fault family 11: values that used to end in a traceback are one line and exit status 2 (issue 32).

Integers too large for a float in a Batsim JSON workload (``OverflowError``
in the simulator) or a fit file; fit files that are not UTF-8; malformed
``--dask`` addresses (``notanaddress``, ``''``, ``foo://x``: Dask's
``ValueError``); a port in use in the pybatsim entry (``ZMQError``); a huge
``now`` from Batsim.  Each is tried through every command that takes it.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from bftune.experiments.cli.main import main
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.drivers.batsim.protocol import ProtocolError, parse_message
from locations import REPO

CAMPAIGN = REPO / "experiments" / "configs" / "tiny_synthetic_offline.toml"


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("field", ["subtime", "walltime", "delay", "unix_start_time"])
@pytest.mark.parametrize("command", ["simulate", "convert", "resample"])
def test_batsim_json_integers_too_large_for_a_float(tmp_path, capsys, monkeypatch, command, field):
    monkeypatch.chdir(tmp_path)
    doc = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "d4"}],
           "profiles": {"d4": {"type": "delay", "delay": 4}}}
    target = doc if field == "unix_start_time" else doc["profiles"]["d4"] if field == "delay" else doc["jobs"][0]
    target[field] = 10**400
    (tmp_path / "w.json").write_text(json.dumps(doc))
    extra = {"simulate": [], "convert": ["--out", "c"], "resample": ["--weeks", "1", "--out", "r.swf"]}[command]
    assert main([command, "--trace", "w.json", *extra]) == 2
    line = one_error_line(capsys)
    assert "w.json" in line and field in line and "out of range" in line and len(line) < 250


def fit_files(folder: Path) -> dict[str, Path]:
    files = {"not UTF-8": b'{"coefficients": {"1": 1}, "name": "\xe9t\xe9"}',
             "a huge coefficient": b'{"coefficients": {"1": 1' + b"0" * 400 + b', "p": 2}}',
             "JSON nested too deeply": b"[" * 100_000 + b"]" * 100_000}
    paths = {}
    for name, content in files.items():
        paths[name] = folder / f"{name.replace(' ', '-')}.json"
        paths[name].write_bytes(content)
    return paths


MESSAGES = {"not UTF-8": "can't decode byte 0xe9", "a huge coefficient": "digits is too large for a coefficient",
            "JSON nested too deeply": "nested too deeply"}


@pytest.mark.parametrize("fit", list(MESSAGES))
@pytest.mark.parametrize("route", ["simulate", "compare", "-o", "campaign TOML"])
def test_a_bad_fit_file_is_one_line_by_every_route(tmp_path, capsys, monkeypatch, route, fit):
    monkeypatch.chdir(tmp_path)
    path = fit_files(tmp_path)[fit]
    policy = f"learned:{path}"
    if route == "-o":
        with pytest.raises(ConfigError, match="policy: ") as err:
            SchedulerConfig.from_options({"policy": policy})
        assert MESSAGES[fit] in str(err.value)
        return
    if route == "campaign TOML":
        config = tmp_path / "c.toml"
        config.write_text(CAMPAIGN.read_text().replace('["FCFS", "SPF"]', f'["{policy}"]'))
        argv = ["campaign", str(config), "--out", "out"]
    else:
        argv = [route, "--synthetic", "50", "--procs", "8", "--policy", policy]
        argv += ["--out", "out", "--batsim", sys.executable] if route == "compare" else []
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert MESSAGES[fit] in line and str(path.name) in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address, message", [
    ("notanaddress", "not HOST:PORT"), ("", "empty address"), ("foo://x", "unknown scheme 'foo'"),
    ("tcp://host:99999", "not HOST:PORT with a port in 1..65535"), ("tcp://:8786", "not HOST:PORT"),
])
@pytest.mark.parametrize("command", ["campaign", "learn-index", "reproduce"])
def test_a_malformed_dask_address_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, command, address,
                                                             message):
    monkeypatch.chdir(tmp_path)
    argv = {"campaign": ["campaign", str(CAMPAIGN), "--out", "out"],
            "learn-index": ["learn-index", "--source", "synthetic", "--windows", "1", "--trials", "2", "--out", "out"],
            "reproduce": ["reproduce", "000", "--out", "out"]}[command]
    assert main([*argv, "--dask", address]) == 2
    line = one_error_line(capsys)
    assert line.startswith("bftune: error: --dask") and message in line
    assert list(tmp_path.iterdir()) == []


def test_the_dask_address_parser_takes_what_dask_takes():
    from bftune.experiments.campaign.executors import dask_address

    for address in ("tcp://127.0.0.1:8786", "localhost:8786", "tls://h.example:1", "ws://[::1]:8786",
                    "inproc://10.0.0.1/123/1"):
        assert dask_address(address) == address


@pytest.mark.parametrize("message", [{"now": 10**400, "events": []},
                                     {"now": 0, "events": [{"timestamp": 10**400, "type": "NOTIFY",
                                                            "data": {"type": "no_more_static_job_to_submit"}}]}])
def test_a_number_from_batsim_too_large_for_a_float_is_a_protocol_error(message):
    with pytest.raises(ProtocolError, match=r"must be a finite number, got 100000000000\.\.\.\(401 digits\)"):
        parse_message(message)


def test_a_port_in_use_in_the_pybatsim_entry_is_one_line_and_status_2():
    pybatsim = Path(sys.executable).with_name("pybatsim")
    if not pybatsim.exists():
        pytest.skip("pybatsim is not installed in this environment")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run([str(pybatsim), str(REPO / "schedulers" / "bftuneEasy.py"),
                               "-s", f"tcp://127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (f"bftuneEasy: error: cannot listen on tcp://127.0.0.1:{port}: "
                                                    "Address already in use (choose another port: "
                                                    "-s tcp://127.0.0.1:PORT)")


def test_a_port_in_use_for_bftune_batsim_is_status_2(tmp_path, capsys, monkeypatch):
    import fake_batsim

    monkeypatch.chdir(tmp_path)
    fake = fake_batsim.write_executable(tmp_path / "bin")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["batsim", "--synthetic", "20", "--procs", "4", "--out", "o", "--batsim", str(fake),
                     "--port", str(port)]) == 2
    assert f"cannot listen on tcp://127.0.0.1:{port}" in capsys.readouterr().err


@pytest.mark.parametrize("program", ["/bin/true", "/bin/false"])
def test_a_program_that_is_not_batsim_is_bad_input(tmp_path, capsys, monkeypatch, program):
    """Status 2, as for a missing batsim (it was 1, as for a run that failed)."""
    if not Path(program).exists():
        pytest.skip(f"no {program}")
    monkeypatch.chdir(tmp_path)
    assert main(["batsim", "--synthetic", "20", "--procs", "4", "--out", "o", "--batsim", program]) == 2
    assert "Batsim 4.x" in capsys.readouterr().err
