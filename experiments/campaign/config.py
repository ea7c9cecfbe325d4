"""Reading a campaign config: TOML in, a validated :class:`Campaign` with its list of runs out.

The common sections are checked here (``[campaign]``, ``[workload]``, which
sections may appear); each kind checks its own section and expands it into
runs (``kinds/<kind>.py``).  Every error is one line naming the file, the
section and the key (:class:`Section`).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from pathlib import Path

from bftune.support import inputs
from bftune.experiments.campaign.kinds import KINDS, get_kind
from bftune.experiments.campaign.limits import MAX_RUNS, MAX_SEED
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import Campaign, CampaignError
from bftune.experiments.campaign.workloads import (DUMP_KEYS, cleaning_key, resolve_archive, timezone_key,
                                                   workload_section)
from bftune.workloads.archive import Archive
from bftune.workloads.limits import MAX_SMALL_FILE_BYTES

WORKLOAD_KEYS = ("trace", "procs", "walltime_from_runtime", "lenient", "cleaning", "timezone", "holdout", *DUMP_KEYS)


def load_config(path: str | os.PathLike[str], archive: Archive | None = None) -> Campaign:
    """Read and validate a campaign TOML file into its list of runs (``archive``: where ``archive:NAME`` traces
    are; None: the data-directory setting, :mod:`bftune.workloads.archive`)."""
    path = Path(path)
    if not os.path.lexists(path):
        raise CampaignError(f"{path}: no such campaign config")
    try:  # a regular file of at most 1 MiB (not /dev/zero, a FIFO...): bftune.support.inputs
        text = inputs.read_small_text(path, MAX_SMALL_FILE_BYTES, "a campaign config")
    except inputs.InputError as exc:
        raise CampaignError(f"{exc}; give a TOML file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{path}: not valid TOML: {exc}") from None
    return campaign_from_dict(data, str(path), text, archive)


def campaign_from_dict(data: dict, source: str = "<config>", text: str = "", archive: Archive | None = None) -> Campaign:
    """Validate a parsed config (``tomllib`` output) and expand it into runs.

    ``archive:NAME`` traces (``[workload] trace``, ``[KIND] traces``) become their paths in ``archive`` first
    (present, or downloaded now: a missing one fails here, before any run).
    """
    top = Section(source, "top level", data, ("campaign", "workload", *KINDS))
    if "campaign" not in data:
        raise CampaignError(f"{source}: [campaign]: required section is missing")
    camp = Section(source, "campaign", data["campaign"], ("kind", "name", "seed", "tau"))
    kind = get_kind(camp.string("kind", choices=tuple(KINDS)))
    if kind.single_trace and "workload" not in data:
        raise CampaignError(f"{source}: [workload]: required section is missing")
    name = camp.string("name", Path(source).stem if source != "<config>" else "campaign")
    seed = camp.integer("seed", 0, minimum=0, maximum=MAX_SEED, why="seeds are 32-bit")
    tau = camp.seconds("tau", kind.default_tau)
    for other in KINDS:
        if other != kind.name and other in data:
            raise top.error(other, f"section given but [campaign] kind is {kind.name!r}")
    wl = Section(source, "workload", data.get("workload", {}), WORKLOAD_KEYS)
    section = Section(source, kind.name, data.get(kind.name, {}), kind.keys)
    resolve_archive(section, "traces", resolve_archive(wl, "trace", archive))
    if kind.single_trace:
        workload = workload_section(wl)
    else:
        for key in ("trace", "procs", "holdout", *DUMP_KEYS):
            if key in wl.data:
                raise wl.error(key, f"not with kind = \"{kind.name}\": list the traces in [{kind.name}] "
                                    "traces (each runs on its header's machine size)")
        # cleaning None = not given: the kind decides (a classification preset may set it)
        workload = {"walltime_from_runtime": wl.boolean("walltime_from_runtime", False),
                    "lenient": wl.boolean("lenient", False), "cleaning": cleaning_key(wl, None),
                    **({"timezone": timezone_key(wl)} if "timezone" in wl.data else {})}
    plan = kind.expand(section, workload, seed, tau)
    if workload.get("timezone") is not None:  # a Slurm dump's zone: every run reads the trace in it
        plan.specs = [dataclasses.replace(s, timezone=workload["timezone"], run_id="") for s in plan.specs]
    if workload.get("holdout"):  # likewise, the part a tune left out of its search
        plan.specs = [dataclasses.replace(s, holdout=workload["holdout"], run_id="") for s in plan.specs]
    if workload.get("dump"):  # likewise, a Slurm dump's reading options
        plan.specs = [dataclasses.replace(s, dump=dict(workload["dump"]), run_id="") for s in plan.specs]
    if len(plan.specs) > MAX_RUNS:
        raise CampaignError(f"{source}: [{kind.name}]: {len(plan.specs):,} runs: at most {MAX_RUNS:,} in one "
                            "campaign (split it into several)")
    ids = [s.run_id for s in plan.specs]
    if len(set(ids)) != len(ids):  # cannot happen with validated lists; guard anyway
        raise CampaignError(f"{source}: two runs of the campaign are identical")
    return Campaign(name=name, kind=kind.name, seed=seed, tau=tau, source=source, config_text=text,
                    workload=plan.workload, settings=plan.settings, specs=plan.specs)
