"""A score collection: many windows, each stored as soon as it is done, resumable.

``collect(settings, out_dir)`` draws the windows (seeded), runs every window
not yet stored through an executor (inline, local processes or Dask: the
campaigns' executors and progress bar), writes ``windows/<index>.json``
atomically after each one, and finally ``scores.csv`` (one row per Q job:
window, job id, p, q, r, score).  Re-running the same command skips the
stored windows; a directory holding a collection with other settings is an
error naming the first differing setting.

Seeds: window start positions come from ``SeedSequence([seed, 0x5eed])``;
window i's permutations from ``SeedSequence([seed, i, position])``, drawn in
batches of :data:`~bftune.learning.index.trials.BATCH` - so a window's scores
depend on the settings alone, not on the executor, the number of workers or
the order windows finish in.

The directory is the one resumable store's (:mod:`bftune.support.store`, with
campaigns' runs and tune's weeks), in the layout :data:`COLLECTION`:
``windows/<index>.json`` (compact JSON), ``failures/<index>.json``,
``collection.json`` (the settings: another collection in the directory is
refused), the lock and the clean-up of leftovers.  The layout is here, with
the collection, since ``learning/`` may not import the campaigns above it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import traceback
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from bftune.support.store import JsonForm, Layout, Store
from bftune.learning.index import SYNTHETIC_JOBS
from bftune.learning.index import trials as tr

FORMAT = 1


class CollectionError(ValueError):
    """Bad settings or output directory; the message names the option or file."""


#: The collection's layout of the one resumable store (module docstring); JSON as ``json.dumps`` writes it.
COLLECTION = Layout(what="collection", identity="collection.json", items="windows", file="{:05d}.json",
                    item_form=JsonForm(indent=None, separators=(",", ":"), strict=False),
                    failure_form=JsonForm(indent=1, strict=False), identity_form=JsonForm(indent=1, strict=False),
                    error=CollectionError)


@dataclass(frozen=True)
class Settings:
    """Everything that determines a collection's scores."""

    source: str  # "synthetic" or a trace file
    windows: int
    trials: int
    procs: int = tr.DEFAULT_PROCS
    warmup: int = tr.DEFAULT_WARMUP
    queue: int = tr.DEFAULT_QUEUE
    seed: int = 1
    tau: float = tr.DEFAULT_TAU
    synthetic_jobs: int = SYNTHETIC_JOBS

    def identity(self) -> dict:
        d = asdict(self)
        if self.source != "synthetic":
            d.pop("synthetic_jobs")
        return d

    def digest(self) -> str:
        return hashlib.sha256(json.dumps({"format": FORMAT, **self.identity()}, sort_keys=True).encode()).hexdigest()[:16]


@lru_cache(maxsize=2)
def source_jobs(source: str, procs: int, synthetic_jobs: int, seed: int) -> tuple:
    """The jobs windows are cut from (cached per worker process)."""
    if source == "synthetic":
        from bftune.workloads.synthetic import generate

        return tuple(generate(synthetic_jobs, procs, seed).jobs)
    from bftune.workloads.read import read_workload

    return tuple(read_workload(source).jobs)


def check_settings(s: Settings) -> None:
    tr.check_sizes(s.warmup, s.queue, s.procs)
    if isinstance(s.trials, bool) or not isinstance(s.trials, int) or s.trials < 1:
        raise CollectionError(f"--trials: expected a positive integer, got {s.trials!r}")
    if isinstance(s.windows, bool) or not isinstance(s.windows, int) or s.windows < 1:
        raise CollectionError(f"--windows: expected a positive integer, got {s.windows!r}")
    if not s.tau > 0:
        raise CollectionError(f"--tau: expected a positive number of seconds, got {s.tau!r}")
    if s.source != "synthetic" and not Path(s.source).is_file():
        what = "not a regular file" if Path(s.source).exists() else "no such file"  # /dev/zero, a FIFO: not read
        raise CollectionError(f"--source {s.source}: {what} (give synthetic or an SWF / Batsim JSON trace)")
    if s.source == "synthetic" and s.synthetic_jobs < s.warmup + s.queue:
        raise CollectionError(f"--synthetic-jobs: at least {s.warmup + s.queue} jobs, got {s.synthetic_jobs}")


def plan(s: Settings) -> list[dict]:
    """One work item per window (plain dicts: they travel to worker processes and Dask)."""
    jobs = source_jobs(s.source, s.procs, s.synthetic_jobs, s.seed)
    try:
        positions = tr.window_positions(len(jobs), s.windows, s.warmup, s.queue, s.seed)
        too_big = [j for j in jobs if j.procs > s.procs]
        if too_big:
            raise tr.TrialError(f"--procs {s.procs}: smaller than job {too_big[0].id}'s size ({too_big[0].procs} "
                                f"processors) in {s.source}; {len(too_big)} jobs do not fit")
    except tr.TrialError as exc:
        raise CollectionError(str(exc)) from None
    settings = asdict(s)
    return [{"run_id": f"window-{i:05d}", "index": i, "position": pos, "settings": settings}
            for i, pos in enumerate(positions)]


