"""Campaigns: declarative TOML configs, run in parallel, stored run by run, resumable.

``bftune campaign CONFIG --out DIR`` turns one TOML file into a list of
independent runs (:class:`RunSpec`), executes them on local cores (default)
or on a Dask cluster (``--dask ADDRESS``), stores every finished run at once,
and finally writes tidy CSV tables and a report (``report.md`` + PNG plots,
see :mod:`bftune.experiments.report`).

Two kinds of campaign (issue 4)
-------------------------------

``kind = "offline"`` - offline tuning of EASY-Pr-Pb.  Every pair (Pr, Pb) of
the policies (7 x 7 = 49 by default) under every threshold (none, 10h, 20h,
40h, 80h) on resampled weeks of a training half and a testing half of the
trace (SPEC section 1: split at the temporal midpoint, resample each half).
*How the weeks are made* (the choice the issue leaves open): each half is
resampled **once** into a trace of ``weeks`` weeks (250 by default) with a
seed derived from the campaign seed and the half's name; that trace is cut
into its weeks (week w = the jobs submitted in [t0 + w*7d, t0 + (w+1)*7d),
t0 = the half's first submission, which resampling keeps) and **every week
is simulated separately, from an empty machine**, until its jobs all finish.
Metrics (AvgWait, MaxWait, AVGbsld) are per week.  One run = one
(Pr, Pb, Theta, half) over all weeks of the half.  A resampled week with no
job has no metrics (NaN; it is skipped by the statistics).  The baseline is
EASY-FCFS-FCFS without threshold (a threshold cannot change FCFS order, so
it equals FCFS-FCFS under every threshold); the report divides every week's
AvgWait/MaxWait by the baseline's of the same week.

``kind = "online"`` - online policy selection (SPEC section 4).  On
``resamples`` (60 by default) resampled traces of ``weeks`` weeks (104 = two
years), run the fixed policies (12 by default, EASY(P, Theta) with no
selector: a plain scheduler, independent of Delta) and the selectors
(random, full, noisy, bandit) for each period Delta (1d, 1w), all with
Theta = 40 h.  The baseline is the fixed EASY(FCFS, 40 h).  One run = one
strategy on one resampled trace.  Selectors are seeded with the resample's
seed (common random numbers across strategies).

``kind = "classification"`` - small/large runtime classification with
kill-and-requeue (SPEC section 5, issue 5).  For every trace of
``[classification] traces`` (several traces in one campaign; no
``[workload] trace``), every policy (FCFS, WFP3, SPF, SAF by default) and
every variant: ``base`` (plain EASY(P)), ``rf`` (the online random forest,
small queue first, with the safeguard), ``rf-no-safeguard``,
``class-clairvoyant`` (true class known, same safeguard) and
``runtime-clairvoyant`` (p~ := p, one queue).  One run = one (trace, policy,
variant) on the **whole trace, not resampled**; tau = 60 s by default (the
classifier study's).  Every classified run's forest uses ``[campaign] seed``
itself as its seed (the same forest seed for every run: common random
numbers across variants and policies).  Per run the campaign stores:

- summary metrics (AVGbsld, AvgWait, MaxWait, the sum of bsld, killed jobs,
  killed runs, safeguard kills, wasted work = processor-seconds of killed
  runs, and its share of the useful work);
- AVGbsld per **reference class** (small / large / unlabelled; see
  :func:`reference_classes`).  The classifier's own label (actual runtime <
  the divider in force at the job's classification) depends on the run's
  schedule - the divider is the median runtime of the jobs that *finished*
  in the last week, and when they finish depends on the variant - so two
  variants would label different sets of jobs small, and the base variant
  has no classifier at all.  The per-class table therefore uses one
  schedule-independent labelling per trace, the same definition applied to
  the zero-wait replay of the trace (every job ends at r_j + p_j): small iff
  p_j < median runtime of the jobs ending in (r_j - 7 d, r_j]; no such job =
  ``unlabelled`` (the first jobs of a trace).  Every variant of a trace is
  thus split into the same job sets.  ``label_agreement`` in ``runs.csv``
  is, for a classified run, the share of jobs labelled by both on which the
  reference class equals the run's classifier label;
- AVGbsld per month: 30-day periods from the trace's first submission, a
  job counted in the period of its submission (r_j);
- the cumulative bsld curve (by completion time, as
  :func:`bftune.experiments.metrics.cumulative_bsld`) sampled at
  :data:`CURVE_POINTS` (500) evenly spaced instants from the first submission
  to the last completion (the step function's value at each instant; the last point
  is the total);
- for ``rf`` and ``rf-no-safeguard``: the classification quality of SPEC
  section 3 (the classifier's report: accuracy, precision and recall of the
  small class, false small and false large rates, confusion counts), overall
  and per week of submission.

Config format (TOML)
--------------------

::

    [campaign]
    kind = "online"            # "offline" | "online" | "classification"    (required)
    name = "online_selection"  # default: the file's stem
    seed = 1                   # master seed; every resample seed derives from it
                               # (classification: the forest seed of every run)
    tau = 10                   # bounded-slowdown constant (seconds, or "10s");
                               # default 10, 60 with kind = "classification"

    [workload]
    trace = "../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz"   # or "synthetic:N:M[:SEED]"
    procs = 100                    # optional machine size (default: the trace header)
    walltime_from_runtime = false  # for traces without requested times (lublin_256)
    lenient = false                # skip (and count) malformed SWF lines

    [offline]                  # only with kind = "offline"; every key optional
    policies = ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP"]
    thresholds = ["none", "10h", "20h", "40h", "80h"]
    weeks = 250
    splits = ["train", "test"]
    reservation = "count"
    baseline = ["FCFS", "FCFS"]  # [Pr, Pb], no threshold

    [online]                   # only with kind = "online"; every key optional
    resamples = 60
    weeks = 104
    threshold = "40h"
    fixed = ["FCFS", "LCFS", ..., "SAF"]   # the 12 of SPEC section 2
    selectors = ["random", "full", "noisy", "bandit"]
    periods = ["1d", "1w"]
    candidates = [... the 12 ...]
    epsilon = 0.1
    noise = 0.2
    decay = 1.0
    reservation = "count"
    baseline = "FCFS"          # EASY(FCFS, threshold); added to the runs if not in `fixed`

    [classification]           # only with kind = "classification"; every key but traces optional
    traces = ["../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz", "synthetic:4500:64:1"]   # required
    policies = ["FCFS", "WFP3", "SPF", "SAF"]
    variants = ["base", "rf", "rf-no-safeguard", "class-clairvoyant", "runtime-clairvoyant"]
    features = "weekly"        # or "live" (SPEC section 5)
    threshold = "inf"          # Theta of EASY, wrapping the small-first queue (none by default)
    reservation = "count"

With kind = "classification" the ``[workload]`` section is optional and may
only hold ``walltime_from_runtime`` and ``lenient`` (applied to every trace);
the traces are listed in ``[classification] traces`` and each runs on its
header's machine size.  A trace's name in the tables is its file name
without ``.swf``/``.swf.gz`` (or the ``synthetic:...`` text).

**Relative trace paths are resolved against the repository root** (the
directory holding ``pyproject.toml``, i.e. the ``bftune`` package root), not
against the config file: the shipped configs say
``"../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz"`` and work wherever the
checkout is.  Use absolute paths for traces elsewhere.  On a Dask cluster
the path must be readable by the workers (shared file system).  Unknown
sections or keys, wrong types and bad policy names are errors naming the
file, the section and the key.

Seeds: ``derive_seed(seed, *parts)`` = first 8 hex digits of
sha256(json([seed, *parts])); online resample i uses
``derive_seed(seed, "online", i)``, offline half h ``derive_seed(seed,
"offline", h)``.  Same config + seed = same runs = identical tables.

Output directory
----------------

- ``campaign.json``: the config (text and normalised settings) and every
  run's spec; ``runs/<run_id>.json``: one finished run (written atomically by
  the coordinating process as soon as the run finishes; ``run_id`` is a hash
  of everything that defines the run, so an interrupted campaign re-run with
  the same command skips every stored run); ``failures/<run_id>.json``: a
  crashed run with its spec (configuration, seed) and traceback - the
  campaign goes on, exits with status 1 and lists the failures; a later
  successful attempt removes the failure file.
- tables (rebuilt at the end of every invocation, rows in spec order, no
  timings in them so they are deterministic): ``runs.csv`` (one row per run)
  and, offline, ``weeks.csv`` (one row per run and week) or, online,
  ``periods.csv`` (per run and week of the trace) and ``choices.csv`` (the
  selectors' choice per period) or, classification, ``classes.csv`` (per
  run and reference class), ``months.csv`` (per run and 30-day month),
  ``curves.csv`` (per run and curve point) and ``classification.csv`` (per
  rf run: an ``overall`` row and one row per week).  Run timings stay in the
  run JSON files.
- ``report.md`` + ``plots/*.png`` + ``summary*.csv``, rebuilt from the tables
  alone by ``bftune campaign --report-only DIR``.

Executors: ``--workers N`` local processes (default ``min(2, cpu_count)``;
``N = 1`` runs inline in this process, handy for profiling), or
``--dask ADDRESS`` (``client.submit`` per run).  Workers cache the prepared
workload (read, split, resample) per (trace, split, weeks, seed); runs are
listed resample by resample so that consecutive runs share it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import math
import os
import socket
import sys
import time
import tomllib
import traceback
import uuid
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from bftune.files import atomic_write_text

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG_DIR = Path(__file__).resolve().parent / "configs"
RESULT_FORMAT = 1
WEEK = 7 * 86400
KINDS = ("offline", "online", "classification")
SPLITS = ("train", "test")
OFFLINE_POLICIES = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP")
OFFLINE_THRESHOLDS = ("none", "10h", "20h", "40h", "80h")
ONLINE_SELECTORS = ("random", "full", "noisy", "bandit")
ONLINE_PERIODS = ("1d", "1w")
CLASSIFICATION_POLICIES = ("FCFS", "WFP3", "SPF", "SAF")
CLASSIFICATION_VARIANTS = ("base", "rf", "rf-no-safeguard", "class-clairvoyant", "runtime-clairvoyant")
MONTH = 30 * 86400  # the classification campaign's "months": 30-day periods from the first submission
CURVE_POINTS = 500  # samples of each stored cumulative bsld curve
KILLED = "COMPLETED_KILLED"


class CampaignError(ValueError):
    """A bad campaign config or output directory; the message names the file and the key."""


# --- specs ----------------------------------------------------------------------------


def derive_seed(seed: int, *parts: Any) -> int:
    """A 32-bit seed from the campaign seed and a path of labels (documented, reproducible)."""
    text = json.dumps([seed, *parts], separators=(",", ":"))
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


@dataclass
class RunSpec:
    """One independent simulation job of a campaign.

    ``trace`` is the source as written in the config (part of the run id);
    ``trace_path`` is where workers read it (None for ``synthetic:``).
    ``options`` is a :meth:`SchedulerConfig.from_options` dict; ``labels``
    describe the run for the tables (strategy, pair, resample...).
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
    run_id: str = ""

    def __post_init__(self) -> None:
        if not self.run_id:
            self.run_id = self.compute_id()

    def identity(self) -> dict:
        """Everything that determines the run's results (labels and the resolved path excluded)."""
        return {"format": RESULT_FORMAT, "kind": self.kind, "trace": self.trace, "procs": self.procs,
                "walltime_from_runtime": self.walltime_from_runtime, "lenient": self.lenient,
                "split": self.split, "weeks": self.weeks, "resample_seed": self.resample_seed,
                "options": self.options, "tau": self.tau}

    def compute_id(self) -> str:
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RunSpec":
        return cls(**d)

    def describe(self) -> str:
        lab = ", ".join(f"{k}={v}" for k, v in self.labels.items() if k != "baseline")
        if self.kind == "classification":
            return f"{self.kind} run {self.run_id} ({lab}; trace {self.trace}, whole trace, seed " \
                   f"{self.resample_seed}; options {json.dumps(self.options)})"
        return f"{self.kind} run {self.run_id} ({lab}; trace {self.trace}, split {self.split}, " \
               f"{self.weeks} weeks, resample seed {self.resample_seed}; options {json.dumps(self.options)})"


