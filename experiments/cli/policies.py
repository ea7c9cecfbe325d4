"""``bftune policies``: the queue policies and their formulas, from the policy registry."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents
from bftune.schedulers.core import plugins
from bftune.schedulers.core.policies import REGISTRY, formula_of


def cmd_policies(args: argparse.Namespace) -> int:
    installed = plugins.entry_points("policy", REGISTRY, str.upper)
    width = max(len(name) for name in [*REGISTRY, *(point.name for point in installed.values())])
    print("Policies (sort key, lowest first; ties: submission time, then job id; wait = now - r):")
    for policy in REGISTRY.values():
        dyn = "  [uses wait: re-evaluated every pass]" if policy.dynamic else ""
        print(f"  {policy.name:<{width}}  {formula_of(policy)}{dyn}")
    if installed:
        print(f"\nInstalled by packages (entry points of {plugins.GROUPS['policy']}):")
        for point in installed.values():
            print(f"  {point.name:<{width}}  {point.value}")
    print("\nCompose them: --primary P --backfill Q (EASY-P-Q), --threshold 40h (jobs waiting longer go first, "
          "by r), --no-backfilling.  Your own: --policy MODULE:NAME or FILE.py:NAME (docs/guides/plugins.md).")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("policies", help="list the queue policies and their formulas")
    p.set_defaults(func=cmd_policies)
