"""Benchmark of ``bftune tune`` against its speed goal.

The goal: a year-long trace of about 100,000 jobs, tuned over at least 100
candidates and at least 100 resampled weeks per half, in at most 10 minutes on
2 cores.  This script

1. makes the trace: 100,000 jobs of the Lublin-Feitelson model's *typed*
   variant (batch and interactive streams, ``bftune.workloads.synthetic``) on
   256 processors at load 0.8, which spans about a year (the typeless variant
   of ``--synthetic`` spans three years for as many jobs), written as SWF;
2. warms the bytecode caches with a tiny untimed run (a fresh install has
   them: ``PYTHONDONTWRITEBYTECODE`` is removed from the children's
   environment);
3. times one ``bftune tune`` in a fresh process: 100 EASY pairs (10 policies x
   10, threshold 20 h), at most ``--weeks`` (100) resampled weeks per half,
   ``--budget`` (9 minutes: the command's own setup and report included in the
   10), ``--workers 2``; wall time, the children's CPU time, the load average
   before and after (other tenants share the machine's cores);
4. prints what the budget covered (weeks per half, stages, whether the budget
   halved the candidates) and a markdown line for the docs.

    uv run python benchmarks/tune.py [--jobs 100000] [--procs 256] [--budget 9m] [--weeks 100] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POLICIES = "FCFS,LCFS,SPF,LPF,SQF,LQF,LEXP,SAF,LAF,WFP3"


def user_env() -> dict[str, str]:
    """The environment as users have it: bytecode caches written and read."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def bftune() -> list[str]:
    """The ``bftune`` of this interpreter's environment."""
    exe = Path(sys.executable).with_name("bftune")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "bftune.experiments.cli.main"]


def make_trace(path: Path, jobs: int, procs: int, seed: int) -> dict:
    from bftune.workloads.resample import split_halves, whole_weeks
    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    trace = generate(jobs, procs, seed, variant="typed")
    write_swf(trace, path)
    span = (trace.jobs[-1].submit - trace.jobs[0].submit) / 86400
    train, test = split_halves(trace)
    return {"jobs": len(trace.jobs), "procs": procs, "days": span, "jobs_per_week": len(trace.jobs) / (span / 7),
            "whole_weeks": (whole_weeks(train), whole_weeks(test))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=100_000)
    p.add_argument("--procs", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget", default="9m")
    p.add_argument("--weeks", type=int, default=100)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", help="directory to keep (default: a temporary one, removed)")
    args = p.parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bftune-bench-tune-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        swf = out / "year.swf"
        info = make_trace(swf, args.jobs, args.procs, args.seed)
        print(f"trace: {info['jobs']:,} jobs on {info['procs']} processors over {info['days']:.0f} days "
              f"({info['jobs_per_week']:.0f} jobs a week; whole weeks per half {info['whole_weeks']})")
        subprocess.run([*bftune(), "tune", "--synthetic", "3000", "--procs", "16", "--weeks", "8", "--policies",
                        "FCFS,SAF", "--budget", "5m", "--workers", "1", "--no-progress", "--out",
                        str(out / "warm-up")], env=user_env(), check=True, capture_output=True)
        command = [*bftune(), "tune", "--trace", str(swf), "--policies", POLICIES, "--thresholds", "20h",
                   "--weeks", str(args.weeks), "--budget", args.budget, "--workers", str(args.workers),
                   "--no-progress", "--out", str(out / "tune")]
        load_before = os.getloadavg()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(command, env=user_env(), capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_after = os.getloadavg()
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, sep="\n")
            return proc.returncode
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rec = json.loads((out / "tune" / "recommendation.json").read_text())
        b = rec["budget"]
        candidates = rec["search"]["candidates"]
        print(proc.stdout.splitlines()[0])
        print(f"candidates {candidates}; weeks per half {b['weeks_per_half']} (stages {b['stages']}, "
              f"{'successive halving' if b['halving'] else 'every candidate on every week the tests kept'}); "
              f"{b['weeks_simulated']:,} candidate-weeks simulated; testing weeks {rec['testing_weeks']}")
        print(f"wall {wall:.1f} s, CPU {cpu:.1f} s (children), load average {load_before[0]:.2f} before, "
              f"{load_after[0]:.2f} after, on {os.cpu_count()} cores")
        met = candidates >= 100 and b["weeks_per_half"] >= 100 and wall <= 600
        today = dt.date.today().isoformat()
        shown = shlex.join(["uv", "run", "python", "benchmarks/tune.py", *(argv if argv is not None else sys.argv[1:])])
        print(f"\n| {today} | {info['jobs']:,} jobs, {info['days']:.0f} days | {candidates} | "
              f"{b['weeks_per_half']} | {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU | load {load_before[0]:.1f}"
              f"-{load_after[0]:.1f} | {'met' if met else 'NOT met'} | `{shown}` |")
        return 0 if met else 1
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
