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

from bftune.experiments.campaign import Progress, make_executor
from bftune.files import atomic_write_text
from bftune.learning.index import collect as col


class TrialProgress(Progress):
    """The campaigns' progress bar, with the trial throughput of this invocation appended."""

    def __init__(self, *args, trials_per_window: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.trials_per_window = trials_per_window

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        rate = self.done * self.trials_per_window / elapsed if elapsed > 0 else 0.0
        return f"{super().line()} | {rate:,.0f} trials/s"


def run_collection(settings: col.Settings, out_dir: str | Path, *, workers: int | None = None, dask=None,
                   array: str = "numpy", progress: bool = True, stream=None) -> col.CollectionOutcome:
    """Run every window of ``settings`` not yet stored in ``out_dir``; store each as it finishes."""
    stream = stream if stream is not None else sys.stderr
    out = Path(out_dir)
    col.check_settings(settings)
    items = col.plan(settings)
    col.prepare_dir(out, settings)
    digest = settings.digest()
    done_before = col.stored(out, digest)
    todo = [it for it in items if it["index"] not in done_before]
    executor = make_executor(workers, dask) if todo else make_executor(1)
    fn = col.WORKERS[array] if array in col.WORKERS else None
    if fn is None:
        raise col.CollectionError(f"--array: expected numpy, cupy or torch, got {array!r}")
    if array != "numpy":
        col.array_namespace(array)  # fail early, here, if the accelerator is not installed
    if progress:
        stream.write(f"learn-index: {len(items)} windows x {settings.trials} trials, {len(done_before)} already "
                     f"stored, {len(todo)} to run on {executor.description} ({array})\n")
    bar = TrialProgress(len(items), len(done_before), stream, enabled=progress, trials_per_window=settings.trials)
    bar.draw(force=True)
    failures: list[dict] = []
    done, cpu = 0, 0.0
    t0 = time.monotonic()
    try:
        for item, result in executor.run(fn, todo):
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
                bar.update(True)
            else:
                atomic_write_text(out / "failures" / name, json.dumps(result, indent=1) + "\n")
                failures.append(result)
                bar.update(False)
    except KeyboardInterrupt:
        bar.close()
        stream.write(f"interrupted: {len(done_before) + done} of {len(items)} windows are stored in "
                     f"{out}/windows; run the same command again to resume\n")
        raise
    finally:
        executor.close()
    bar.close()
    wall = time.monotonic() - t0
    return col.CollectionOutcome(windows=len(items), reused=len(done_before), done=done, failures=failures,
                                 wall_s=wall, trials_run=done * settings.trials, cpu_s=cpu,
                                 executor=executor.description)


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


