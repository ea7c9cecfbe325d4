"""``bftune download``: a named Parallel Workloads Archive trace, checksum-verified."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents
from bftune.support.files import check_writable_dir


def cmd_download(args: argparse.Namespace) -> int:
    from bftune.workloads.download import download  # lazy: 84 ms of urllib/ssl, download only

    check_writable_dir(args.dest, "--dest")
    path = download(args.name, args.dest, base_url=args.base_url)
    print(f"{path}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("download", help="download a named Parallel Workloads Archive trace (checksum-verified)")
    p.add_argument("name", help="trace name, e.g. KTH-SP2")
    p.add_argument("--dest", default="traces", help="directory to store it in (default ./traces)")
    p.add_argument("--base-url", help="mirror of the archive (default: the archive itself)")
    p.set_defaults(func=cmd_download)
