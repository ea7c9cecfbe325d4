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
from bftune.schedulers.core.slurm import SCHEDULER_TYPES
from bftune.schedulers.core.slurm_priority import PRIORITY_FLAGS, PRIORITY_TYPES, REFUSED_FLAGS
from bftune.schedulers.core.state import OVERRUN_ESTIMATES
from bftune.schedulers.hooks.registry import HOOKS
from bftune.schedulers.option import (BACKFILLING, EASY, NOT_SLURM, SLURM, ConfigError, Option, Parser, Requirement, boolean,
                                      choice, duration, flag_list, integer, optional, policy_name, whole_duration,
                                      yes_no)
from bftune.workloads.limits import MAX_SEED

__all__ = ["ConfigError", "OPTIONS", "Option", "Parser", "applies", "by_option_names", "canonical",
           "check_requirements", "duration", "integer", "markdown_table", "parse_options"]

#: The scheduling algorithms (``SchedulerConfig.build_algorithm`` builds each).
SCHEDULERS = ("easy", "pv-easy", "slurm")


def _is_pv_easy(value: object) -> bool:
    return value == "pv-easy"


def _is_predicted(value: object) -> bool:
    return value != "walltime"


PV_EASY = Requirement("scheduler", _is_pv_easy, "--scheduler pv-easy")
#: The option needs planning estimates that can run out before the job does (the prediction hook's).
PREDICTED = Requirement("predictor", _is_predicted, "a --predictor other than walltime")


def reservation_depth(value: object, where: str) -> int | str:
    """``reservations``: a positive integer, or ``all`` (``conservative`` is another name for it)."""
    if isinstance(value, str) and value.strip().lower() in ("all", "conservative"):
        return "all"
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit() \
            or int(value) < 1:
        raise ConfigError(f"{where}: expected a positive integer or all, got {value!r}")
    return int(value)


def _is_not_all(value: object) -> bool:
    return value != "all"


#: Every waiting job holds a reservation in primary order: a backfilling order would order nothing.
NOT_ALL_RESERVED = Requirement("reservations", _is_not_all, "--reservations other than all")


def _is_none(value: object) -> bool:
    return value is None


#: A selector's period replays run EASY: they would not measure the plan of k reservations.
NO_SELECTOR = Requirement("selector", _is_none, "no --selector")


def _is_planned(value: object) -> bool:
    return value != 1


#: The option shapes the plan of k > 1 reservations (EASY's single shadow time does not move with it).
PLANNED = Requirement("reservations", _is_planned, "--reservations other than 1")

def _is_multifactor(value: object) -> bool:
    return value == "priority/multifactor"


def _is_sched_backfill(value: object) -> bool:
    return value == "sched/backfill"


MULTIFACTOR = Requirement("priority_type", _is_multifactor, "--priority-type priority/multifactor")
SCHED_BACKFILL = Requirement("scheduler_type", _is_sched_backfill, "--scheduler-type sched/backfill")
_UINT32 = 2**32 - 1


def _weight(name: str, key: str, what: str) -> Option:
    """A multifactor weight: an integer factor's multiplier, as slurm.conf's ``PriorityWeight*``."""
    return Option(name, integer(minimum=0, maximum=_UINT32), 0,
                  f"Slurm's {key}: the weight of the {what} factor in the job priority",
                  "slurm", cli="--" + name.replace("_", "-"), metavar="N", requires=(SLURM, MULTIFACTOR),
                  slurm_key=key, slurm_unit="integer")


