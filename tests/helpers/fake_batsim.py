"""A small Python stand-in for Batsim 4, for tests without the real simulator.

It follows the semantics recorded in ``shared/batsim/README.md`` for delay
jobs on a zero-latency platform:

- all submissions, completions and the requested call of one time go in one
  message; NOTIFY no_more_static_job_to_submit follows the message holding
  the last static submission, SIMULATION_ENDS the last completion;
- a job of delay d and walltime w ends at start + min(d, w), as
  COMPLETED_WALLTIME_REACHED when d >= w;
- KILL_JOB is acknowledged in the next message (same time) by JOB_COMPLETED
  (COMPLETED_KILLED) then JOB_KILLED; a REGISTER_JOB (dynamic jobs,
  acknowledged) registers the job at once, so the same reply may execute it,
  and is acknowledged by a JOB_SUBMITTED in a following message of its time;
- with dynamic jobs the simulation ends only after NOTIFY
  registration_finished.

In-process: ``FakeBatsim(trace_jobs, m).run(exchange)`` where ``exchange``
takes a message dict and returns the reply dict.  As an executable
(``python fake_batsim.py -p P -w W -s ENDPOINT -e PREFIX [flags]``) it
speaks over a ZeroMQ REQ socket and writes ``PREFIX_jobs.csv``;
``FAKE_BATSIM_MODE`` makes it misbehave for the launcher's error tests.
"""

from __future__ import annotations

import heapq
import json
import os
import sys
import time

KILLED = "COMPLETED_KILLED"


class FakeBatsimError(AssertionError):
    pass


def begins(m: int, dynamic: bool = False, profiles: dict | None = None, workloads: dict | None = None) -> dict:
    return {"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": m, "nb_compute_resources": m, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True,
        "config": {"redis-enabled": False, "profiles-forwarded-on-submission": False,
                   "dynamic-jobs-enabled": dynamic, "dynamic-jobs-acknowledged": dynamic,
                   "profile-reuse-enabled": dynamic, "sched-config": "", "forward-unknown-events": False},
        "compute_resources": [{"id": i, "name": f"h{i}", "state": "idle", "properties": {}, "zone_properties": {}}
                              for i in range(m)],
        "storage_resources": [], "workloads": workloads or {}, "profiles": {"w0": profiles or {}}}}


