"""``bftune options``: every scheduler option of the one option table (flags, pybatsim -o and TOML names)."""

from __future__ import annotations

import argparse

from bftune.experiments.cli.common import Parents
from bftune.schedulers.options import OPTIONS, markdown_table


def cmd_options(args: argparse.Namespace) -> int:
    """The option table: the same names in -o JSON and campaign TOML, flags on the command line."""
    if args.markdown:
        print(markdown_table())
        return 0
    width = max(len(name) for name in OPTIONS)
    print("Scheduler options (pybatsim -o JSON and campaign TOML names; command-line flags):")
    for option in OPTIONS.values():
        flag = option.cli or "(no flag)"
        needs = f"; needs {option.needs()}" if option.requires else ""
        key = f"; slurm.conf {option.slurm_key}" if option.slurm_key else ""
        print(f"  {option.name:<{width}}  {flag:<16} default {option.doc_default():<10} {option.help}{needs}{key}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction, parents: Parents) -> None:
    p = subparsers.add_parser("options", help="list every scheduler option (command line, pybatsim -o, campaign TOML)")
    p.add_argument("--markdown", action="store_true", help="as the markdown table of the docs' option reference")
    p.set_defaults(func=cmd_options)
