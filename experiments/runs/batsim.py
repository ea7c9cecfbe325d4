"""Run one configuration inside real Batsim, and compare it with the local simulator.

``run_batsim(trace, config, out_dir)``:

1. finds ``batsim`` (``--batsim PATH`` or PATH) and checks ``batsim
   --version`` is 4.x;
2. converts the trace (``bftune.workloads.batsim_json``) and writes a
   zero-latency platform whose resource i is host i
   (``bftune.platforms.generator``);
3. binds our scheduler to a ZeroMQ endpoint only this machine reaches: an
   IPC socket in a private temporary folder (``bftune-sockets-<pid>-*``,
   removed however the run ends; a later run removes those of runs killed
   by SIGKILL) or, with ``--port P``, TCP on 127.0.0.1:P; one message is
   bounded (:func:`message_bound`); serves it in a thread of this process
   (``bftune.schedulers.drivers.batsim.connection``), then starts
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
import stat
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import zmq

from bftune.support.children import how_it_ended, run_probe, start_guarded, stop_group
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
    """``batsim --version`` (e.g. ``4.2.1``); raises unless it is 4.x.

    ``--batsim`` may name any program: its answer is read as bytes and decoded with replacement (a
    program printing non-UTF-8 bytes is "not Batsim", not a traceback), only its first 64 KiB are kept,
    and one that does not answer in time is stopped with everything it started (``run_probe``).
    """
    try:
        status, raw = run_probe([str(exe), "--version"], timeout)
    except subprocess.TimeoutExpired:
        raise BatsimVersionError(f"`{exe} --version` did not answer within {timeout:g} s; it was stopped. "
                                 f"{INSTALL_HELP}") from None
    except OSError as exc:
        raise BatsimNotFoundError(f"cannot run {exe}: {exc.strerror or exc}. {INSTALL_HELP}") from None
    text = raw.decode("utf-8", "replace").strip()
    if status == 127 and text.startswith("guard: cannot run"):  # the watchdog could not exec it
        reason = text.partition(": ")[2].partition(": ")[2].splitlines()[0] if ": " in text else text
        raise BatsimNotFoundError(f"cannot run {exe}: {reason}. {INSTALL_HELP}")
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if status != 0 or match is None:
        try:  # the answer as it was: text, or bytes (escaped) when it is not UTF-8
            shown = repr(raw.decode("utf-8").strip()[:200])
        except UnicodeDecodeError:
            shown = f"{raw.strip()[:200]!r} (not UTF-8 text)"
        raise BatsimVersionError(f"`{exe} --version` gave no version ({how_it_ended(status)}): "
                                 f"{shown}. {INSTALL_HELP}")
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

#: How much of Batsim's log an error message quotes: the last lines, read from the last bytes only, each cut.
TAIL_BYTES = 64 * 1024
TAIL_LINES = 15
TAIL_LINE_CHARS = 300


def _cut(line: str, limit: int = TAIL_LINE_CHARS) -> str:
    """``line`` shortened to ``limit`` characters, saying how much was left out."""
    return line if len(line) <= limit else f"{line[:limit]} [... {len(line) - limit} more characters]"


def _tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last non-blank lines of Batsim's log, indented, for an error message.

    Why bounded: a Batsim flooding its stderr made a 700 MB log, which was read whole (704 MB of memory) and
    quoted as a 15.7 MB error.  Only the last ``TAIL_BYTES`` are read; each line is cut to
    ``TAIL_LINE_CHARS`` characters.
    """
    try:
        with open(path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - TAIL_BYTES))
            data = log.read(TAIL_BYTES)
    except OSError:
        return ""
    rows = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES and len(rows) > 1:
        rows = rows[1:]  # the first one read is probably the end of a line
    tail = [line for line in rows if line.strip()][-lines:]
    return "\n".join("    " + _cut(line) for line in tail)


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
    proc: subprocess.Popen | None = None
    watch: int | None = None
    connection: Connection | None = None
    thread: threading.Thread | None = None
    sockets: Path | None = None
    failure: list[BaseException] = []

    def batsim_gone() -> str | None:
        if proc is not None and proc.poll() is not None and not driver.finished:
            return (f"batsim {how_it_ended(proc.returncode)} before the end of the simulation "
                    f"(last message at t={driver.now:g})")
        return None

    def scheduler() -> None:
        assert connection is not None
        try:
            serve(driver, connection)
        except BaseException as exc:  # reported by the watchdog below
            failure.append(exc)

    log_path, log_shown = out / "batsim.log", shown / "batsim.log"
    display = Progress(len(trace.jobs), enabled=progress, label="batsim")
    # From the socket folder's making on, everything is inside this try: an error, Ctrl-C or SIGTERM
    # (an exception, ``support.interrupts``) at any point stops Batsim and removes the folder.
    try:
        sock, endpoint, sockets = _bind(port, message_bound(trace))
        connection = Connection(sock, timeout=timeout, first_timeout=timeout, should_stop=batsim_gone)
        # Paths relative to Batsim's working directory (``out``): the recorded command stays valid
        # where the directory ends up.
        cmd = batsim_command(exe, Path("platform.xml"), Path("workload.json"), endpoint, Path("out"), dynamic)
        thread = threading.Thread(target=scheduler, name="bftune-scheduler", daemon=True)
        t0 = time.perf_counter()
        thread.start()
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
        if connection is not None:
            connection.should_stop = _launcher_stopping
            if thread is not None and thread.ident is not None:
                thread.join(5.0)
            else:  # never served: nobody else closes the socket
                connection.close()
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
    assert connection is not None, "made before Batsim started"
    summary = _summary(read_out_jobs(jobs_csv), trace, config, tau, wall, connection, driver,
                       {"version": version, "executable": str(exe), "endpoint": endpoint, "command": cmd,
                        "messages": connection.messages, "driver": driver.stats.as_dict(), "dynamic_jobs": dynamic})
    write_summary(summary, out)
    return summary


