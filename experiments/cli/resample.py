"""``bftune resample``: per-user week resampling of a trace (docs/semantics/workloads.md#resampling)."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents, cleaning_counts, load_trace
from bftune.support.files import check_output_file, clean_leftovers
from bftune.workloads import limits
from bftune.workloads.swf_write import write_swf


def cmd_resample(args: argparse.Namespace) -> int:
    from bftune.workloads.resample import resample, split_halves  # lazy: numpy (see cmd_simulate)

    out = check_output_file(args.out, "--out")
    trace = load_trace(args)
    if args.split:
        train, test = split_halves(trace)
        trace = train if args.split == "train" else test
    new = resample(trace, args.weeks, args.seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out.parent, out.name)
    counts = cleaning_counts(trace)  # the jobs resampled are those the cleaning kept: say what it dropped
    note = f"{trace.name} was cleaned ({args.cleaning}) before resampling: {counts or 'nothing dropped'}"
    write_swf(new, out, notes=[note] if args.trace else [])
    print(f"wrote {out}: {len(new.jobs)} jobs in {args.weeks} resampled weeks"
          f"{f' of the {args.split} half' if args.split else ''} (seed {args.seed})")
    if counts:
        print(f"cleaning: {counts}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("resample", parents=[parents.workload],
                              help="per-user week resampling of a trace (docs/semantics/workloads.md#resampling)")
    p.add_argument("--weeks", required=True, help=f"length of the new trace in weeks (at most {limits.MAX_WEEKS:,})")
    p.add_argument("--split", choices=["train", "test"], help="resample only this half (split at the temporal midpoint)")
    p.add_argument("--out", required=True, help="output SWF file")
    p.set_defaults(func=cmd_resample)
