"""``bftune batsim``: run the scheduler inside real Batsim (the work: ``backends.py``, imported when it runs)."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents, add_backend_parser


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    add_backend_parser(subparsers, parents, "batsim",
                       "run the scheduler inside real Batsim (starts batsim and our scheduler)")