#: Slurm's options (docs/semantics/scheduling.md#slurm): slurm.conf's keys and defaults (Slurm 22.05), with
#: bftune durations in seconds where slurm.conf writes seconds, minutes or [days-]hours:minutes.
SLURM_OPTIONS = (
    Option("priority_type", choice(PRIORITY_TYPES), "priority/multifactor",
           "Slurm's PriorityType: multifactor (the weights below) or basic (submit order, as multifactor with "
           "every weight 0)", "slurm", cli="--priority-type", choices=PRIORITY_TYPES, requires=(SLURM,),
           slurm_key="PriorityType", slurm_unit="choice"),
    _weight("priority_weight_age", "PriorityWeightAge", "age (time waited, up to PriorityMaxAge)"),
    _weight("priority_weight_job_size", "PriorityWeightJobSize", "job size (processors asked)"),
    _weight("priority_weight_fairshare", "PriorityWeightFairshare", "fair-share (the user's decayed usage)"),
    _weight("priority_weight_partition", "PriorityWeightPartition", "partition (one partition: a constant)"),
    _weight("priority_weight_qos", "PriorityWeightQOS", "QOS (no QOS: a constant 0)"),
    Option("priority_max_age", whole_duration(unit=60), 7 * 86400.0,
           "Slurm's PriorityMaxAge: the wait at which the age factor reaches 1 (whole minutes)",
           "slurm", cli="--priority-max-age", metavar="DURATION", requires=(SLURM, MULTIFACTOR), duration=True,
           slurm_key="PriorityMaxAge", slurm_unit="duration"),
    Option("priority_favor_small", yes_no, False,
           "Slurm's PriorityFavorSmall=YES: the job size factor favours small jobs",
           "slurm", cli="--priority-favor-small", cli_value=True, requires=(SLURM, MULTIFACTOR),
           slurm_key="PriorityFavorSmall", slurm_unit="yesno"),
    Option("priority_flags", flag_list(PRIORITY_FLAGS, REFUSED_FLAGS), (),
           "Slurm's PriorityFlags, comma-separated: SMALL_RELATIVE_TO_TIME (job size over time limit), "
           "NO_FAIR_TREE (classic fair-share); ACCRUE_ALWAYS and CALCULATE_RUNNING are accepted and change "
           "nothing here", "slurm", cli="--priority-flags", metavar="FLAGS", requires=(SLURM, MULTIFACTOR),
           slurm_key="PriorityFlags", slurm_unit="flags"),
    Option("priority_decay_half_life", whole_duration(unit=60), 7 * 86400.0,
           "Slurm's PriorityDecayHalfLife: the half-life of past usage in the fair-share factor (0: no decay)",
           "slurm", cli="--priority-decay-half-life", metavar="DURATION", requires=(SLURM, MULTIFACTOR),
           duration=True, slurm_key="PriorityDecayHalfLife", slurm_unit="duration"),
    Option("priority_calc_period", whole_duration(unit=60, minimum=60), 300.0,
           "Slurm's PriorityCalcPeriod: how often priorities and fair-share usage are recalculated (whole "
           "minutes; the ticks fall on its multiples from time 0)", "slurm", cli="--priority-calc-period",
           metavar="DURATION", requires=(SLURM, MULTIFACTOR), duration=True,
           slurm_key="PriorityCalcPeriod", slurm_unit="minutes"),
    Option("node_cpus", integer(minimum=1, maximum=2**20), 1,
           "the CPUs of each node (slurm.conf NodeName ... CPUs=): the job size factor counts the machine's nodes "
           "as ceil(m / C) and a job's as ceil(q / C); scheduling still counts processors",
           "slurm", cli="--node-cpus", metavar="C", requires=(SLURM, MULTIFACTOR),
           slurm_key="NodeName:CPUs", slurm_unit="integer"),
    Option("scheduler_type", choice(SCHEDULER_TYPES), "sched/backfill",
           "Slurm's SchedulerType: the main scheduler with backfill passes, or alone (builtin)",
           "slurm", cli="--scheduler-type", choices=SCHEDULER_TYPES, requires=(SLURM,),
           slurm_key="SchedulerType", slurm_unit="choice"),
    Option("bf_interval", whole_duration(minimum=1, maximum=10800), 30.0,
           "Slurm's bf_interval: the time between backfill passes", "slurm", cli="--bf-interval",
           metavar="DURATION", requires=(SLURM, SCHED_BACKFILL), duration=True,
           slurm_key="SchedulerParameters:bf_interval", slurm_unit="seconds"),
    Option("bf_max_job_test", integer(minimum=1, maximum=1_000_000), 500,
           "Slurm's bf_max_job_test: the most waiting jobs a backfill pass tests (starts or reserves)",
           "slurm", cli="--bf-max-job-test", metavar="N", requires=(SLURM, SCHED_BACKFILL),
           slurm_key="SchedulerParameters:bf_max_job_test", slurm_unit="integer"),
    Option("bf_window", whole_duration(unit=60, minimum=60, maximum=30 * 86400), 86400.0,
           "Slurm's bf_window: how far ahead backfill reserves (whole minutes)", "slurm", cli="--bf-window",
           metavar="DURATION", requires=(SLURM, SCHED_BACKFILL), duration=True,
           slurm_key="SchedulerParameters:bf_window", slurm_unit="minutes"),
    Option("bf_resolution", whole_duration(minimum=1, maximum=3600), 60.0,
           "Slurm's bf_resolution: the time step of backfill's plan (reservations at multiples of it)",
           "slurm", cli="--bf-resolution", metavar="DURATION", requires=(SLURM, SCHED_BACKFILL), duration=True,
           slurm_key="SchedulerParameters:bf_resolution", slurm_unit="seconds"),
    Option("default_queue_depth", integer(minimum=0, maximum=_UINT32), 100,
           "Slurm's default_queue_depth: the most jobs the main scheduler tries on a job's submission or end",
           "slurm", cli="--default-queue-depth", metavar="N", requires=(SLURM,),
           slurm_key="SchedulerParameters:default_queue_depth", slurm_unit="integer"),
    Option("sched_interval", whole_duration(minimum=1, maximum=_UINT32), 60.0,
           "Slurm's sched_interval: the time between the main scheduler's periodic passes over the whole queue",
           "slurm", cli="--sched-interval", metavar="DURATION", requires=(SLURM,), duration=True,
           slurm_key="SchedulerParameters:sched_interval", slurm_unit="seconds"),
)

