"""Benchmark of the runtime classifier alone (docs/semantics/learning.md#classification), replayed on a trace.

Not a scheduler run: every job is assumed to *start at its submission*, so it
finishes at ``submit + runtime``.  That gives the classifier the most finished
jobs it could ever see (no waiting), i.e. the largest training sets - the
worst case for retraining time - and the freshest histories.  Events are
replayed in time order; at one instant, completions are reported before
submissions (a job ending at t is in the features of a job submitted at t in
live mode).  Prints per-week retraining seconds (max, mean, total), the cost
of ``classify`` per job, and the overall metrics.

    uv run python benchmarks/classifier.py                       # CEA-Curie
    uv run python benchmarks/classifier.py --trace KTH --features live
    uv run python benchmarks/classifier.py --max-depth 0 --max-samples 0   # sklearn defaults
"""

from __future__ import annotations

import argparse
import cProfile
import heapq
import pstats
import sys
import time

import numpy as np
from common import add_data_argument, data_dir, find_trace

from bftune.learning import forest

from bftune.experiments.runs.summary import write_json
from bftune.learning.classifier import RuntimeClassifier
from bftune.workloads.swf import read_swf



def replay(trace, **options) -> tuple[dict, dict, RuntimeClassifier]:
    """Replay ``trace`` through a RuntimeClassifier; (report, timings, the classifier at the end)."""
    clf = RuntimeClassifier(trace.unix_start_time, trace.timezone, **options)
    ends: list[tuple[float, int, str, float]] = []
    classify_s = 0.0
    finished_s = 0.0
    perf = time.perf_counter
    t_start = perf()
    for job in trace.jobs:
        s = job.submit
        while ends and ends[0][0] <= s:
            end, _, jid, runtime = heapq.heappop(ends)
            t0 = perf()
            clf.finished(jid, runtime, end)
            finished_s += perf() - t0
        t0 = perf()
        clf.advance(s)
        jid = str(job.id)
        clf.classify(jid, job.user, job.procs, job.walltime, s, s)
        classify_s += perf() - t0
        heapq.heappush(ends, (s + job.runtime, job.id, jid, job.runtime))
    while ends:
        end, _, jid, runtime = heapq.heappop(ends)
        clf.finished(jid, runtime, end)
    total = perf() - t_start
    report = clf.report()
    retrain = report["retrain_seconds"]["total"]
    timings = {
        "jobs": len(trace.jobs),
        "total_s": total,
        "retrain_total_s": retrain,
        # advance() runs the retrainings, inside classify/finished timings too: taken out
        "per_job_us": (classify_s + finished_s - retrain) / max(1, len(trace.jobs)) * 1e6,
    }
    return report, timings, clf


def profile_fit(clf: RuntimeClassifier) -> str:
    """Where one forest's fit goes: every labelled job of the replay fitted again in one thread under cProfile.

    The own time of scikit-learn's ``BaseDecisionTree._fit`` holds its compiled tree builder (a C call that
    cProfile does not show apart); the rest is Python around it (checks, estimator set-up, our bagging).
    """
    rows = np.asarray(clf._train_rows, dtype=np.int64)
    X, y = clf._X[rows], np.asarray(clf._train_y, dtype=np.int64)
    profiler = cProfile.Profile()
    threads = forest.FIT_THREADS
    forest.FIT_THREADS = 1
    try:
        profiler.runcall(forest.fit_forest, X, y, n_estimators=clf.n_estimators, seed=clf.seed,
                         max_depth=clf.max_depth, min_samples_leaf=clf.min_samples_leaf,
                         max_samples=clf.max_samples)
    finally:
        forest.FIT_THREADS = threads
    profile = pstats.Stats(profiler).get_stats_profile()
    total = profile.total_tt
    builder = sum(f.tottime for name, f in profile.func_profiles.items()
                  if name == "_fit" and f.file_name.replace("\\", "/").endswith("sklearn/tree/_classes.py"))
    return (f"one forest fitted on every labelled job of the replay ({len(rows)} rows), one thread: {total:.3f} s, of which "
            f"{builder / total:.0%} in scikit-learn's tree builder (BaseDecisionTree._fit's own time)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default="CEA-Curie",
                        help="SWF path, or a prefix of a trace's file name in the data directory (e.g. KTH)")
    add_data_argument(parser)
    parser.add_argument("--features", choices=("weekly", "live"), default="weekly")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-estimators", type=int, default=None)
    parser.add_argument("--max-depth", type=int, default=None, help="0 = unlimited")
    parser.add_argument("--max-samples", type=int, default=None, help="0 = all rows (sklearn default)")
    parser.add_argument("--min-samples-leaf", type=int, default=None)
    parser.add_argument("--json", help="write the full report here")
    parser.add_argument("--profile-fit", action="store_true",
                        help="also fit a forest on every labelled job under cProfile: the tree builder's share")
    args = parser.parse_args(argv)
    path = find_trace(args.trace, data_dir(args.data))
    t0 = time.perf_counter()
    trace = read_swf(path, walltime_fallback="runtime" if "lublin" in path.name else None)
    read_s = time.perf_counter() - t0

    options: dict = {"features": args.features, "seed": args.seed}
    if args.n_estimators is not None:
        options["n_estimators"] = args.n_estimators
    if args.max_depth is not None:
        options["max_depth"] = args.max_depth or None
    if args.max_samples is not None:
        options["max_samples"] = args.max_samples or None
    if args.min_samples_leaf is not None:
        options["min_samples_leaf"] = args.min_samples_leaf
    report, timings, clf = replay(trace, **options)

    cfg = report["config"]
    print(f"trace {path.name}: {timings['jobs']} jobs, read in {read_s:.1f} s; features={cfg['features']} "
          f"n_estimators={cfg['n_estimators']} max_depth={cfg['max_depth']} "
          f"max_samples={cfg['max_samples']} min_samples_leaf={cfg['min_samples_leaf']}")
    r = report["retrain_seconds"]
    print(f"retraining: {report['counts']['retrainings']} boundaries, max {r['max']:.3f} s, "
          f"mean {r['mean']:.3f} s, total {r['total']:.1f} s")
    print(f"advance+classify+finished: {timings['per_job_us']:.1f} us/job (retraining excluded); "
          f"replay total {timings['total_s']:.1f} s")
    o = report["overall"]

    def f(x):
        return "n/a" if x is None else f"{x:.3f}"

    print(f"overall on {o['n']} labelled jobs: accuracy {f(o['accuracy'])} precision {f(o['precision'])} "
          f"recall {f(o['recall'])} false_small {f(o['false_small_rate'])} false_large {f(o['false_large_rate'])}")
    slowest = sorted(report["weeks"][1:], key=lambda w: -(w["model"]["retrain_seconds"] or 0))[:3]
    print("slowest retrainings: " + ", ".join(
        f"week {w['week']} ({w['model']['train_size']} rows) {w['model']['retrain_seconds']:.3f} s" for w in slowest))
    print(f"warnings: {len(report['warnings'])}" + "".join(f"\n  {w}" for w in report["warnings"][:10]))
    if args.profile_fit:
        print(profile_fit(clf))
    if args.json:
        write_json(args.json, {"timings": timings, "report": report}, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
