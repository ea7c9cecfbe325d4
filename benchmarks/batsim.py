"""A Batsim run with bftune against the same run with batsched, the reference C++ scheduler (not a test).

For each workload (an archive trace converted by ``bftune convert``, or a
Batsim workload file) the script runs, alternately and ``--repeat`` times:

- **batsched**: ``batsched -v easy_bf`` and Batsim on the workload and a
  zero-latency platform, both fresh processes; the wall time is Batsim's,
  from its start to its exit (it writes its outputs);
- **bftune**, for each configuration: ``bftune batsim --trace WORKLOAD.json
  --reservation machines ...`` as users run it (interpreter start, imports,
  converting the workload, Batsim, the scheduler, out_jobs.csv read back and
  summary.json written); the compiled core (``bftune accelerate``) and, with
  ``--cores compiled,interpreted``, the interpreted one.

It prints the medians, the ratio bftune / batsched (below 1: bftune's run is
faster) and where bftune's scheduler spent its time (summary.json's
``scheduler_phases``: JSON decoding, checking messages, applying events, the
core's passes, JSON encoding, handing replies to ZeroMQ).  batsched's
``easy_bf`` is EASY-FCFS with the machines reservation model; every
configuration is compared with it, as the question is what a Batsim run
costs with our scheduler in place of the reference one.

    uv run python benchmarks/batsim.py                                   # KTH-SP2 and CTC-SP2, 3 times each
    uv run python benchmarks/batsim.py --traces KTH-SP2 --repeat 5 --cores compiled,interpreted
    uv run python benchmarks/batsim.py --configs rf --traces SDSC-SP2      # the classifier's share

Timings on a shared machine vary: the script prints the load average before
and after.  Needs ``batsim`` and ``batsched`` on PATH
(``../shared/tools/build-batsim.sh``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_data_argument, user_env

from bftune.workloads.archive import Archive, data_dir
from bftune.workloads.errors import WorkloadError

#: name -> (label, options of `bftune batsim`)
CONFIGS: dict[str, tuple[str, list[str]]] = {
    "fcfs": ("EASY-FCFS, machines model", ["--reservation", "machines"]),
    "saf40": ("EASY(SAF, 40 h), machines model", ["--reservation", "machines", "--policy", "SAF",
                                                 "--threshold", "40h"]),
    "rf": ("classifier (rf, SAF)", ["--reservation", "machines", "--policy", "SAF", "--classifier", "rf"]),
}
DEFAULT_CONFIGS = ("fcfs", "saf40")
DEFAULT_TRACES = ("KTH-SP2", "CTC-SP2")
#: bftune's scheduler time, split (summary.json's ``scheduler_phases``), in the order a message goes through.
PHASES = ("decode", "parse", "events", "decide", "encode", "send")
BATSIM_FLAGS = ["--disable-schedule-tracing", "--disable-machine-state-tracing", "--verbosity", "quiet",
                "--sg-log", "root.thresh:warning"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bftune() -> list[str]:
    return [sys.executable, "-m", "bftune.experiments.cli.main"]


def prepare(name: str, data: Archive, work: Path) -> tuple[Path, Path]:
    """The workload as a Batsim JSON file and its platform (``bftune convert``), once per trace."""
    folder = work / Path(name).name
    if not folder.exists():
        source = Path(name) if Path(name).exists() else data.require(name)
        subprocess.run([*bftune(), "convert", "--trace", str(source), "--out", str(folder)], check=True,
                       stdout=subprocess.DEVNULL)
    return next(folder.glob("*.json")), next(folder.glob("platform*.xml"))


def run_batsched(workload: Path, platform: Path, out: Path) -> float:
    port = free_port()
    out.mkdir(parents=True, exist_ok=True)
    sched = subprocess.Popen(["batsched", "-v", "easy_bf", "--verbosity", "quiet", "-s", f"tcp://127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.2)  # batsched binds before Batsim connects (its start is not part of the run)
        t0 = time.perf_counter()
        subprocess.run(["batsim", "-p", str(platform), "-w", str(workload), "-e", f"{out}/", "-s",
                        f"tcp://localhost:{port}", *BATSIM_FLAGS], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0
    finally:
        try:
            sched.wait(timeout=30)  # it ends with the simulation
        except subprocess.TimeoutExpired:  # Batsim failed: nothing will end it
            sched.kill()
            sched.wait()


def run_bftune(workload: Path, options: list[str], out: Path, core: str) -> tuple[float, dict]:
    env = user_env(BFTUNE_CORE="auto" if core == "compiled" else "interpreted")
    t0 = time.perf_counter()
    subprocess.run([*bftune(), "batsim", "--trace", str(workload), *options, "--out", str(out)], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    return wall, json.loads((out / "summary.json").read_text())


def core_in_use() -> str:
    done = subprocess.run([*bftune(), "--version"], capture_output=True, text=True, env=user_env())
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default=",".join(DEFAULT_TRACES),
                    help="catalogue names or Batsim/SWF files, comma-separated (default: KTH-SP2,CTC-SP2)")
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), help=f"of {', '.join(CONFIGS)}")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each, alternated (medians; default 3)")
    ap.add_argument("--cores", default="compiled", help="compiled, interpreted or both (comma-separated)")
    add_data_argument(ap)
    args = ap.parse_args(argv)
    for tool in ("batsim", "batsched"):
        if shutil.which(tool) is None:
            print(f"batsim.py: {tool} is not on PATH (../shared/tools/build-batsim.sh builds it)", file=sys.stderr)
            return 2
    configs = [c for c in args.configs.split(",") if c]
    cores = [c for c in args.cores.split(",") if c]
    data = data_dir(args.data)
    print(f"load average before: {os.getloadavg()}; {core_in_use()}; {args.repeat} runs each, alternated")
    with tempfile.TemporaryDirectory(prefix="bftune-bench-batsim-") as tmp:
        work = Path(tmp)
        for name in [t for t in args.traces.split(",") if t]:
            try:
                workload, platform = prepare(name, data, work)
            except WorkloadError as exc:
                print(f"batsim.py: {exc}", file=sys.stderr)
                return 2
            walls: dict[str, list[float]] = {"batsched": []}
            phases: dict[str, list[dict]] = {}
            for i in range(args.repeat):
                walls["batsched"].append(run_batsched(workload, platform, work / "out" / f"bs{i}"))
                for config in configs:
                    for core in cores:
                        key = f"{config}/{core}"
                        wall, summary = run_bftune(workload, CONFIGS[config][1], work / "out" / f"{key}{i}", core)
                        walls.setdefault(key, []).append(wall)
                        phases.setdefault(key, []).append({**summary.get("scheduler_phases", {}),
                                                           "share": summary.get("scheduler_share")})
            base = statistics.median(walls["batsched"])
            print(f"\n{name} ({workload.name}): batsched easy_bf {base:.2f} s "
                  f"(runs {', '.join(f'{w:.2f}' for w in walls['batsched'])})")
            print(f"  {'bftune batsim':<44} {'median s':>9} {'/batsched':>9}  scheduler phases (median s)")
            for key, values in walls.items():
                if key == "batsched":
                    continue
                config, core = key.split("/")
                median = statistics.median(values)
                split = {k: statistics.median(p.get(k, 0.0) for p in phases[key]) for k in PHASES}
                share = statistics.median(p["share"] or 0.0 for p in phases[key])
                shown = ", ".join(f"{k} {v:.2f}" for k, v in split.items())
                label = f"{CONFIGS[config][0]}, {core}"
                print(f"  {label:<44} {median:>9.2f} {median / base:>9.2f}  share {share:.0%}: {shown}")
    print(f"\nload average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
