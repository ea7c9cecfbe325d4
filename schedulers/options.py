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
import re
from typing import Callable

from bftune.schedulers.core.easy import RESERVATION_MODELS
from bftune.schedulers.core.pveasy import VENTURE_FILLS
from bftune.schedulers.core.state import OVERRUN_ESTIMATES
from bftune.schedulers.hooks.registry import HOOKS
from bftune.schedulers.option import (BACKFILLING, EASY, ConfigError, Option, Parser, Requirement, boolean, choice,
                                      duration, integer, optional, policy_name)
from bftune.workloads.limits import MAX_SEED

__all__ = ["ConfigError", "OPTIONS", "Option", "Parser", "applies", "by_option_names", "canonical",
           "check_requirements", "duration", "integer", "markdown_table", "parse_options"]

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
           "queue order of both EASY queues (Pr), PV-EASY's priority; see `bftune policies`; or your own, "
           "MODULE:NAME or FILE.py:NAME (docs/guides/plugins.md)",
           "scheduler", cli="--policy", metavar="POLICY", aliases=("primary",), plugins="policy"),
    Option("backfill_policy", optional(policy_name), None, "backfilling order Pb (default: the primary order)",
           "scheduler", cli="--backfill", metavar="POLICY", aliases=("bf_policy",), requires=(BACKFILLING, EASY),
           plugins="policy"),
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
    # 1, the command line's and bftune.synthetic's default since the start: one default everywhere, so the API,
    # -o and the command line give the same run (docs/reference/python-api.md#one-seed-default says why 1)
    Option("seed", integer(minimum=0, maximum=MAX_SEED), 1,
           "seed of the selectors', the classifier's and virtual predictions' randomness",
           "scheduler", cli="--seed", metavar="N"),
)

_TABLE: tuple[Option, ...] = CORE_OPTIONS + tuple(option for spec in HOOKS for option in spec.options)

OPTIONS: dict[str, Option] = {o.name: o for o in _TABLE}
"""Every scheduler option by name, in the order of the table (the docs' order).

Each :class:`~bftune.schedulers.option.Option` holds its parser, default, help, command-line flag and
requirements; ``bftune options`` prints the table and the reference's Scheduler options page shows it.

Examples
--------
>>> OPTIONS["threshold"].cli, OPTIONS["seed"].default
('--threshold', 1)
>>> OPTIONS["threshold"].parse("40h", "threshold")
144000.0
"""
ALIASES: dict[str, str] = {alias: o.name for o in _TABLE for alias in o.aliases}


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def parse_options(raw: dict, where: Callable[[str], str] = str, *, requirements: bool = True,
                  flag_names: bool = False) -> dict:
    """Validate user-facing options into typed values (only those given).

    ``where(name)`` says how an option is named in errors (``--threshold``,
    ``threshold``...).  Unknown names are errors listing the known ones.  With
    ``requirements``, an option given while its requirement is unmet is an
    error too (:func:`check_requirements`), saying what is needed in the
    caller's words: command-line flags with ``flag_names``, else option names.
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
        check_requirements(out, where, flag_names=flag_names)
    return out


def check_requirements(given: dict, where: Callable[[str], str] = str, *, flag_names: bool = False) -> None:
    """An option given explicitly must have its requirement met (else it would be ignored).

    The error says the requirement with command-line flags (``--epsilon needs --selector``) when
    ``flag_names``, else with option names (``epsilon needs selector``), as the API, ``-o`` and campaign
    files name them: a flag means nothing to a caller who never wrote one.
    """
    for name in given:
        for req in OPTIONS[name].requires:
            other = given.get(req.name, OPTIONS[req.name].default)
            if not req.holds(other):
                says = req.says if flag_names else by_option_names(req.says)
                raise ConfigError(f"{where(name)} needs {says}", option=name, reason=f"needs {says}")


#: A flag in a requirement's words, with the word after it (its value, when the option has that choice).
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)(?: ([\w.:-]+))?")


def by_option_names(text: str) -> str:
    """A requirement's words with each flag said as the option's name: what a caller of the API writes.

    ``--scheduler easy`` becomes ``scheduler='easy'``, ``--no-backfilling`` (a flag that stores False)
    ``backfill=False``, a bare ``--selector`` ``selector``.  The requirements are written once, in flags
    (:attr:`Requirement.says`, which the docs' option table shows beside each flag); this is their other
    spelling, so that no rule is stated twice.
    """
    flags = {o.cli: o for o in _TABLE if o.cli}

    def said(match: re.Match[str]) -> str:
        option = flags.get(match.group(1))
        word = match.group(2)
        if option is None:
            return match.group(0)
        rest = f" {word}" if word is not None else ""
        if option.choices and word in option.choices:
            return f"{option.name}={word!r}"
        if isinstance(option.default, bool):
            return f"{option.name}={option.cli_value!r}{rest}"
        return f"{option.name}{rest}"

    return _FLAG.sub(said, text)


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
