"""``bftune compare``: both backends on one workload, their decisions compared job by job (``backends.py``)."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents, add_backend_parser


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    add_backend_parser(subparsers, parents, "compare", "run both backends and compare their decisions job by job")
