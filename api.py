"""bftune from Python: read a workload, simulate it, compare both backends, run campaigns.

Everything the command line does, with the same options, checks and outputs,
for notebooks and scripts::

    >>> import bftune
    >>> trace = bftune.synthetic(2000, procs=128, seed=3)
    >>> result = bftune.simulate(trace, policy="SAF", threshold="40h")
    >>> result.summary["jobs"], result.summary["config"]["algorithm"]
    (2000, 'EASY(SAF+threshold(40h))')
    >>> list(result.jobs.columns[:4])
    ['job_id', 'workload_name', 'profile', 'submission_time']
    >>> bftune.simulate(trace, policy="SAF", threshold="4x")
    Traceback (most recent call last):
    ...
    bftune.schedulers.option.ConfigError: threshold: cannot read '4x': unknown unit 'x'; ...

Options are the option table's (``bftune options``; :data:`OPTIONS`): the
names ``-o`` and campaign files use, with what a user writes as values
(``"40h"``, ``"SAF"``), and a bad one raises :class:`ConfigError` with the
command line's one-line message.  Workloads are :class:`Trace` objects
(:func:`read_workload`, :func:`synthetic`) or paths, read as
``bftune simulate --trace`` reads them.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bftune.experiments.runs.batsim import compare_backends
from bftune.experiments.campaign.config import campaign_from_dict, load_config
from bftune.experiments.campaign.runner import run_campaign as _run_campaign
from bftune.experiments.runs.tables import read_out_jobs
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import check_tau
from bftune.experiments.runs.outjobs import all_columns, write_out_jobs
from bftune.experiments.runs.summary import write_summary
from bftune.support.files import result_dir
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.policies import REGISTRY, formula_of
from bftune.schedulers.drivers.local.simulator import RunLog
from bftune.schedulers.option import ConfigError
from bftune.schedulers.options import OPTIONS
from bftune.workloads.archive import data_dir
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.read import read_workload
from bftune.workloads.synthetic import generate

__all__ = ["CampaignRun", "Comparison", "ConfigError", "OPTIONS", "Result", "SchedulerConfig", "Trace",
           "WorkloadError", "compare", "policies", "read_workload", "run_campaign", "simulate", "synthetic"]

Workload = Trace | str | os.PathLike


def synthetic(jobs: int, procs: int = 256, seed: int = 1) -> Trace:
    """``jobs`` jobs of the embedded synthetic model (Lublin-Feitelson) on ``procs`` processors, as
    ``bftune simulate --synthetic N --procs M --seed S`` generates them."""
    return generate(jobs, procs, seed)


def _trace(workload: Workload) -> Trace:
    if isinstance(workload, Trace):
        return workload
    if not isinstance(workload, (str, os.PathLike)):
        raise WorkloadError(f"a workload is a Trace or the path of a workload file, not {type(workload).__name__}")
    return read_workload(workload)


@dataclass
class Result:
    """One simulation: its jobs, its summary, and the log of a selector's periods.

    ``jobs``: one row per run, the columns of out_jobs.csv (Batsim's); ``summary``: the fields of
    summary.json; ``periods``: a selector's choice and observation per period (None without a selector).
    """

    jobs: pd.DataFrame
    summary: dict
    periods: pd.DataFrame | None
    config: SchedulerConfig
    _runs: RunLog = field(repr=False)

    def write(self, directory: str | os.PathLike) -> Path:
        """Write out_jobs.csv and summary.json into ``directory`` as ``bftune simulate --out`` does."""
        with result_dir(directory, replaces=("out_jobs.csv", "summary.json")) as stage:
            write_out_jobs(self._runs, stage / "out_jobs.csv")
            write_summary(self.summary, stage)
        return Path(directory)


def simulate(workload: Workload, *, tau: float = 10.0, **options: Any) -> Result:
    """Simulate ``workload`` in the local simulator under the scheduler ``options`` describe.

    ``tau``: the bounded slowdown's threshold (seconds).  Options: the option table's names
    (``policy="SAF"``, ``threshold="40h"``, ``classifier="rf"``...).
    """
    config = SchedulerConfig.from_options(options)
    tau = check_tau(tau)
    trace = _trace(workload)
    summary, result = run_local(trace, config, tau=tau)
    periods = summary.get("periods")
    return Result(jobs=pd.DataFrame(all_columns(result.runs)), summary=summary,
                  periods=pd.DataFrame(periods) if periods else None, config=config, _runs=result.runs)


@dataclass
class Comparison:
    """Both backends on one configuration: whether they agree job by job, the report, both jobs tables."""

    agree: bool
    report: dict
    local: pd.DataFrame
    batsim: pd.DataFrame
    directory: Path


def compare(workload: Workload, *, out: str | os.PathLike | None = None, batsim: str | None = None,
            tau: float = 10.0, timeout: float = 120.0, **options: Any) -> Comparison:
    """Run ``workload`` in the local simulator and inside real Batsim, and compare every job (``bftune compare``).

    ``out``: where both runs are kept (local/, batsim/, compare.json; default: a temporary folder,
    removed afterwards); ``batsim``: the Batsim executable (default: ``batsim`` on PATH).
    """
    config = SchedulerConfig.from_options(options)
    tau = check_tau(tau)
    trace = _trace(workload)
    with tempfile.TemporaryDirectory(prefix="bftune-compare-") as tmp:
        directory = Path(out) if out is not None else Path(tmp) / "compare"
        report = compare_backends(trace, config, directory, batsim=batsim, tau=tau, timeout=timeout)
        local = read_out_jobs(directory / "local" / "out_jobs.csv")
        other = read_out_jobs(directory / "batsim" / "out_jobs.csv")
    return Comparison(agree=report["mismatches"] == 0, report=report, local=local, batsim=other, directory=directory)


@dataclass
class CampaignRun:
    """A campaign's outcome: its directory, its tables (by name, as the CSV files hold them), its failures."""

    directory: Path
    tables: dict[str, pd.DataFrame]
    runs: int
    failures: list[dict]

    @property
    def ok(self) -> bool:
        return not self.failures


def run_campaign(config: str | os.PathLike | dict, out: str | os.PathLike, *, workers: int | None = None,
                 dask: str | None = None, data: str | os.PathLike | None = None,
                 progress: bool = False) -> CampaignRun:
    """Run a campaign (``bftune campaign CONFIG --out DIR``): stored runs are reused, the tables rewritten.

    ``config``: a campaign TOML file, or the same content as a dict; ``data``: the directory of archive
    traces (``--data``; default ``BFTUNE_DATA``, else the user data directory).
    """
    archive = data_dir(data) if data is not None else None
    if isinstance(config, dict):
        campaign = campaign_from_dict(config, archive=archive)
    else:
        campaign = load_config(config, archive=archive)
    outcome = _run_campaign(campaign, out, workers=workers, dask=dask, progress=progress)
    directory = Path(out)
    tables = {path.stem: pd.read_csv(path) for path in sorted(directory.glob("*.csv"))}
    return CampaignRun(directory=directory, tables=tables, runs=outcome.total, failures=outcome.failures)


def policies() -> dict[str, str]:
    """Every queue policy by name, with its formula (``bftune policies``)."""
    return {name: formula_of(policy) for name, policy in REGISTRY.items()}
