"""What a worker does with one run: spec in, record out (never an exception for a run's own error)."""

from __future__ import annotations

import datetime as _dt
import os
import socket
import time
import traceback

from bftune.experiments.campaign import script
from bftune.experiments.campaign.kinds import get_kind
from bftune.experiments.campaign.kinds.kind import SHARED_REPLAYS
from bftune.experiments.campaign.specs import RESULT_FORMAT, RunSpec


def spec_of(item: dict) -> dict:
    """The spec's dict of a worker's item (without the period replays it may carry)."""
    return {k: v for k, v in item.items() if k != SHARED_REPLAYS}


def execute_run(item: dict) -> dict:
    """Run one spec; a crashed run is returned as a failure record with its traceback.

    ``item`` is the spec's dict, with the period replays its group shares under
    ``SHARED_REPLAYS`` for the kinds that share them (not part of the stored spec).
    """
    t0, c0 = time.perf_counter(), time.process_time()
    spec_dict = spec_of(item)
    record = {"format": RESULT_FORMAT, "run_id": spec_dict.get("run_id"), "spec": spec_dict,
              "worker": f"{socket.gethostname()}:{os.getpid()}"}
    script.running_a_run = True  # a plug-in module imported now that starts a campaign is refused
    try:
        spec = RunSpec.from_dict(spec_dict)
        kind = get_kind(spec.kind)
        shared = item.get(SHARED_REPLAYS)
        record.update(status="ok", **(kind.run(spec, shared) if shared is not None else kind.run(spec)))
    except Exception as exc:  # a crashed run is reported, the campaign goes on
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    finally:
        script.running_a_run = False
    record["elapsed_s"] = round(time.perf_counter() - t0, 3)
    record["cpu_s"] = round(time.process_time() - c0, 3)
    record["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
    return record


def lost_run(spec_dict: dict, exc: BaseException) -> dict:
    """The failure record of a run whose worker died or was lost (the exception says how)."""
    return {"format": RESULT_FORMAT, "run_id": spec_dict["run_id"], "spec": spec_dict, "status": "failed",
            "error": f"{type(exc).__name__}: {exc} (the worker running it died or was lost; run the campaign "
                     "again to retry it)",
            "traceback": "".join(traceback.format_exception(exc))}