class FakeBatsim:
    """Plays Batsim against a scheduler; ``rows`` are the runs in completion order."""

    def __init__(self, jobs, m: int, dynamic: bool = False, width: int = 7, split: bool = False,
                 profiles: bool = True, workload_file: str | None = None) -> None:
        self.m = m
        self.dynamic = dynamic
        # split: deliver an instant in several messages, as real Batsim does now and then: its
        # first submission alone, then the other submissions and the requested call, then the
        # completions.  profiles: announce the delay profiles in SIMULATION_BEGINS.
        # workload_file: the path SIMULATION_BEGINS names for workload w0.
        self.split = split
        self.send_profiles = profiles
        self.workload_file = workload_file
        self.static = sorted(((float(j.submit), j.id, j) for j in jobs), key=lambda x: (x[0], x[1]))
        self.width = max([width] + [len(str(j.id)) for j in jobs])
        self.jobs: dict[str, dict] = {}  # Batsim id -> job record (dict)
        self.rows: list[dict] = []
        self.messages = 0

    def _job(self, rec) -> dict:
        name = str(rec.id).zfill(self.width)
        return {"id": f"w0!{name}", "subtime": rec.submit, "res": rec.procs, "walltime": rec.walltime,
                "profile": f"d{rec.runtime:g}", "user": rec.user, "_delay": float(rec.runtime)}

    def run(self, exchange) -> list[dict]:
        ends: list = []  # (time, tie, id)
        calls: list[float] = []
        running: dict[str, dict] = {}
        tie = 0
        registered_finished = not self.dynamic
        pending_kills: list[str] = []
        pending_regs: list[dict] = []
        i, n = 0, len(self.static)
        no_more_sent = False

        def send(now: float, events: list[dict]) -> dict:
            self.messages += 1
            reply = exchange({"now": now, "events": events})
            if not isinstance(reply, dict) or reply.get("now") != now:
                raise FakeBatsimError(f"bad reply to message at now={now}: {reply!r}")
            return reply

        def apply(now: float, reply: dict) -> None:
            nonlocal tie, registered_finished
            for ev in reply["events"]:
                if ev["timestamp"] != now:
                    raise FakeBatsimError(f"event {ev} is not stamped with now={now}")
                kind, data = ev["type"], ev["data"]
                if kind == "EXECUTE_JOB":
                    job = self.jobs[data["job_id"]]
                    ids: list[int] = []
                    for part in data["alloc"].split():
                        a, _, b = part.partition("-")
                        ids.extend(range(int(a), int(b or a) + 1))
                    if len(ids) != job["res"] or any(x in self.busy for x in ids) or max(ids) >= self.m:
                        raise FakeBatsimError(f"bad allocation {data['alloc']} for {job['id']} at {now}")
                    self.busy.update(ids)
                    job.update(start=now, alloc=data["alloc"], ids=ids)
                    end = now + min(job["_delay"], job["walltime"])
                    tie += 1
                    heapq.heappush(ends, (end, tie, job["id"]))
                    running[job["id"]] = job
                elif kind == "KILL_JOB":
                    pending_kills.extend(data["job_ids"])
                elif kind == "REGISTER_JOB":
                    if not self.dynamic:
                        raise FakeBatsimError("REGISTER_JOB without dynamic jobs")
                    # Registered at once (it may be executed in the same reply); acknowledged
                    # by a JOB_SUBMITTED in a following message.
                    job = dict(data["job"])
                    parent = self.jobs[job["id"].split("#", 1)[0]]
                    job["_delay"] = parent["_delay"]
                    job["subtime"] = now
                    self.jobs[job["id"]] = job
                    pending_regs.append(job)
                elif kind == "SET_JOB_METADATA":
                    self.jobs_meta[data["job_id"]] = data["metadata"]
                elif kind == "CALL_ME_LATER":
                    if data["timestamp"] > now:
                        heapq.heappush(calls, data["timestamp"])
                elif kind == "NOTIFY" and data["type"] == "registration_finished":
                    registered_finished = True
                elif kind == "REJECT_JOB":
                    self.jobs.pop(data["job_id"])
                else:
                    raise FakeBatsimError(f"unexpected event {ev}")

        def finish(job: dict, now: float, state: str) -> None:
            running.pop(job["id"])
            self.busy.difference_update(job["ids"])
            self.rows.append({"job_id": job["id"].split("!", 1)[1], "start": job["start"], "end": now,
                              "state": state, "alloc": job["alloc"], "subtime": job["subtime"],
                              "metadata": self.jobs_meta.get(job["id"], "")})

        self.busy: set[int] = set()
        self.jobs_meta: dict[str, str] = {}
        profiles = {f"d{j.runtime:g}": {"type": "delay", "delay": j.runtime} for _, _, j in self.static}
        workloads = {"w0": self.workload_file} if self.workload_file else {}
        apply(0.0, send(0.0, [begins(self.m, self.dynamic, profiles if self.send_profiles else {}, workloads)]))
        while True:
            inf = float("inf")
            t = self.static[i][0] if i < n else inf
            if ends and ends[0][0] < t:
                t = ends[0][0]
            if calls and calls[0] < t:
                t = calls[0]
            if t == inf:
                if running or not registered_finished:
                    raise FakeBatsimError("the simulation cannot end: scheduler never finished registration"
                                          if not running else "jobs still running with nothing to wake them")
                send(self.now_end(), [{"timestamp": self.now_end(), "type": "SIMULATION_ENDS", "data": {}}])
                return self.rows
            events = []
            while ends and ends[0][0] == t:
                _, _, jid = heapq.heappop(ends)
                job = running.get(jid)
                if job is None or job.get("killed"):
                    continue
                state = "COMPLETED_SUCCESSFULLY" if job["_delay"] < job["walltime"] else "COMPLETED_WALLTIME_REACHED"
                finish(job, t, state)
                events.append({"timestamp": t, "type": "JOB_COMPLETED", "data": {
                    "job_id": jid, "job_state": state, "return_code": 0 if state[10] == "S" else -1,
                    "alloc": job["alloc"]}})
            while i < n and self.static[i][0] == t:
                job = self._job(self.static[i][2])
                self.jobs[job["id"]] = job
                public = {k: v for k, v in job.items() if not k.startswith("_")}
                events.append({"timestamp": t, "type": "JOB_SUBMITTED", "data": {"job_id": job["id"], "job": public}})
                i += 1
            if calls and calls[0] == t:
                while calls and calls[0] == t:
                    heapq.heappop(calls)
                events.append({"timestamp": t, "type": "REQUESTED_CALL", "data": {}})
            if not events:  # only the planned end of a killed run: nothing happens
                continue
            self.last = t
            if self.split:
                completions = [e for e in events if e["type"] == "JOB_COMPLETED"]
                others = [e for e in events if e["type"] != "JOB_COMPLETED"]
                parts = [others[:1], others[1:], completions] if len(others) > 1 else [others, completions]
                parts = [p for p in parts if p]
                for part in parts[:-1]:
                    apply(t, send(t, part))
                events = parts[-1]
            apply(t, send(t, events))
            while pending_kills or pending_regs:
                events = []
                for jid in pending_kills:
                    job = running[jid]
                    job["killed"] = True
                    finish(job, t, KILLED)
                    events.append({"timestamp": t, "type": "JOB_COMPLETED", "data": {
                        "job_id": jid, "job_state": KILLED, "return_code": -1, "alloc": job["alloc"]}})
                if pending_kills:
                    progress = {jid: {"profile_name": self.jobs[jid]["profile"], "progress": 0.5}
                                for jid in pending_kills}
                    events.append({"timestamp": t, "type": "JOB_KILLED",
                                   "data": {"job_ids": list(pending_kills), "job_progress": progress}})
                pending_kills.clear()
                for job in pending_regs:
                    public = {k: v for k, v in job.items() if not k.startswith("_") and k not in ("start", "alloc", "ids")}
                    events.append({"timestamp": t, "type": "JOB_SUBMITTED",
                                   "data": {"job_id": job["id"], "job": public}})
                pending_regs.clear()
                apply(t, send(t, events))
            if i == n and not no_more_sent:
                no_more_sent = True
                apply(t, send(t, [{"timestamp": t, "type": "NOTIFY",
                                   "data": {"type": "no_more_static_job_to_submit"}}]))

    def now_end(self) -> float:
        return getattr(self, "last", 0.0)


