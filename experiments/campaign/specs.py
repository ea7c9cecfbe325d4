"""What a campaign is made of: :class:`Campaign` (the validated config) and its :class:`RunSpec` list.

A run spec is plain data (JSON-able, picklable): the coordinator ships it to
a worker as a dict, the worker runs it, the store keeps it beside the result.
``run_id`` hashes everything that decides the run's results, so a re-run of
the same config finds the runs already stored.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from bftune.experiments.campaign.paths import trace_key
from bftune.workloads.cleaning import CLEANING_ALIASES, CLEANINGS

#: Version of the run files and of the run identity; bump it when a run's meaning changes.
RESULT_FORMAT = 1


class CampaignError(ValueError):
    """A bad campaign config or output directory; the message names the file and the key.

    Parameters
    ----------
    message : str
        The line a user reads (``online.toml: [online] period: ...``).

    Examples
    --------
    >>> from bftune.experiments.campaign.config import campaign_from_dict
    >>> campaign_from_dict({"campaign": {"kind": "nope", "name": "x"}})
    Traceback (most recent call last):
    ...
    bftune.experiments.campaign.specs.CampaignError: ...kind...
    """

    def __init__(self, message: str) -> None:  # one message, as the docs say (and type checkers see)
        super().__init__(message)


def derive_seed(seed: int, *parts: Any) -> int:
    """A 32-bit seed from the campaign seed and a path of labels (documented, reproducible).

    ``derive_seed(seed, *parts)`` = the first 8 hex digits of
    sha256(json([seed, *parts])): online resample i uses
    ``derive_seed(seed, "online", i)``, offline half h ``derive_seed(seed, "offline", h)``.
    """
    text = json.dumps([seed, *parts], separators=(",", ":"))
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


@dataclass
class RunSpec:
    """One independent simulation job of a campaign.

    ``trace`` is the source as written in the config (part of the run id, as
    :func:`~bftune.experiments.campaign.paths.trace_key` normalises it);
    ``trace_path`` is where workers read it (None for ``synthetic:``).
    ``options`` is a :meth:`SchedulerConfig.from_options` dict; ``labels``
    describe the run for the tables (strategy, pair, resample...).  ``weeks``
    = 0 means the whole trace, not resampled.
    """

    kind: str
    trace: str
    split: str | None
    weeks: int
    resample_seed: int
    options: dict
    tau: float = 10.0
    labels: dict = field(default_factory=dict)
    trace_path: str | None = None
    procs: int | None = None
    walltime_from_runtime: bool = False
    lenient: bool = False
    cleaning: str = "drop-overruns"  # which SWF records become jobs (bftune.workloads.cleaning.CLEANINGS)
    timezone: str | None = None  # the zone of a Slurm dump's local times ([workload] timezone)
    #: A Slurm dump's reading options ([workload] sacct_format, partition, ...: read_workload's keywords).
    dump: dict = field(default_factory=dict)
    #: The last share of the trace's submission span left out of it (tune's validation period; 0: none).
    holdout: float = 0.0
    #: What the run stores beyond its summary and its kind's tables (e.g. "job_table": one row per job,
    #: :mod:`bftune.experiments.campaign.kinds.jobtables`); part of the identity when not empty.
    outputs: list[str] = field(default_factory=list)
    run_id: str = ""

    def __post_init__(self) -> None:
        if not self.run_id:
            self.run_id = self.compute_id()

    def identity(self) -> dict:
        """Everything that determines the run's results (labels and the resolved path excluded)."""
        identity = {"format": RESULT_FORMAT, "kind": self.kind, "trace": trace_key(self.trace), "procs": self.procs,
                    "walltime_from_runtime": self.walltime_from_runtime, "lenient": self.lenient,
                    "split": self.split, "weeks": self.weeks, "resample_seed": self.resample_seed,
                    "options": self.options, "tau": self.tau}
        # the default cleaning is left out, under either name: run ids stored before the key existed, or while
        # the default was called "spec", hold (docs/semantics/workloads.md#other-job-sets-cleaning)
        cleaning = CLEANING_ALIASES.get(self.cleaning, self.cleaning)
        if cleaning != CLEANINGS[0]:
            identity["cleaning"] = cleaning
        if self.timezone is not None:  # likewise: only Slurm dumps have one
            identity["timezone"] = self.timezone
        if self.holdout:  # likewise
            identity["holdout"] = self.holdout
        if self.dump:  # likewise
            identity["dump"] = {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in sorted(self.dump.items())}
        if self.outputs:  # absent when none (as cleaning): a run that stores more is another run
            identity["outputs"] = sorted(self.outputs)
        return identity

    def compute_id(self) -> str:
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RunSpec:
        return cls(**d)

    def describe(self) -> str:
        """One line naming the run: labels, trace, seed and options (for failure lists)."""
        lab = ", ".join(f"{k}={v}" for k, v in self.labels.items() if k != "baseline")
        if self.weeks == 0:
            where = f"whole trace, seed {self.resample_seed}"
        else:
            where = f"split {self.split}, {self.weeks} weeks, resample seed {self.resample_seed}"
        return f"{self.kind} run {self.run_id} ({lab}; trace {self.trace}, {where}; options {json.dumps(self.options)})"


@dataclass
class Campaign:
    """A validated config: its settings (normalised) and every run it expands into."""

    name: str
    kind: str
    seed: int
    tau: float
    source: str  # config file, or a description
    config_text: str
    workload: dict
    settings: dict
    specs: list[RunSpec]

    def meta(self) -> dict:
        """The content of ``campaign.json``."""
        return {"format": RESULT_FORMAT, "name": self.name, "kind": self.kind, "seed": self.seed, "tau": self.tau,
                "source": self.source, "config_text": self.config_text, "workload": self.workload,
                "settings": self.settings, "specs": [s.to_dict() for s in self.specs]}
