"""tune's ``slurm`` family: a grid of Slurm multifactor-priority and backfill settings, and what it answers.

A Slurm site cannot run "EASY-SPF-LEXP 20h"; it can change slurm.conf.  The family races settings Slurm can
be given (``--scheduler slurm``, docs/semantics/scheduling.md#slurm) on top of the site's own (``--slurm-conf``:
every key the grid does not set stays the site's), so that the recommendation can set the site's current
setting, the best Slurm-expressible one and the best EASY side by side, and write the slurm.conf lines to
change.  The grid (docs/guides/slurm.md, "tune: the slurm family"), 32 candidates:

- relative weights (age : job size : fair-share), :data:`WEIGHTS`: age alone, fair-share alone, age and
  fair-share, age and job size (favouring small jobs, alone or relative to their time limit) at three
  ratios, all three, and job size relative to time alone;
- ``PriorityMaxAge`` 1 day or 7 days where the age weight is set (:data:`MAX_AGES`);
- backfill ``bf_window``/``bf_max_job_test`` 1 day/100 or 2 days/1000 (:data:`BACKFILLS`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.options import OPTIONS

SMALL_RELATIVE_TO_TIME = "SMALL_RELATIVE_TO_TIME"


@dataclass(frozen=True)
class Weights:
    """One priority setting of the grid: the three weights and how the job size factor counts."""

    age: int
    job_size: int
    fairshare: int
    favor_small: bool = False
    relative_to_time: bool = False


#: The priority settings (age, job size, fair-share weights; favour small; SMALL_RELATIVE_TO_TIME).
WEIGHTS = (
    Weights(1000, 0, 0),
    Weights(0, 0, 1000),
    Weights(1000, 0, 1000),
    Weights(1000, 1000, 0, favor_small=True),
    Weights(1000, 1000, 0, favor_small=True, relative_to_time=True),
    Weights(1000, 3000, 0, favor_small=True, relative_to_time=True),
    Weights(3000, 1000, 0, favor_small=True, relative_to_time=True),
    Weights(1000, 1000, 1000, favor_small=True, relative_to_time=True),
    Weights(0, 1000, 0, favor_small=True, relative_to_time=True),
)
#: PriorityMaxAge values raced where the age weight is set (bftune durations).
MAX_AGES = ("1d", "7d")
#: (bf_window, bf_max_job_test) pairs raced.
BACKFILLS = (("1d", 100), ("2d", 1000))
#: The options the grid sets (the others stay the site's).
GRID_OPTIONS = ("priority_type", "priority_weight_age", "priority_weight_job_size", "priority_weight_fairshare",
                "priority_max_age", "priority_favor_small", "priority_flags", "bf_window", "bf_max_job_test")


def site_base(site: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options every candidate starts from: the site's Slurm setting, else bftune's Slurm defaults."""
    if site and site.get("scheduler") == "slurm":
        return dict(site)
    return {"scheduler": "slurm"}


