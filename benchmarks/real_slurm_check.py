"""bftune's Slurm model against a real slurmctld (not a test: it prints a comparison).

It sets up a private one-machine Slurm cluster in ``--dir`` (slurmctld,
slurmd, slurmdbd and a MariaDB server of its own, on free local ports, with
``AuthType=auth/none``: no munge key), runs a scaled-down workload through it
under a few settings, dumps each run with ``sacct --parsable2``, gives that
dump to ``bftune simulate --scheduler slurm`` with the same settings, and
compares the order of the starts and the start times.  Every daemon it starts
is stopped before it exits, also on an error or Ctrl-C.

Why these choices (docs/guides/slurm.md#checked-against-a-real-slurmctld says what was found):

- **16 emulated nodes of 1 CPU** (``--node-cpus 1``), ``select/cons_tres``
  with ``CR_CPU``, one ``slurmd -N`` per node (Debian's slurmd runs several
  times on one host although it is built without ``--enable-multiple-slurmd``).
  Slurm's backfill reserves whole nodes for pending jobs; with 1-CPU nodes
  that is reserving CPUs, the processor model bftune simulates.  A job asks
  ``sbatch -N P -n P``: Slurm's job size factor counts the nodes a job asks
  for.  ``--node-cpus 16`` (one node) shows what whole-node reservations do.
- **slurmdbd** is needed twice over: ``sacct`` reads the accounting database,
  and without ``accounting_storage/slurmdbd`` the multifactor plugin never
  recalculates a pending job's priority (its age factor stays 0).
- **Time limits are minutes** (Slurm's unit), runtimes a few seconds: both
  Slurm and the model plan with the limits, and the runs stay short.
- Slurm's times are whole seconds and it starts a job up to a second after
  the event that freed its CPUs, so start times are compared within a
  tolerance and orders by (start, job id).
- With an age weight, the first submission is put just after one of Slurm's
  priority recalculations (every ``PriorityCalcPeriod`` from the second its
  priority thread started), where the model puts its own.

Needs root (slurmd starts the jobs as their user) and Debian's slurmctld,
slurmd, slurmdbd, slurm-client and mariadb-server packages; it says which
are missing and exits 2 otherwise.

    uv run python benchmarks/real_slurm_check.py                        # 3 settings, 50 jobs (~20 min)
    uv run python benchmarks/real_slurm_check.py --settings backfill --jobs 30
    uv run python benchmarks/real_slurm_check.py --compare-only --dir /tmp/bftune-real-slurm   # model again
"""

from __future__ import annotations

import argparse
import calendar
import csv
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bftune.schedulers.options import OPTIONS

CPUS = 16
PARTITION = "check"
MARKER = ".real_slurm_check"
#: Seconds waited once the node is idle: a fresh slurmctld makes its first scheduling pass ~3 s after it
#: starts, and jobs submitted before it would all start late together.
WARM_UP = 5.0
#: Programs the real run needs, and the Debian package of each.
TOOLS = {"slurmctld": "slurmctld", "slurmd": "slurmd", "slurmdbd": "slurmdbd", "sbatch": "slurm-client",
         "squeue": "slurm-client", "sacct": "slurm-client", "sacctmgr": "slurm-client", "scancel": "slurm-client",
         "scontrol": "slurm-client", "sinfo": "slurm-client",
         "mariadbd": "mariadb-server", "mariadb-install-db": "mariadb-server", "mariadb": "mariadb-client"}
#: The sacct columns dumped (bftune reads the dump as it is, steps included).
SACCT_COLUMNS = "JobID,JobName,User,Account,Partition,Submit,Eligible,Start,End,Elapsed,Timelimit,NCPUS,ReqCPUS,NNodes,State"
#: Every setting's own slurm.conf keys come on top of these (``SchedulerParameters:x`` = a sub-option).
COMMON_CONF = {
    "PriorityType": "priority/multifactor",
    "PriorityCalcPeriod": "1",  # minutes: Slurm's least (it rounds 0:00:05 up to 1 and refuses 0)
    "SchedulerParameters:sched_interval": "1",
}
#: Backfilling every second, planned to the second (Slurm's defaults: 30 s and 60 s).
BACKFILL = {"SchedulerType": "sched/backfill", "SchedulerParameters:bf_interval": "1",
            "SchedulerParameters:bf_resolution": "1"}


