"""A campaign's traces: checked when the config is read, prepared (read, split, resampled) in the workers.

Config side: :func:`resolve_archive` replaces each ``archive:NAME`` source
by the trace's path in the data directory (:mod:`bftune.workloads.archive`)
before anything else reads the config, so that such a run is the same run as
the file named directly; :func:`trace_path` checks one source
(``synthetic:N:M[:SEED]`` or a file; relative paths are relative to the
repository root) and :func:`trace_label` names it in the tables.

Worker side: every step is cached per process (``lru_cache``) on what
defines it - the trace, the split, the number of weeks and the resample
seed - and campaigns list their runs resample by resample, so consecutive
runs in one worker share the prepared workload.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterable

from bftune.experiments.campaign.limits import MAX_PROCS, MAX_SYNTHETIC_JOBS, PROCS_WHY
from bftune.experiments.campaign.paths import REPO_ROOT
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import CampaignError, RunSpec
from bftune.workloads.archive import PREFIX, Archive, data_dir
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import WEEK, Trace
from bftune.workloads.resample import resample, split_halves
from bftune.schedulers.core.durations import DurationError, parse_duration
from bftune.workloads.read import DumpReading, dump_reading, is_dump, read_workload
from bftune.workloads.slurm import check_timezone
from bftune.workloads.cleaning import CLEANING_NAMES, check_cleaning
from bftune.workloads.swf import CLEANINGS
from bftune.workloads.synthetic import generate



def resolve_archive(t: Section, key: str, archive: Archive | None) -> Archive | None:
    """``archive:NAME`` sources of ``t[key]`` (a string or a list of them) replaced by their paths (in a copy of
    ``t.data``: the parsed config is left as it was).

    ``archive`` None: the data directory setting (``BFTUNE_DATA`` or the default), looked up only when a source
    needs it; returned, so that the next section uses the same one.  A trace neither present nor downloadable is
    one line naming the section, the key, the file and the command that gets it.
    """
    value = t.data.get(key)
    values = value if isinstance(value, list) else [value]
    if not any(isinstance(v, str) and v.startswith(PREFIX) for v in values):
        return archive
    try:
        archive = archive or data_dir()
        resolved = [archive.resolve(v) if isinstance(v, str) else v for v in values]
    except WorkloadError as exc:
        raise t.error(key, str(exc)) from None
    t.data = {**t.data, key: resolved if isinstance(value, list) else resolved[0]}
    return archive


def trace_path(t: Section, key: str, trace: str, procs: int | None = None) -> str | None:
    """Check one trace source (``synthetic:N:M[:SEED]`` or a file); its resolved path (None if synthetic)."""
    if trace.startswith("synthetic:"):
        parts = trace.split(":")[1:]
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            nums = []
        if len(nums) not in (2, 3) or any(n < 1 for n in nums[:2]) or (len(nums) == 3 and nums[2] < 0):
            raise t.error(key, f"{trace!r}: write synthetic:N:M or synthetic:N:M:SEED "
                               "(N jobs of the Lublin-Feitelson model on M processors)")
        if nums[0] > MAX_SYNTHETIC_JOBS or nums[1] > MAX_PROCS:
            raise t.error(key, f"{trace!r}: too large: at most {MAX_SYNTHETIC_JOBS:,} jobs on "
                               f"{MAX_PROCS:,} processors (ten times the largest archive trace)")
        if procs is not None:
            raise t.error("procs", "a synthetic trace sets its machine size in trace = \"synthetic:N:M\"")
        return None
    p = Path(trace).expanduser()
    if not p.is_absolute():
        p = REPO_ROOT / p
    if not p.is_file():
        if p.exists():  # /dev/zero, a FIFO, a directory: never read
            raise t.error(key, f"{trace!r}: not a regular file ({p})")
        raise t.error(key, f"{trace!r}: no such file ({p}; relative paths are relative to the "
                           f"repository root {REPO_ROOT})")
    return str(p.resolve())


def trace_label(trace: str) -> str:
    """A trace's short name in the tables: the file name without .swf/.swf.gz, or the synthetic:... text."""
    if trace.startswith("synthetic:"):
        return trace
    name = Path(trace).name
    for suffix in (".swf.gz", ".swf"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def workload_section(t: Section) -> dict:
    """The ``[workload]`` section of a single-trace campaign (offline, online)."""
    trace = t.string("trace")
    procs = t.optional_integer("procs", minimum=1, maximum=MAX_PROCS, why=PROCS_WHY)
    wff = t.boolean("walltime_from_runtime", False)
    lenient = t.boolean("lenient", False)
    cleaning = cleaning_key(t, CLEANINGS[0])
    path = trace_path(t, "trace", trace, procs)
    if path is None and cleaning != CLEANINGS[0]:
        raise t.error("cleaning", "a synthetic trace has no SWF records to clean: drop cleaning")
    timezone = timezone_key(t) if "timezone" in t.data else None
    dump = dump_keys(t)
    slurm = path is not None and is_dump(path, sacct_format=dump.get("sacct_format"),
                                         sacct_delimiter=dump.get("sacct_delimiter"))
    if timezone is not None and not slurm:
        raise t.error("timezone", "only for a Slurm accounting dump (SWF traces carry their own clock)")
    if dump and not slurm:
        raise t.error(next(iter(dump)).replace("partitions", "partition"), "only for a Slurm accounting dump")
    holdout = holdout_key(t)
    return {"trace": trace, "trace_path": path, "procs": procs, "walltime_from_runtime": wff,
            "lenient": lenient, "cleaning": cleaning, **({"timezone": timezone} if timezone else {}),
            **({"dump": dump} if dump else {}), **({"holdout": holdout} if holdout else {})}


def holdout_key(t: Section) -> float:
    """``holdout``: the last share of the trace's submission span left out (a tune's validation period)."""
    value = t.get("holdout", 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 0.5:
        raise t.error("holdout", f"expected a share from 0 to 0.5, got {value!r}")
    return float(value)


#: ``[workload]`` keys of a Slurm dump's reading (read_workload's keywords; ``partition``: a name or a list).
DUMP_KEYS = ("sacct_format", "sacct_delimiter", "partition", "cores_per_node", "cluster", "overrun_grace")


def dump_keys(t: Section) -> dict:
    """The Slurm dump options of ``[workload]`` (only those given), checked as the command line checks them."""
    out: dict = {}
    for key in ("sacct_format", "sacct_delimiter", "cluster"):
        if key in t.data:
            out[key] = t.string(key)
    if "partition" in t.data:
        value = t.get("partition", None)
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise t.error("partition", f"expected a partition name or a list of them, got {value!r}")
        out["partitions"] = [n.strip() for n in names]
    if "cores_per_node" in t.data:
        out["cores_per_node"] = t.integer("cores_per_node", minimum=1, maximum=MAX_PROCS, why=PROCS_WHY)
    if "overrun_grace" in t.data:
        value = t.get("overrun_grace", None)
        try:
            out["overrun_grace"] = int(parse_duration(value, "overrun_grace", allow_infinite=False))
        except DurationError as exc:
            raise t.error("overrun_grace", str(exc).split(": ", 1)[-1]) from None
    return out


def timezone_key(t: Section) -> str:
    """``timezone``: the zone a Slurm dump's local times are in (an IANA name)."""
    try:
        return check_timezone(t.string("timezone"))
    except WorkloadError as exc:
        raise t.error("timezone", str(exc)) from None


def cleaning_key(t: Section, default: str | None) -> str | None:
    """``cleaning``: which SWF records become jobs (bftune.workloads.swf.CLEANINGS; a former name gives today's)."""
    if "cleaning" not in t.data:
        return default
    return check_cleaning(t.string("cleaning", choices=CLEANING_NAMES))


# --- worker side -------------------------------------------------------------------------


def source_key(spec: RunSpec) -> tuple:
    """What identifies a run's source trace (the cache key of :func:`base_trace`)."""
    return (spec.trace, spec.trace_path, spec.procs, spec.walltime_from_runtime, spec.lenient, spec.cleaning,
            spec.timezone, dump_reading(**spec.dump), spec.holdout)


@lru_cache(maxsize=2)
def base_trace(trace: str, trace_path: str | None, procs: int | None, wff: bool, lenient: bool,
               cleaning: str = "drop-overruns", timezone: str | None = None, dump: DumpReading = (),
               holdout: float = 0.0) -> Trace:
    """The source trace, read (and cleaned) or generated once per worker process; without its last
    ``holdout`` share of the submission span when one is given (:func:`held_out`)."""
    if holdout:
        return searched_part(base_trace(trace, trace_path, procs, wff, lenient, cleaning, timezone, dump), holdout)
    if trace.startswith("synthetic:"):
        nums = [int(x) for x in trace.split(":")[1:]]
        return generate(nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
    return read_workload(trace_path or trace, procs=procs, lenient=lenient, walltime_from_runtime=wff,
                         cleaning=cleaning, timezone=timezone, **dict(dump))


def check_sources(specs: Iterable[RunSpec]) -> None:
    """Read every trace file that ``specs`` need, once, before any run starts: a malformed, truncated or
    unreadable trace is one line (:class:`CampaignError`) then, rather than the same failure of every run.

    Read as the workers read them (:func:`base_trace`: SWF, Slurm accounting or Batsim JSON, cleaned), but
    not kept: the workers are other processes; a trace read once is in the parse cache for them.
    """
    seen: set[tuple] = set()
    for spec in specs:
        key = source_key(spec)
        if key in seen or spec.trace_path is None:  # generated (synthetic:..., the index kind's lublin:...)
            continue
        seen.add(key)
        try:
            base_trace.__wrapped__(*key)
        except WorkloadError as exc:
            raise CampaignError(f"{exc} (a trace of the campaign: no run started)") from None


def holdout_cut(trace: Trace, holdout: float) -> float:
    """The submission time from which a trace's last ``holdout`` share of its submission span is held out."""
    first = min(job.submit for job in trace.jobs)
    last = max(job.submit for job in trace.jobs)
    return first + (1.0 - holdout) * (last - first)


def searched_part(trace: Trace, holdout: float) -> Trace:
    """The jobs submitted before the held-out period (what tune searches on)."""
    cut = holdout_cut(trace, holdout)
    return trace.with_jobs([job for job in trace.jobs if job.submit < cut], name=trace.name)


def held_out(trace: Trace, holdout: float) -> Trace:
    """The jobs of the held-out period (tune's validation period), as they were submitted."""
    cut = holdout_cut(trace, holdout)
    return trace.with_jobs([job for job in trace.jobs if job.submit >= cut], name=f"{trace.name}-held-out")


@lru_cache(maxsize=2)
def _halves(key: tuple) -> tuple[Trace, Trace]:
    return split_halves(base_trace(*key))


def source_trace(spec: RunSpec) -> Trace:
    """The trace, or half of it, that ``spec`` resamples."""
    return _source(source_key(spec), spec.split)


def _source(key: tuple, split: str | None) -> Trace:
    if split is None:
        return base_trace(*key)
    train, test = _halves(key)
    return train if split == "train" else test


@lru_cache(maxsize=4)
def _resampled(key: tuple, split: str | None, weeks: int, seed: int) -> Trace:
    return resample(_source(key, split), weeks, seed)


def prepared_trace(spec: RunSpec) -> Trace:
    """The resampled trace of ``spec``, cached per (trace, split, weeks, seed) in this process."""
    return _resampled(source_key(spec), spec.split, spec.weeks, spec.resample_seed)


def weekly_jobs(spec: RunSpec) -> tuple[int, list[list]]:
    """``(m, weeks)``: the resampled trace cut into its ``spec.weeks`` weeks.

    Week w = the jobs submitted in [t0 + w*7d, t0 + (w+1)*7d), t0 = the
    source's first submission, which resampling keeps.
    """
    trace = prepared_trace(spec)
    t0 = min(job.submit for job in source_trace(spec).jobs)
    weeks: list[list] = [[] for _ in range(spec.weeks)]
    for job in trace.jobs:
        weeks[int((job.submit - t0) // WEEK)].append(job)
    return trace.max_procs, weeks
