"""Benchmark (not a test): where the time and memory of one ``bftune simulate`` go, phase by phase.

Each repetition is a fresh process that makes the calls ``bftune simulate``
makes, in its order, and times each: the imports, reading the trace (the
parse cache warm after the first repetition, as after a user's first run),
the simulation, the runs' columns, the summary, writing out_jobs.csv.  It
also reports the process's peak memory after each phase and the time the
cyclic garbage collector spent (``gc.callbacks``).  Medians over
``--repeat`` are printed; ``simulate.py`` times the whole command against the
OCaml reference, this script says what is left inside it.

    uv run python benchmarks/phases.py CTC                 # a trace of the data directory by name, or a path
    uv run python benchmarks/phases.py TRACE --policy SAF --threshold 40h --repeat 7

The children run with ``PYTHONDONTWRITEBYTECODE`` unset (imports are read
from their cached bytecode, as users run them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from common import add_data_argument, data_dir, find_trace, user_env

#: The child: the calls of ``cmd_simulate`` and ``run_local``, timed one by one.
CHILD = r"""
import gc, json, resource, sys, time
t = [time.perf_counter()]
out = {"phases": [], "gc": 0.0}
started = {}
def collected(phase, info):
    if phase == "start":
        started["t"] = time.perf_counter()
    else:
        out["gc"] += time.perf_counter() - started["t"]
gc.callbacks.append(collected)
def done(name):
    now = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["phases"].append([name, now - t[0], peak])
    t[0] = now
from bftune.support.heap import fix_mmap_threshold
fix_mmap_threshold()
import bftune.experiments.cli.main
from bftune.experiments.runs.local import workload_info
from bftune.experiments.runs.outjobs import runs_columns, whole_columns, write_out_jobs
from bftune.experiments.runs.summary import build_summary, write_summary
from bftune.support.gcpause import paused_gc
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.swf import read_swf
done("imports")
trace_path, out_dir, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
config = SchedulerConfig.from_options(options)
with paused_gc(freeze=True):
    trace = read_swf(trace_path)
done("read")
m = trace.max_procs
result = simulate(trace.jobs, m, config.build(m))
done("simulate")
runs = whole_columns(result.runs)
columns = runs_columns(runs)
done("columns")
summary = build_summary(columns, m, 10.0, config.to_dict(), trace.cleaning, workload_info(trace), result.report)
write_summary(summary, out_dir)
done("summary")
write_out_jobs(runs, out_dir + "/out_jobs.csv")
done("out_jobs.csv")
out["numpy"] = "numpy" in sys.modules
print("PHASES " + json.dumps(out))
"""


def run_once(trace: str, options: dict, out_dir: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, trace, out_dir, json.dumps(options)], capture_output=True,
                          text=True, timeout=600, env=user_env())
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PHASES ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the timed child failed: {proc.stderr[-2000:]}")
    return json.loads(lines[-1][len("PHASES "):])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?", default="CTC",
                    help="an SWF file, or a name prefix of a trace of the data directory (default CTC)")
    add_data_argument(ap)
    ap.add_argument("--policy", default="FCFS")
    ap.add_argument("--threshold", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    options = {"policy": args.policy}
    if args.threshold is not None:
        options["threshold"] = args.threshold
    trace = str(find_trace(args.trace, data_dir(args.data)))
    with tempfile.TemporaryDirectory(prefix="bftune-phases-") as tmp:
        run_once(trace, options, tmp)  # unmeasured: fills the parse cache
        runs = [run_once(trace, options, tmp) for _ in range(max(1, args.repeat))]
    names = [name for name, _, _ in runs[0]["phases"]]
    core = os.environ.get("BFTUNE_CORE", "auto")
    print(f"# {trace}, {options}, core {core}, median of {len(runs)} fresh processes; "
          f"numpy imported: {runs[0]['numpy']}")
    print("| phase | seconds | peak memory after (MiB) |\n|---|---|---|")
    for i, name in enumerate(names):
        seconds = statistics.median(r["phases"][i][1] for r in runs)
        peak = statistics.median(r["phases"][i][2] for r in runs)
        print(f"| {name} | {seconds:.3f} | {peak:.0f} |")
    total = statistics.median(sum(p[1] for p in r["phases"]) for r in runs)
    print(f"| all phases | {total:.3f} | |")
    print(f"| of which garbage collection | {statistics.median(r['gc'] for r in runs):.4f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
