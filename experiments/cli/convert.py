"""``bftune convert``: a workload as Batsim's JSON workload and a matching zero-latency platform."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents, args_name_a_dump, cleaning_counts, load_trace
from bftune.support.files import atomic_write_many, check_writable_dir, clean_leftovers
from bftune.workloads.batsim_json import batsim_workload_text
from bftune.workloads.swf_write import swf_text


def cmd_convert(args: argparse.Namespace) -> int:
    from bftune.platforms.generator import platform_xml  # lazy: 87 ms of XML modules, convert only

    out = check_writable_dir(args.out, "--out")
    trace = load_trace(args)
    # Both contents first, then both files: a workload is never left without its platform.
    wl, pf = out / f"{trace.name}.json", out / f"platform_{trace.max_procs}.xml"
    contents = {wl: batsim_workload_text(trace).encode(), pf: platform_xml(trace.max_procs).encode()}
    out.mkdir(parents=True, exist_ok=True)
    for path in contents:
        clean_leftovers(out, path.name)
    if args_name_a_dump(args):  # the jobs of a Slurm dump as an archive SWF file too, header fields included
        contents[out / f"{trace.name}.swf"] = swf_text(trace).encode()
    atomic_write_many(contents)
    print(f"{len(trace.jobs)} jobs, m = {trace.max_procs}")
    if cleaning_counts(trace):
        print(f"cleaning: {cleaning_counts(trace)}")
    print("\n".join(f"wrote {path}" for path in contents))
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("convert", parents=[parents.workload],
                              help="write a Batsim workload JSON and a matching platform")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=cmd_convert)
