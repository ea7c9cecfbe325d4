"""The one option table: every scheduler option, defined once.

The CLI (``bftune simulate --policy SAF``), pybatsim's ``-o`` JSON
(``{"policy": "SAF"}``), campaign TOML files, the Python API and the docs'
option table all read :data:`OPTIONS`; each option has one parser
(:mod:`bftune.schedulers.option`), so a value means the same thing, and a
bad value gives the same message naming the option, whichever way it came
in.  Choices come from the registries that define them (policies,
reservation models, selectors, classifier modes, feature modes), never from
a copy.

The table is the core's own options (the algorithm, its orders, its
reservation model, the seed) followed by every hook's, in the hooks'
registry order (:mod:`bftune.schedulers.hooks.registry`): a hook declares its
options next to its code, and nothing here names it.
"""

from __future__ import annotations

import math
from typing import Callable

from bftune.schedulers.core.easy import RESERVATION_MODELS
from bftune.schedulers.core.pveasy import VENTURE_FILLS
from bftune.schedulers.core.state import OVERRUN_ESTIMATES
from bftune.schedulers.hooks.registry import HOOKS
from bftune.schedulers.option import (BACKFILLING, EASY, ConfigError, Option, Parser, Requirement, boolean, choice,
                                      duration, integer, optional, policy_name)
from bftune.workloads.limits import MAX_SEED

__all__ = ["ConfigError", "OPTIONS", "Option", "Parser", "applies", "canonical", "check_requirements", "duration",
           "integer", "markdown_table", "parse_options"]

#: The scheduling algorithms (``SchedulerConfig.build_algorithm`` builds each).
SCHEDULERS = ("easy", "pv-easy")


def _is_pv_easy(value: object) -> bool:
    return value == "pv-easy"


def _is_predicted(value: object) -> bool:
    return value != "walltime"


PV_EASY = Requirement("scheduler", _is_pv_easy, "--scheduler pv-easy")
#: The option needs planning estimates that can run out before the job does (the prediction hook's).
PREDICTED = Requirement("predictor", _is_predicted, "a --predictor other than walltime")

#: The core's options: the algorithm and what it sorts and plans by.
CORE_OPTIONS = (
    Option("scheduler", choice(SCHEDULERS), "easy",
           "EASY backfilling or PV-EASY: shadow-load preemption and venture backfilling",
           "scheduler", cli="--scheduler", choices=SCHEDULERS),
    Option("policy", policy_name, "FCFS",
           "queue order of both EASY queues (Pr), PV-EASY's priority; see `bftune policies`",
           "scheduler", cli="--policy", metavar="POLICY", aliases=("primary",)),
    Option("backfill_policy", optional(policy_name), None, "backfilling order Pb (default: the primary order)",
           "scheduler", cli="--backfill", metavar="POLICY", aliases=("bf_policy",), requires=(BACKFILLING, EASY)),
    Option("threshold", duration(infinite=True), math.inf,
           "waiting-time threshold Theta: jobs waiting longer go first, by r (40h, 2d, 3600, inf)",
           "scheduler", cli="--threshold", metavar="DURATION", duration=True),
    Option("reservation", choice(RESERVATION_MODELS), "count",
           "reservation model: count (processors are interchangeable) or machines (batsched easy_bf's)",
           "scheduler", cli="--reservation", choices=RESERVATION_MODELS, requires=(BACKFILLING, EASY)),
    Option("venture_fill", choice(VENTURE_FILLS), "priority",
           "what PV-EASY's venture backfilling starts on processors still idle after the jobs predicted to end "
           "by the reservation: further jobs that fit, in priority order (the default), shortest prediction first, "
           "or none",
           "scheduler", cli="--venture-fill", choices=VENTURE_FILLS, requires=(PV_EASY,)),
    Option("backfill", boolean, True, "backfilling on (false: strict order)", "scheduler",
           cli="--no-backfilling", cli_value=False, requires=(EASY,)),
    Option("overrun_estimate", choice(OVERRUN_ESTIMATES), "walltime",
           "what a running job's planned end becomes once it outruns its prediction: its walltime (start + "
           "walltime, the simplest of Tsafrir et al.'s corrections) or the expired prediction, kept (a scheduler "
           "that never revises a prediction: the job's processors count as free from its predicted end on)",
           "scheduler", cli="--overrun-estimate", choices=OVERRUN_ESTIMATES, requires=(PREDICTED,)),
    Option("seed", integer(minimum=0, maximum=MAX_SEED), 0,
           "seed of the selectors', the classifier's and virtual predictions' randomness",
           "scheduler", cli="--seed", metavar="N"),
)