@dataclass(frozen=True)
class Setting:
    """One configuration run through both Slurm and the model."""

    name: str
    about: str
    conf: dict[str, str] = field(default_factory=dict)

    def slurm_conf(self) -> dict[str, str]:
        return {**COMMON_CONF, **self.conf}

    @property
    def ages(self) -> bool:
        """Whether priorities change while jobs wait (then the first submission is put on a recalculation)."""
        return int(self.conf.get("PriorityWeightAge", "0")) > 0


SETTINGS = {s.name: s for s in (
    Setting("fifo", "sched/builtin, every weight 0: strict FIFO, no backfilling",
            {"SchedulerType": "sched/builtin"}),
    Setting("backfill", "sched/backfill, every weight 0: FIFO priority with backfilling",
            BACKFILL),
    Setting("agesize", "sched/backfill, PriorityWeightAge=1000 (PriorityMaxAge 5 min), PriorityWeightJobSize=1000",
            {**BACKFILL, "PriorityWeightAge": "1000", "PriorityMaxAge": "0:05:00",
             "PriorityWeightJobSize": "1000"}),
)}


@dataclass(frozen=True)
class JobSpec:
    """One job of the scripted workload: when it is submitted (s after the first), its CPUs, sleep and limit."""

    offset: float
    cpus: int
    sleep: int
    limit_minutes: int


