"""Scheduler configuration: one validated record that builds a decision core.

The same ``SchedulerConfig`` comes from the CLI, from pybatsim's ``-o`` JSON
options, from campaign files and from the Python API, all through the one
option table (:mod:`bftune.schedulers.options`), so a configuration means the
same thing on both backends.  Validation happens here, before any
simulation or any message is exchanged, and every error names the offending
option.

This is the composition root: it builds the algorithm from the core's
options and each hook from its registry entry
(:mod:`bftune.schedulers.hooks.registry`), handing the hooks what only a run
knows (the machine size, the workload's clock) and what they must not reach
for themselves (the local simulator's period replays).  Neither the hooks
nor the core import it, and neither do the drivers: they are handed
:meth:`SchedulerConfig.build` as a core factory.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Iterator, Mapping

from bftune.schedulers.core.conservative import ALL, BATSCHED_MARGIN, Conservative
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Algorithm, Core, Hook
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.pveasy import PvEasy
from bftune.schedulers.core.slurm import BackfillSettings, SlurmBackfill
from bftune.schedulers.core.slurm_priority import PrioritySettings
from bftune.schedulers.drivers.local.simulator import PeriodReplay
from bftune.schedulers.hooks.registry import HOOKS
from bftune.schedulers.hooks.declaration import BuildContext
from bftune.schedulers.options import OPTIONS, ConfigError, applies, check_requirements, parse_options
from bftune.workloads.model import NO_CLOCK, TraceClock

__all__ = ["ConfigError", "SchedulerConfig"]

#: Builds a fresh core for an m-processor machine running a workload with this clock (what drivers are given).
CoreFactory = Callable[[int, TraceClock], Core]


class SchedulerConfig(Mapping[str, Any]):
    """Everything that defines a scheduler: a value for every option of the table, parsed and checked.

    ``SchedulerConfig(policy="SAF", threshold="40h")`` takes option names (or
    aliases) and what a user would write; an option left out has the table's
    default (EASY-FCFS, count model, walltimes as estimates, no hook).  Read a
    value as ``config["threshold"]`` or ``config.threshold`` (seconds here, as
    every parser returns it); :meth:`to_dict` gives the options that mean
    something, as a user would write them.  A configuration never changes:
    :meth:`replace` makes another.

    Parameters
    ----------
    **options
        Options of the option table (:data:`~bftune.schedulers.options.OPTIONS`, ``bftune options``)
        by name or alias, with what a user writes as values.

    Raises
    ------
    ConfigError
        An unknown option, a bad value or an unmet requirement, in one line naming the option.

    Examples
    --------
    >>> config = SchedulerConfig(policy="SAF", threshold="40h")
    >>> config.threshold, config.describe()
    (144000.0, 'EASY(SAF+threshold(40h))')
    >>> config.replace(policy="SPF").to_dict()["policy"]
    'SPF'
    """

    __slots__ = ("_values",)
    _values: dict[str, Any]

    def __init__(self, **options: Any) -> None:
        # Requirements are checked on the values that differ from the defaults (``validate``), not on every
        # option given: a configuration written out in full (every option, defaults included) is valid.
        given = parse_options(options, requirements=False)
        values = {name: given[name] if name in given else _fresh(OPTIONS[name].default) for name in OPTIONS}
        object.__setattr__(self, "_values", values)
        self.validate()

    # --- a read-only mapping of option values ------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a {type(self).__name__} never changes; use replace({name}=...)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SchedulerConfig) and self._values == other._values

    __hash__ = None  # type: ignore[assignment]  # equal by value and never changed, but holds lists

    def __repr__(self) -> str:
        changed = ", ".join(f"{k}={v!r}" for k, v in self._values.items() if v != OPTIONS[k].default)
        return f"SchedulerConfig({changed})"

    def __reduce__(self) -> tuple:
        return (_from_values, (self._values,))

    # --- validation ------------------------------------------------------------------------

    def validate(self) -> None:
        """The requirements of the options given, then every hook's rules between options."""
        changed = {name: value for name, value in self._values.items() if value != OPTIONS[name].default}
        check_requirements(changed)
        for spec in HOOKS:
            spec.check(self._values)

    @classmethod
    def from_options(cls, options: dict, where: Callable[[str], str] = str, *,
                     flag_names: bool = False) -> "SchedulerConfig":
        """Build from user-facing options (strings allowed: "40h", "SAF"); see the option table.

        Parameters
        ----------
        options : dict
            Option name (or alias) to value, as ``-o`` and campaign files give them.
        where : callable, default str
            Names an option in errors the way the user wrote it (``--threshold``).
        flag_names : bool, default False
            Say a requirement with the command line's flags (``needs --selector``) rather than with
            option names (``needs selector``): for the command line alone.

        Returns
        -------
        SchedulerConfig
            The configuration.

        Raises
        ------
        ConfigError
            As the constructor.
        """
        return cls(**parse_options(options, where, flag_names=flag_names))

    def replace(self, **changes: Any) -> "SchedulerConfig":
        """Another configuration: these options changed, the others kept.

        Parameters
        ----------
        **changes
            Options to change, as for the constructor.

        Returns
        -------
        SchedulerConfig
            The other configuration (this one never changes).

        Raises
        ------
        ConfigError
            As the constructor.
        """
        values = {name: value for name, value in self._values.items() if value != OPTIONS[name].default}
        values.update(changes)
        return SchedulerConfig(**values)

    def to_dict(self) -> dict[str, Any]:
        """The options that mean something for this configuration, as a user would write them.

        Returns
        -------
        dict
            Option name to value (``"40h"``, not seconds), plus ``algorithm``, the configuration in words:
            what summary.json's ``config`` holds.
        """
        d = {name: OPTIONS[name].shown(value) for name, value in self._values.items() if applies(name, self._values)}
        d["algorithm"] = self.describe()
        return d

    # --- what it builds ----------------------------------------------------------------------

    @property
    def needs_dynamic_jobs(self) -> bool:
        """Whether this configuration may kill and requeue jobs: Batsim then needs dynamic jobs.

        Derived from what the algorithm and the hooks declare (``may_kill``), never listed here.
        """
        return self.build(1).may_kill

    @property
    def by_class(self) -> bool:
        """Whether the EASY orders put a hook's small queue class first."""
        return any(spec.by_class(self._values) for spec in HOOKS)

    def orders(self) -> tuple[Order, Order]:
        v = self._values
        primary = Order.of(v["policy"], v["threshold"], self.by_class)
        backfill = Order.of(v["backfill_policy"] or v["policy"], v["threshold"], self.by_class)
        return primary, backfill

    def describe(self) -> str:
        """``EASY(SAF/SPF, 40h)``, ``EASY(full[FCFS|SPF] per 1w, 40h)``, ``... with rf``: the algorithm, as
        a hook that drives its order names it, then what each hook adds."""
        base = next((label for spec in HOOKS if (label := spec.label(self._values)) is not None), None)
        if base is None:
            base = self.build_algorithm().describe()
        return base + "".join(spec.suffix(self._values) for spec in HOOKS)

    def build_algorithm(self) -> Algorithm:
        primary, backfill = self.orders()
        v = self._values
        if v["scheduler"] == "pv-easy":
            return PvEasy(primary, v["venture_fill"])
        if v["scheduler"] == "slurm":
            return _slurm(v)
        depth = v["reservations"]
        if depth != 1:  # docs/semantics/scheduling.md#conservative; 1 is EASY, which needs no plan
            margin = v["planning_margin"]
            if margin is None:
                margin = BATSCHED_MARGIN if v["reservation"] == "machines" else 0.0
            return Conservative(primary, backfill, reservation=v["reservation"], depth=ALL if depth == "all" else depth,
                                margin=margin)
        return Easy(primary, backfill, reservation=v["reservation"], backfill_enabled=v["backfill"])

    def build_hooks(self, context: BuildContext) -> list[Hook]:
        """Every hook these options turn on, in the registry's order."""
        hooks = (spec.build(self._values, context) for spec in HOOKS)
        return [hook for hook in hooks if hook is not None]

    def build(self, m: int, clock: TraceClock = NO_CLOCK, replay_memo: dict[str, float] | None = None) -> Core:
        """A fresh decision core for an m-processor machine running a workload with this ``clock``.

        ``replay_memo``: period replays shared with other runs (:class:`PeriodReplay`).
        """
        context = BuildContext(m, clock, partial(PeriodReplay, memo=replay_memo))
        algorithm = self.build_algorithm()
        hooks = self.build_hooks(context)
        if isinstance(algorithm, SlurmBackfill):
            hooks.insert(0, algorithm.events())  # submissions and ends reach it first (its priorities, usage)
        return Core(m, algorithm, hooks, revise_overruns=self._values["overrun_estimate"] == "walltime")