_TABLE: tuple[Option, ...] = CORE_OPTIONS + tuple(option for spec in HOOKS for option in spec.options)

#: Every option by name, in the order of the table (the docs' order).
OPTIONS: dict[str, Option] = {o.name: o for o in _TABLE}
ALIASES: dict[str, str] = {alias: o.name for o in _TABLE for alias in o.aliases}


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def parse_options(raw: dict, where: Callable[[str], str] = str, *, requirements: bool = True) -> dict:
    """Validate user-facing options into typed values (only those given).

    ``where(name)`` says how an option is named in errors (``--threshold``,
    ``threshold``...).  Unknown names are errors listing the known ones.  With
    ``requirements``, an option given while its requirement is unmet is an
    error too (:func:`check_requirements`).
    """
    if not isinstance(raw, dict):
        raise ConfigError(f"options must be a JSON object, got {type(raw).__name__}")
    out: dict = {}
    unknown = []
    for key, value in raw.items():
        name = canonical(key)
        option = OPTIONS.get(name)
        if option is None:
            unknown.append(key)
            continue
        if name in out:
            raise ConfigError(f"{where(key)}: given twice (as {name} and an alias)")
        out[name] = option.parse(value, where(key))
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(sorted(unknown))}; known options: {', '.join(OPTIONS)}")
    if requirements:
        check_requirements(out, where)
    return out


def check_requirements(given: dict, where: Callable[[str], str] = str) -> None:
    """An option given explicitly must have its requirement met (else it would be ignored)."""
    for name in given:
        for req in OPTIONS[name].requires:
            other = given.get(req.name, OPTIONS[req.name].default)
            if not req.holds(other):
                raise ConfigError(f"{where(name)} needs {req.says}", option=name, reason=f"needs {req.says}")


def applies(name: str, values: dict) -> bool:
    """Whether option ``name`` means anything given the other values (for ``to_dict``)."""
    return all(req.holds(values.get(req.name, OPTIONS[req.name].default)) for req in OPTIONS[name].requires)


def markdown_table() -> str:
    """The option table in markdown: the docs' option reference (docs/reference/options.md) is generated from it."""
    rows = ["| option (-o / TOML) | command line | default | meaning |", "|---|---|---|---|"]
    for o in _TABLE:
        flag = f"`{o.cli}`" if o.cli else "-"
        meaning = o.help
        if o.choices:
            meaning += " (" + " \\| ".join(o.choices) + ")"
        if o.requires:
            meaning += f"; needs {o.needs()}"
        rows.append(f"| `{o.name}` | {flag} | {o.doc_default()} | {meaning} |")
    return "\n".join(rows)


def _check_table() -> None:
    """Every name is unique and every requirement names an option of the table (a hook's typo fails here)."""
    names = [o.name for o in _TABLE] + [a for o in _TABLE for a in o.aliases]
    if len(set(names)) != len(names):
        raise TypeError(f"option names must be unique: {sorted(n for n in names if names.count(n) > 1)}")
    for option in _TABLE:
        for requirement in option.requires:
            if requirement.name not in OPTIONS:
                raise TypeError(f"option {option.name} requires {requirement.name!r}, which is no option")


_check_table()
