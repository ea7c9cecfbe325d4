"""A short Batsim conversation through the Batsim driver, for ``bftune accelerate``'s self-check.

The compiled build includes the Batsim protocol and driver; the self-check
runs this conversation in a fresh process under each core and requires the
same replies, as it requires the same out_jobs.csv from the local driver.
The conversation is valid whatever EASY decides: three jobs on four
processors, the first taking the whole machine, so the others wait for its
end and then start side by side; then a kill acknowledged (the safeguard's
path: COMPLETED_KILLED, JOB_KILLED, a rerun registered).

    python -m bftune.experiments.runs.driverprobe     # prints the replies, one JSON line each
"""

from __future__ import annotations

import json

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.batsim.driver import BatsimDriver


def _event(t: float, kind: str, **data: object) -> dict:
    return {"timestamp": t, "type": kind, "data": data}


def _job(name: str, t: float, res: int, walltime: float, delay: int) -> dict:
    return _event(t, "JOB_SUBMITTED", job_id=f"w0!{name}",
                  job={"id": f"w0!{name}", "subtime": t, "res": res, "walltime": walltime, "profile": f"d{delay}",
                       "user": 1})


def conversation() -> list[dict]:
    m = 4
    profiles = {f"d{d}": {"type": "delay", "delay": d} for d in (10, 5, 100)}
    config = {"dynamic-jobs-enabled": True, "dynamic-jobs-acknowledged": True, "profile-reuse-enabled": True}
    begins = _event(0.0, "SIMULATION_BEGINS", nb_resources=m, nb_compute_resources=m, nb_storage_resources=0,
                    allow_compute_sharing=False, allow_storage_sharing=True, config=config,
                    compute_resources=[{"id": i, "name": f"h{i}", "state": "idle", "properties": {},
                                        "zone_properties": {}} for i in range(m)],
                    storage_resources=[], workloads={}, profiles={"w0": profiles})
    return [
        {"now": 0.0, "events": [begins]},
        {"now": 0.0, "events": [_job("1", 0.0, 4, 20.0, 10)]},
        {"now": 1.0, "events": [_job("2", 1.0, 2, 20.0, 5), _job("3", 1.0, 2, 200.0, 100)]},
        {"now": 10.0, "events": [_event(10.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                        return_code=0, alloc="0-3"),
                                 _event(10.0, "NOTIFY", type="no_more_static_job_to_submit")]},
        {"now": 15.0, "events": [_event(15.0, "JOB_COMPLETED", job_id="w0!2", job_state="COMPLETED_SUCCESSFULLY",
                                        return_code=0, alloc="0-1")]},
    ]


def replies() -> list[dict]:
    """The driver's replies to :func:`conversation` and a kill (EASY-SPF, every run killed once after 30 s)."""
    driver = BatsimDriver(SchedulerConfig(policy="SPF", kill_after=30).build)
    out = [driver.handle(message) for message in conversation()]
    # The long job (100 s) is killed when its wake-up comes at 40 s, acknowledged, and its rerun registered,
    # started, acknowledged as submitted, and ended.
    rerun = {"id": "w0!3#1", "subtime": 40.0, "res": 2, "walltime": 200.0, "profile": "d100", "user": 1}
    for message in (
            {"now": 40.0, "events": [_event(40.0, "REQUESTED_CALL")]},
            {"now": 40.0, "events": [
                _event(40.0, "JOB_COMPLETED", job_id="w0!3", job_state="COMPLETED_KILLED", return_code=-1,
                       alloc="2-3"),
                _event(40.0, "JOB_KILLED", job_ids=["w0!3"], job_progress={"w0!3": {"progress": 0.3}})]},
            {"now": 40.0, "events": [_event(40.0, "JOB_SUBMITTED", job_id="w0!3#1", job=rerun)]},
            {"now": 140.0, "events": [_event(140.0, "JOB_COMPLETED", job_id="w0!3#1",
                                             job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0-1")]},
            {"now": 140.0, "events": [_event(140.0, "SIMULATION_ENDS")]}):
        out.append(driver.handle(message))
    counts = {k: v for k, v in driver.stats.as_dict().items() if not k.endswith("_seconds")}  # times differ
    return out + [{"stats": counts, "progress": driver.progress(), "warnings": driver.warnings}]


def main() -> None:
    for reply in replies():
        print(json.dumps(reply, sort_keys=True))


if __name__ == "__main__":
    main()
