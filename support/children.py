"""Child processes that die with bftune: the launcher's side of the watchdog (``guard.py``).

Every command that starts a process of its own (Batsim, mypyc, a self-check
run) starts it here, under the guard, so that no process outlives the
command that started it, however that command ends (SIGKILL included).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

#: The watchdog (started as a file: no bftune import, a fast start).
GUARD = Path(__file__).with_name("guard.py")


def start_guarded(cmd: list[str], cwd: Path | None, log: IO[Any] | int,
                  env: dict[str, str] | None = None) -> tuple[subprocess.Popen, int]:
    """Start ``cmd`` under the watchdog, in a new session: (process, write end of the watch pipe).

    The process is the guard, leader of a process group holding ``cmd`` and
    whatever it starts; killing the group stops them all.  The guard kills
    the group by itself when the write end closes, which the kernel does
    when this process dies in any way, SIGKILL included: close it (with
    ``os.close``) only when the run is over.  ``log`` takes the output (stdout
    and stderr): a file, or ``subprocess.PIPE``; ``cwd`` None is ours.
    """
    watch_r, watch_w = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-I", str(GUARD), str(watch_r), "--", *cmd], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=cwd, pass_fds=(watch_r,), env=env)
    except BaseException:
        os.close(watch_w)
        raise
    finally:
        os.close(watch_r)
    return proc, watch_w


def how_it_ended(returncode: int) -> str:
    """A guarded child's end in words: ``exited with code 3``, or ``was killed by signal 9 (SIGKILL)`` (the
    guard dies by its child's signal, so a negative status is the child's signal: the OOM killer's SIGKILL...)."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"was killed by signal {-returncode}{name}"


def stop_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """Stop a process started with ``start_new_session=True`` and everything it started."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:  # leftovers of the group (children), even if the leader already exited
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
        pass


def run_guarded(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``cmd`` to its end under the watchdog: its exit status and its output (stdout and stderr).

    An exception here (Ctrl-C, SIGTERM turned into one by ``interrupts``) stops the child's whole
    process group before it propagates.
    """
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        proc, watch = start_guarded(cmd, cwd, log, env)
        try:
            status = proc.wait()
        except BaseException:
            stop_group(proc)
            raise
        finally:
            os.close(watch)
        log.seek(0)
        return status, log.read()


#: How much of a probe's output :func:`run_probe` keeps (the rest is read and dropped).
PROBE_OUTPUT_BYTES = 64 * 1024


def run_probe(cmd: list[str], timeout: float, cwd: Path | None = None,
              keep: int = PROBE_OUTPUT_BYTES) -> tuple[int, bytes]:
    """Run a short command we do not control (``batsim --version``): its exit status and the first ``keep``
    bytes of its output (stdout and stderr together, undecoded).

    Why not ``subprocess.run(..., timeout=)``: on a timeout it kills only its direct child, so a wrapper
    script's own children (a ``sleep`` under ``sh``) stayed alive, and it holds all the output in memory.
    Here the command runs under the watchdog in a group of its own, the whole group is stopped when
    ``timeout`` passes (then :class:`subprocess.TimeoutExpired` is raised) or when this process ends in any
    way, and output beyond ``keep`` bytes is read and dropped (never held, and the command is never
    blocked on a full pipe).
    """
    proc, watch = start_guarded(cmd, cwd, subprocess.PIPE)
    assert proc.stdout is not None
    kept = bytearray()
    deadline = time.monotonic() + timeout
    try:
        fd = proc.stdout.fileno()
        while True:  # until end-of-file: every writer (the command and its children) has closed its end
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(cmd, timeout)
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            if len(kept) < keep:
                kept += chunk[:keep - len(kept)]
        status = proc.wait(max(0.0, deadline - time.monotonic()))  # closed its output but kept running
    except BaseException:
        stop_group(proc)
        raise
    finally:
        os.close(watch)
        proc.stdout.close()
    return status, bytes(kept)