# --- as an executable ---------------------------------------------------------------------------


def write_executable(directory) -> "os.PathLike[str]":
    """A ``batsim`` shell script in ``directory`` that runs this file (same pid: ``exec``)."""
    import stat
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "batsim"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve()} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def _write_out_jobs(rows: list[dict], jobs: dict, path: str) -> None:
    sys.path.insert(0, os.environ.get("FAKE_BATSIM_REPO", "."))
    from bftune.experiments.runs.outjobs import write_out_jobs
    from bftune.schedulers.core import machines as ms
    from bftune.schedulers.drivers.local.simulator import Run

    runs = []
    for r in rows:
        job = jobs[f"w0!{r['job_id']}"]
        first, _, attempt = r["job_id"].partition("#")
        runs.append(Run(id=r["job_id"], first_id=first, seq=int(first), subtime=float(r["subtime"]),
                        original_submit=float(r["subtime"]), procs=job["res"], walltime=float(job["walltime"]),
                        runtime=job["_delay"], user=-1, start=r["start"], end=r["end"], state=r["state"],
                        alloc=ms.parse(r["alloc"]), attempt=int(attempt or 0)))
    write_out_jobs(runs, path)


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print(os.environ.get("FAKE_BATSIM_VERSION", "4.2.1"))
        return 0
    import zmq

    args = dict(zip(argv[::1], argv[1::1]))
    endpoint, workload, prefix = args["-s"], args["-w"], args["-e"]
    dynamic = "--enable-dynamic-jobs" in argv
    mode = os.environ.get("FAKE_BATSIM_MODE", "")
    pid_file = os.environ.get("FAKE_BATSIM_PIDS")
    if pid_file:
        pids = [os.getpid()]
        if "child" in mode:
            import subprocess

            pids.append(subprocess.Popen(["sleep", "300"]).pid)
        with open(pid_file, "w") as fh:
            fh.write(" ".join(map(str, pids)))
    print(f"fake batsim: mode={mode or 'normal'}", flush=True)
    if mode.startswith("never_connect"):
        time.sleep(300)
        return 0
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    doc = json.load(open(workload))
    m = doc["nb_res"]

    def exchange(msg: dict) -> dict:
        sock.send_string(json.dumps(msg))
        raw = sock.recv()
        try:
            return json.loads(raw)
        except ValueError:
            print(f"fake batsim: Invalid JSON message: {raw[:200]!r}", flush=True)
            raise SystemExit(134)

    if mode:
        exchange({"now": 0.0, "events": [begins(m, dynamic, workloads={"w0": os.path.abspath(workload)})]})
        if mode.startswith("die"):
            print("fake batsim: crashing on purpose", flush=True)
            return 3
        if mode.startswith("exit0"):
            return 0
        if mode.startswith("stall"):
            time.sleep(300)
            return 0
        if mode.startswith("close"):
            sock.close(0)
            ctx.term()
            time.sleep(300)
            return 0
        if mode.startswith("bad_event"):
            exchange({"now": 1.0, "events": [{"timestamp": 1.0, "type": "BOGUS_EVENT", "data": {}}]})
            time.sleep(300)
            return 0
        raise SystemExit(f"unknown FAKE_BATSIM_MODE {mode}")

    class _Rec:
        def __init__(self, j):
            self.id = int(j["id"])
            self.submit = j["subtime"]
            self.procs = j["res"]
            self.walltime = j["walltime"]
            self.runtime = doc["profiles"][j["profile"]]["delay"]
            self.user = j.get("user", -1)

    fake = FakeBatsim([_Rec(j) for j in doc["jobs"]], m, dynamic=dynamic, workload_file=os.path.abspath(workload))
    rows = fake.run(exchange)
    _write_out_jobs(rows, fake.jobs, prefix + "_jobs.csv")
    with open(prefix + "_schedule.csv", "w") as fh:
        fh.write("nb_jobs\n%d\n" % len(rows))
    sock.close(0)
    ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
