"""Run one configuration inside real Batsim, and compare it with the local simulator.

``run_batsim(trace, config, out_dir)``:

1. finds ``batsim`` (``--batsim PATH`` or PATH) and checks ``batsim
   --version`` is 4.x;
2. converts the trace (``bftune.workloads.batsim_json``) and writes a
   zero-latency platform whose resource i is host i
   (``bftune.platforms.generator``);
3. binds our scheduler to a free port on 127.0.0.1 and serves it in a
   thread of this process (``bftune.schedulers.drivers.batsim.connection``), then starts
   ``batsim`` in its own process group with ``-e DIR/out`` (plus the dynamic
   job flags when the configuration kills and requeues jobs);
4. watches both sides: if Batsim exits before the simulation ended, the
   scheduler fails, or no message arrives for ``timeout`` seconds, the other
   side is stopped (Batsim's whole process group is killed: no process is
   left behind) and :class:`BatsimRunError` says what happened, with the end
   of Batsim's log;
5. leaves in DIR Batsim's own outputs (``out_jobs.csv``, ``out_schedule.csv``),
   the inputs (``workload.json``, ``platform.xml``), Batsim's log
   (``batsim.log``) and our ``summary.json``, computed from Batsim's
   ``out_jobs.csv`` by the same code as local mode, plus ``"backend":
   "batsim"`` and the share of wall time spent in our scheduler.

``compare_backends(trace, config, out_dir)`` runs the local simulator into
DIR/local and Batsim into DIR/batsim and diffs the two ``out_jobs.csv``
job by job (``bftune.experiments.compare``), writing DIR/compare.json.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

from bftune.experiments.compare import diff_out_jobs
from bftune.experiments.local_run import run_local, workload_info
from bftune.experiments.progress import Progress
from bftune.experiments.results import build_summary, write_json, write_summary
from bftune.experiments.tables import read_out_jobs
from bftune.schedulers.drivers.batsim.driver import DYNAMIC_JOB_FLAGS, BatsimDriver
from bftune.schedulers.drivers.batsim.connection import BatsimConnectionError, Connection, bind_rep, serve
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import Trace

EXPECTED_MAJOR = 4
BATSIM_DOCS = "https://batsim.readthedocs.io"
INSTALL_HELP = (
    f"Install Batsim 4.x (see {BATSIM_DOCS}, section Installation): with Nix, e.g. "
    "`nix-env -f https://github.com/oar-team/nur-kapack/archive/master.tar.gz -iA batsim`, "
    "or build it from source (Batsim 4.2 with SimGrid 3.32). Then put `batsim` on PATH or pass --batsim PATH."
)


class BatsimError(RuntimeError):
    """Base class of the launcher's errors (each message says what to do)."""


class BatsimNotFoundError(BatsimError):
    pass


class BatsimVersionError(BatsimError):
    pass


class BatsimRunError(BatsimError):
    pass


# --- finding batsim ----------------------------------------------------------------------


def find_batsim(path: str | os.PathLike[str] | None = None, check_version: bool = True) -> Path:
    """The batsim executable: ``path`` if given, else ``batsim`` on PATH; version 4.x checked."""
    if path is not None:
        exe = Path(path)
        if exe.is_dir():
            exe = exe / "batsim"
        if not exe.exists():
            raise BatsimNotFoundError(f"batsim not found at {path}. {INSTALL_HELP}")
        if not os.access(exe, os.X_OK):
            raise BatsimNotFoundError(f"{exe} is not executable. {INSTALL_HELP}")
    else:
        found = shutil.which("batsim")
        if found is None:
            raise BatsimNotFoundError(f"batsim is not on PATH. {INSTALL_HELP}")
        exe = Path(found)
    if check_version:
        batsim_version(exe)
    return exe


