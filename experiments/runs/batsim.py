"""Run one configuration inside real Batsim, and compare it with the local simulator.

``run_batsim(trace, config, out_dir)``:

1. finds ``batsim`` (``--batsim PATH`` or PATH) and checks ``batsim
   --version`` is 4.x;
2. converts the trace (``bftune.workloads.batsim_json``) and writes a
   zero-latency platform whose resource i is host i
   (``bftune.platforms.generator``);
3. binds our scheduler to a ZeroMQ endpoint only this machine reaches: an
   IPC socket in a private temporary folder (with ``--port P``: TCP on
   127.0.0.1:P), and serves it in a thread of this process (``bftune.schedulers.drivers.batsim.connection``), then starts
   ``batsim`` in its own process group with ``-e out`` (plus the dynamic
   job flags when the configuration kills and requeues jobs), under a
   watchdog (``bftune.support.guard``) that kills the group if this
   process dies in any way, SIGKILL included;
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

Why IPC rather than TCP on localhost: Batsim and the scheduler exchange one
message per simulated instant (55,000 on KTH-SP2), each a full round trip;
on Linux a round trip over a Unix socket takes about half as long as over
TCP's loopback (``benchmarks/batsim.py``), and the run's wall time is mostly
those round trips and Batsim's own work.  Batsim
   runs in a staging directory that replaces DIR as a whole only when the
   run succeeded (``bftune.support.files.result_dir``): a failed or killed run never
   leaves a partial ``out_jobs.csv`` under DIR; its files go to DIR.failed.

``compare_backends(trace, config, out_dir)`` runs the local simulator into
DIR/local and Batsim into DIR/batsim and diffs the two ``out_jobs.csv``
job by job (``bftune.experiments.runs.compare``), writing DIR/compare.json; the
three are replaced together.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bftune.support.children import how_it_ended, start_guarded, stop_group
from bftune.experiments.runs.compare import diff_out_jobs
from bftune.experiments.runs.local import run_local, workload_info
from bftune.support.progress import Progress
from bftune.experiments.runs.summary import build_summary, write_json, write_summary
from bftune.experiments.runs.tables import read_out_jobs
from bftune.schedulers.drivers.batsim.driver import DYNAMIC_JOB_FLAGS, BatsimDriver
from bftune.schedulers.drivers.batsim.connection import BatsimConnectionError, Connection, bind_rep, serve
from bftune.support.files import result_dir
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


class BatsimPortError(BatsimRunError):
    """The scheduler's port cannot be bound (``--port`` in use): bad input, exit status 2."""


# --- finding batsim ----------------------------------------------------------------------


def find_batsim(path: str | os.PathLike[str] | None = None, check_version: bool = True) -> Path:
    """The batsim executable as an absolute path: ``path`` if given, else ``batsim`` on PATH; 4.x checked.

    A relative ``path`` (``bin/batsim``) is taken from the current directory
    (Batsim runs in its output directory, where a relative path would point
    elsewhere); a bare name that is not a file here (``batsim-4.2``) is looked
    up on PATH, as a shell would.
    """
    if path is not None:
        exe = Path(path)
        if not exe.exists() and os.sep not in os.fspath(path) and shutil.which(os.fspath(path)):
            exe = Path(shutil.which(os.fspath(path)))  # type: ignore[arg-type]
        exe = exe.absolute()
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
        exe = Path(found).absolute()
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

#: What a Batsim result directory holds (so that one written before the result marker is replaced too).
BATSIM_RESULT = ("out_jobs.csv", "out_schedule.csv", "out_machine_states.csv", "out_pstate_changes.csv",
                 "summary.json", "workload.json", "platform.xml", "batsim.log")
#: What a comparison directory holds.
COMPARE_RESULT = ("local", "batsim", "compare.json")


def check_run_options(port: int | None, timeout: float) -> None:
    """The launcher's own options (the CLI checks them when parsing; this guards the API)."""
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        raise ValueError(f"port must be an integer in 1..65535, not {port!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")


