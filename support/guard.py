"""A watchdog between the launcher and a child process: the child dies with the launcher.

``python guard.py FD -- COMMAND...`` runs COMMAND as its child, in its own
process group (the launcher starts the guard as a session leader), and
watches FD, the read end of a pipe whose write end only the launcher holds.
When the launcher dies - however: an exception, SIGTERM, or SIGKILL, which
no handler can see - the kernel closes the write end, the read end reports
end-of-file, and the guard kills its whole process group (COMMAND and
anything COMMAND started): SIGTERM, then SIGKILL after a grace period.

Why a watchdog pipe rather than Linux's ``PR_SET_PDEATHSIG``: it works on
every POSIX system (macOS has no death signal), it covers COMMAND's own
children, and it needs no code between ``fork`` and ``exec`` of a
multi-threaded launcher (``preexec_fn`` is unsafe with threads).

When COMMAND exits, the guard exits with the same status (a signal death is
re-raised on the guard), so the launcher reads COMMAND's exit status as if
it had started COMMAND itself.  Run as a file, not as a module of bftune,
so that it starts in milliseconds and imports only the standard library.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import sys
import time

GRACE_SECONDS = 3.0


def kill_group(grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to the whole group but ourselves, SIGKILL to what is left after ``grace`` seconds.

    Our children are reaped on the way (no zombie is left where init does
    not reap); the final SIGKILL ends the guard too.
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.killpg(0, signal.SIGTERM)
    except OSError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.05)
        except ChildProcessError:  # our child is gone; its own children may not be
            break
    os.killpg(0, signal.SIGKILL)  # ends the guard too


def exit_like(status: int) -> None:
    """Leave with the child's wait status: the same exit code, or death by the same signal.

    SIGKILL (the OOM killer's) and SIGSTOP have no handler to reset
    (``signal.signal`` refuses them); every other signal gets its default
    action back first.  No core file: a crashed child has written its own.
    """
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ValueError, OSError):  # pragma: no cover - a hard limit we may not lower
            pass
        os.kill(os.getpid(), sig)
        time.sleep(1.0)  # pragma: no cover - the signal ends us
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: guard.py FD -- COMMAND...", file=sys.stderr)
        return 2
    watch = int(argv[0])
    command = argv[2:]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that SIGCHLD writes to the wake-up pipe
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # stopped: stop the group, reap, then go
        signal.signal(signum, lambda *_: kill_group())
    pid = os.fork()
    if pid == 0:  # the child: exec the command (stdin/stdout/stderr and cwd are the guard's)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        try:
            os.close(watch)
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"guard: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr, flush=True)
        os._exit(127)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            exit_like(status)
        readable, _, _ = select.select([watch, wake_r], [], [])
        if watch in readable and not os.read(watch, 1):  # end-of-file: the launcher is gone
            kill_group()
        if wake_r in readable:
            os.read(wake_r, 4096)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
