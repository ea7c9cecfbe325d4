"""The score collection's execution: the campaigns' resumable loop over the windows.

Every finished window is written to ``DIR/windows/<index>.json`` at once
(atomically) by this coordinating process, which holds the directory's lock
(``.campaign.lock``) meanwhile: the one resumable store of campaigns and tune
(:mod:`bftune.support.store`) in the collection's layout
(:data:`bftune.learning.index.collect.COLLECTION`).  ``finish`` turns the
stored windows into ``scores.csv``, the fits, tables and plots.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from bftune.experiments.campaign.executors import check_workers
from bftune.experiments.campaign.loop import Work, run_work
from bftune.support.files import atomic_write_text
from bftune.support.store import Store
from bftune.learning.index import collect as col


def run_collection(settings: col.Settings, out_dir: str | Path, *, workers: int | None = None, dask=None,
                   array: str = "numpy", progress: bool = True, stream=None) -> col.CollectionOutcome:
    """Run every window of ``settings`` not yet stored in ``out_dir``; store each as it finishes.

    On the campaigns' loop (``campaign/loop.py``: inline, local processes or
    Dask; worker deaths; interrupts) under their directory lock, with the
    trial throughput of this invocation as the progress line's detail.
    """
    stream = stream if stream is not None else sys.stderr
    out = Path(out_dir)
    col.check_settings(settings)
    if dask is None:
        check_workers(workers)
    fn = col.WORKERS.get(array)
    if fn is None:
        raise col.CollectionError(f"--array: expected numpy, cupy or torch, got {array!r}")
    if array != "numpy":
        col.array_namespace(array)  # fail early, here, if the accelerator is not installed
    items = col.plan(settings)
    store = Store.open(out, col.COLLECTION)
    with store.lock():
        store.remove_leftovers()
        col.prepare_dir(out, settings)
        done_before = col.stored(out, settings.digest())
        todo = [it for it in items if it["index"] not in done_before]
        failures: list[dict] = []
        cpu = 0.0

        def header(executor: str) -> str:
            return (f"learn-index: {len(items)} windows x {settings.trials} trials, {len(done_before)} already "
                    f"stored, {len(todo)} to run on {executor} ({array})")

        def keep(result: dict) -> bool:
            nonlocal cpu
            if result.get("status") == "ok":
                store.keep(result["index"], result)
                cpu += result.get("cpu_s", 0.0)
                return True
            store.keep_failure(result["index"], result)
            failures.append(result)
            return False

        def throughput(done: int, seconds: float) -> str:
            return f"{done * settings.trials / max(seconds, 1e-9):,.0f} trials/s"

        ran = run_work(Work(fn=fn, items=todo, count=len(todo), total=len(items), lost=_lost, store=keep,
                            header=header, stored_in=str(store.items_dir), noun="windows", label="learn-index",
                            detail=throughput),
                       workers=workers, dask=dask, progress=progress, stream=stream)
    return col.CollectionOutcome(windows=len(items), reused=len(done_before), done=ran.done, failures=failures,
                                 wall_s=ran.wall_s, trials_run=ran.done * settings.trials, cpu_s=cpu,
                                 executor=ran.executor)


def _lost(item: dict, exc: BaseException) -> dict:
    """The failure record of a window lost with its worker."""
    return {"run_id": item["run_id"], "index": item["index"], "status": "failed",
            "error": f"{type(exc).__name__}: {exc} (the worker running it died or was lost)",
            "traceback": "".join(traceback.format_exception(exc))}


def finish(settings: col.Settings, out_dir: str | Path) -> tuple[Path, list]:
    """scores.csv from the stored windows, then the fits, tables and plots."""
    from bftune.learning.index.report import write_fits

    out = Path(out_dir)
    records = list(col.stored(out, settings.digest()).values())
    scores = col.score_rows(records)
    path = out / "scores.csv"
    atomic_write_text(path, scores.to_csv(index=False))
    fits = write_fits(out, scores, settings.identity())
    return path, fits