def run_batsim(trace: Trace, config: SchedulerConfig, out_dir: str | os.PathLike[str],
               batsim: str | os.PathLike[str] | None = None, tau: float = 10.0, port: int | None = None,
               timeout: float = 120.0, progress: bool = False, dynamic_jobs: bool | None = None) -> dict:
    """Run ``trace`` under ``config`` in real Batsim; returns the summary (also written to DIR).

    DIR is replaced as a whole when the run succeeds (``bftune.support.files.result_dir``);
    after a failure it is untouched and the failed run's files (Batsim's log,
    a partial out_jobs.csv) are in ``DIR.failed``.
    """
    check_run_options(port, timeout)
    target = result_dir(out_dir, replaces=BATSIM_RESULT, keep_failed=True)
    exe = find_batsim(batsim, check_version=False)
    version = batsim_version(exe)
    with target as stage:
        return _run_in(stage, target.failed_path, trace, config, exe, version, tau=tau, port=port,
                       timeout=timeout, progress=progress, dynamic_jobs=dynamic_jobs)


def _run_in(out: Path, shown: Path, trace: Trace, config: SchedulerConfig, exe: Path, version: str, *,
            tau: float, port: int | None, timeout: float, progress: bool, dynamic_jobs: bool | None) -> dict:
    """One Batsim run writing into the private directory ``out``; messages name ``shown`` (where a
    failed run's files are kept) instead."""
    from bftune.platforms.generator import write_platform
    from bftune.workloads.batsim_json import write_batsim_workload

    m = trace.max_procs
    # the workload file carries the trace's clock; the driver reads it from there, as under pybatsim
    write_batsim_workload(trace, out / "workload.json")
    write_platform(m, out / "platform.xml")
    dynamic = config.needs_dynamic_jobs if dynamic_jobs is None else dynamic_jobs

    driver = BatsimDriver(config.build)
    sock, endpoint, sockets = _bind(port)
    proc: subprocess.Popen | None = None
    watch: int | None = None
    failure: list[BaseException] = []

    def batsim_gone() -> str | None:
        if proc is not None and proc.poll() is not None and not driver.finished:
            return (f"batsim {how_it_ended(proc.returncode)} before the end of the simulation "
                    f"(last message at t={driver.now:g})")
        return None

    connection = Connection(sock, timeout=timeout, first_timeout=timeout, should_stop=batsim_gone)

    def scheduler() -> None:
        try:
            serve(driver, connection)
        except BaseException as exc:  # reported by the watchdog below
            failure.append(exc)

    # Paths relative to Batsim's working directory (``out``): the recorded command stays valid
    # where the directory ends up.
    cmd = batsim_command(exe, Path("platform.xml"), Path("workload.json"), endpoint, Path("out"), dynamic)
    log_path, log_shown = out / "batsim.log", shown / "batsim.log"
    thread = threading.Thread(target=scheduler, name="bftune-scheduler", daemon=True)
    display = Progress(len(trace.jobs), enabled=progress, label="batsim")
    t0 = time.perf_counter()
    thread.start()
    try:
        with open(log_path, "w") as log:
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            try:
                proc, watch = start_guarded(cmd, out, log)
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
                raise _run_error(failure[0], driver, log_path, log_shown)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                raise BatsimRunError(f"batsim did not exit within {timeout:g} s after the end of the simulation; "
                                     f"it was killed. Log {log_shown}:\n{_tail(log_path)}") from None
            wall = time.perf_counter() - t0
            _show_progress(display, driver, force=True)
            if proc.returncode != 0:
                raise BatsimRunError(f"batsim {how_it_ended(proc.returncode)} after the simulation. "
                                     f"Log {log_shown}:\n{_tail(log_path)}")
    except BaseException:
        if proc is not None:
            stop_group(proc)
        connection.should_stop = lambda: "the launcher is stopping"
        thread.join(5.0)
        raise
    finally:
        display.close()
        if proc is not None and proc.poll() is None:  # pragma: no cover - defensive
            stop_group(proc)
        if watch is not None:
            os.close(watch)
        if sockets is not None:
            shutil.rmtree(sockets, ignore_errors=True)

    jobs_csv = out / "out_jobs.csv"
    if not jobs_csv.exists():
        raise BatsimRunError(f"batsim finished but wrote no out_jobs.csv. Log {log_shown}:\n{_tail(log_path)}")
    summary = _summary(read_out_jobs(jobs_csv), trace, config, tau, wall, connection, driver,
                       {"version": version, "executable": str(exe), "endpoint": endpoint, "command": cmd,
                        "messages": connection.messages, "driver": driver.stats.as_dict(), "dynamic_jobs": dynamic})
    write_summary(summary, out)
    return summary