def grid(site: Mapping[str, Any] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(label, options) of every candidate of the family, in a fixed order."""
    base = site_base(site)
    flags = tuple(f for f in SchedulerConfig.from_options(base)["priority_flags"] if f != SMALL_RELATIVE_TO_TIME)
    out = []
    for weights in WEIGHTS:
        for max_age in (MAX_AGES if weights.age else (None,)):
            for window, depth in BACKFILLS:
                options = {**base, "priority_type": "priority/multifactor", "priority_weight_age": weights.age,
                           "priority_weight_job_size": weights.job_size,
                           "priority_weight_fairshare": weights.fairshare,
                           "priority_favor_small": weights.favor_small,
                           "priority_flags": list(flags + ((SMALL_RELATIVE_TO_TIME,) if weights.relative_to_time
                                                           else ())),
                           "bf_window": window, "bf_max_job_test": depth}
                if max_age is not None:  # without an age weight the site's PriorityMaxAge stays (it means nothing)
                    options["priority_max_age"] = max_age
                out.append((label(weights, max_age, window, depth), options))
    return out


def label(weights: Weights, max_age: str | None, window: str, depth: int) -> str:
    """``Slurm A1000 S1000 small/time F0, MaxAge 1d, bf 1d/100``."""
    size = f"S{weights.job_size}"
    if weights.job_size:
        size += " small/time" if weights.relative_to_time else " small" if weights.favor_small else ""
    age = f", MaxAge {max_age}" if max_age else ""
    return f"Slurm A{weights.age} {size} F{weights.fairshare}{age}, bf {window}/{depth}"


def sentence(options: Mapping[str, Any]) -> str:
    """A Slurm setting in words (the report's tooltip and the terminal's ``in words``)."""
    config = SchedulerConfig.from_options(dict(options))
    if config["priority_type"] == "priority/basic":
        text = "Slurm: jobs in submission order (priority/basic)"
    else:
        parts = []
        if config["priority_weight_age"]:
            parts.append(f"age weight {config['priority_weight_age']} (full after "
                         f"{format_duration(config['priority_max_age'])} of waiting)")
        if config["priority_weight_job_size"]:
            how = ("favouring small jobs" if config["priority_favor_small"] else "favouring large jobs")
            if SMALL_RELATIVE_TO_TIME in config["priority_flags"]:
                how += " relative to their time limit"
            parts.append(f"job size weight {config['priority_weight_job_size']} {how}")
        if config["priority_weight_fairshare"]:
            parts.append(f"fair-share weight {config['priority_weight_fairshare']} (usage half-life "
                         f"{format_duration(config['priority_decay_half_life'])})")
        text = "Slurm multifactor priority: " + ("; ".join(parts) if parts else "every weight 0 (submission order)")
    if config["scheduler_type"] == "sched/backfill":
        text += (f"; backfill every {format_duration(config['bf_interval'])} reserving for up to "
                 f"{config['bf_max_job_test']} jobs within {format_duration(config['bf_window'])}")
    else:
        text += "; no backfill (sched/builtin)"
    return text + "."


def cpu_notes(site_cpus: int, procs: int) -> list[str]:
    """A note when the slurm.conf's nodes hold another number of CPUs than the machine simulated."""
    if not site_cpus or site_cpus == procs:
        return []
    return [f"the slurm.conf's nodes have {site_cpus} CPUs, the machine simulated {procs} processors (give --procs, "
            "or --partition and --procs for one partition)"]


# --- what Slurm cannot say of an EASY configuration ------------------------------------------------------------


def not_expressible(options: Mapping[str, Any]) -> list[str]:
    """What slurm.conf cannot say of a (non-Slurm) configuration, one sentence per option it sets.

    Derived from the configuration's own options (those that differ from the table's defaults), so that
    a new option or family is named here as "no slurm.conf key" until a sentence says more.
    """
    config = SchedulerConfig.from_options(dict(options))
    if config["scheduler"] == "slurm":
        return []
    values = config.to_dict()
    values.pop("algorithm")
    changed = {name: value for name, value in values.items()
               if value != OPTIONS[name].shown(OPTIONS[name].default)}
    primary = config["policy"]
    out = []
    if config["scheduler"] == "pv-easy":
        out.append("PV-EASY kills and requeues running jobs of the shadow load: Slurm's backfill never preempts "
                   "for a reservation")
    if primary != "FCFS":
        out.append(f"the queue order {primary}: " + _ORDER_IN_SLURM.get(
            primary, "Slurm orders by its multifactor priority, which has no factor for it"))
    backfill = config["backfill_policy"]
    if backfill is not None and backfill != primary and config["backfill"]:
        out.append(f"a separate backfill order ({backfill}) is not expressible: Slurm backfills in priority order")
    if math.isfinite(config["threshold"]):
        out.append(f"a waiting-time threshold Theta ({format_duration(config['threshold'])}): approximated by "
                   "PriorityWeightAge/PriorityMaxAge (the age factor grows to 1 at PriorityMaxAge; no job jumps to "
                   "the head at a fixed wait)")
    if config["reservations"] != 1:
        out.append(f"{config['reservations']} reservations in queue order: Slurm reserves for up to "
                   "bf_max_job_test jobs in priority order within bf_window (the nearest: bf_max_job_test)")
    if not config["backfill"]:
        out.append("no backfilling: SchedulerType=sched/builtin")
    said = {"scheduler", "policy", "backfill_policy", "threshold", "reservations", "backfill", "seed",
            "reservation"}
    for name in changed:
        if name not in said:
            out.append(f"{name} = {changed[name]}: no slurm.conf key (bftune's own: "
                       f"{OPTIONS[name].help.split(';')[0]})")
    return out


#: What Slurm's priority can do of a queue order, where it can do something (docs/guides/slurm.md).
_ORDER_IN_SLURM = {
    "SQF": "approximated by PriorityWeightJobSize with PriorityFavorSmall=YES (fewest processors first)",
    "LQF": "approximated by PriorityWeightJobSize with PriorityFavorSmall=NO (most processors first)",
    "SAF": "approximated by PriorityWeightJobSize, PriorityFavorSmall=YES and "
           "PriorityFlags=SMALL_RELATIVE_TO_TIME (Slurm divides size by time limit, not multiplies)",
    "LCFS": "not expressible: Slurm's age factor only grows with the wait",
    "SPF": "not expressible: Slurm's priority has no factor of the time limit alone",
    "LPF": "not expressible: Slurm's priority has no factor of the time limit alone",
    "LEXP": "not expressible: Slurm's age factor is the wait alone, not the wait over the time limit",
    "SEXP": "not expressible: Slurm's age factor is the wait alone, not the wait over the time limit",
}



def shown(options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option that means something in the setting, as a user writes it (``14d``, not seconds)."""
    values = SchedulerConfig.from_options(dict(options)).to_dict()
    values.pop("algorithm")
    return {name: value for name, value in values.items() if name != "seed"}
