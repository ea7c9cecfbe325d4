"""Speed of the trial kernel of ``bftune learn-index`` (not a test: it prints figures).

Scores a few Lublin-Feitelson windows (|S| = 16, |Q| = 32, m = 256) in this one
process, i.e. on **one core**, and prints trials per second, plus the time the
paper-scale collection (440 windows x 256,000 trials) would take at that rate
on one and on two cores.  ``--array cupy`` (or torch) runs the same kernel on
a GPU and checks that every trial's AVGbsld equals numpy's.

    uv run python benchmarks/trials.py                 # numpy, 4 windows x 64,000 trials
    uv run python benchmarks/trials.py --array cupy    # the optional accelerated path
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bftune.learning.index import collect as col
from bftune.learning.index import trials as tr
from bftune.workloads.synthetic import generate

PAPER_TRIALS = 440 * 256_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--trials", type=int, default=64_000)
    ap.add_argument("--batch", type=int, default=tr.BATCH)
    ap.add_argument("--array", default="numpy", choices=("numpy", "cupy", "torch"))
    args = ap.parse_args(argv)
    xp = col.array_namespace(args.array)
    trace = generate(20_000, 256, 1)
    positions = tr.window_positions(len(trace.jobs), args.windows, 16, 32, seed=1)
    windows = [tr.make_window(trace.jobs, i, p, 16, 32, 256) for i, p in enumerate(positions)]
    if args.array != "numpy":  # warm up the device (kernel compilation), then check equality on one window
        perms = tr.permutations(np.random.default_rng(0), 4096, 32)
        ref = tr.run_trials(windows[0], perms, 256)
        got = tr.to_numpy(tr.run_trials(windows[0], xp.asarray(perms), 256, xp=xp))
        same = bool(np.array_equal(ref, got))
        print(f"{args.array}: per-trial AVGbsld equal to numpy's on 4,096 trials: {same} "
              f"(max relative difference {float(np.max(np.abs(got - ref) / ref)):.1e})")
    t0, c0 = time.perf_counter(), time.process_time()
    for w in windows:
        tr.window_scores(w, args.trials, 256, seed=1, xp=xp, batch=args.batch)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    rate = args.windows * args.trials / dt
    print(f"{args.array}, batch {args.batch}: {args.windows} windows x {args.trials:,} trials in {dt:.2f} s = "
          f"{rate:,.0f} trials/s in one process ({args.windows * args.trials / cpu:,.0f} per CPU second: "
          f"on a shared machine the wall-clock rate is lower than the CPU rate)")
    cpu_rate = args.windows * args.trials / cpu
    print(f"paper scale (440 x 256,000 = {PAPER_TRIALS:,} trials): {PAPER_TRIALS / rate / 120:.1f} min on two cores "
          f"at this wall-clock rate, {PAPER_TRIALS / cpu_rate / 120:.1f} min on two otherwise idle cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