def collect_window(item: dict, xp_name: str = "numpy") -> dict:
    """Score one window (runs in a worker); never raises on the window's own error."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = {"format": FORMAT, "run_id": item["run_id"], "index": item["index"], "position": item["position"]}
    try:
        s = Settings(**item["settings"])
        jobs = source_jobs(s.source, s.procs, s.synthetic_jobs, s.seed)
        window = tr.make_window(jobs, item["index"], item["position"], s.warmup, s.queue, s.procs)
        res = tr.window_scores(window, s.trials, s.procs, s.tau, s.seed, xp=array_namespace(xp_name))
        q = slice(window.warmup, None)
        out.update(status="ok", digest=s.digest(), trials=res.trials, ids=list(window.ids[window.warmup:]),
                   p=window.runtime[q].tolist(), q=window.procs[q].tolist(), r=window.submit[q].tolist(),
                   score=res.scores.tolist(), first_count=res.first_count.tolist(),
                   first_sum=res.first_sum.tolist(), total=res.total, mean_avg_bsld=res.mean_avg_bsld,
                   min_avg_bsld=res.min_avg_bsld, max_avg_bsld=res.max_avg_bsld)
    except Exception as exc:  # reported with its window, the collection goes on
        out.update(status="failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    out["elapsed_s"] = round(time.perf_counter() - t0, 4)
    out["cpu_s"] = round(time.process_time() - c0, 4)
    out["worker"] = f"{os.uname().nodename}:{os.getpid()}"
    return out


def collect_window_numpy(item: dict) -> dict:
    return collect_window(item, "numpy")


def collect_window_cupy(item: dict) -> dict:
    return collect_window(item, "cupy")


def collect_window_torch(item: dict) -> dict:
    return collect_window(item, "torch")


WORKERS = {"numpy": collect_window_numpy, "cupy": collect_window_cupy, "torch": collect_window_torch}


def array_namespace(name: str):
    """numpy (default), or an optional accelerator namespace running the same kernel."""
    if name == "numpy":
        return np
    try:
        if name == "cupy":
            import cupy

            return cupy  # cupy mirrors every numpy function the kernel uses
        if name == "torch":
            import array_api_compat.torch as xp_torch  # the standard's names over torch
            import torch

            torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
            return xp_torch
    except ImportError as exc:
        raise CollectionError(f"--array {name}: not installed ({exc.name}); the default numpy path needs "
                              "nothing more") from None
    raise CollectionError(f"--array: expected numpy, cupy or torch, got {name!r}")


def stored(out: Path, digest: str) -> dict[int, dict]:
    """Readable, finished windows of this collection, by index (an unreadable one is run again)."""
    return {int(rec["index"]): rec for _, rec in Store(out, COLLECTION).records()
            if rec.get("status") == "ok" and rec.get("digest") == digest}


def prepare_dir(out: Path, s: Settings) -> None:
    """Refuse a directory holding another collection; make its folders and write its identity (under the lock)."""
    store = Store(out, COLLECTION)
    unreadable = CollectionError(f"{store.identity_path}: unreadable; remove it or use another --out")
    try:
        meta = store.read_identity()
    except CollectionError:
        raise unreadable from None
    if meta is not None:
        previous = meta.get("settings")
        if not isinstance(previous, dict):
            raise unreadable
        mine = s.identity()
        for key in mine:
            if previous.get(key) != mine[key]:
                raise CollectionError(f"{out} holds a collection with {key} = {previous.get(key)!r}, not "
                                      f"{mine[key]!r}: use another --out, or the same options to resume")
    store.make_folders()
    store.write_identity({"format": FORMAT, "settings": s.identity(), "digest": s.digest()})


def score_rows(records: list[dict]):
    """The tidy score table (pandas) of stored windows, in window order."""
    import pandas as pd

    rows = []
    for rec in sorted(records, key=lambda r: r["index"]):
        for k, job in enumerate(rec["ids"]):
            rows.append({"window": rec["index"], "job": job, "p": rec["p"][k], "q": rec["q"][k],
                         "r": rec["r"][k], "score": rec["score"][k], "first_count": rec["first_count"][k],
                         "trials": rec["trials"]})
    return pd.DataFrame(rows, columns=["window", "job", "p", "q", "r", "score", "first_count", "trials"])


@dataclass
class CollectionOutcome:
    windows: int
    reused: int
    done: int
    failures: list[dict]
    wall_s: float
    trials_run: int
    cpu_s: float
    executor: str

    @property
    def trials_per_s(self) -> float:
        return self.trials_run / self.wall_s if self.wall_s > 0 else float("nan")