def _launcher_stopping() -> str:
    """The scheduler thread's stop reason once the launcher gives up (an error, Ctrl-C, SIGTERM)."""
    return "the launcher is stopping"


# --- the scheduler's socket -------------------------------------------------------------------

#: The private folders of the scheduler's IPC sockets, in the temporary directory:
#: ``bftune-sockets-<pid>-<random>``, holding the socket and an ``owner`` file (pid and pid namespace).
#: A run killed by SIGKILL cannot remove its folder; the owner's pid lets a later run do it.
SOCKETS_PREFIX = "bftune-sockets-"
SOCKETS_OWNER = "owner"
_SOCKETS_NAME = re.compile(re.escape(SOCKETS_PREFIX) + r"([0-9]+)-[A-Za-z0-9_]+")

#: The smallest bound on one message from Batsim (bytes). The real bound grows with the run's workload
#: (:func:`message_bound`); see docs/reference/limits.md.
MESSAGE_BYTES_FLOOR = 64 * 2**20


def message_bound(trace: Trace) -> int:
    """The largest message from Batsim this run accepts (bytes): ZeroMQ drops a larger one unread.

    Why a bound: a 240 MB message once took 3.1 GB to receive and decode.  Why it grows with the run: the
    largest messages a real Batsim sends are SIMULATION_BEGINS (every host, about 90 bytes each, and every
    delay profile, about 40) and one instant's events (that second's submissions, and completions of at
    most one job per processor, with their kill and resubmission: under 400 bytes a job); a workload bftune
    accepts must never be refused, so each item is counted above its size (128, 64 and 512 bytes), the sum
    doubled, and the bound is never under ``MESSAGE_BYTES_FLOOR`` (6x the largest message of the largest
    archive trace, CEA-Curie's SIMULATION_BEGINS, about 10 MB; its own bound is 124 MB).
    """
    jobs = trace.jobs
    burst = max(Counter(job.submit for job in jobs).values(), default=0)
    profiles = len({job.runtime for job in jobs})
    largest = 128 * trace.max_procs + 64 * profiles + 512 * (burst + min(len(jobs), trace.max_procs))
    return max(MESSAGE_BYTES_FLOOR, 2 * largest)


def _pid_namespace() -> str:
    """This process's pid namespace (``pid:[4026531836]``; empty where there is none to read): a folder made
    in another container sharing /tmp names pids that mean nothing here."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts: it is not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_owner(folder: str) -> str | None:
    """The owner file of a socket folder (a few bytes, never following a link), or None."""
    try:
        fd = os.open(os.path.join(folder, SOCKETS_OWNER), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, 256).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def remove_stale_socket_folders(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the socket folders of bftune runs that are dead (SIGKILL, a power cut): the ones removed.

    Only what is certainly a dead run's is touched: a folder (not a link) named ``bftune-sockets-<pid>-...``,
    owned by this user, whose owner file names the same pid in this pid namespace, and whose pid is not
    alive.  A live run's folder, a folder of another user or container, or one without its owner file (its
    run was making it this instant) is kept.
    """
    base = Path(directory) if directory is not None else Path(tempfile.gettempdir())
    try:
        entries = list(os.scandir(base))
    except OSError:
        return []
    user, namespace = os.getuid(), _pid_namespace()
    removed: list[Path] = []
    for entry in entries:
        match = _SOCKETS_NAME.fullmatch(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != user:
            continue
        owner = _read_owner(entry.path)
        if owner is None or owner.strip() != f"{match.group(1)} {namespace}".strip():
            continue
        if _alive(int(match.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def _socket_folder() -> Path:
    """A new private folder (mode 700) for the IPC socket, with its owner file (see ``SOCKETS_PREFIX``)."""
    folder = Path(tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{os.getpid()}-"))
    try:
        (folder / SOCKETS_OWNER).write_text(f"{os.getpid()} {_pid_namespace()}\n")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _bind(port: int | None, max_message: int) -> tuple[zmq.Socket, str, Path | None]:
    """The scheduler's REP socket, its endpoint, and the private folder of its IPC socket (None with a port).

    An IPC socket in a folder of its own (mode 700) unless a TCP port was asked for; the caller removes the
    folder at the end.  Folders left by killed runs are removed first (``remove_stale_socket_folders``).
    """
    remove_stale_socket_folders()
    sockets = _socket_folder() if port is None else None
    try:
        sock, endpoint = bind_rep(f"ipc://{sockets}/batsim" if sockets is not None else None, port=port,
                                  max_message=max_message)
    except BatsimConnectionError as exc:
        if sockets is not None:
            shutil.rmtree(sockets, ignore_errors=True)
        raise BatsimPortError(f"{exc} (choose another --port, or leave it out to use an IPC socket)") from None
    except BaseException:
        if sockets is not None:
            shutil.rmtree(sockets, ignore_errors=True)
        raise
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