@dataclass
class Campaign:
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
        return {"format": RESULT_FORMAT, "name": self.name, "kind": self.kind, "seed": self.seed, "tau": self.tau,
                "source": self.source, "config_text": self.config_text, "workload": self.workload,
                "settings": self.settings, "specs": [s.to_dict() for s in self.specs]}


# --- config parsing ---------------------------------------------------------------------

_REQUIRED = object()


class _Table:
    """Typed access to one TOML table with errors naming file, section and key."""

    def __init__(self, file: str, name: str, data: Any, known: Iterable[str]) -> None:
        self.file, self.name = file, name
        if not isinstance(data, dict):
            raise CampaignError(f"{file}: [{name}] must be a table, got {type(data).__name__}")
        self.data = data
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise CampaignError(f"{file}: [{name}] {unknown[0]}: unknown key; known keys: {', '.join(sorted(known))}")

    def error(self, key: str, msg: str) -> CampaignError:
        return CampaignError(f"{self.file}: [{self.name}] {key}: {msg}")

    def _get(self, key: str, default: Any) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _REQUIRED:
            raise self.error(key, "required key is missing")
        return default

    def string(self, key: str, default: Any = _REQUIRED, choices: Iterable[str] | None = None) -> str:
        v = self._get(key, default)
        if not isinstance(v, str):
            raise self.error(key, f"expected a string, got {v!r}")
        if choices is not None and v not in choices:
            raise self.error(key, f"{v!r} is not one of {', '.join(choices)}")
        return v

    def integer(self, key: str, default: Any = _REQUIRED, minimum: int | None = None) -> int | None:
        v = self._get(key, default)
        if v is None and default is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(key, f"expected an integer, got {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {v}")
        return v

    def number(self, key: str, default: Any = _REQUIRED) -> float:
        v = self._get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(key, f"expected a number, got {v!r}")
        return float(v)

    def boolean(self, key: str, default: Any = _REQUIRED) -> bool:
        v = self._get(key, default)
        if not isinstance(v, bool):
            raise self.error(key, f"expected true or false, got {v!r}")
        return v

    def duration(self, key: str, default: Any = _REQUIRED, allow_infinite: bool = True) -> str:
        """A duration, normalised to its shortest form ("40h", "inf")."""
        return self._duration(key, self._get(key, default), allow_infinite)

    def _duration(self, key: str, v: Any, allow_infinite: bool) -> str:
        from bftune.schedulers.core.durations import DurationError, format_duration, parse_duration

        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise self.error(key, f"expected a duration such as \"40h\", got {v!r}")
        try:
            seconds = parse_duration(v, key, allow_infinite=allow_infinite)
        except DurationError as exc:
            raise self.error(key, str(exc).split(": ", 1)[-1]) from None
        if seconds <= 0 and not allow_infinite:
            raise self.error(key, f"expected a positive duration, got {v!r}")
        return format_duration(seconds)

    def strings(self, key: str, default: Any = _REQUIRED, choices: Iterable[str] | None = None,
                upper: bool = False, unique: bool = True) -> list[str]:
        v = self._get(key, default)
        if not isinstance(v, (list, tuple)) or not v:
            raise self.error(key, f"expected a non-empty list of strings, got {v!r}")
        out = []
        for item in v:
            if not isinstance(item, str):
                raise self.error(key, f"expected strings, got {item!r}")
            item = item.strip().upper() if upper else item.strip()
            if choices is not None and item not in choices:
                raise self.error(key, f"{item!r} is not one of {', '.join(choices)}")
            out.append(item)
        if unique and len(set(out)) != len(out):
            dup = next(x for x in out if out.count(x) > 1)
            raise self.error(key, f"{dup!r} is listed twice")
        return out

    def durations(self, key: str, default: Any, allow_infinite: bool) -> list[str]:
        v = self._get(key, default)
        if not isinstance(v, (list, tuple)) or not v:
            raise self.error(key, f"expected a non-empty list of durations, got {v!r}")
        out = [self._duration(key, item, allow_infinite) for item in v]
        if len(set(out)) != len(out):
            raise self.error(key, f"a duration is listed twice ({', '.join(out)})")
        return out

    def policy(self, key: str, name: str) -> str:
        from bftune.schedulers.core.policies import UnknownPolicyError, get_policy

        try:
            return get_policy(name).name
        except UnknownPolicyError as exc:
            raise self.error(key, str(exc)) from None