def _slurm(v: Mapping[str, Any]) -> SlurmBackfill:
    """Slurm's scheduler from its options (docs/semantics/scheduling.md#slurm)."""
    flags = v["priority_flags"]
    priority = PrioritySettings(
        basic=v["priority_type"] == "priority/basic", weight_age=v["priority_weight_age"],
        weight_job_size=v["priority_weight_job_size"], weight_fairshare=v["priority_weight_fairshare"],
        weight_partition=v["priority_weight_partition"], weight_qos=v["priority_weight_qos"],
        max_age=v["priority_max_age"], favor_small=v["priority_favor_small"],
        small_relative_to_time="SMALL_RELATIVE_TO_TIME" in flags, fair_tree="NO_FAIR_TREE" not in flags,
        decay_half_life=v["priority_decay_half_life"], calc_period=v["priority_calc_period"],
        node_cpus=v["node_cpus"])
    backfill = BackfillSettings(
        enabled=v["scheduler_type"] == "sched/backfill", interval=v["bf_interval"],
        max_job_test=v["bf_max_job_test"], window=v["bf_window"], resolution=v["bf_resolution"],
        queue_depth=v["default_queue_depth"], sched_interval=v["sched_interval"])
    return SlurmBackfill(priority, backfill)


def _fresh(default: Any) -> Any:
    """A default's own copy (a list default must not be shared between configurations)."""
    return list(default) if isinstance(default, list) else default


def _from_values(values: dict) -> SchedulerConfig:
    """Unpickle: the values were checked when the configuration was made."""
    config = SchedulerConfig.__new__(SchedulerConfig)
    object.__setattr__(config, "_values", dict(values))
    return config
