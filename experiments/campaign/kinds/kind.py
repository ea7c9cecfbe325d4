"""What a campaign kind declares: its config section, how it expands into runs, how a run runs, its tables.

The rest of the campaign machinery (config loading, executors, the store,
the tables, the report's frame) is the same for every kind and reads only
these fields; see the package docstring of ``bftune.experiments.campaign``
for how to add a kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import RunSpec


@dataclass(frozen=True)
class TableSpec:
    """One per-run table beyond ``runs.csv``: ``<name>.csv``, built from the run record's ``field`` list.

    Each row is ``{"run_id": ..., <the labels in key>..., <the row's own fields>...}``; ``columns``
    fixes the order (and the header of an empty table); ``integers`` are nullable integer columns.
    """

    name: str
    field: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    integers: tuple[str, ...] = ()


@dataclass
class Expansion:
    """What a kind makes of its config: normalised settings (``campaign.json``), the runs, the workload."""

    settings: dict
    specs: list[RunSpec]
    workload: dict


#: ``expand(section, workload, seed, tau)``: the kind's ``[kind]`` section (a :class:`Section`), the
#: ``[workload]`` settings (see ``single_trace``), the campaign seed and tau.
Expand = Callable[[Section, dict, int, float], Expansion]
#: ``run(spec[, shared replays])``: the payload of one run's record: ``{"summary": {...}, <table field>: [rows], ...}``.
Run = Callable[..., dict]
#: ``report(out_dir, meta, lines)``: append the kind's report sections (markdown lines), write its plots
#: and summary files.
Report = Callable[[Path, dict, list[str]], None]


@dataclass(frozen=True)
class CampaignKind:
    """One kind of campaign (``[campaign] kind = "<name>"``)."""

    name: str
    help: str
    keys: tuple[str, ...]  # the keys of its ``[<name>]`` section
    expand: Expand
    run: Run
    labels: tuple[str, ...]  # the label columns of runs.csv (RunSpec.labels keys), in order
    run_columns: Callable[[dict], dict]  # more runs.csv columns from a spec dict (before the summary's)
    tables: tuple[TableSpec, ...] = ()
    report: Report | None = None
    report_files: tuple[str, ...] = ()  # the summary files its report writes (listed in report.md)
    #: True: one trace in ``[workload] trace`` (+ procs); False: the kind lists its traces itself and
    #: ``[workload]`` may only hold walltime_from_runtime, lenient and cleaning.
    single_trace: bool = True
    default_tau: float = 10.0
    #: The group of runs whose period replays are the same (None: the run replays nothing); a kind that
    #: sets it takes ``run(spec, replays)``, ``replays`` the group's table so far, and returns the table,
    #: grown, under ``SHARED_REPLAYS`` (the coordinator takes it out before storing the run).
    replay_group: Callable[[RunSpec], tuple | None] | None = None


#: Where a run's period-replay table travels, in the item handed to a worker and in the record it returns.
SHARED_REPLAYS = "shared_replays"


def resampled_columns(spec: dict) -> dict:
    """runs.csv columns of a run on a resampled trace."""
    return {"trace": spec["trace"], "weeks": spec["weeks"], "resample_seed": spec["resample_seed"]}


def whole_trace_columns(spec: dict) -> dict:
    """runs.csv columns of a run on a whole trace (its source and the seed of its randomness)."""
    return {"source": spec["trace"], "seed": spec["resample_seed"]}
