"""What the Slurm reader builds while it reads a dump: its options, one row per job record, the running tally.

Shared by the record reader (:mod:`bftune.workloads.slurm`) and the step that turns rows into a trace
(:mod:`bftune.workloads.sacct_jobs`), with the rules and changes both count under.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bftune.workloads.cleaning import CLEANING_KEYS

#: Records that are not jobs, in the order they are tested (module docstring).
SLURM_RULES: tuple[str, ...] = ("ambiguous_line", "other_cluster", "job_step", "heterogeneous_component",
                                "other_partition", "pending_at_dump", "never_started", "running_at_dump",
                                "requeued_attempt", "duplicate_job_id")
#: Jobs kept but changed by the reading (module docstring).
SLURM_CHANGES: tuple[str, ...] = ("time_limit_unlimited", "time_limit_partition", "ambiguous_local_time",
                                  "nonexistent_local_time", "runtime_capped_at_limit")
#: Every key of a Slurm trace's ``cleaning``: the Slurm rules, then the SWF cleaning's keys, then the changes
#: (``never_started`` is both a Slurm rule and the ``ran`` cleaning's: one key, the records of both).
SLURM_CLEANING_KEYS: tuple[str, ...] = tuple(dict.fromkeys(SLURM_RULES + CLEANING_KEYS + SLURM_CHANGES))
#: Seconds a job may run past its time limit and still be read as killed at it (module docstring).
DEFAULT_OVERRUN_GRACE = 300

#: Cluster and partition names remembered for error lines (a dump may hold millions of distinct values).
_LISTED = 1000


@dataclass(frozen=True)
class Options:
    """What the caller asked for (read_slurm's keywords, checked)."""

    procs: int | None
    lenient: bool
    partitions: frozenset[str] | None
    cores_per_node: int | None
    cluster: str | None
    overrun_grace: int
    sacct_format: str | None
    delimiter: str | None


@dataclass
class Row:
    """A job as read from one record, before duplicates are resolved and jobs numbered."""

    key: tuple[str, int, int]  # (cluster, job number, array index or -1)
    submit: int
    swf: list
    lineno: int
    state: str
    tres: tuple[str, ...]


@dataclass
class Tally:
    """What the records of a dump add up to while they are read."""

    counts: dict[str, int]
    names: tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int]] = \
        field(default_factory=lambda: ({}, {}, {}, {}))  # users, groups, QOS, partitions -> 1, 2, ...
    rows: list[Row] = field(default_factory=list)
    limits_seen: dict[int, int] = field(default_factory=dict)  # partition -> largest finite time limit
    no_limit: list[tuple[list, str]] = field(default_factory=list)
    others: set[tuple[str, int, int]] = field(default_factory=set)  # keys of records that are not jobs
    clusters: dict[str, None] = field(default_factory=dict)
    partitions: dict[str, None] = field(default_factory=dict)
    records: int = 0
    shifted_hour: int = 0
    max_nodes: int = 0

    def seen(self, table: dict[str, None], value: str) -> None:
        if len(table) < _LISTED:  # what an error line lists: a few names, never the whole dump
            table.setdefault(value, None)
