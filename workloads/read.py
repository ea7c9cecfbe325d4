"""Reading a workload file whatever its type: the one entry point of the CLI, ``compare``, campaigns and callers.

A Slurm accounting dump (``sacct --parsable2``) is recognised by its header
line (:mod:`bftune.workloads.slurm`); a file ending in ``.json``, or whose content is JSON whatever its name
(:func:`~bftune.workloads.batsim_json.is_batsim_json`), is a Batsim workload
(:mod:`bftune.workloads.batsim_json`); anything else is an SWF trace, plain
or gzip (told apart by its first bytes, :mod:`bftune.workloads.swf`), cleaned by one of
:data:`~bftune.workloads.swf.CLEANINGS`.  Every problem is one
:class:`~bftune.workloads.errors.WorkloadError` line naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from bftune.workloads import limits
from bftune.workloads.batsim_json import is_batsim_json, read_batsim_workload
from bftune.workloads.cleaning import WalltimeFallback
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.slurm import (DEFAULT_OVERRUN_GRACE, headerless_dump_error, is_slurm_dump,
                                    looks_like_headerless_dump, read_slurm)
from bftune.workloads.cleaning import check_cleaning
from bftune.workloads.swf import CLEANINGS, read_swf

#: The cleaning of an SWF trace when none is named (the default filter, docs/semantics/workloads.md#cleaning).
DEFAULT_CLEANING = CLEANINGS[0]


#: The keywords of :func:`read_workload` that apply to Slurm dumps only, besides ``timezone``: what a campaign
#: spec, a tune source and the command line carry as one "dump reading" (:func:`dump_reading`).
DUMP_OPTIONS = ("sacct_format", "sacct_delimiter", "partitions", "cores_per_node", "cluster", "overrun_grace")

DumpReading = tuple  # ((keyword, value), ...), sorted, hashable: given options only


def dump_reading(**values: object) -> DumpReading:
    """The given (not None) dump options as sorted pairs, partitions as a tuple: a cache key and an identity.

    Identities of stores made before these options existed hold, since nothing is added when none is given.
    """
    unknown = set(values) - set(DUMP_OPTIONS)
    if unknown:
        raise TypeError(f"not dump options: {', '.join(sorted(unknown))}")
    pairs = []
    for key in DUMP_OPTIONS:
        value = values.get(key)
        if value is None:
            continue
        if key == "partitions":
            names = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
            value = tuple(str(part).strip() for part in names)
        pairs.append((key, value))
    return tuple(pairs)


def is_dump(path: str | os.PathLike[str], *, sacct_format: str | None = None,
            sacct_delimiter: str | None = None) -> bool:
    """Whether ``path`` is read as a Slurm accounting dump: its columns given (a dump without its header line),
    or recognised by its header (:func:`~bftune.workloads.slurm.is_slurm_dump`, with the delimiter if given)."""
    return sacct_format is not None or is_slurm_dump(path, delimiter=sacct_delimiter)


def read_workload(path: str | os.PathLike[str], *, cleaning: str | None = None, lenient: bool = False,
                  walltime_from_runtime: bool = False, procs: int | None = None, timezone: str | None = None,
                  inform: Callable[[str], None] | None = None, sacct_format: str | None = None,
                  sacct_delimiter: str | None = None, partitions: Sequence[str] | None = None,
                  cores_per_node: int | None = None, cluster: str | None = None,
                  overrun_grace: int | None = None) -> Trace:
    """The jobs of a workload file, cleaned, with their cleaning counts.

    The file's kind is told by its content: an SWF trace (``.swf``, ``.swf.gz``), a Batsim workload
    (JSON) or a Slurm accounting dump (``sacct --parsable2``, recognised by its header line,
    :mod:`bftune.workloads.slurm`), read as ``bftune simulate --trace`` reads it.

    Parameters
    ----------
    path : str or os.PathLike
        The workload file.
    cleaning : str, optional
        Which SWF records become jobs (default ``drop-overruns``; ``spec``, its former name, is
        accepted); a Batsim workload is already converted, so only the default applies to it.
    lenient : bool, default False
        Skip and count malformed lines (SWF) or jobs (JSON) instead of failing.
    walltime_from_runtime : bool, default False
        A job without a requested time gets its runtime as walltime (counted in the cleaning).
    procs : int, optional
        The machine size m instead of the file's (SWF ``MaxProcs``, JSON ``nb_res``); a job larger
        than m is dropped and counted (``procs_gt_machine``).
    timezone : str, optional
        A Slurm dump's zone for its local times (an IANA name; default UTC).
    inform : callable, optional
        Receives a Slurm dump's notes (the machine size it took, for one).
    sacct_format, sacct_delimiter : str, optional
        Slurm dumps only: the columns and the delimiter of a dump without its header line
        (``sacct_format`` given, the file is read as one).
    partitions : sequence of str, optional
        Slurm dumps only: the partitions whose jobs are kept.
    cores_per_node : int, optional
        Slurm dumps only: whole-node allocation (a job takes NNodes x C processors).
    cluster : str, optional
        Slurm dumps only: the cluster to read in a dump of several.
    overrun_grace : int, optional
        Slurm dumps only: the seconds a job may run past its limit and still be read as killed at it
        (None: 300).

    Returns
    -------
    Trace
        The jobs, sorted, with the cleaning counts (``trace.cleaning``) and the file's clock.

    Raises
    ------
    WorkloadError
        No such file, an unknown cleaning, a malformed line (named by file and line), or an option
        that does not apply to this kind of file.

    Examples
    --------
    >>> trace = read_workload("KTH-SP2-1996-2.1-cln.swf.gz")  # doctest: +SKIP
    >>> trace  # doctest: +SKIP
    <Trace 'KTH-SP2-1996-2.1-cln': 27,992 jobs, m=100, span 332.9 days>
    """
    p = Path(path)
    if not p.exists():
        raise WorkloadError(f"{p}: no such file")
    if cleaning is not None:
        try:
            cleaning = check_cleaning(cleaning)
        except ValueError as exc:
            raise WorkloadError(f"{p}: {exc}") from None
    if procs is not None:
        limits.procs(procs, "procs")
    fallback: WalltimeFallback = "runtime" if walltime_from_runtime else None
    if is_dump(p, sacct_format=sacct_format, sacct_delimiter=sacct_delimiter):
        return read_slurm(p, procs=procs, timezone=timezone, lenient=lenient, walltime_fallback=fallback,
                          cleaning=DEFAULT_CLEANING if cleaning is None else cleaning, inform=inform,
                          sacct_format=sacct_format, delimiter=sacct_delimiter, partitions=partitions,
                          cores_per_node=cores_per_node, cluster=cluster,
                          overrun_grace=DEFAULT_OVERRUN_GRACE if overrun_grace is None else overrun_grace)
    if timezone is not None:
        raise WorkloadError(f"{p}: a time zone applies to Slurm accounting dumps only (an SWF trace or a Batsim "
                            "workload carries its own clock)")
    slurm_only = {"a sacct delimiter": sacct_delimiter, "partitions": partitions, "cores per node": cores_per_node,
                  "a cluster": cluster, "an overrun grace": overrun_grace}
    for what, value in slurm_only.items():
        if value is not None:
            raise WorkloadError(f"{p}: {what} applies to Slurm accounting dumps only, and this is not one")
    if p.suffix != ".json" and not is_batsim_json(p):
        if looks_like_headerless_dump(p):
            raise headerless_dump_error(p)
        return read_swf(p, max_procs=procs, lenient=lenient, walltime_fallback=fallback,
                        cleaning=DEFAULT_CLEANING if cleaning is None else cleaning)
    if cleaning not in (None, DEFAULT_CLEANING):
        raise WorkloadError(f"{p}: cleaning {cleaning} applies to SWF traces only (a Batsim workload is already "
                            "converted)")
    trace = read_batsim_workload(p, walltime_fallback=fallback, lenient=lenient)
    if procs is None or procs == trace.max_procs:
        return trace
    kept = [j for j in trace.jobs if j.procs <= procs]
    if not kept:
        raise WorkloadError(f"{p}: no job fits on {procs} processors")
    counts = dict(trace.cleaning)
    counts["procs_gt_machine"] = counts.get("procs_gt_machine", 0) + len(trace.jobs) - len(kept)
    return trace.with_jobs(kept, max_procs=procs, cleaning=counts)
