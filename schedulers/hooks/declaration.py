"""How a hook joins the scheduler: the options it declares and how it builds itself from them.

A hook module ends with ``HOOK``, one :class:`HookSpec`; the registry
(:mod:`bftune.schedulers.hooks.registry`) lists them, and everything else is
a loop over it: the option table takes every spec's options (so the CLI,
pybatsim's ``-o``, campaign TOML, the Python API and the docs know them),
:class:`~bftune.schedulers.config.SchedulerConfig` validates with each
spec's ``check`` and builds each spec's hook, and the description of a
configuration joins what each spec says of itself.  Adding a hook is one
module and one registry line; nothing else names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from bftune.schedulers.core.engine import Hook
from bftune.schedulers.option import Option
from bftune.workloads.model import NO_CLOCK, JobRecord, TraceClock

#: Every option's value, by option name (defaults filled in, parsed and checked).
OptionValues = Mapping[str, Any]

#: w(t; P): the summed waits of ``jobs`` replayed alone on an m-processor machine under
#: EASY(P, Theta) from an empty machine (what full and noisy feedback compare policies by).
Replay = Callable[[list[JobRecord], int, str], float]
#: Makes a :data:`Replay` for a threshold and a reservation model (the local driver's, handed in
#: by the configuration: a hook never reaches for a driver itself).
ReplayFactory = Callable[[float, str], Replay]


@dataclass(frozen=True)
class BuildContext:
    """What a hook may need beyond the options, known only when a run starts.

    ``m``: the machine size; ``clock``: the workload's calendar (workload data,
    not an option); ``replay``: period replays, for hooks that compare
    policies by simulating them.
    """

    m: int
    clock: TraceClock = NO_CLOCK
    replay: ReplayFactory | None = None


def no_rules(values: OptionValues) -> None:
    """A spec without rules between its options and others."""


def no_suffix(values: OptionValues) -> str:
    return ""


def no_label(values: OptionValues) -> str | None:
    return None


def never(values: OptionValues) -> bool:
    return False


@dataclass(frozen=True)
class HookSpec:
    """One hook's entry in the registry.

    - ``options``: its rows of the option table (defaults mean "off");
    - ``build(values, context)``: the hook for these values, or None when they
      leave it off;
    - ``check(values)``: rules between its options and others', raising
      :class:`~bftune.schedulers.option.ConfigError` (``option.rule``);
    - ``label(values)``: the algorithm's name when the hook drives its order
      (a selector), else None; ``suffix(values)``: what the hook adds to a
      configuration's description (``" predictor=last"``);
    - ``by_class(values)``: whether the EASY orders put the small queue class
      first (the hook sets each job's ``qclass``).
    """

    name: str
    options: tuple[Option, ...]
    build: Callable[[OptionValues, BuildContext], Hook | None]
    check: Callable[[OptionValues], None] = no_rules
    label: Callable[[OptionValues], str | None] = no_label
    suffix: Callable[[OptionValues], str] = no_suffix
    by_class: Callable[[OptionValues], bool] = never
