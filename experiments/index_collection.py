"""The score collection's execution: the campaigns' executors and progress bar over the windows.

Every finished window is written to ``DIR/windows/<index>.json`` at once
(atomically) by this coordinating process; ``finish`` turns the stored
windows into ``scores.csv``, the fits, tables and plots.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

from bftune.experiments.campaign.executors import check_workers, completed, open_backend
from bftune.experiments.progress import Progress
from bftune.files import atomic_write_text
from bftune.learning.index import collect as col


def run_collection(settings: col.Settings, out_dir: str | Path, *, workers: int | None = None, dask=None,
                   array: str = "numpy", progress: bool = True, stream=None) -> col.CollectionOutcome:
    """Run every window of ``settings`` not yet stored in ``out_dir``; store each as it finishes.

    The campaigns' backends (inline, local processes, Dask) and their one
    loop (``completed``), and the one progress line with the trial throughput
    of this invocation as its detail.
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
    col.prepare_dir(out, settings)
    done_before = col.stored(out, settings.digest())
    todo = [it for it in items if it["index"] not in done_before]
    backend = open_backend(workers if todo else 1, dask if todo else None)
    if progress:
        stream.write(f"learn-index: {len(items)} windows x {settings.trials} trials, {len(done_before)} already "
                     f"stored, {len(todo)} to run on {backend.description} ({array})\n")
    bar = Progress(len(items), len(done_before), stream, enabled=progress, label="learn-index")
    bar.draw(force=True)
    failures: list[dict] = []
    done, cpu = 0, 0.0
    t0 = time.monotonic()
    finished = False
    try:
        for item, result in completed(backend.executor, fn, todo, backend.capacity):
            if isinstance(result, BaseException):
                result = {"run_id": item["run_id"], "index": item["index"], "status": "failed",
                          "error": f"{type(result).__name__}: {result} (the worker running it died or was lost)",
                          "traceback": "".join(traceback.format_exception(result))}
            name = f"{item['index']:05d}.json"
            if result.get("status") == "ok":
                atomic_write_text(out / "windows" / name, json.dumps(result, separators=(",", ":")) + "\n")
                (out / "failures" / name).unlink(missing_ok=True)
                done += 1
                cpu += result.get("cpu_s", 0.0)
            else:
                atomic_write_text(out / "failures" / name, json.dumps(result, indent=1) + "\n")
                failures.append(result)
                bar.failed += 1
            rate = done * settings.trials / max(time.monotonic() - t0, 1e-9)
            bar.set(done, f"{rate:,.0f} trials/s")
        finished = True
    except KeyboardInterrupt:
        bar.close()
        stream.write(f"interrupted: {len(done_before) + done} of {len(items)} windows are stored in "
                     f"{out}/windows; run the same command again to resume\n")
        raise
    finally:
        backend.executor.shutdown(wait=finished)  # not finished: stop the workers now
        backend.close()
    bar.close()
    wall = time.monotonic() - t0
    return col.CollectionOutcome(windows=len(items), reused=len(done_before), done=done, failures=failures,
                                 wall_s=wall, trials_run=done * settings.trials, cpu_s=cpu,
                                 executor=backend.description)


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


