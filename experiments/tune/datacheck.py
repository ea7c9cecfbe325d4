"""The checks tune makes on a log before it searches: what the cleaning removed, and whether there is a queue.

An admin once got "keep EASY-FCFS, gained 0.0 %" after a 4-minute race of 49 identical candidates on a log
whose cleaning had dropped 80,197 of 121,039 records (no requested times: 0.3 % of the processor-time was
left), and the report said so only at its bottom.  So, before any candidate runs:

- **What the cleaning removed**: the share of the jobs and of the processor-time (the log read again with
  every job that ran, ``cleaning = ran``, requested times from runtimes where missing), the rules that
  removed them, and the remedy when one exists (``--walltime-from-runtime`` for a log without requested
  times, ``--cleaning keep-overruns`` for jobs that ran past their request, ``--procs`` for jobs larger
  than the machine).  Less than :data:`MIN_WORK_SHARE` of the processor-time left is refused in one line
  with the remedy; less than :data:`WARN_WORK_SHARE` is a note.
- **A queue to tune**: EASY-FCFS simulated on the whole kept log; an average wait under
  :data:`MIN_QUEUE_WAIT_S` means every candidate waits about nothing too, which tune cannot improve:
  refused in one line ("this machine has no queue to tune").

The figures go to the terminal (one ``data:`` line), the first screen of the report and
``recommendation.json`` (``data.checks``).
"""

from __future__ import annotations

import dataclasses
import math

from bftune.experiments.campaign.workloads import base_trace, source_key
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.replay import replay
from bftune.experiments.tune.candidates import BASELINE_OPTIONS
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.cleaning import DROP_RULES
from bftune.workloads.model import Trace

#: Below this share of the log's processor-time kept, the recommendation would be for another machine.
MIN_WORK_SHARE = 0.25
#: Below this share kept, a note says how much is missing.
WARN_WORK_SHARE = 0.75
#: EASY-FCFS's average wait on the whole log under this (seconds): no queue to tune.
MIN_QUEUE_WAIT_S = 60.0

#: The remedy of the rule that removed the most, when there is one.
REMEDIES = {
    "walltime_le_0": "--walltime-from-runtime (the log has no requested times: each job's runtime becomes its "
                     "request)",
    "walltime_lt_runtime": "--cleaning keep-overruns (keep the jobs that ran past their request, ended at it)",
    "procs_gt_machine": "--procs with the machine's real size",
    "runtime_le_0": "",
}


class DataRefused(ValueError):
    """The log cannot support a recommendation; the message says why and what to do."""


def check_data(spec, base: Trace, baseline: dict, synthetic: bool) -> dict:
    """The checks (module docstring) as a JSON object; :class:`DataRefused` when tune must not go on.

    ``spec``: the run spec the base trace was read with (its cleaning and options); ``baseline``: the
    whole-log EASY-FCFS figures (``avg_wait``, ``utilization``).
    """
    removed = {rule: base.cleaning.get(rule, 0) for rule in DROP_RULES if base.cleaning.get(rule, 0)}
    kept_work = math.fsum(j.runtime * j.procs for j in base.jobs)
    all_work = kept_work if synthetic or not removed else _all_work(spec)
    share = kept_work / all_work if all_work > 0 else 1.0
    top = max(removed, key=removed.__getitem__) if removed else None
    remedy = REMEDIES.get(top or "", "")
    out = {"jobs": len(base.jobs), "records": len(base.jobs) + sum(removed.values()), "removed": removed,
           "work_share_kept": share, "remedy": remedy or None,
           "baseline_avg_wait_s": baseline["avg_wait"], "baseline_utilization": baseline["utilization"],
           "baseline_label": baseline.get("label", "EASY-FCFS")}
    out["line"] = data_line(out)
    if share < MIN_WORK_SHARE:
        raise DataRefused(f"{out['line']}: what is left is not this machine's load (less than "
                          f"{MIN_WORK_SHARE:.0%} of its processor-time){'; try ' + remedy if remedy else ''}")
    if not baseline["avg_wait"] >= MIN_QUEUE_WAIT_S:
        raise DataRefused(f"{out['line']}: this machine has no queue to tune: {out['baseline_label']} simulated on the whole "
                          f"log waits {baseline['avg_wait']:.0f} s on average, so every order waits about as "
                          "little")
    return out


def data_line(checks: dict) -> str:
    """The one line the terminal shows first."""
    removed = checks["removed"]
    what = ", ".join(f"{rule} {count:,}" for rule, count in sorted(removed.items(), key=_by_count))
    dropped = sum(removed.values())
    text = (f"data: {checks['jobs']:,} jobs kept of {checks['records']:,} records "
            f"({checks['jobs'] / max(checks['records'], 1):.0%}), {checks['work_share_kept']:.1%} of the "
            f"processor-time; ")
    text += f"removed {dropped:,} ({what})" if dropped else "nothing removed"
    text += (f"; {checks.get('baseline_label', 'EASY-FCFS')} on the whole log: AvgWait {checks['baseline_avg_wait_s'] / 3600:.2f} h, utilization "
             f"{checks['baseline_utilization']:.0%}")
    if checks["remedy"] and checks["work_share_kept"] < WARN_WORK_SHARE:
        text += f"; to keep more: {checks['remedy']}"
    return text


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _all_work(spec) -> float:
    """The processor-time of every job that ran (``cleaning = ran``, missing requests from runtimes)."""
    every = dataclasses.replace(spec, cleaning="ran", walltime_from_runtime=True, run_id="x")
    trace = base_trace(*source_key(every))
    return math.fsum(j.runtime * j.procs for j in trace.jobs)


def replay_of(base: Trace, tau: float, site: dict | None = None) -> dict | None:
    """How far the simulator reproduces the log's machine under EASY-FCFS, or the ``site``'s own setting (its
    slurm.conf): None when the log records no waits."""
    if not any(job.wait >= 0 for job in base.jobs):
        return None
    return replay(base, SchedulerConfig.from_options(site or BASELINE_OPTIONS), tau).as_dict()


def whole_log_baseline(base: Trace, tau: float, fidelity: dict | None, site: dict | None = None) -> dict:
    """EASY-FCFS (or the ``site``'s slurm.conf setting) on the whole kept log: from the replay when there was one
    (same simulation), else run now."""
    label = "the site's slurm.conf" if site else "EASY-FCFS"
    if fidelity is not None:
        return {"avg_wait": fidelity["simulated"]["avg_wait"], "utilization": fidelity["simulated"]["utilization"],
                "label": label}
    summary, _ = run_local(base, SchedulerConfig.from_options(site or {}), tau=tau)
    return {"avg_wait": summary["avg_wait"], "utilization": summary["utilization"], "label": label}
