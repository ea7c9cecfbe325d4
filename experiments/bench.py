"""Speed and memory benchmark of the local simulator (not a test: it prints figures).

For every archive trace found in ../shared/workloads (or the paths given), and
for EASY-FCFS and EASY(SAF, 40 h), it reports jobs per second of the
simulation alone and of the whole process (read + clean + simulate), and the
peak resident memory of a fresh process per run, so that one run's garbage
does not flatter the next.  The child ends as the ``bftune`` console script
does after a simulation (``experiments/cli.py: entry``), without interpreter
teardown.

    uv run python -m bftune.experiments.bench            # all shared traces
    uv run python -m bftune.experiments.bench --quick    # KTH-SP2 only
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "workloads"
CONFIGS = {"EASY-FCFS": {"policy": "FCFS"}, "EASY(SAF,40h)": {"policy": "SAF", "threshold": "40h"}}


def one_run(trace_path: str, options: dict) -> dict:
    """Run in this process; meant to be called in a fresh child process."""
    t0 = time.perf_counter()
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import simulate
    from bftune.workloads.swf import read_swf

    fallback = "runtime" if "lublin" in trace_path else None
    trace = read_swf(trace_path, walltime_fallback=fallback)
    t1 = time.perf_counter()
    config = SchedulerConfig.from_options(options)
    result = simulate(trace.jobs, trace.max_procs, config.build(trace.max_procs))
    t2 = time.perf_counter()
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"jobs": len(trace.jobs), "m": trace.max_procs, "read_s": t1 - t0, "sim_s": t2 - t1,
            "passes": result.passes, "peak_rss_mib": rss_kb / 1024}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", help="SWF traces (default: every *.swf.gz in ../shared/workloads)")
    ap.add_argument("--quick", action="store_true", help="KTH-SP2 only")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(one_run(args.child[0], json.loads(args.child[1]))), flush=True)
        os._exit(0)  # end like the `bftune` CLI does after a simulation: no interpreter teardown
    traces = [Path(t) for t in args.traces] or sorted(SHARED.glob("*.swf.gz"), key=lambda p: p.stat().st_size)
    if args.quick:
        traces = [t for t in traces if "KTH" in t.name]
    if not traces:
        print(f"no traces found (looked in {SHARED})", file=sys.stderr)
        return 1
    print(f"{'trace':<28}{'config':<15}{'jobs':>8}{'sim s':>8}{'jobs/s':>10}{'process s':>11}{'jobs/s':>10}{'peak MiB':>10}")
    for trace in traces:
        for name, options in CONFIGS.items():
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "bftune.experiments.bench", "--child", str(trace),
                                  json.dumps(options)], capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if out.returncode != 0:
                print(f"{trace.name:<28}{name:<15} FAILED: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout)
            print(f"{trace.name.replace('.swf.gz', ''):<28}{name:<15}{r['jobs']:>8}{r['sim_s']:>8.2f}"
                  f"{r['jobs'] / r['sim_s']:>10.0f}{wall:>11.2f}{r['jobs'] / wall:>10.0f}{r['peak_rss_mib']:>10.0f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