def _bind(port: int | None):
    """The scheduler's REP socket, its endpoint, and the private folder of its IPC socket (None with a port).

    An IPC socket in a folder of its own (mode 700) unless a TCP port was asked for; the caller removes the
    folder at the end.
    """
    sockets = Path(tempfile.mkdtemp(prefix="bftune-")) if port is None else None
    try:
        sock, endpoint = bind_rep(f"ipc://{sockets}/batsim" if sockets is not None else None, port=port)
    except BatsimConnectionError as exc:
        if sockets is not None:
            shutil.rmtree(sockets, ignore_errors=True)
        raise BatsimPortError(f"{exc} (choose another --port, or leave it out to use an IPC socket)") from None
    return sock, endpoint, sockets


def _summary(df, trace: Trace, config: SchedulerConfig, tau: float, wall: float, connection: Connection,
             driver: BatsimDriver, batsim: dict) -> dict:
    """summary.json of a finished Batsim run: the metrics of its out_jobs.csv, then what the run cost and how
    Batsim was run (kept apart from the run itself, which is about processes and failures)."""
    sched = connection.busy_seconds
    extra = {
        "backend": "batsim",
        "simulation_seconds": round(wall, 3),
        "scheduler_seconds": round(sched, 3),
        "scheduler_share": round(sched / wall, 4) if wall > 0 else None,
        "scheduler_phases": {k: round(v, 3) for k, v in connection.phases(driver).items()},
        "batsim": batsim,
    }
    if driver.warnings:
        extra["warnings"] = list(driver.warnings)
    assert driver.core is not None, "made at SIMULATION_BEGINS, which a finished run had"
    extra.update(driver.core.report())
    return build_summary(df, trace.max_procs, tau, config.to_dict(), trace.cleaning, workload_info(trace), extra)


def _run_error(exc: BaseException, driver: BatsimDriver, log_path: Path, log_shown: Path) -> BatsimRunError:
    where = f"at simulated t={driver.now:g}" if driver.started else "before the simulation began"
    if isinstance(exc, KeyboardInterrupt):
        return BatsimRunError("interrupted; batsim was stopped")
    what = str(exc) if not isinstance(exc, (KeyError, AttributeError, TypeError)) else f"{type(exc).__name__}: {exc}"
    name = type(exc).__name__
    text = f"the run failed {where}: {name}: {what}"
    tail = _tail(log_path)
    if tail:
        text += f"\nbatsim was stopped; its log {log_shown} ends with:\n{tail}"
    else:
        text += "\nbatsim was stopped."
    return BatsimRunError(text)


# --- both backends ----------------------------------------------------------------------------


def compare_backends(trace: Trace, config: SchedulerConfig, out_dir: str | os.PathLike[str],
                     batsim: str | os.PathLike[str] | None = None, tau: float = 10.0, port: int | None = None,
                     timeout: float = 120.0, progress: bool = False, tolerance: float = 0.0) -> dict:
    """Run both backends on the same configuration; diff them job by job; write DIR/compare.json.

    DIR (local/, batsim/, compare.json) is replaced as a whole when both runs
    succeed; after a failure it is untouched and the failed attempt is in
    ``DIR.failed``.
    """
    check_run_options(port, timeout)
    target = result_dir(out_dir, replaces=COMPARE_RESULT, keep_failed=True)
    exe = find_batsim(batsim, check_version=False)  # fail before simulating anything if Batsim is missing
    version = batsim_version(exe)
    with target as out:
        local_summary, _ = run_local(trace, config, out / "local", tau=tau)
        (out / "batsim").mkdir()
        batsim_summary = _run_in(out / "batsim", target.failed_path / "batsim", trace, config, exe, version,
                                 tau=tau, port=port, timeout=timeout, progress=progress, dynamic_jobs=None)
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