def load_config(path: str | os.PathLike[str]) -> Campaign:
    """Read and validate a campaign TOML file into its list of runs."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CampaignError(f"{path}: no such campaign config") from None
    except OSError as exc:
        raise CampaignError(f"{path}: cannot read it ({exc.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{path}: not valid TOML: {exc}") from None
    return campaign_from_dict(data, str(path), text)


def campaign_from_dict(data: dict, source: str = "<config>", text: str = "") -> Campaign:
    """Validate a parsed config (``tomllib`` output) and expand it into runs."""
    top = _Table(source, "top level", data, ("campaign", "workload", *KINDS))
    if "campaign" not in data:
        raise CampaignError(f"{source}: [campaign]: required section is missing")
    camp = _Table(source, "campaign", data["campaign"], ("kind", "name", "seed", "tau"))
    kind = camp.string("kind", choices=KINDS)
    if kind != "classification" and "workload" not in data:
        raise CampaignError(f"{source}: [workload]: required section is missing")
    name = camp.string("name", Path(source).stem if source != "<config>" else "campaign")
    seed = camp.integer("seed", 0, minimum=0)
    tau_text = camp._get("tau", 60 if kind == "classification" else 10)
    tau = _positive_seconds(camp, "tau", tau_text)
    for other in KINDS:
        if other != kind and other in data:
            raise top.error(other, f"section given but [campaign] kind is {kind!r}")
    if kind == "classification":
        wl = _Table(source, "workload", data.get("workload", {}),
                    ("trace", "procs", "walltime_from_runtime", "lenient"))
        for key in ("trace", "procs"):
            if key in wl.data:
                raise wl.error(key, "not with kind = \"classification\": list the traces in [classification] "
                                    "traces (each runs on its header's machine size)")
        options = {"walltime_from_runtime": wl.boolean("walltime_from_runtime", False),
                   "lenient": wl.boolean("lenient", False)}
        section = _Table(source, kind, data.get(kind, {}), _CLASSIFICATION_KEYS)
        settings, specs = _classification_specs(section, options, seed, tau)
        workload = {"traces": settings["traces"], "procs": None, **options}
    else:
        workload = _workload(_Table(source, "workload", data["workload"],
                                    ("trace", "procs", "walltime_from_runtime", "lenient")))
        section = _Table(source, kind, data.get(kind, {}), _OFFLINE_KEYS if kind == "offline" else _ONLINE_KEYS)
        if kind == "offline":
            settings, specs = _offline_specs(section, workload, seed, tau)
        else:
            settings, specs = _online_specs(section, workload, seed, tau)
        workload = {k: v for k, v in workload.items() if k != "trace_path"}
    ids = [s.run_id for s in specs]
    if len(set(ids)) != len(ids):  # cannot happen with validated lists; guard anyway
        raise CampaignError(f"{source}: two runs of the campaign are identical")
    return Campaign(name=name, kind=kind, seed=seed, tau=tau, source=source, config_text=text,
                    workload=workload, settings=settings, specs=specs)


def _positive_seconds(table: _Table, key: str, value: Any) -> float:
    from bftune.schedulers.core.durations import DurationError, parse_duration

    try:
        seconds = parse_duration(value, key, allow_infinite=False)
    except DurationError as exc:
        raise table.error(key, str(exc).split(": ", 1)[-1]) from None
    if seconds <= 0:
        raise table.error(key, f"expected a positive number of seconds, got {value!r}")
    return seconds


def _workload(t: _Table) -> dict:
    trace = t.string("trace")
    procs = t.integer("procs", None, minimum=1)
    wff = t.boolean("walltime_from_runtime", False)
    lenient = t.boolean("lenient", False)
    trace_path = _trace_path(t, "trace", trace, procs)
    return {"trace": trace, "trace_path": trace_path, "procs": procs, "walltime_from_runtime": wff,
            "lenient": lenient}


def _trace_path(t: _Table, key: str, trace: str, procs: int | None = None) -> str | None:
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
        if procs is not None:
            raise t.error("procs", "a synthetic trace sets its machine size in trace = \"synthetic:N:M\"")
        return None
    p = Path(trace).expanduser()
    if not p.is_absolute():
        p = REPO_ROOT / p
    if not p.is_file():
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


def _spec(kind: str, workload: dict, split: str | None, weeks: int, seed: int, options: dict, tau: float,
          labels: dict) -> RunSpec:
    return RunSpec(kind=kind, trace=workload["trace"], split=split, weeks=weeks, resample_seed=seed,
                   options=options, tau=tau, labels=labels, trace_path=workload["trace_path"],
                   procs=workload["procs"], walltime_from_runtime=workload["walltime_from_runtime"],
                   lenient=workload["lenient"])


def _check_options(t: _Table, key: str, options: dict) -> None:
    from bftune.schedulers.config import ConfigError, SchedulerConfig

    try:
        SchedulerConfig.from_options(options)
    except ConfigError as exc:
        raise t.error(key, str(exc)) from None


_OFFLINE_KEYS = ("policies", "thresholds", "weeks", "splits", "reservation", "baseline")


def _offline_specs(t: _Table, workload: dict, seed: int, tau: float) -> tuple[dict, list[RunSpec]]:
    from bftune.schedulers.core.easy import RESERVATION_MODELS

    policies = [t.policy("policies", p) for p in t.strings("policies", list(OFFLINE_POLICIES), upper=True)]
    thresholds = t.durations("thresholds", list(OFFLINE_THRESHOLDS), allow_infinite=True)
    weeks = t.integer("weeks", 250, minimum=1)
    splits = t.strings("splits", list(SPLITS), choices=SPLITS)
    reservation = t.string("reservation", "count", choices=RESERVATION_MODELS)
    baseline = t.strings("baseline", ["FCFS", "FCFS"], upper=True, unique=False)
    if len(baseline) != 2:
        raise t.error("baseline", f"expected [primary, backfill], got {baseline!r}")
    baseline = [t.policy("baseline", p) for p in baseline]
    configs = [(pr, pb, th) for th in thresholds for pr in policies for pb in policies]
    base = (baseline[0], baseline[1], "inf")
    if base not in configs:
        configs.append(base)
    specs = []
    for split in splits:
        half_seed = derive_seed(seed, "offline", split)
        for pr, pb, th in configs:
            options = {"policy": pr, "backfill_policy": pb, "threshold": th, "reservation": reservation}
            _check_options(t, "policies", options)
            th_label = "none" if th == "inf" else th
            labels = {"split": split, "primary": pr, "backfill": pb, "threshold": th_label,
                      "config": f"EASY-{pr}-{pb} {th_label}", "baseline": (pr, pb, th) == base}
            specs.append(_spec("offline", workload, split, weeks, half_seed, options, tau, labels))
    settings = {"policies": policies, "thresholds": ["none" if x == "inf" else x for x in thresholds],
                "weeks": weeks, "splits": splits, "reservation": reservation,
                "baseline": f"EASY-{baseline[0]}-{baseline[1]} none",
                "half_seeds": {s: derive_seed(seed, "offline", s) for s in splits}}
    return settings, specs


_ONLINE_KEYS = ("resamples", "weeks", "threshold", "fixed", "selectors", "periods", "candidates", "epsilon",
                "noise", "decay", "reservation", "baseline")


def _online_specs(t: _Table, workload: dict, seed: int, tau: float) -> tuple[dict, list[RunSpec]]:
    from bftune.schedulers.core.easy import RESERVATION_MODELS
    from bftune.schedulers.core.policies import SELECTION_DEFAULT

    resamples = t.integer("resamples", 60, minimum=1)
    weeks = t.integer("weeks", 104, minimum=1)
    threshold = t.duration("threshold", "40h")
    fixed = [t.policy("fixed", p) for p in t.strings("fixed", list(SELECTION_DEFAULT), upper=True)] \
        if t.data.get("fixed", None) != [] else []
    selectors = t.strings("selectors", list(ONLINE_SELECTORS), choices=ONLINE_SELECTORS) \
        if t.data.get("selectors", None) != [] else []
    periods = t.durations("periods", list(ONLINE_PERIODS), allow_infinite=False)
    candidates = [t.policy("candidates", p) for p in t.strings("candidates", list(SELECTION_DEFAULT), upper=True)]
    epsilon = t.number("epsilon", 0.1)
    noise = t.number("noise", 0.2)
    decay = t.number("decay", 1.0)
    reservation = t.string("reservation", "count", choices=RESERVATION_MODELS)
    baseline = t.policy("baseline", t.string("baseline", "FCFS"))
    strategies: list[tuple[str, dict, dict]] = []  # (key, options without seed, labels)
    for p in ([baseline] if baseline not in fixed else []) + fixed:
        options = {"policy": p, "threshold": threshold, "reservation": reservation}
        _check_options(t, "fixed", options)
        strategies.append(("fixed", options, {"strategy": p, "family": "fixed", "selector": "", "period": "",
                                              "baseline": p == baseline}))
    extra_keys = {"random": ("decay",), "full": ("decay",), "noisy": ("decay", "noise"), "bandit": ("decay", "epsilon")}
    values = {"decay": decay, "noise": noise, "epsilon": epsilon}
    for sel in selectors:
        for period in periods:
            options = {"selector": sel, "period": period, "threshold": threshold, "reservation": reservation,
                       "candidates": list(candidates)}
            options.update({k: values[k] for k in extra_keys[sel]})
            _check_options(t, _bad_key(options) or "selectors", options)
            strategies.append(("selector", options, {"strategy": f"{sel}/{period}", "family": sel, "selector": sel,
                                                     "period": period, "baseline": False}))
    specs = []
    for r in range(resamples):
        rseed = derive_seed(seed, "online", r)
        for family, options, labels in strategies:
            opts = dict(options)
            if family == "selector":
                opts["seed"] = rseed
            specs.append(_spec("online", workload, None, weeks, rseed, opts, tau, {"resample": r, **labels}))
    settings = {"resamples": resamples, "weeks": weeks, "threshold": threshold, "fixed": fixed,
                "selectors": selectors, "periods": periods, "candidates": candidates, "epsilon": epsilon,
                "noise": noise, "decay": decay, "reservation": reservation,
                "baseline": f"EASY({baseline}, {threshold})", "baseline_strategy": baseline,
                "strategies": [lab["strategy"] for _, _, lab in strategies]}
    return settings, specs


def _bad_key(options: dict) -> str:
    """Which numeric selector option is out of range (for the error message), if any."""
    if not (0 < options.get("decay", 1.0) <= 1):
        return "decay"
    if not (0 <= options.get("noise", 0.0) < 1):
        return "noise"
    if not (0 <= options.get("epsilon", 0.0) <= 1):
        return "epsilon"
    return ""


_CLASSIFICATION_KEYS = ("traces", "policies", "variants", "features", "threshold", "reservation")


def variant_options(variant: str, policy: str, *, features: str, seed: int, threshold: str,
                    reservation: str) -> dict:
    """The :class:`SchedulerConfig` options of one variant of the classification campaign."""
    options = {"policy": policy, "threshold": threshold, "reservation": reservation}
    if variant == "base":
        return options
    classifier = {"rf": "rf", "rf-no-safeguard": "rf"}.get(variant, variant)
    options.update(classifier=classifier, safeguard=variant != "rf-no-safeguard", features=features, seed=seed)
    return options


def _classification_specs(t: _Table, wl: dict, seed: int, tau: float) -> tuple[dict, list[RunSpec]]:
    from bftune.schedulers.core.easy import RESERVATION_MODELS

    traces = t.strings("traces")
    labels_seen: dict[str, str] = {}
    sources = []
    for trace in traces:
        path = _trace_path(t, "traces", trace)
        label = trace_label(trace)
        if label in labels_seen:
            raise t.error("traces", f"{trace!r} and {labels_seen[label]!r} have the same name {label!r} "
                                    "in the tables")
        labels_seen[label] = trace
        sources.append((trace, path, label))
    policies = [t.policy("policies", p) for p in t.strings("policies", list(CLASSIFICATION_POLICIES), upper=True)]
    variants = t.strings("variants", list(CLASSIFICATION_VARIANTS), choices=CLASSIFICATION_VARIANTS)
    features = t.string("features", "weekly", choices=("weekly", "live"))
    threshold = t.duration("threshold", "inf")
    reservation = t.string("reservation", "count", choices=RESERVATION_MODELS)
    specs = []
    for trace, path, label in sources:
        for policy in policies:
            for variant in variants:
                options = variant_options(variant, policy, features=features, seed=seed, threshold=threshold,
                                          reservation=reservation)
                _check_options(t, "variants", options)
                labels = {"trace": label, "policy": policy, "variant": variant, "baseline": variant == "base"}
                specs.append(RunSpec(kind="classification", trace=trace, split=None, weeks=0, resample_seed=seed,
                                     options=options, tau=tau, labels=labels, trace_path=path, procs=None,
                                     walltime_from_runtime=wl["walltime_from_runtime"], lenient=wl["lenient"]))
    settings = {"traces": [label for _, _, label in sources], "trace_sources": traces, "policies": policies,
                "variants": variants, "features": features, "threshold": "none" if threshold == "inf" else threshold,
                "reservation": reservation, "curve_points": CURVE_POINTS, "month_days": MONTH // 86400,
                "baseline": "base", "forest_seed": seed}
    return settings, specs


# --- worker side: workload preparation and one run -----------------------------------------


@lru_cache(maxsize=2)
def _base_trace(trace: str, trace_path: str | None, procs: int | None, wff: bool, lenient: bool):
    if trace.startswith("synthetic:"):
        from bftune.workloads.synthetic import generate

        nums = [int(x) for x in trace.split(":")[1:]]
        return generate(nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
    from bftune.workloads.swf import read_swf

    return read_swf(trace_path or trace, max_procs=procs, lenient=lenient,
                    walltime_fallback="runtime" if wff else None)


@lru_cache(maxsize=2)
def _halves(trace: str, trace_path: str | None, procs: int | None, wff: bool, lenient: bool):
    from bftune.workloads.resample import split_halves

    return split_halves(_base_trace(trace, trace_path, procs, wff, lenient))


def _source_key(spec: RunSpec) -> tuple:
    return (spec.trace, spec.trace_path, spec.procs, spec.walltime_from_runtime, spec.lenient)


def source_trace(spec: RunSpec):
    """The trace, or half of it, that ``spec`` resamples."""
    if spec.split is None:
        return _base_trace(*_source_key(spec))
    train, test = _halves(*_source_key(spec))
    return train if spec.split == "train" else test


@lru_cache(maxsize=4)
def _resampled(source_key: tuple, split: str | None, weeks: int, seed: int):
    from bftune.workloads.resample import resample

    source = _base_trace(*source_key) if split is None else _halves(*source_key)[0 if split == "train" else 1]
    return resample(source, weeks, seed)


def prepared_trace(spec: RunSpec):
    """The resampled trace of ``spec``, cached per (trace, split, weeks, seed) in this process."""
    return _resampled(_source_key(spec), spec.split, spec.weeks, spec.resample_seed)


def weekly_jobs(spec: RunSpec) -> tuple[int, list[list]]:
    """``(m, weeks)``: the resampled trace cut into its ``spec.weeks`` weeks (module docstring)."""
    trace = prepared_trace(spec)
    t0 = min(job.submit for job in source_trace(spec).jobs)
    weeks: list[list] = [[] for _ in range(spec.weeks)]
    for job in trace.jobs:
        w = int((job.submit - t0) // WEEK)
        weeks[w].append(job)
    return trace.max_procs, weeks


def week_metrics(runs: list, tau: float) -> dict:
    """AvgWait, MaxWait, AVGbsld, total wait of one simulation's jobs (SPEC section 3).

    The same definitions as :func:`bftune.experiments.metrics.summarize`
    (wait from r_j to the final run's start, bsld with the final run's
    execution time), computed straight from the runs: the offline campaign
    evaluates hundreds of thousands of small weeks.
    """
    waits, bslds = [], []
    for run in runs:
        if run.state == KILLED:
            continue
        r = run.original_submit
        waits.append(run.start - r)
        bslds.append(max((run.end - r) / max(run.end - run.start, tau), 1.0))
    n = len(waits)
    if n == 0:
        return {"jobs": 0, "avg_wait": math.nan, "max_wait": math.nan, "avg_bsld": math.nan, "total_wait": 0.0}
    total = math.fsum(waits)
    return {"jobs": n, "avg_wait": total / n, "max_wait": max(waits), "avg_bsld": math.fsum(bslds) / n,
            "total_wait": total}


def _run_offline(spec: RunSpec) -> dict:
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import simulate

    config = SchedulerConfig.from_options(spec.options)
    m, weeks = weekly_jobs(spec)
    rows = []
    for w, jobs in enumerate(weeks):
        if jobs:
            result = simulate(jobs, m, config.build(m))
            rows.append({"week": w, **week_metrics(result.runs, spec.tau)})
        else:
            rows.append({"week": w, **week_metrics([], spec.tau)})
    filled = [r for r in rows if r["jobs"]]
    summary = {
        "algorithm": config.describe(),
        "jobs": sum(r["jobs"] for r in rows),
        "weeks_with_jobs": len(filled),
        "mean_avg_wait": math.fsum(r["avg_wait"] for r in filled) / len(filled) if filled else math.nan,
        "mean_max_wait": math.fsum(r["max_wait"] for r in filled) / len(filled) if filled else math.nan,
        "mean_avg_bsld": math.fsum(r["avg_bsld"] for r in filled) / len(filled) if filled else math.nan,
        "total_wait": math.fsum(r["total_wait"] for r in rows),
    }
    return {"summary": summary, "weeks": rows}


def _run_online(spec: RunSpec) -> dict:
    import numpy as np

    from bftune.experiments.local_run import run_local
    from bftune.schedulers.config import SchedulerConfig

    config = SchedulerConfig.from_options(spec.options)
    trace = prepared_trace(spec)
    summary, result = run_local(trace, config, None, tau=spec.tau)
    origin = min(job.submit for job in trace.jobs)
    final = [run for run in result.runs if run.state != KILLED]
    submit = np.array([run.original_submit for run in final], dtype=float)
    wait = np.array([run.start - run.original_submit for run in final], dtype=float)
    week = ((submit - origin) // WEEK).astype(int)
    n_weeks = int(week.max()) + 1 if len(week) else 0
    periods = []
    for w in range(n_weeks):
        sel = wait[week == w]
        periods.append({"week": w, "start": w * WEEK, "jobs": int(len(sel)),
                        "sum_wait": float(math.fsum(sel.tolist())),
                        "max_wait": float(sel.max()) if len(sel) else math.nan})
    choices = [{"period": int(e["period"]), "start": float(e["start"] - origin), "policy": e["policy"]}
               for e in summary.get("periods", [])]
    row = {key: summary.get(key) for key in ("jobs", "avg_wait", "max_wait", "avg_bsld", "mwbs", "utilization",
                                             "makespan")}
    row["total_wait"] = float(math.fsum(wait.tolist()))
    row["algorithm"] = config.describe()
    row["simulated_weeks"] = n_weeks
    return {"summary": row, "periods": periods, "choices": choices}


def reference_classes(jobs, window: float = WEEK) -> list[str | None]:
    """The schedule-independent true class of every job (module docstring), in the order of ``jobs``.

    Replays the trace with every job ending at r_j + p_j (p_j = its runtime,
    capped by its walltime, as the simulator runs it); the divider at r_j is
    the median runtime of the jobs ending in (r_j - window, r_j] (the median
    of an even count = mean of the two middle values, as the classifier's
    :meth:`~bftune.learning.classifier.RuntimeClassifier.divider`).  A job is
    ``"small"`` iff p_j < divider, ``"large"`` otherwise, ``None`` (unlabelled)
    when no job ended in the window.
    """
    from bisect import bisect_left, insort
    from collections import deque

    runtimes = [min(float(j.runtime), float(j.walltime)) for j in jobs]
    ends = sorted((float(j.submit) + p, p) for j, p in zip(jobs, runtimes))
    order = sorted(range(len(jobs)), key=lambda i: float(jobs[i].submit))
    out: list[str | None] = [None] * len(jobs)
    win: deque[tuple[float, float]] = deque()
    srt: list[float] = []
    k = 0
    for i in order:
        r = float(jobs[i].submit)
        while k < len(ends) and ends[k][0] <= r:
            win.append(ends[k])
            insort(srt, ends[k][1])
            k += 1
        while win and win[0][0] <= r - window:
            _, p = win.popleft()
            del srt[bisect_left(srt, p)]
        n = len(srt)
        if n == 0:
            continue
        m = n >> 1
        divider = srt[m] if n & 1 else (srt[m - 1] + srt[m]) / 2.0
        out[i] = "small" if runtimes[i] < divider else "large"
    return out


@lru_cache(maxsize=2)
def _reference_classes(source_key: tuple) -> dict[str, str | None]:
    """Reference class per job name (the name the simulator gives it), per trace, cached in the worker."""
    from bftune.workloads.model import job_name, name_width

    trace = _base_trace(*source_key)
    width = name_width(j.id for j in trace.jobs)
    classes = reference_classes(trace.jobs)
    return {job_name(j.id, width): c for j, c in zip(trace.jobs, classes)}


def _curve(times, values, origin: float, points: int) -> list[dict]:
    """A step function (value after each time) sampled at ``points`` instants from ``origin`` to the last time."""
    import numpy as np

    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if len(times) == 0:
        return []
    grid = np.linspace(origin, float(times[-1]), points)
    idx = np.searchsorted(times, grid, side="right") - 1
    sampled = np.where(idx >= 0, values[np.maximum(idx, 0)], 0.0)
    sampled[-1] = values[-1]
    return [{"point": k, "day": float((t - origin) / 86400.0), "cumulative_bsld": float(v)}
            for k, (t, v) in enumerate(zip(grid.tolist(), sampled.tolist()))]


CLASSES = ("small", "large", "unlabelled")
QUALITY_KEYS = ("n", "tp", "fp", "tn", "fn", "accuracy", "precision", "recall", "false_small_rate",
                "false_large_rate")


def _run_classification(spec: RunSpec) -> dict:
    """One (trace, policy, variant) on the whole trace: the tables of the module docstring."""
    from dataclasses import replace

    from bftune.experiments.metrics import bounded_slowdown, summarize
    from bftune.experiments.tables import cumulative_bsld, job_table, per_period, runs_frame
    from bftune.schedulers.hooks.classified import SmallFirst
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import simulate

    config = SchedulerConfig.from_options(spec.options)
    trace = _base_trace(*_source_key(spec))
    if config.classifier is not None and config.unix_start_time is None and trace.unix_start_time is not None:
        # the trace's calendar for the calendar features, as run_local does
        config = replace(config, unix_start_time=trace.unix_start_time, timezone=config.timezone or trace.timezone)
    m = trace.max_procs
    core = config.build(m)
    result = simulate(trace.jobs, m, core)
    df = runs_frame(result.runs)
    tau = spec.tau
    summary = summarize(df, m, tau)
    report = result.report
    jobs = job_table(df)
    jobs["bsld"] = bounded_slowdown(jobs, tau)
    ref = _reference_classes(_source_key(spec))
    jobs["class"] = [ref.get(j) or "unlabelled" for j in jobs["job"]]
    origin = float(min(j.submit for j in trace.jobs))
    useful = float((jobs["runtime"] * jobs["procs"]).sum())
    row = {key: summary.get(key) for key in ("jobs", "avg_bsld", "avg_wait", "max_wait", "max_bsld", "mwbs",
                                             "utilization", "killed_jobs", "killed_runs", "wasted_work")}
    row["sum_bsld"] = float(math.fsum(jobs["bsld"].tolist()))
    row["useful_work"] = useful
    row["wasted_share"] = row["wasted_work"] / useful if useful > 0 else math.nan
    row["safeguard_kills"] = int(report.get("safeguard_kills", 0))
    for c in CLASSES:
        row[f"{c}_jobs"] = int((jobs["class"] == c).sum())
    hook = next((h for h in core.hooks if isinstance(h, SmallFirst)), None)
    if hook is not None:
        both = agree = 0
        for job_id, cls in ref.items():
            if cls is None:
                continue
            label = hook.clf.job(job_id)["label"]
            if label is None:
                continue
            both += 1
            agree += (label == 1) == (cls == "small")
        row["label_agreement"] = agree / both if both else math.nan
    else:
        row["label_agreement"] = math.nan
    row["algorithm"] = config.describe()

    classes = []
    for c in ("all", *CLASSES):
        sel = jobs if c == "all" else jobs[jobs["class"] == c]
        n = len(sel)
        classes.append({"class": c, "jobs": int(n),
                        "avg_bsld": float(sel["bsld"].mean()) if n else math.nan,
                        "avg_wait": float(sel["wait"].mean()) if n else math.nan,
                        "max_wait": float(sel["wait"].max()) if n else math.nan,
                        "killed_jobs": int((sel["kills"] > 0).sum()),
                        "wasted_work": float(sel["wasted_work"].sum())})

    per = per_period(df, MONTH, tau, origin=origin)
    months = [{"month": int(r.period), "start_day": float((r.start - origin) / 86400.0), "jobs": int(r.jobs),
               "avg_bsld": float(r.avg_bsld), "avg_wait": float(r.avg_wait), "max_wait": float(r.max_wait)}
              for r in per.itertuples(index=False)]

    cum = cumulative_bsld(df, tau)
    curve = _curve(cum["time"].to_numpy(), cum["cumulative_bsld"].to_numpy(), origin, CURVE_POINTS)

    quality = []
    cls_report = report.get("classification")
    if cls_report is not None and config.classifier == "rf":
        overall = cls_report["overall"]
        quality.append({"scope": "overall", "week": None, "submitted": cls_report["counts"]["classified"],
                        "evaluated": cls_report["counts"]["evaluated"],
                        "unlabelled": cls_report["counts"]["unlabelled"],
                        "predicted_small": cls_report["counts"]["predicted_small"],
                        **{k: overall[k] for k in QUALITY_KEYS}, "model": "",
                        "train_size": None})
        for w in cls_report["weeks"]:
            quality.append({"scope": "week", "week": w["week"], "submitted": w["submitted"],
                            "evaluated": w["evaluated"], "unlabelled": w["unlabelled"],
                            "predicted_small": w["predicted_small"],
                            **{k: w["metrics"][k] for k in QUALITY_KEYS}, "model": w["model"]["kind"],
                            "train_size": w["model"]["train_size"]})
        row["accuracy"] = overall["accuracy"]
    return {"summary": row, "classes": classes, "months": months, "curve": curve, "classification": quality}


def execute_run(spec_dict: dict) -> dict:
    """Run one spec; never raises on a run's own error (the failure is returned with its traceback)."""
    t0, c0 = time.perf_counter(), time.process_time()
    base = {"format": RESULT_FORMAT, "run_id": spec_dict.get("run_id"), "spec": spec_dict,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        spec = RunSpec.from_dict(spec_dict)
        if spec.kind == "offline":
            payload = _run_offline(spec)
        elif spec.kind == "online":
            payload = _run_online(spec)
        elif spec.kind == "classification":
            payload = _run_classification(spec)
        else:
            raise CampaignError(f"unknown campaign kind {spec.kind!r}")
        base.update(status="ok", **payload)
    except Exception as exc:  # a crashed run is reported, the campaign goes on
        base.update(status="failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    base["elapsed_s"] = round(time.perf_counter() - t0, 3)
    base["cpu_s"] = round(time.process_time() - c0, 3)
    base["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
    return base


# --- executors ---------------------------------------------------------------------------


class InlineExecutor:
    """Runs every spec in this process, in order (``--workers 1``)."""

    description = "inline (1 process)"

    def run(self, fn: Callable[[dict], dict], items: list[dict]) -> Iterator[tuple[dict, dict | BaseException]]:
        for item in items:
            yield item, fn(item)

    def close(self) -> None:
        pass


class LocalExecutor:
    """A pool of ``workers`` local processes (spawned: safe even if this process runs threads)."""

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.description = f"{workers} local processes"
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    def run(self, fn, items):
        from concurrent.futures import as_completed

        futures = {self.pool.submit(fn, item): item for item in items}
        try:
            for fut in as_completed(futures):
                try:
                    yield futures[fut], fut.result()
                except Exception as exc:  # the worker process died (BrokenProcessPool) or could not unpickle
                    yield futures[fut], exc
        finally:
            for fut in futures:
                fut.cancel()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """``client.submit`` per run on a Dask cluster (``--dask ADDRESS`` or a ``Client``)."""

    def __init__(self, address) -> None:
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - dask is a dev/optional dependency
            raise CampaignError("--dask needs dask.distributed: install bftune[dask]") from None
        if isinstance(address, Client):
            self.client, self._own = address, False
        else:
            try:
                self.client, self._own = Client(address, timeout="20s"), True
            except OSError as exc:
                raise CampaignError(f"--dask {address}: cannot connect to the scheduler ({exc})") from None
        workers = self.client.scheduler_info().get("workers", {})
        self.description = f"Dask cluster {self.client.scheduler.address} ({len(workers)} workers)"

    def run(self, fn, items):
        from distributed import as_completed

        futures = {}
        for item in items:
            # a fresh key per submission: a long-lived cluster must not hand back an older attempt
            fut = self.client.submit(fn, item, key=f"bftune-run-{item['run_id']}-{uuid.uuid4().hex[:8]}",
                                     pure=False)
            futures[fut.key] = (fut, item)
        try:
            for fut in as_completed([f for f, _ in futures.values()]):
                item = futures[fut.key][1]
                try:
                    yield item, fut.result()
                except Exception as exc:  # KilledWorker, lost connection...
                    yield item, exc
                fut.release()
        finally:
            for f, _ in futures.values():
                f.cancel()

    def close(self) -> None:
        if self._own:
            self.client.close()


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def make_executor(workers: int | None = None, dask=None):
    if dask is not None:
        return DaskExecutor(dask)
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise CampaignError(f"--workers must be at least 1, got {workers}")
    return InlineExecutor() if workers == 1 else LocalExecutor(workers)


# --- progress -----------------------------------------------------------------------------


def _hms(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """A one-line progress bar with ETA on a stream (stderr).

    On a terminal the line is redrawn in place; otherwise (logs, CI) a line
    is printed at most every ``interval`` seconds and at the end.  The ETA
    is the mean time per run finished in this invocation times the runs left.
    """

    def __init__(self, total: int, already: int = 0, stream=None, enabled: bool = True, interval: float = 10.0,
                 width: int = 28) -> None:
        self.total, self.already = total, already
        self.done, self.failed = 0, 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval, self.width = interval, width
        self.t0 = time.monotonic()
        self._last = -math.inf

    def line(self) -> str:
        finished = self.already + self.done + self.failed
        frac = finished / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        elapsed = time.monotonic() - self.t0
        now = self.done + self.failed
        left = self.total - finished
        eta = elapsed / now * left if now else math.inf
        extra = f", {self.failed} failed" if self.failed else ""
        reused = f", {self.already} stored" if self.already else ""
        return (f"[{'#' * fill}{'.' * (self.width - fill)}] {finished}/{self.total} {100 * frac:5.1f}%"
                f"{reused}{extra} | elapsed {_hms(elapsed)} | ETA {_hms(eta if left else 0.0)}")

    def update(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.draw()

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        last = self.already + self.done + self.failed >= self.total
        if self.tty:
            self.stream.write("\r" + self.line())
        elif force or last or now - self._last >= self.interval:
            self.stream.write(self.line() + "\n")
        else:
            return
        self._last = now
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --- the store and the runner ------------------------------------------------------------


def _jsonable(value):
    """JSON without NaN/inf: non-finite floats become null (read back as NaN by pandas)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _jsonable(value.item())
    return value


def _write_json(path: Path, data: dict) -> None:
    atomic_write_text(path, json.dumps(_jsonable(data), indent=1, allow_nan=False) + "\n")


def stored_run_ids(out_dir: str | os.PathLike[str]) -> set[str]:
    """Run ids with a readable stored result in ``out_dir/runs``."""
    out = set()
    for p in (Path(out_dir) / "runs").glob("*.json"):
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            continue  # unreadable: redo it (atomic writes make this unlikely)
        if rec.get("status") == "ok" and rec.get("run_id") == p.stem:
            out.add(p.stem)
    return out


@dataclass
class Outcome:
    total: int
    reused: int
    done: int
    failures: list[dict]
    out_dir: Path
    wall_s: float
    executor: str

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0


def run_campaign(campaign: Campaign, out_dir: str | os.PathLike[str], *, workers: int | None = None,
                 dask=None, specs: list[RunSpec] | None = None, progress: bool = True, stream=None,
                 report: bool = True) -> Outcome:
    """Run every spec not yet stored in ``out_dir``, store each at once, then write tables and report.

    ``specs`` restricts this invocation to some of the campaign's runs (the
    tables still cover the whole campaign, with what is stored).
    """
    stream = stream if stream is not None else sys.stderr
    out = Path(out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    (out / "failures").mkdir(exist_ok=True)
    if (out / "campaign.json").exists():
        try:
            previous = json.loads((out / "campaign.json").read_text())
        except ValueError:
            previous = {}
        if (previous.get("name"), previous.get("kind")) != (campaign.name, campaign.kind):
            stream.write(f"note: {out} held campaign {previous.get('name')!r} ({previous.get('kind')}); its stored "
                         f"runs stay in runs/ but the tables will cover {campaign.name!r} only\n")
    _write_json(out / "campaign.json", campaign.meta())
    specs = list(campaign.specs if specs is None else specs)
    stored = stored_run_ids(out)
    todo = [s for s in specs if s.run_id not in stored]
    reused = len(specs) - len(todo)
    t0 = time.monotonic()
    failures: list[dict] = []
    done = 0
    executor = make_executor(workers, dask) if todo else InlineExecutor()
    desc = executor.description
    if progress:
        stream.write(f"campaign {campaign.name} ({campaign.kind}): {len(specs)} runs, {reused} already stored, "
                     f"{len(todo)} to run on {desc}\n")
    bar = Progress(len(specs), reused, stream, enabled=progress)
    bar.draw(force=True)
    try:
        for item, result in executor.run(execute_run, [s.to_dict() for s in todo]):
            if isinstance(result, BaseException):
                result = {"format": RESULT_FORMAT, "run_id": item["run_id"], "spec": item, "status": "failed",
                          "error": f"{type(result).__name__}: {result} (the worker running it died or was lost)",
                          "traceback": "".join(traceback.format_exception(result))}
            run_id = item["run_id"]
            if result.get("status") == "ok":
                _write_json(out / "runs" / f"{run_id}.json", result)
                (out / "failures" / f"{run_id}.json").unlink(missing_ok=True)
                done += 1
                bar.update(True)
            else:
                _write_json(out / "failures" / f"{run_id}.json", result)
                failures.append(result)
                bar.update(False)
    except KeyboardInterrupt:
        bar.close()
        stream.write(f"interrupted: {reused + done} of {len(specs)} runs are stored in {out}/runs; "
                     "run the same command again to resume\n")
        raise
    finally:
        executor.close()
    bar.close()
    wall = time.monotonic() - t0
    consolidate(out)
    if report:
        from bftune.experiments.report import build_report

        build_report(out, load_meta(out))
    return Outcome(total=len(specs), reused=reused, done=done, failures=failures, out_dir=out, wall_s=wall,
                   executor=desc)


def format_failures(failures: list[dict]) -> str:
    lines = [f"{len(failures)} run(s) failed (details and tracebacks in failures/<run_id>.json):"]
    for f in failures:
        spec = RunSpec.from_dict(f["spec"])
        lines.append(f"  - {spec.describe()}\n    error: {f.get('error')}")
    return "\n".join(lines)


# --- consolidation into tables --------------------------------------------------------------

OFFLINE_LABELS = ["split", "primary", "backfill", "threshold", "config", "baseline"]
ONLINE_LABELS = ["resample", "strategy", "family", "selector", "period", "baseline"]
CLASSIFICATION_LABELS = ["trace", "policy", "variant", "baseline"]
KIND_LABELS = {"offline": OFFLINE_LABELS, "online": ONLINE_LABELS, "classification": CLASSIFICATION_LABELS}
#: The per-run tables of each kind beyond runs.csv: name -> the run JSON's key.
KIND_TABLES = {"offline": {"weeks": "weeks"}, "online": {"periods": "periods", "choices": "choices"},
               "classification": {"classes": "classes", "months": "months", "curves": "curve",
                                  "classification": "classification"}}
_CLASSIFICATION_QUALITY_COLUMNS = ["scope", "week", "submitted", "evaluated", "unlabelled", "predicted_small",
                                   *QUALITY_KEYS, "model", "train_size"]


def load_meta(out_dir: str | os.PathLike[str]) -> dict:
    path = Path(out_dir) / "campaign.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{out_dir}: not a campaign directory (no campaign.json)") from None
    except ValueError as exc:
        raise CampaignError(f"{path}: unreadable ({exc})") from None


def consolidate(out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Rebuild the tidy tables of ``out_dir`` from its stored runs (rows in spec order)."""
    import pandas as pd

    out = Path(out_dir)
    meta = load_meta(out)
    kind = meta["kind"]
    labels = KIND_LABELS[kind]
    runs: list[dict] = []
    tables: dict[str, list[dict]] = {"runs": runs, **{name: [] for name in KIND_TABLES[kind]}}
    for sd in meta["specs"]:
        path = out / "runs" / f"{sd['run_id']}.json"
        if not path.exists():
            continue
        rec = json.loads(path.read_text())
        if rec.get("status") != "ok":
            continue
        lab = {k: sd["labels"].get(k) for k in labels}
        key = {"run_id": sd["run_id"], **lab}
        if kind == "offline":
            runs.append({**key, "trace": sd["trace"], "weeks": sd["weeks"], "resample_seed": sd["resample_seed"],
                         **rec["summary"]})
            tables["weeks"].extend({**key, **w} for w in rec["weeks"])
        elif kind == "online":
            runs.append({**key, "trace": sd["trace"], "weeks": sd["weeks"], "resample_seed": sd["resample_seed"],
                         **rec["summary"]})
            short = {"run_id": sd["run_id"], "resample": lab["resample"], "strategy": lab["strategy"]}
            tables["periods"].extend({**short, **p} for p in rec["periods"])
            tables["choices"].extend({**short, **c} for c in rec["choices"])
        else:
            runs.append({**key, "source": sd["trace"], "seed": sd["resample_seed"], **rec["summary"]})
            short = {"run_id": sd["run_id"], "trace": lab["trace"], "policy": lab["policy"],
                     "variant": lab["variant"]}
            for name, field_name in KIND_TABLES[kind].items():
                tables[name].extend({**short, **r} for r in rec[field_name])
    short_cls = ["run_id", "trace", "policy", "variant"]
    columns = {
        "weeks": ["run_id", *labels, "week", "jobs", "avg_wait", "max_wait", "avg_bsld", "total_wait"],
        "periods": ["run_id", "resample", "strategy", "week", "start", "jobs", "sum_wait", "max_wait"],
        "choices": ["run_id", "resample", "strategy", "period", "start", "policy"],
        "classes": [*short_cls, "class", "jobs", "avg_bsld", "avg_wait", "max_wait", "killed_jobs", "wasted_work"],
        "months": [*short_cls, "month", "start_day", "jobs", "avg_bsld", "avg_wait", "max_wait"],
        "curves": [*short_cls, "point", "day", "cumulative_bsld"],
        "classification": [*short_cls, *_CLASSIFICATION_QUALITY_COLUMNS],
    }
    written = {}
    for name, rows in tables.items():
        df = pd.DataFrame(rows, columns=columns.get(name)) if rows or name in columns else pd.DataFrame(
            columns=["run_id", *labels])
        if name == "classification" and len(df):
            df["week"] = df["week"].astype("Int64")  # the overall row has no week
            df["train_size"] = df["train_size"].astype("Int64")
        path = out / f"{name}.csv"
        atomic_write_text(path, df.to_csv(index=False))
        written[name] = path
    return written


# --- CLI -----------------------------------------------------------------------------------


def cmd_campaign(args: argparse.Namespace) -> int:
    from bftune.experiments.report import build_report

    try:
        if args.report_only:
            target = args.out
            if target is None and args.config and Path(args.config).is_dir():
                target = args.config
            if target is None:
                raise CampaignError("--report-only needs the campaign directory: --report-only DIR or --out DIR")
            path = build_report(target, load_meta(target))
            print(f"wrote {path}")
            return 0
        if not args.config:
            raise CampaignError("give a campaign config: bftune campaign CONFIG --out DIR")
        if not args.out:
            raise CampaignError("give the output directory: --out DIR")
        campaign = load_config(args.config)
        outcome = run_campaign(campaign, args.out, workers=args.workers, dask=args.dask,
                               progress=not args.no_progress)
    except CampaignError as exc:
        print(f"bftune: error: {exc}", file=sys.stderr)
        return 2
    print(f"campaign {campaign.name}: {outcome.done} runs done, {outcome.reused} reused, "
          f"{len(outcome.failures)} failed, of {outcome.total}, in {outcome.wall_s:.1f} s on {outcome.executor}")
    print(f"tables and report in {outcome.out_dir} (report.md)")
    if outcome.failures:
        print(format_failures(outcome.failures), file=sys.stderr)
    return outcome.exit_code


def add_campaign_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``campaign CONFIG --out DIR [--dask ADDR] [--workers N] [--report-only]``."""
    p = subparsers.add_parser(
        "campaign", help="run a campaign of simulations from a TOML config (offline tuning, online selection, "
                         "small/large classification)",
        description="Run every simulation of a campaign config, in parallel, storing each run as it finishes; "
                    "an interrupted campaign resumes where it stopped. Shipped configs: "
                    f"{CONFIG_DIR}. Relative trace paths in configs are relative to the repository root.")
    p.add_argument("config", nargs="?", help="campaign TOML file (with --report-only: the campaign directory)")
    p.add_argument("--out", metavar="DIR", help="campaign directory (results, tables, report)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask scheduler (e.g. tcp://host:8786)")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"local worker processes (default {default_workers()}; 1 = inline in this process)")
    p.add_argument("--report-only", action="store_true", help="only rebuild report.md and plots from the tables")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_campaign)
    return p