def batsim_version(exe: str | os.PathLike[str], timeout: float = 20.0) -> str:
    """``batsim --version`` (e.g. ``4.2.1``); raises unless it is 4.x."""
    try:
        proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise BatsimVersionError(f"`{exe} --version` did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise BatsimNotFoundError(f"cannot run {exe}: {exc.strerror or exc}. {INSTALL_HELP}") from None
    text = (proc.stdout + proc.stderr).strip()
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if proc.returncode != 0 or match is None:
        raise BatsimVersionError(f"`{exe} --version` gave no version (exit code {proc.returncode}): "
                                 f"{text[:200]!r}. {INSTALL_HELP}")
    if int(match.group(1)) != EXPECTED_MAJOR:
        raise BatsimVersionError(f"{exe} is Batsim {match.group(0)}; bftune speaks the protocol of Batsim "
                                 f"{EXPECTED_MAJOR}.x. {INSTALL_HELP}")
    return match.group(0)


def batsim_command(exe: Path, platform: Path, workload: Path, endpoint: str, prefix: Path,
                   dynamic_jobs: bool) -> list[str]:
    cmd = [str(exe), "-p", str(platform), "-w", str(workload), "-s", endpoint, "-e", str(prefix),
           "--disable-schedule-tracing", "--disable-machine-state-tracing",
           "--verbosity", "quiet", "--sg-log", "root.thresh:warning"]
    if dynamic_jobs:
        cmd.extend(DYNAMIC_JOB_FLAGS)
    return cmd


# --- processes ------------------------------------------------------------------------------


def _kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
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


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    tail = [line for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join("    " + line for line in tail)


def _show_progress(display: Progress, driver: BatsimDriver, force: bool = False) -> None:
    """Jobs done (reruns of killed jobs not counted twice), simulated time and the driver's queues."""
    if not (force or display.due()):
        return
    p = driver.progress()
    display.set(p["completed"] - driver.stats.killed,
                f"t={p['now']:.0f} s, {p['running']} running, {p['waiting']} waiting, {p['messages']} messages",
                force=force)


# --- one run --------------------------------------------------------------------------------


def run_batsim(trace: Trace, config: SchedulerConfig, out_dir: str | os.PathLike[str],
               batsim: str | os.PathLike[str] | None = None, tau: float = 10.0, port: int | None = None,
               timeout: float = 120.0, progress: bool = False, dynamic_jobs: bool | None = None) -> dict:
    """Run ``trace`` under ``config`` in real Batsim; returns the summary (also written to DIR)."""
    from bftune.platforms.generator import write_platform
    from bftune.workloads.batsim_json import write_batsim_workload

    exe = find_batsim(batsim, check_version=False)
    version = batsim_version(exe)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("out_jobs.csv", "out_schedule.csv", "summary.json"):
        (out / stale).unlink(missing_ok=True)
    m = trace.max_procs
    if config.classifier is not None and config.unix_start_time is None and trace.unix_start_time is not None:
        # as run_local does: calendar features need the trace's calendar
        config = replace(config, unix_start_time=trace.unix_start_time, timezone=config.timezone or trace.timezone)
    workload = write_batsim_workload(trace, out / "workload.json")
    platform = write_platform(m, out / "platform.xml")
    dynamic = config.needs_dynamic_jobs if dynamic_jobs is None else dynamic_jobs

    driver = BatsimDriver(config)
    try:
        sock, endpoint = bind_rep(port=port)
    except BatsimConnectionError as exc:
        raise BatsimRunError(f"{exc} (choose another --port, or leave it out to use a free one)") from None
    proc: subprocess.Popen | None = None
    failure: list[BaseException] = []

    def batsim_gone() -> str | None:
        if proc is not None and proc.poll() is not None and not driver.finished:
            return (f"batsim exited with code {proc.returncode} before the end of the simulation "
                    f"(last message at t={driver.now:g})")
        return None

    connection = Connection(sock, timeout=timeout, first_timeout=timeout, should_stop=batsim_gone)

    def scheduler() -> None:
        try:
            serve(driver, connection)
        except BaseException as exc:  # reported by the watchdog below
            failure.append(exc)

    cmd = batsim_command(exe, platform.resolve(), workload.resolve(), endpoint, (out / "out").resolve(), dynamic)
    log_path = out / "batsim.log"
    thread = threading.Thread(target=scheduler, name="bftune-scheduler", daemon=True)
    display = Progress(len(trace.jobs), enabled=progress, label="batsim")
    t0 = time.perf_counter()
    thread.start()
    try:
        with open(log_path, "w") as log:
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            try:
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True, cwd=out)
            except OSError as exc:
                raise BatsimNotFoundError(f"cannot start {exe}: {exc.strerror or exc}. {INSTALL_HELP}") from None
            while thread.is_alive():
                thread.join(0.1)
                _show_progress(display, driver)
                # The scheduler thread enforces the message timeout itself; this
                # catches a scheduler stuck inside one message.
                if time.monotonic() - connection.last_message > timeout + 10.0 and thread.is_alive():
                    failure.append(RuntimeError(f"the scheduler did not answer Batsim's message at t={driver.now:g} "
                                                f"within {timeout:g} s"))
                    break
            if failure:
                raise _run_error(failure[0], driver, log_path)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                raise BatsimRunError(f"batsim did not exit within {timeout:g} s after the end of the simulation; "
                                     f"it was killed. Log {log_path}:\n{_tail(log_path)}") from None
            wall = time.perf_counter() - t0
            _show_progress(display, driver, force=True)
            if proc.returncode != 0:
                raise BatsimRunError(f"batsim exited with code {proc.returncode} after the simulation. "
                                     f"Log {log_path}:\n{_tail(log_path)}")
    except BaseException:
        if proc is not None:
            _kill_group(proc)
        connection.should_stop = lambda: "the launcher is stopping"
        thread.join(5.0)
        raise
    finally:
        display.close()
        if proc is not None and proc.poll() is None:  # pragma: no cover - defensive
            _kill_group(proc)

    jobs_csv = out / "out_jobs.csv"
    if not jobs_csv.exists():
        raise BatsimRunError(f"batsim finished but wrote no {jobs_csv}. Log {log_path}:\n{_tail(log_path)}")
    df = read_out_jobs(jobs_csv)
    sched = connection.busy_seconds
    extra = {
        "backend": "batsim",
        "simulation_seconds": round(wall, 3),
        "scheduler_seconds": round(sched, 3),
        "scheduler_share": round(sched / wall, 4) if wall > 0 else None,
        "batsim": {"version": version, "executable": str(exe), "endpoint": endpoint, "command": cmd,
                   "messages": connection.messages, "driver": driver.stats.as_dict(),
                   "dynamic_jobs": dynamic},
    }
    if driver.warnings:
        extra["warnings"] = list(driver.warnings)
    extra.update(driver.core.report())
    summary = build_summary(df, m, tau, config.to_dict(), trace.cleaning, workload_info(trace), extra)
    write_summary(summary, out)
    return summary


def _run_error(exc: BaseException, driver: BatsimDriver, log_path: Path) -> BatsimRunError:
    where = f"at simulated t={driver.now:g}" if driver.started else "before the simulation began"
    if isinstance(exc, KeyboardInterrupt):
        return BatsimRunError("interrupted; batsim was stopped")
    what = str(exc) if not isinstance(exc, (KeyError, AttributeError, TypeError)) else f"{type(exc).__name__}: {exc}"
    name = type(exc).__name__
    text = f"the run failed {where}: {name}: {what}"
    tail = _tail(log_path)
    if tail:
        text += f"\nbatsim was stopped; its log {log_path} ends with:\n{tail}"
    else:
        text += "\nbatsim was stopped."
    return BatsimRunError(text)


# --- both backends ----------------------------------------------------------------------------


def compare_backends(trace: Trace, config: SchedulerConfig, out_dir: str | os.PathLike[str],
                     batsim: str | os.PathLike[str] | None = None, tau: float = 10.0, port: int | None = None,
                     timeout: float = 120.0, progress: bool = False, tolerance: float = 0.0) -> dict:
    """Run both backends on the same configuration; diff them job by job; write DIR/compare.json."""
    out = Path(out_dir)
    find_batsim(batsim)  # fail before simulating anything if Batsim is missing
    local_summary, _ = run_local(trace, config, out / "local", tau=tau)
    batsim_summary = run_batsim(trace, config, out / "batsim", batsim=batsim, tau=tau, port=port,
                                timeout=timeout, progress=progress)
    report = diff_out_jobs(read_out_jobs(out / "local" / "out_jobs.csv"),
                           read_out_jobs(out / "batsim" / "out_jobs.csv"), names=("local", "batsim"),
                           tolerance=tolerance)
    metrics = ("jobs", "rejected", "avg_wait", "max_wait", "avg_bsld", "makespan", "killed_runs", "wasted_work")
    report["summaries"] = {k: {"local": local_summary.get(k), "batsim": batsim_summary.get(k)}
                           for k in metrics if k in local_summary or k in batsim_summary}
    report["config"] = config.to_dict()
    report["workload"] = workload_info(trace)
    report["scheduler_share"] = batsim_summary.get("scheduler_share")
    write_json(out / "compare.json", report)
    return report


