"""``bftune policies``: the queue policies and their formulas, from the policy registry."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents
from bftune.schedulers.core.policies import REGISTRY, formula_of


def cmd_policies(args: argparse.Namespace) -> int:
    width = max(len(name) for name in REGISTRY)
    print("Policies (sort key, lowest first; ties: submission time, then job id; wait = now - r):")
    for policy in REGISTRY.values():
        dyn = "  [uses wait: re-evaluated every pass]" if policy.dynamic else ""
        print(f"  {policy.name:<{width}}  {formula_of(policy)}{dyn}")
    print("\nCompose them: --primary P --backfill Q (EASY-P-Q), --threshold 40h (jobs waiting longer go first, "
          "by r), --no-backfilling.")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("policies", help="list the queue policies and their formulas")
    p.set_defaults(func=cmd_policies)
