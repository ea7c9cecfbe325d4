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
command line's one-line message, naming options as the caller wrote them
(``epsilon needs selector``, where the command line says ``--epsilon needs
--selector``).  Workloads are :class:`Trace` objects (:func:`read_workload`,
:func:`synthetic`, :meth:`Trace.from_dataframe`) or paths, read as
``bftune simulate --trace`` reads them.

The jobs tables the API returns are out_jobs.csv's columns with the job id as
an integer (the file keeps Batsim's zero-padded names, ``0000015#1`` for a
rerun), followed by the run's ``attempt`` (0, then 1, 2... for the reruns of
a killed and requeued job) and the job's ``user``, ``group`` and
``partition`` from the trace (-1 where the trace does not say).
"""

from __future__ import annotations

import os
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from bftune.experiments.runs.batsim import compare_backends
from bftune.experiments.campaign.config import campaign_from_dict, load_config
from bftune.experiments.campaign.runner import run_campaign as _run_campaign
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.runs.tables import read_out_jobs
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import check_tau
from bftune.experiments.runs.outjobs import all_columns, write_out_jobs
from bftune.experiments.runs.summary import write_summary
from bftune.support.files import result_dir
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.policies import REGISTRY, formula_of
from bftune.schedulers.drivers.local.simulator import RunLog
from bftune.schedulers.option import ConfigError, Option
from bftune.schedulers.options import OPTIONS
from bftune.workloads.archive import data_dir
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.read import read_workload
from bftune.workloads.synthetic import generate


if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CampaignError", "CampaignRun", "Comparison", "ConfigError", "OPTIONS", "Result", "SchedulerConfig",
           "Trace", "WorkloadError", "compare", "policies", "read_workload", "run_campaign", "simulate", "synthetic"]

#: What the functions take as a workload: a trace, or the path of a workload file (read by :func:`read_workload`).
Workload = Trace | str | os.PathLike[str]

#: The columns the API's jobs tables add after out_jobs.csv's: the run's attempt, then the job's trace fields.
EXTRA_COLUMNS = ("attempt", "user", "group", "partition")


def synthetic(jobs: int, procs: int = 256, seed: int = 1) -> Trace:
    """Generate a workload of the embedded synthetic model (Lublin and Feitelson's, 2003).

    The same trace as ``bftune simulate --synthetic N --procs M --seed S`` generates: the seed's
    default, 1, is the command line's and the option table's (one default everywhere).

    Parameters
    ----------
    jobs : int
        How many jobs.
    procs : int, default 256
        The machine size m (processors).
    seed : int, default 1
        The generator's seed, 0 to 2**32 - 1: the same arguments always give the same trace.

    Returns
    -------
    Trace
        The jobs, sorted by submission time, on a ``procs``-processor machine.

    Raises
    ------
    WorkloadError
        A count, a machine size or a seed out of range.

    Examples
    --------
    >>> trace = synthetic(500, procs=64)
    >>> len(trace), trace.max_procs
    (500, 64)
    """
    return generate(jobs, procs, seed)


def _trace(workload: Workload) -> Trace:
    if isinstance(workload, Trace):
        return workload
    if not isinstance(workload, (str, os.PathLike)):
        raise WorkloadError(f"a workload is a Trace or the path of a workload file, not {type(workload).__name__}")
    return read_workload(workload)


def jobs_frame(table: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    """An out_jobs.csv table as the API returns it: integer job ids, then :data:`EXTRA_COLUMNS`.

    Batsim names a job by its zero-padded id and a rerun ``ID#N``; in Python an integer id joins the
    trace (and anything else keyed by it) directly, and ``attempt`` keeps the rerun apart.
    """
    names = table["job_id"].astype(str).str.partition("#")
    out = table.copy()
    out["job_id"] = names[0].astype("int64")
    out["attempt"] = names[2].replace("", "0").astype("int64")
    ids = [job.id for job in trace.jobs]
    for column in EXTRA_COLUMNS[1:]:
        by_id = pd.Series([getattr(job, column) for job in trace.jobs], index=ids, dtype="int64")
        out[column] = out["job_id"].map(by_id).fillna(-1).astype("int64")
    return out


@dataclass
class Result:
    """One simulation (:func:`simulate`): its jobs, its summary, and the log of a selector's periods.

    Attributes
    ----------
    jobs : pandas.DataFrame
        One row per run, in out_jobs.csv's order: its 17 columns (Batsim's; ``job_id`` as an integer),
        then ``attempt`` (0, then 1, 2... for the reruns of a killed job), ``user``, ``group`` and
        ``partition`` (the trace's, -1 when unknown).
    summary : dict
        The fields of summary.json (the reference's Outputs page): ``jobs``, ``avg_wait``, ``avg_bsld``,
        ``utilization``, ``config``...
    periods : pandas.DataFrame or None
        A selector's choice and observation per period; None without a selector.
    config : SchedulerConfig
        The configuration simulated, every option's value.

    Examples
    --------
    >>> result = simulate(synthetic(300, procs=32), policy="SPF")
    >>> result.summary["jobs"] == len(result.jobs), result.periods is None
    (True, True)
    >>> result.jobs[["job_id", "attempt", "user"]].dtypes.tolist()
    [dtype('int64'), dtype('int64'), dtype('int64')]
    """

    jobs: pd.DataFrame
    summary: dict[str, Any]
    periods: pd.DataFrame | None
    config: SchedulerConfig
    _runs: RunLog = field(repr=False)

    def plot_gantt(self, **options: Any) -> Axes:
        """A Gantt chart of a window of the schedule (``bftune plot --kind gantt``), coloured by user.

        Options: ``start``, ``end`` (durations from the first submission, default the first week),
        ``colour_by`` ("user", "job", "state", "size"), ``ax`` (a matplotlib Axes to draw in).  The
        notebook's own matplotlib backend is kept.  See :func:`bftune.experiments.runs.plots.gantt`.
        """
        from bftune.experiments.runs.plots import gantt

        return gantt(self.jobs, self.summary["m"], **options)

    def plot_queue(self, **options: Any) -> tuple[Axes, Axes]:
        """Queue length and utilisation over time (``bftune plot --kind queue``); options as :meth:`plot_gantt`'s
        window."""
        from bftune.experiments.runs.plots import queue_and_utilisation

        return queue_and_utilisation(self.jobs, self.summary["m"], **options)

    def plot_waits(self, **options: Any) -> Axes:
        """The distribution of waits (``bftune plot --kind waits``)."""
        from bftune.experiments.runs.plots import wait_distribution

        return wait_distribution(self.jobs, **options)

    def write(self, directory: str | os.PathLike[str]) -> Path:
        """Write out_jobs.csv and summary.json into ``directory``, as ``bftune simulate --out`` does.

        The files are the command line's, byte for byte (out_jobs.csv keeps Batsim's job names).

        Parameters
        ----------
        directory : str or os.PathLike
            The result directory; made if missing, its two files replaced together.

        Returns
        -------
        pathlib.Path
            ``directory``.

        Raises
        ------
        OSError
            The directory cannot be written.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     written = simulate(synthetic(100, procs=16)).write(tmp)
        ...     (written / "out_jobs.csv").is_file(), (written / "summary.json").is_file()
        (True, True)
        """
        with result_dir(directory, replaces=("out_jobs.csv", "summary.json")) as stage:
            write_out_jobs(self._runs, stage / "out_jobs.csv")
            write_summary(self.summary, stage)
        return Path(directory)


def simulate(workload: Workload, *, tau: float | str = 10.0, **options: Any) -> Result:
    """Simulate ``workload`` in the local simulator under the scheduler that ``options`` describe.

    ``bftune simulate`` with the same options gives the same files (:meth:`Result.write`).

    Parameters
    ----------
    workload : Trace or str or os.PathLike
        A trace, or the path of a workload file (SWF, Batsim JSON or a Slurm dump, read by
        :func:`read_workload` with its defaults).
    tau : float or str, default 10.0
        The bounded slowdown's threshold, seconds (a duration such as ``"1m"`` is read too).
    **options
        Scheduler options of the option table (:data:`OPTIONS`, ``bftune options``), by name, with
        what a user writes as values; each is listed below. An option left out has its default.

    Other Parameters
    ----------------
    <options>

    Returns
    -------
    Result
        The jobs table, the summary and a selector's periods.

    Raises
    ------
    ConfigError
        An unknown option, a bad value, or an option whose requirement is unmet (``epsilon`` without a
        ``selector``), in one line naming the option as written here.
    WorkloadError
        The workload cannot be read, or a trace the simulator cannot run.

    Examples
    --------
    >>> trace = synthetic(2000, procs=128, seed=3)
    >>> simulate(trace, policy="SAF", threshold="40h").summary["config"]["algorithm"]
    'EASY(SAF+threshold(40h))'
    >>> online = simulate(trace, selector="full", period="1d", candidates="FCFS,SPF")
    >>> sorted(set(online.periods["policy"])) <= ["FCFS", "SPF"]
    True
    >>> simulate(trace, epsilon=0.2)
    Traceback (most recent call last):
    ...
    bftune.schedulers.option.ConfigError: epsilon needs selector
    """
    config = SchedulerConfig.from_options(options)
    tau = check_tau(tau)
    trace = _trace(workload)
    summary, result = run_local(trace, config, tau=tau)
    periods = summary.get("periods")
    return Result(jobs=jobs_frame(pd.DataFrame(all_columns(result.runs)), trace), summary=summary,
                  periods=pd.DataFrame(periods) if periods else None, config=config, _runs=result.runs)


@dataclass
class Comparison:
    """Both backends on one configuration (:func:`compare`): whether they agree job by job, and what they did.

    Attributes
    ----------
    agree : bool
        Whether every job started and ended at the same times on the same processors in both.
    report : dict
        compare.json's content: the mismatches, both summaries, the configuration, the workload.
    local : pandas.DataFrame
        The local simulator's jobs table (as :attr:`Result.jobs`).
    batsim : pandas.DataFrame
        Batsim's jobs table, the same columns.
    directory : pathlib.Path or None
        Where both runs and compare.json were kept (``out``); None without ``out``: nothing was kept.

    Examples
    --------
    >>> comparison = compare(synthetic(300, procs=16), policy="SPF")  # doctest: +SKIP
    >>> comparison.agree, comparison.report["mismatches"], comparison.directory  # doctest: +SKIP
    (True, 0, None)
    """

    agree: bool
    report: dict[str, Any]
    local: pd.DataFrame
    batsim: pd.DataFrame
    directory: Path | None


def compare(workload: Workload, *, out: str | os.PathLike[str] | None = None, batsim: str | None = None,
            tau: float | str = 10.0, timeout: float = 120.0, **options: Any) -> Comparison:
    """Run ``workload`` in the local simulator and inside real Batsim, and compare every job.

    ``bftune compare`` from Python. Without ``out`` the runs are made in a temporary directory that is
    removed before this returns: the comparison's tables and report are in memory, and its
    ``directory`` is None rather than the path of a directory that no longer exists.

    Parameters
    ----------
    workload : Trace or str or os.PathLike
        As for :func:`simulate`.
    out : str or os.PathLike, optional
        Where to keep both runs (``local/``, ``batsim/``, ``compare.json``); replaced as a whole.
    batsim : str, optional
        The Batsim executable (default: ``batsim`` on PATH).
    tau : float or str, default 10.0
        The bounded slowdown's threshold, seconds, as for :func:`simulate`.
    timeout : float, default 120.0
        Seconds Batsim may stay silent before the run is stopped.
    **options
        Scheduler options, as for :func:`simulate`.

    Returns
    -------
    Comparison
        Whether both backends agree, the report and both jobs tables.

    Raises
    ------
    ConfigError
        A bad option, as for :func:`simulate`.
    WorkloadError
        The workload cannot be read.
    RuntimeError
        Batsim is missing, too old, or failed (the message says which and what to do).

    Examples
    --------
    >>> comparison = compare(synthetic(300, procs=16), policy="SPF")  # doctest: +SKIP
    >>> comparison.agree, comparison.directory  # doctest: +SKIP
    (True, None)
    """
    config = SchedulerConfig.from_options(options)
    tau = check_tau(tau)
    trace = _trace(workload)
    with tempfile.TemporaryDirectory(prefix="bftune-compare-") as tmp:
        directory = Path(out) if out is not None else Path(tmp) / "compare"
        report = compare_backends(trace, config, directory, batsim=batsim, tau=tau, timeout=timeout)
        local = read_out_jobs(directory / "local" / "out_jobs.csv")
        other = read_out_jobs(directory / "batsim" / "out_jobs.csv")
    return Comparison(agree=report["mismatches"] == 0, report=report, local=jobs_frame(local, trace),
                      batsim=jobs_frame(other, trace), directory=Path(out) if out is not None else None)


@dataclass
class CampaignRun:
    """A campaign's outcome (:func:`run_campaign`): its directory, its tables, its failures.

    Attributes
    ----------
    directory : pathlib.Path
        The campaign's output directory.
    tables : dict of str to pandas.DataFrame
        Every CSV table the campaign wrote, by file name without ``.csv`` (``runs``, ``weeks``...).
    runs : int
        How many runs the campaign has.
    failures : list of dict
        One record per failed run (its id, labels and error); empty when every run succeeded.

    Examples
    --------
    >>> done = run_campaign("experiments/configs/tiny_synthetic_offline.toml", "runs/tiny")  # doctest: +SKIP
    >>> done.ok, sorted(done.tables)[:2]  # doctest: +SKIP
    (True, ['runs', 'summary_offline'])
    """

    directory: Path
    tables: dict[str, pd.DataFrame]
    runs: int
    failures: list[dict[str, Any]]

    @property
    def ok(self) -> bool:
        """Whether every run succeeded (no failures)."""
        return not self.failures


def run_campaign(config: str | os.PathLike[str] | Mapping[str, Any], out: str | os.PathLike[str], *,
                 workers: int | None = None, dask: str | None = None, data: str | os.PathLike[str] | None = None,
                 progress: bool = False) -> CampaignRun:
    """Run a campaign, as ``bftune campaign CONFIG --out DIR``: stored runs are reused, the tables rewritten.

    With ``workers`` above 1 the runs go to worker processes, which re-import the calling script
    when it is a file: call this under ``if __name__ == "__main__":`` in a script.

    Parameters
    ----------
    config : str or os.PathLike or Mapping
        A campaign TOML file, or the same content as a dict.
    out : str or os.PathLike
        The campaign's directory: made, or resumed when it holds this campaign.
    workers : int, optional
        Worker processes (default: the machine's cores, less one).
    dask : str, optional
        The address of a Dask scheduler to run on instead (``--dask``).
    data : str or os.PathLike, optional
        The directory of archive traces (``--data``; default ``BFTUNE_DATA``, else the user data directory).
    progress : bool, default False
        Print a progress line on standard error.

    Returns
    -------
    CampaignRun
        The directory, its tables as DataFrames, the number of runs and the failures.

    Raises
    ------
    CampaignError
        A bad config (the message names the file and the key) or an output directory that holds
        something else.
    WorkloadError
        A trace of the campaign cannot be read.

    Examples
    --------
    >>> config = {"campaign": {"kind": "offline", "name": "api", "seed": 1},
    ...           "workload": {"trace": "synthetic:4500:16:3"},
    ...           "offline": {"policies": ["FCFS", "SPF"], "thresholds": ["none"], "weeks": 2,
    ...                       "splits": ["train"]}}
    >>> done = run_campaign(config, "runs/api", workers=1)  # doctest: +SKIP
    >>> done.ok, done.runs  # doctest: +SKIP
    (True, 4)
    """
    archive = data_dir(data) if data is not None else None
    if isinstance(config, Mapping):
        campaign = campaign_from_dict(dict(config), archive=archive)
    else:
        campaign = load_config(config, archive=archive)
    outcome = _run_campaign(campaign, out, workers=workers, dask=dask, progress=progress)
    directory = Path(out)
    tables = {path.stem: pd.read_csv(path) for path in sorted(directory.glob("*.csv"))}
    return CampaignRun(directory=directory, tables=tables, runs=outcome.total, failures=outcome.failures)


def policies() -> dict[str, str]:
    """Every queue policy by name, with its formula, as ``bftune policies`` lists them.

    Returns
    -------
    dict of str to str
        Policy name (what ``policy=`` takes) to its score's formula (the smallest score goes first).

    Examples
    --------
    >>> table = policies()
    >>> "FCFS" in table and "SAF" in table
    True
    """
    return {name: formula_of(policy) for name, policy in REGISTRY.items()}


def _option_kind(option: Option) -> str:
    """An option's type as numpydoc writes it: what a user may pass."""
    if option.duration:
        return "str or float"  # "40h", or seconds
    if isinstance(option.default, (bool, int, float)) and not option.choices:
        return type(option.default).__name__
    if isinstance(option.default, list):
        return "str or list of str"  # "FCFS,SPF" or ["FCFS", "SPF"]
    return "str"


def default_shown(option: Option) -> str:
    """An option's default as a Python caller writes it (``True``, where the table's docs write ``true``)."""
    return repr(option.default) if isinstance(option.default, bool) else option.doc_default()


def option_parameters() -> str:
    """:func:`simulate`'s option parameters, from the option table: ``name : type``, its help, choices, default.

    The default goes in the description (not numpydoc's ``type, default X``), where the API page shows it too.
    """
    lines = []
    for option in OPTIONS.values():
        meaning = option.help + (f" ({' | '.join(option.choices)})" if option.choices else "")
        meaning += "." if option.default is None else f". Default: {default_shown(option)}."
        lines.append(f"    {option.name} : {_option_kind(option)}" + (", optional" if option.default is None else ""))
        lines += textwrap.wrap(meaning, 104, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return "\n".join(lines) + "\n"


# help(bftune.simulate) lists every option with its default and meaning, from the table itself (a few
# microseconds at import: the table is loaded anyway); the docs' page renders the same text (docs/hooks.py).
simulate.__doc__ = (simulate.__doc__ or "").replace("    <options>\n", option_parameters())
