"""``bftune learn-index``: collect score distributions, fit the four families, write tables and plots.

::

    bftune learn-index --source synthetic|TRACE --windows N --trials K [--procs 256] --out DIR

The windows run on the campaigns' executors (``--workers N`` local
processes, ``--dask ADDRESS``) with their progress bar; every finished window
is stored at once in ``DIR/windows/`` and the same command resumes an
interrupted collection.  Then ``scores.csv``, ``fits/{Lin,Qdr,Cub,Qua}.json``
(usable as ``--policy learned:DIR/fits/Lin.json``), ``coefficients.csv``,
``fits.csv``, ``fits.md`` and ``plots/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bftune.learning.index import PROCS, QUEUE, SYNTHETIC_JOBS, TAU, WARMUP
from bftune.experiments.cli.common import Parents
from bftune.support.streams import print_error


def cmd_learn_index(args: argparse.Namespace) -> int:
    # Imported here, not at the top: this module is imported to build every command's parser, and
    # the collection code brings numpy and pandas (~0.3 s of start-up measured with -X importtime).
    from bftune.experiments.campaign.specs import CampaignError
    from bftune.experiments.campaign.index_collection import finish, run_collection
    from bftune.learning.index import collect as col
    from bftune.learning.index import trials as tr

    source = args.source
    if source != "synthetic":
        source = str(Path(source).expanduser().resolve())
    settings = col.Settings(source=source, windows=args.windows, trials=args.trials, procs=args.procs,
                            warmup=args.warmup, queue=args.queue, seed=args.seed, tau=args.tau,
                            synthetic_jobs=args.synthetic_jobs)
    try:
        outcome = run_collection(settings, args.out, workers=args.workers, dask=args.dask, array=args.array,
                                 progress=not args.no_progress)
    except (col.CollectionError, tr.TrialError, CampaignError) as exc:
        print_error(exc)
        return 2
    rate = outcome.trials_per_s
    print(f"learn-index: {outcome.done} windows run ({outcome.trials_run:,} trials in {outcome.wall_s:.1f} s: "
          f"{rate:,.0f} trials/s on {outcome.executor}; {outcome.cpu_s:.1f} CPU s in the windows), "
          f"{outcome.reused} reused, {len(outcome.failures)} failed, of {outcome.windows}")
    if outcome.failures:
        for f in outcome.failures:
            print(f"  window {f.get('index')}: {f.get('error')}", file=sys.stderr)
        print("failed windows are in failures/; run the same command again to retry them; no fit written",
              file=sys.stderr)
        return 1
    path, fits = finish(settings, args.out)
    out = Path(args.out)
    print(f"wrote {path} ({fits[0].rows} rows), {out / 'fits'}/{{{','.join(f.family for f in fits)}}}.json, "
          f"{out / 'fits.md'}, {out / 'coefficients.csv'}, {out / 'fits.csv'}, {out / 'plots'}")
    for f in fits:
        print(f"  {f.family}: MAE {f.mae:.3e}, max VIF {max(f.vif.values()):.3g}  "
              f"(use: --policy learned:{out / 'fits' / (f.family + '.json')})")
    return 0


def _integer(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    return value


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "learn-index", help="learn index policies by regression on simulated trials (docs/semantics/learning.md#learned-index-policies)",
        description="Score the jobs of random (S, Q) windows by simulating random permutations of Q, fit the "
                    "polynomial families Lin, Qdr, Cub, Qua by weighted least squares, and write the fits "
                    "(usable as --policy learned:FILE.json), tables and plots. Resumable: the same command "
                    "skips the windows already stored in --out.")
    p.add_argument("--source", required=True, help="synthetic (the Lublin-Feitelson generator) or a trace file "
                                                   "(SWF, .swf.gz, Batsim JSON)")
    p.add_argument("--windows", type=_integer, required=True, help="number of random (S, Q) windows: each gives one score distribution (hundreds for stable fits)")
    p.add_argument("--trials", type=_integer, required=True,
                   help="random permutations of Q simulated per window (the more, the less noisy each job's score)")
    p.add_argument("--procs", type=_integer, default=PROCS, help="machine size m (default 256)")
    p.add_argument("--warmup", type=_integer, default=WARMUP, help="|S| (default 16)")
    p.add_argument("--queue", type=_integer, default=QUEUE, help="|Q| (default 32)")
    p.add_argument("--seed", type=_integer, default=1, help="seed of the windows and trials (default 1)")
    p.add_argument("--tau", type=float, default=TAU, help="bounded-slowdown constant (default 10 s)")
    p.add_argument("--synthetic-jobs", type=_integer, default=SYNTHETIC_JOBS,
                   help=f"size of the synthetic trace the windows are cut from (default {SYNTHETIC_JOBS})")
    p.add_argument("--out", required=True, help="output directory (windows, scores, fits, tables, plots)")
    p.add_argument("--workers", type=int, metavar="N", help="local worker processes (default 2; 1 = inline)")
    p.add_argument("--dask", metavar="ADDRESS", help="run the windows on this Dask scheduler")
    p.add_argument("--array", choices=("numpy", "cupy", "torch"), default="numpy",
                   help="array library of the trial kernel (default numpy; cupy/torch: optional GPU path)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_learn_index)
    return p