def workload(jobs: int, seed: int, mean_gap: float) -> list[JobSpec]:
    """A burst of jobs that fills the queue: sizes 1..16 CPUs, sleeps of 3..30 s, limits of 1..5 minutes.

    Limits are drawn apart from the sleeps (users overestimate), so that both
    Slurm's backfilling and the model plan with limits far above runtimes.
    """
    rng = random.Random(seed)
    sizes = (1, 1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16)
    offset, out = 0.0, []
    for _ in range(jobs):
        out.append(JobSpec(round(offset, 1), rng.choice(sizes), rng.randint(3, 30), rng.randint(1, 5)))
        offset += rng.expovariate(1 / mean_gap)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """The private cluster under ``root``: a database for the whole check; a controller and nodes per setting.

    The nodes are ``CPUS / node_cpus`` emulated ones (``n01``, ...), one ``slurmd -N`` each on its own port,
    all on this host: Debian's slurmd runs several times without ``--enable-multiple-slurmd``.
    """

    def __init__(self, root: Path, node_cpus: int) -> None:
        self.root = root
        self.host = socket.gethostname().split(".")[0]
        self.node_cpus = node_cpus
        self.nodes = [f"n{i + 1:02d}" for i in range(CPUS // node_cpus)]
        self.ports = {k: free_port() for k in ("ctld", "dbd", "mysql", *self.nodes)}
        self.conf = root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), "TZ": "UTC"}
        self.db: list[subprocess.Popen[bytes]] = []
        self.daemons: list[subprocess.Popen[bytes]] = []

    def run(self, *cmd: str) -> str:
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
        return done.stdout

    def start_database(self) -> None:
        """MariaDB on its own data directory and port, then slurmdbd (its conf beside slurm.conf, mode 600)."""
        data, log = self.root / "mysql", self.root / "log"
        log.mkdir(parents=True, exist_ok=True)
        self.run("mariadb-install-db", f"--datadir={data}", "--user=root", "--skip-test-db",
                 "--auth-root-authentication-method=normal")
        sock = self.root / "mysql.sock"
        self.db.append(subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={data}", "--user=root", f"--port={self.ports['mysql']}",
             "--bind-address=127.0.0.1", f"--socket={sock}", "--innodb-buffer-pool-size=64M",
             f"--log-error={log / 'mysql.err'}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        sql = ("CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm'; "
               "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;")
        self._retry(lambda: self.run("mariadb", f"--socket={sock}", "-uroot", "-e", sql), "MariaDB")
        dbd = self.root / "slurmdbd.conf"
        dbd.write_text("\n".join([
            "AuthType=auth/none", "DbdHost=localhost", "DbdAddr=127.0.0.1", f"DbdPort={self.ports['dbd']}",
            "SlurmUser=root", "DebugLevel=info", f"LogFile={log / 'slurmdbd.log'}",
            f"PidFile={self.root / 'slurmdbd.pid'}", "StorageType=accounting_storage/mysql",
            "StorageHost=127.0.0.1", f"StoragePort={self.ports['mysql']}", "StorageUser=slurm",
            "StoragePass=slurm", "StorageLoc=slurm_acct_db", ""]))
        dbd.chmod(0o600)
        self.write_conf("none", Setting("none", ""))  # slurmdbd finds its conf beside SLURM_CONF
        self.db.append(subprocess.Popen(["slurmdbd", "-D"], env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        self._retry(lambda: self.run("sacctmgr", "-n", "list", "cluster"), "slurmdbd")

    def write_conf(self, cluster: str, setting: Setting) -> Path:
        """slurm.conf of one setting (also kept as slurm-CLUSTER.conf, the file the model reads); its path."""
        state, log, spool = self.root / cluster / "state", self.root / "log", self.root / cluster / "spool-%n"
        keys = {
            "ClusterName": cluster, "SlurmctldHost": f"{self.host}(127.0.0.1)",
            "SlurmctldPort": str(self.ports["ctld"]),
            "SlurmUser": "root", "SlurmdUser": "root", "AuthType": "auth/none", "CredType": "cred/none",
            "StateSaveLocation": str(state), "SlurmdSpoolDir": str(spool),
            "SlurmctldPidFile": str(self.root / "slurmctld.pid"), "SlurmdPidFile": str(self.root / "slurmd-%n.pid"),
            "SlurmctldLogFile": str(log / f"slurmctld-{cluster}.log"),
            "SlurmdLogFile": str(log / f"slurmd-{cluster}-%n.log"), "SlurmctldDebug": "info",
            "DebugFlags": "Backfill", "ProctrackType": "proctrack/pgid", "TaskPlugin": "task/none",
            "JobAcctGatherType": "jobacct_gather/none", "MpiDefault": "none",
            "AccountingStorageType": "accounting_storage/slurmdbd", "AccountingStorageHost": "127.0.0.1",
            "AccountingStoragePort": str(self.ports["dbd"]), "AccountingStorageEnforce": "associations",
            "MinJobAge": "86400", "ReturnToService": "2", "SlurmdParameters": "config_overrides",
            "SelectType": "select/cons_tres", "SelectTypeParameters": "CR_CPU",
        }
        sub = []
        for key, value in setting.slurm_conf().items():
            if key.startswith("SchedulerParameters:"):
                sub.append(f"{key.split(':', 1)[1]}={value}")
            else:
                keys[key] = value
        if sub:
            keys["SchedulerParameters"] = ",".join(sub)
        state.mkdir(parents=True, exist_ok=True)
        lines = [f"{k}={v}" for k, v in keys.items()]
        lines += [f"NodeName={n} NodeHostname={self.host} NodeAddr=127.0.0.1 Port={self.ports[n]} "
                  f"CPUs={self.node_cpus} RealMemory=100 State=UNKNOWN" for n in self.nodes]
        lines.append(f"PartitionName={PARTITION} Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        kept = self.root / f"slurm-{cluster}.conf"
        shutil.copy(self.conf, kept)
        return kept

    def start_slurm(self, cluster: str, setting: Setting) -> float:
        """A fresh controller (new state: job ids from 1) and nodes for one setting.

        Returns when its priority thread started (read in its log): it recalculates the pending jobs'
        priorities every PriorityCalcPeriod from that whole second on.
        """
        self.write_conf(cluster, setting)
        self.run("sacctmgr", "-i", "add", "cluster", cluster)
        self.run("sacctmgr", "-i", "add", "account", PARTITION, f"Cluster={cluster}")
        self.run("sacctmgr", "-i", "add", "user", "root", f"Account={PARTITION}", f"Cluster={cluster}")
        started = time.time()
        self.daemons.append(subprocess.Popen(["slurmctld", "-D", "-i"], env=self.env,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._retry(lambda: self.run("scontrol", "ping"), "slurmctld")
        for node in self.nodes:
            self.daemons.append(subprocess.Popen(["slurmd", "-D", "-N", node], env=self.env,
                                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        def idle() -> None:
            states = self.run("sinfo", "-h", "-N", "-o", "%T").split()
            if states.count("idle") != len(self.nodes):
                raise RuntimeError(f"node states {sorted(set(states))}")
        self._retry(idle, "slurmd (every node idle)")
        time.sleep(WARM_UP)
        log = (self.root / "log" / f"slurmctld-{cluster}.log").read_text()
        found = re.search(r"^\[([0-9T:.-]+)\] priority/multifactor: _read_last_decay_ran", log, re.M)
        return calendar.timegm(time.strptime(found.group(1)[:19], "%Y-%m-%dT%H:%M:%S")) if found else started

    def stop_slurm(self) -> None:
        """Cancels what is left, then ends the slurmd and slurmctld and waits for them."""
        if self.daemons:
            subprocess.run(["scancel", f"--partition={PARTITION}"], env=self.env, capture_output=True)
        self._stop(self.daemons)

    def stop(self) -> None:
        self.stop_slurm()
        self._stop(self.db)

    @staticmethod
    def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        procs.clear()

    @staticmethod
    def _retry(attempt: Callable[[], object], what: str, seconds: float = 40) -> None:
        deadline = time.monotonic() + seconds
        while True:
            try:
                attempt()
                return
            except RuntimeError as error:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{what} did not come up in {seconds:.0f} s: {error}") from None
                time.sleep(0.5)


def run_real(cluster: Cluster, name: str, setting: Setting, jobs: list[JobSpec], out: Path) -> Path:
    """Submits ``jobs`` at their offsets, polls the queue each second until all ended, dumps sacct; the dump."""
    cname = f"rc{name}"[:30]
    ticks_from = cluster.start_slurm(cname, setting)
    try:
        if setting.ages:  # the model's recalculations are at multiples of the period after the first submission
            period = 60 * int(setting.slurm_conf()["PriorityCalcPeriod"])
            time.sleep(max(0.0, ticks_from + period * math.ceil((time.time() - ticks_from) / period) + 0.2
                           - time.time()))
        out.mkdir(parents=True, exist_ok=True)
        polls = (out / "squeue.jsonl").open("w")
        t0, ids, next_poll = time.monotonic(), [], 0.0
        pending = list(enumerate(jobs))
        while True:
            while pending and time.monotonic() - t0 >= pending[0][1].offset:
                i, job = pending.pop(0)
                nodes = -(-job.cpus // cluster.node_cpus)  # min_nodes: what the job size factor counts
                ids.append(cluster.run("sbatch", "--parsable", f"--job-name=j{i + 1}", f"--ntasks={job.cpus}",
                                       f"--nodes={nodes}", f"--time={job.limit_minutes}", "--output=/dev/null",
                                       f"--wrap=sleep {job.sleep}").strip().split(";")[0])
            if time.monotonic() - t0 >= next_poll:
                next_poll += 1.0
                if not _active(cluster, polls) and not pending:
                    break
            wake = min(next_poll, pending[0][1].offset) if pending else next_poll
            time.sleep(max(0.0, wake - (time.monotonic() - t0)))
        polls.close()
        dump = out / "dump.sacct"
        for _ in range(60):  # slurmctld sends the ends to slurmdbd asynchronously
            text = cluster.run("sacct", f"--clusters={cname}", "--allusers", "--parsable2", "-S", "now-1days",
                               "-E", "now", f"--format={SACCT_COLUMNS}")
            if len(_records(text)) == len(jobs) and all(r["State"] == "COMPLETED" for r in _records(text)):
                break
            time.sleep(1)
        dump.write_text(text)
        (out / "jobs.json").write_text(json.dumps({"ids": ids, "node_cpus": cluster.node_cpus,
                                                   "recalculations_from": ticks_from,
                                                   "jobs": [vars(j) for j in jobs]}, indent=1))
        return dump
    finally:
        cluster.stop_slurm()


def _active(cluster: Cluster, polls: object) -> bool:
    """One poll of the queue (job id, state, priority, start), appended to squeue.jsonl; whether any job is left."""
    text = cluster.run("squeue", "-h", "-o", "%i|%T|%Q|%S")
    rows = [line.split("|") for line in text.splitlines() if line]
    polls.write(json.dumps({"t": round(time.time(), 2), "jobs": rows}) + "\n")  # type: ignore[attr-defined]
    return bool(rows)


def _records(text: str) -> list[dict[str, str]]:
    """The allocations of a ``--parsable2`` dump (steps such as ``7.batch`` left out)."""
    lines = [line for line in text.splitlines() if line]
    if not lines:
        return []
    header = lines[0].split("|")
    rows = [dict(zip(header, line.split("|"))) for line in lines[1:]]
    return [r for r in rows if "." not in r["JobID"]]


def _epoch(stamp: str) -> int:
    """A sacct time (printed in UTC: the commands run with TZ=UTC) as a Unix time."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))


def slurm_flags(setting: Setting) -> list[str]:
    """The model's flags for a setting, found through the option table's ``slurm_key`` (one definition)."""
    by_key = {o.slurm_key: o for o in OPTIONS.values() if o.slurm_key}
    flags = ["--scheduler", "slurm"]
    for key, value in setting.slurm_conf().items():
        option = by_key.get(key)
        if option is None or option.cli is None:
            raise SystemExit(f"real_slurm_check: no option of the table with a flag has slurm_key {key}")
        flags += [option.cli, _bftune_value(value, option.slurm_unit)]
    return flags


def _bftune_value(value: str, unit: str) -> str:
    """A slurm.conf value as bftune's option parser reads it (durations in seconds)."""
    if unit == "minutes":
        return str(int(value) * 60)
    if unit == "duration":  # [days-]hours:minutes:seconds, or minutes
        days, _, clock = value.rpartition("-")
        parts = [int(p) for p in clock.split(":")]
        seconds = parts[0] * 60 if len(parts) == 1 else sum(p * m for p, m in zip(reversed(parts), (1, 60, 3600)))
        return str(seconds + int(days or 0) * 86400)
    return value


def run_model(dump: Path, setting: Setting, conf: Path, node_cpus: int, out: Path) -> list[dict[str, str]]:
    """``bftune simulate`` of the dump under ``setting``: its out_jobs.csv rows.

    The model reads the very slurm.conf slurmctld read (``--slurm-conf``); the
    same keys given as flags through the option table must give the same
    starts, else the check stops (two readings of one configuration).
    """
    bftune = [sys.executable, "-m", "bftune.experiments.cli.main", "simulate", "--trace", str(dump),
              "--procs", str(CPUS)]
    if "node_cpus" in OPTIONS:  # the job size factor counts nodes: the cluster's, not bftune's default
        bftune += [OPTIONS["node_cpus"].cli or "--node-cpus", str(node_cpus)]
    rows = []
    for how, extra in (("conf", ["--slurm-conf", str(conf)]),
                       ("flags", slurm_flags(setting))):
        done = subprocess.run([*bftune, *extra, "--out", str(out / how)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"bftune simulate ({how}) failed: {done.stderr.strip()[-600:]}")
        with (out / how / "out_jobs.csv").open() as fh:
            rows.append([(r["job_id"], r["starting_time"]) for r in csv.DictReader(fh)])
    if rows[0] != rows[1]:
        raise RuntimeError(f"{out}: --slurm-conf {conf.name} and the same keys as flags give different starts")
    with (out / "conf" / "out_jobs.csv").open() as fh:
        return list(csv.DictReader(fh))


@dataclass
class Comparison:
    """How the model's starts match Slurm's, job by job (times in seconds after the first submit)."""

    jobs: int
    same_position: int
    same_prefix: int  # the first starts, in Slurm's order, that the model makes in the same order
    discordant_pairs: int
    ordered_pairs: int
    within_tolerance: int
    max_difference: float
    mean_difference: float
    differing: list[dict[str, object]]


def compare(dump: Path, model_rows: list[dict[str, str]], tolerance: float) -> Comparison:
    """Pairs the model's job k with the k-th job by (submit, JobID), bftune's numbering of a dump."""
    real = sorted(_records(dump.read_text()), key=lambda r: (_epoch(r["Submit"]), int(r["JobID"])))
    if len(real) != len(model_rows):
        raise RuntimeError(f"{dump}: {len(real)} jobs, the model ran {len(model_rows)}")
    t0 = _epoch(real[0]["Submit"])
    rows = sorted(model_rows, key=lambda r: int(r["job_id"]))
    pairs = []
    for r, m in zip(real, rows):
        if abs(_epoch(r["Submit"]) - t0 - float(m["submission_time"])) > 0.5 or int(r["NCPUS"]) != int(
                m["requested_number_of_resources"]):
            raise RuntimeError(f"job {r['JobID']} does not match the model's job {m['job_id']}")
        pairs.append((int(r["JobID"]), _epoch(r["Start"]) - t0, float(m["starting_time"]), r))
    real_order = [p[0] for p in sorted(pairs, key=lambda p: (p[1], p[0]))]
    model_order = [p[0] for p in sorted(pairs, key=lambda p: (p[2], p[0]))]
    same = sum(a == b for a, b in zip(real_order, model_order))
    prefix = next((k for k, (a, b) in enumerate(zip(real_order, model_order)) if a != b), len(real_order))
    discordant = ordered = 0
    for i, a in enumerate(pairs):
        for b in pairs[i + 1:]:
            if a[1] != b[1] and a[2] != b[2]:
                ordered += 1
                discordant += (a[1] < b[1]) != (a[2] < b[2])
    diffs = [abs(p[1] - p[2]) for p in pairs]
    differing = [{"job": p[0], "cpus": int(p[3]["NCPUS"]), "limit": p[3]["Timelimit"], "elapsed": p[3]["Elapsed"],
                  "submit": _epoch(p[3]["Submit"]) - t0, "slurm_start": p[1], "model_start": p[2]}
                 for p, d in zip(pairs, diffs) if d > tolerance]
    return Comparison(len(pairs), same, prefix, discordant, ordered, sum(d <= tolerance for d in diffs), max(diffs),
                      sum(diffs) / len(diffs), differing)


def report(root: Path, names: list[str], tolerance: float) -> dict[str, dict[str, dict[str, object]]]:
    """Each real run against the model under every setting (the diagonal is the check; the rest, controls)."""
    table: dict[str, dict[str, dict[str, object]]] = {}
    for real in names:
        dump = root / real / "dump.sacct"
        node_cpus = int(json.loads((root / real / "jobs.json").read_text()).get("node_cpus", 1))
        table[real] = {}
        for model in names:
            rows = run_model(dump, SETTINGS[model], root / f"slurm-rc{model}.conf", node_cpus,
                             root / real / f"model-{model}")
            table[real][model] = vars(compare(dump, rows, tolerance))
    print(f"\nstarts in the same position (of the jobs), Slurm run (rows) against the model (columns); "
          f"tolerance {tolerance:g} s")
    print(f"{'':>10} " + " ".join(f"{m:>10}" for m in names))
    for real in names:
        print(f"{real:>10} " + " ".join(f"{table[real][m]['same_position']:>4}/{table[real][m]['jobs']:<5}"
                                         for m in names))
    for real in names:
        c = table[real][real]
        print(f"\n{real}: {SETTINGS[real].about}\n  same position {c['same_position']}/{c['jobs']} "
              f"(the first {c['same_prefix']} all in order), pairs in the "
              f"other order {c['discordant_pairs']}/{c['ordered_pairs']}, start within {tolerance:g} s "
              f"{c['within_tolerance']}/{c['jobs']}, max |difference| {c['max_difference']:g} s, "
              f"mean {c['mean_difference']:.2f} s")
        for d in c["differing"]:  # type: ignore[attr-defined]
            print(f"    job {d['job']:>3}: {d['cpus']:>2} CPUs, limit {d['limit']}, ran {d['elapsed']}, "
                  f"submit {d['submit']:>4}, Slurm start {d['slurm_start']:>4}, model {d['model_start']:>7g}")
    (root / "comparison.json").write_text(json.dumps(table, indent=1))
    return table


def missing_tools() -> list[str]:
    return [f"{tool} (Debian package {package})" for tool, package in TOOLS.items() if shutil.which(tool) is None]


def prepare_dir(root: Path) -> None:
    """``root`` fresh: created, or emptied if this script made it (its marker file), else refused."""
    if root.exists() and any(root.iterdir()):
        if not (root / MARKER).exists():
            raise SystemExit(f"real_slurm_check: {root} exists and was not made by this script; give another --dir")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("made by benchmarks/real_slurm_check.py\n")


def _interrupted(signum: int, frame: object) -> None:
    """SIGTERM (and SIGINT, even where a background shell ignores it) unwinds, so every daemon is stopped."""
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"of {', '.join(SETTINGS)} (default: all)")
    ap.add_argument("--jobs", type=int, default=50, help="jobs per run (default 50)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the workload (default 1)")
    ap.add_argument("--mean-gap", type=float, default=3.0, help="mean seconds between submissions (default 3)")
    ap.add_argument("--tolerance", type=float, default=3.0, help="start times this close agree (default 3 s)")
    ap.add_argument("--node-cpus", type=int, default=1, choices=(1, 2, 4, 8, 16),
                    help="CPUs per emulated node, 16 in all (default 1: 16 nodes, Slurm's whole-node "
                         "reservations then reserve single CPUs, as the model does)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bftune-real-slurm"),
                    help="private directory: state, logs, database, dumps (default /tmp/bftune-real-slurm)")
    ap.add_argument("--compare-only", action="store_true",
                    help="run no Slurm: the model again on the dumps already in --dir")
    args = ap.parse_args(argv)
    names = [n for n in args.settings.split(",") if n]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown or not names:
        print(f"real_slurm_check: --settings: unknown {', '.join(unknown) or '(none)'}; "
              f"choose from {', '.join(SETTINGS)}", file=sys.stderr)
        return 2
    if args.compare_only:
        report(args.dir, names, args.tolerance)
        return 0
    missing = missing_tools()
    if missing:
        print("real_slurm_check: skipped, not on PATH: " + ", ".join(missing) +
              " (apt-get install slurmctld slurmd slurmdbd slurm-client mariadb-server)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("real_slurm_check: skipped: run as root (slurmd starts the jobs as their user)", file=sys.stderr)
        return 2
    prepare_dir(args.dir)
    jobs = workload(args.jobs, args.seed, args.mean_gap)
    cluster = Cluster(args.dir, args.node_cpus)
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
    try:
        cluster.start_database()
        for name in names:
            print(f"{name}: {args.jobs} jobs through slurmctld ({SETTINGS[name].about})", flush=True)
            run_real(cluster, name, SETTINGS[name], jobs, args.dir / name)
    finally:
        cluster.stop()
    report(args.dir, names, args.tolerance)
    return 0


if __name__ == "__main__":
    sys.exit(main())