#: The core's options: the algorithm and what it sorts and plans by.
CORE_OPTIONS = (
    Option("scheduler", choice(SCHEDULERS), "easy",
           "EASY backfilling, PV-EASY (shadow-load preemption and venture backfilling) or Slurm's multifactor "
           "priority and backfill (the slurm options)",
           "scheduler", cli="--scheduler", choices=SCHEDULERS),
    Option("policy", policy_name, "FCFS",
           "queue order of both EASY queues (Pr), PV-EASY's priority; see `bftune policies`; or your own, "
           "MODULE:NAME or FILE.py:NAME (docs/guides/plugins.md)",
           "scheduler", cli="--policy", metavar="POLICY", aliases=("primary",), requires=(NOT_SLURM,),
           plugins="policy"),
    Option("backfill_policy", optional(policy_name), None, "backfilling order Pb (default: the primary order)",
           "scheduler", cli="--backfill", metavar="POLICY", aliases=("bf_policy",),
           requires=(BACKFILLING, EASY, NOT_ALL_RESERVED), plugins="policy"),
    Option("threshold", duration(infinite=True), math.inf,
           "waiting-time threshold Theta: jobs waiting longer go first, by r (40h, 2d, 3600, inf)",
           "scheduler", cli="--threshold", metavar="DURATION", requires=(NOT_SLURM,), duration=True),
    Option("reservation", choice(RESERVATION_MODELS), "count",
           "reservation model: count (processors are interchangeable) or machines (batsched easy_bf's)",
           "scheduler", cli="--reservation", choices=RESERVATION_MODELS, requires=(BACKFILLING, EASY)),
    Option("reservations", reservation_depth, 1,
           "how many waiting jobs hold a reservation, first in primary order: 1 is EASY, K the first K, all "
           "(or conservative) every waiting job, conservative backfilling (docs/semantics/scheduling.md#conservative)",
           "scheduler", cli="--reservations", metavar="K|all", requires=(BACKFILLING, EASY, NO_SELECTOR)),
    Option("planning_margin", optional(duration(infinite=False)), None,
           "seconds added to every planned duration of the reservation plan, running jobs' included (batsched's "
           "RJMS delay, its -d); default: 5 s with --reservation machines (batsched's default), 0 with count",
           "scheduler", cli="--planning-margin", metavar="DURATION", requires=(BACKFILLING, EASY, PLANNED),
           duration=True),
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
) + SLURM_OPTIONS  # Slurm's are the core's too: the options of its algorithm

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
        if o.slurm_key:
            meaning += f"; slurm.conf `{o.slurm_key}`"
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
