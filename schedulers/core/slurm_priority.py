"""Slurm's multifactor job priority, as priority/multifactor of Slurm 22.05 computes it.

The rules, their sources and what is simplified: docs/semantics/scheduling.md#slurm.  In short:

- ``priority = int(sum of weight * factor)``, at least 1, at most 2^32 - 1 (``_get_priority_internal``);
- age ``min(wait, PriorityMaxAge) / PriorityMaxAge``, the wait counted from submission (``set_priority_factors``);
- job size with one processor per node: ``q / m`` (favouring large jobs), ``(m - q) / m`` with
  PriorityFavorSmall, ``q / minutes / m`` (or 1 minus it) with SMALL_RELATIVE_TO_TIME;
- fair-share from each user's processor-seconds, decayed at every PriorityCalcPeriod tick by
  ``(1 - 0.693 / half-life) ** seconds`` (``_decay_thread``); Fair Tree ranks the users (``_calc_tree_fs``),
  classic (NO_FAIR_TREE) gives ``2 ** (-usage_efctv / shares_norm)`` (``priority_p_calc_fs_factor``);
- partition factor 1 (one partition), QOS factor 0 (no QOS priority).

Priorities are recomputed at the ticks only (times that are multiples of PriorityCalcPeriod), and a job's
first priority is computed at its submission; between ticks it does not change, as in Slurm.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import Iterable

from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.jobs import Job

#: PriorityType values: multifactor (weights) or basic (FIFO: submit order).
PRIORITY_TYPES = ("priority/multifactor", "priority/basic")
#: PriorityFlags bftune accepts: the two it models, then two that change nothing here.
PRIORITY_FLAGS = ("SMALL_RELATIVE_TO_TIME", "NO_FAIR_TREE", "ACCRUE_ALWAYS", "CALCULATE_RUNNING")
#: Slurm's other PriorityFlags, and why bftune refuses them.
REFUSED_FLAGS = {
    "DEPTH_OBLIVIOUS": "is not modelled (classic fair-share with the depth-oblivious formula)",
    "INCR_ONLY": "is not modelled (priorities that only grow)",
    "MAX_TRES": "is not modelled (bftune schedules processors only)",
    "NO_NORMAL_ALL": "is not modelled (factors are normalised as Slurm's default)",
    "NO_NORMAL_ASSOC": "is not modelled (factors are normalised as Slurm's default)",
    "NO_NORMAL_PART": "is not modelled (factors are normalised as Slurm's default)",
    "NO_NORMAL_QOS": "is not modelled (factors are normalised as Slurm's default)",
    "NO_NORMAL_TRES": "is not modelled (factors are normalised as Slurm's default)",
}
#: The largest priority (a 32-bit unsigned integer in Slurm).
MAX_PRIORITY = 2**32 - 1


@dataclass(frozen=True)
class PrioritySettings:
    """The priority keys of slurm.conf, durations in seconds.

    No defaults: slurm.conf's are the option table's (``priority_*`` and ``node_cpus`` in
    ``bftune.schedulers.options``), and ``SchedulerConfig`` gives every field.
    """

    basic: bool
    weight_age: int
    weight_job_size: int
    weight_fairshare: int
    weight_partition: int
    weight_qos: int
    max_age: float
    favor_small: bool
    small_relative_to_time: bool
    fair_tree: bool
    decay_half_life: float
    calc_period: float
    node_cpus: int

    @property
    def constant(self) -> bool:
        """Whether every job gets the same priority (basic, or every weight 0): the order is submission order."""
        return self.basic or not (self.weight_age or self.weight_job_size or self.weight_fairshare)

    @property
    def changes_at_ticks(self) -> bool:
        """Whether a tick changes waiting jobs' priorities (age or fair-share weighted)."""
        return not self.basic and bool(self.weight_age or self.weight_fairshare)

    def describe(self) -> str:
        if self.basic:
            return "basic"
        parts = [f"{name}={weight}" for name, weight in (
            ("age", self.weight_age), ("size", self.weight_job_size), ("fs", self.weight_fairshare),
            ("part", self.weight_partition), ("qos", self.weight_qos)) if weight]
        if self.weight_age:
            parts.append(f"maxage={_short(self.max_age)}")
        if self.weight_job_size:
            parts.append("small" if self.favor_small else "large")
            if self.small_relative_to_time:
                parts.append("per-time")
            if self.node_cpus != 1:
                parts.append(f"nodes of {self.node_cpus}")
        if self.weight_fairshare:
            parts.append("fairtree" if self.fair_tree else "classic")
            parts.append(f"halflife={_short(self.decay_half_life)}")
        return ",".join(parts) if parts else "fifo"


def _short(seconds: float) -> str:
    return format_duration(seconds)


# --- the factors ------------------------------------------------------------------------------------


def age_factor(wait: float, max_age: float) -> float:
    """``min(wait, max_age) / max_age`` on whole seconds (Slurm's times are integers); 1 when max_age is 0."""
    diff = int(wait) if wait > 0 else 0
    if diff < max_age:
        return diff / max_age
    return 1.0


def time_limit_minutes(walltime: float) -> int:
    """A walltime as Slurm's time limit: whole minutes, rounded up, at least 1."""
    return max(1, math.ceil(walltime / 60))


def job_size_factor(procs: int, m: int, walltime: float, favor_small: bool, relative: bool,
                    node_cpus: int = 1) -> float:
    """The job size factor (``set_priority_factors``, same operations) on nodes of ``node_cpus`` processors.

    The machine has ceil(m / node_cpus) nodes; a job asks for the fewest nodes that hold it,
    ceil(q / node_cpus) (with one processor per node, the default, both terms are q / m).
    """
    nodes = float(-(-m // node_cpus))
    min_nodes = float(-(-procs // node_cpus))
    cpus = float(m)
    if relative:
        js = max(min_nodes * cpus / nodes, float(procs))
        js /= time_limit_minutes(walltime)
        js /= cpus
        if favor_small:
            js = 1.0 - js
    elif favor_small:
        js = (nodes - min_nodes) / nodes
        js += (cpus - procs) / cpus
        js /= 2
    else:
        js = min_nodes / nodes
        js += procs / cpus
        js /= 2
    return min(1.0, max(0.0, js))


def classic_fs_factor(usage: float, root_usage: float, users: int) -> float:
    """Classic fair-share of a user among ``users`` equal shares under one account.

    usage_norm = usage / root usage; usage_efctv = norm + (1 - norm) / users (the account's effective
    usage is 1: it holds all usage); factor = 2 ** (-usage_efctv / (1 / users)).
    """
    norm = usage / root_usage if root_usage else 0.0
    if norm > 1.0:
        norm = 1.0
    efctv = norm + (1.0 - norm) * (1 / users)
    return 2.0 ** (-(efctv / (1 / users)))


def job_priority(settings: PrioritySettings, age: float, fairshare: float, size: float) -> int:
    """The integer priority of weighted factors, summed in Slurm's order and truncated."""
    s = settings
    priority = (age * s.weight_age + 0.0 + fairshare * s.weight_fairshare + size * s.weight_job_size
                + 1.0 * s.weight_partition + 0.0 * s.weight_qos)
    if priority < 1:
        priority = 1.0
    return min(int(priority), MAX_PRIORITY)


# --- fair-share usage --------------------------------------------------------------------------------


class FairShare:
    """Each user's decayed processor-seconds and the fair-share factors they give, tick by tick.

    Usage is kept scaled (true usage = stored * scale), so a tick's decay is one multiplication of the
    scale, not one per user; Fair Tree's ranks and classic's ratios depend on ratios of usage only.
    Factors are read from the snapshot of the last tick (:meth:`snapshot`), as Slurm reads the
    association's factor of its last decay-thread run; a user is added at its first submission, with no
    usage, to both.
    """

    def __init__(self, settings: PrioritySettings) -> None:
        self.fair_tree = settings.fair_tree
        hl = settings.decay_half_life
        self.decay_factor = 1 - 0.693 / hl if hl > 0 else 1.0
        self.stored: dict[int, float] = {}
        self.root = 0.0  # stored usage of the root (every user's)
        self.scale = 1.0
        self._snap: dict[int, float] = {}
        self._snap_sorted: list[float] = []  # the snapshot's usages, ascending (Fair Tree ranks)
        self._snap_root = 0.0

    @property
    def users(self) -> int:
        return len(self.stored)

    def add_user(self, user: int) -> None:
        if user not in self.stored:
            self.stored[user] = 0.0
            self._snap[user] = 0.0
            insort(self._snap_sorted, 0.0)

    def usage(self, user: int) -> float:
        """The user's decayed processor-seconds."""
        return self.stored.get(user, 0.0) * self.scale

    def decay(self, seconds: float) -> None:
        """Every usage multiplied by ``decay_factor ** seconds`` (``_apply_decay``)."""
        if seconds <= 0 or self.decay_factor == 1.0:
            return
        self.scale *= max(self.decay_factor ** seconds, 5e-324)
        if self.scale < 1e-200:
            self.stored = {u: v * self.scale for u, v in self.stored.items()}
            self.root *= self.scale
            self.scale = 1.0

    def charge(self, user: int, procs: int, seconds: float) -> None:
        """``procs`` processors over ``seconds``, decayed within the slice (``_apply_new_usage``)."""
        if seconds <= 0:
            return
        amount = seconds * self.decay_factor ** seconds * procs / self.scale
        self.stored[user] += amount
        self.root += amount

    def snapshot(self) -> None:
        """The usage the factors read until the next tick."""
        self._snap = dict(self.stored)
        self._snap_sorted = sorted(self._snap.values())
        self._snap_root = self.root

    def factor(self, user: int) -> float:
        """The user's fair-share factor (Fair Tree: rank / users; classic: 2 ** -(usage_efctv / shares))."""
        n = len(self._snap)
        if self.fair_tree:
            # Users sorted by level_fs = S / U with S equal: by usage ascending; a tie shares the best rank.
            return (n - bisect_left(self._snap_sorted, self._snap[user])) / n
        return classic_fs_factor(self._snap[user], self._snap_root, n)


def ticks_between(after: float, until: float, period: float) -> Iterable[float]:
    """The tick times t (multiples of ``period``) with after < t <= until."""
    k = math.floor(after / period) + 1
    while k * period <= until:
        yield k * period
        k += 1


def fresh_priority(settings: PrioritySettings, fairshare: FairShare | None, job: Job, m: int, now: float) -> int:
    """``job``'s priority at ``now`` from the current factors."""
    s = settings
    age = age_factor(now - job.submit, s.max_age) if s.weight_age else 0.0
    fs = fairshare.factor(job.user) if fairshare is not None and s.weight_fairshare else 0.0
    size = (job_size_factor(job.procs, m, job.walltime, s.favor_small, s.small_relative_to_time, s.node_cpus)
            if s.weight_job_size else 0.0)
    return job_priority(s, age, fs, size)
