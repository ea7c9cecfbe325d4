"""Helpers shared by the EASY evidence tests (on pytest's pythonpath: ``import easy_support``)."""

from __future__ import annotations

import gzip
from pathlib import Path

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord

# --- running our simulator ------------------------------------------------------


def run_ours(jobs, m, policy="FCFS", backfill_policy=None, theta=float("inf"),
             backfill=True, **options):
    """Our simulator on (id, submit, procs, runtime, walltime) tuples; returns SimResult.

    Without backfilling there is no backfilling order: ``backfill_policy`` is then dropped.
    """
    cfg = SchedulerConfig(policy=policy, backfill_policy=backfill_policy if backfill else None, threshold=theta,
                          reservation="count", backfill=backfill, **options)
    return simulate(to_records(jobs), m, cfg.build(m))


def to_records(jobs):
    out = []
    for j in jobs:
        if isinstance(j, JobRecord):
            out.append(j)
        elif isinstance(j, dict):
            out.append(JobRecord(id=int(j["id"]), submit=j["submit"], procs=int(j["procs"]),
                                 runtime=j["runtime"], walltime=j["walltime"]))
        else:
            i, r, q, p, w = j
            out.append(JobRecord(id=int(i), submit=r, procs=int(q), runtime=p, walltime=w))
    return out


def starts_ends(result) -> dict:
    """{seq: (start, end)} from a SimResult without kills (one run per job)."""
    out = {}
    for run in result.runs:
        assert run.seq not in out, f"job {run.seq} ran twice"
        out[run.seq] = (run.start, run.end)
    return out


def machine_ids(alloc) -> list[int]:
    """Sorted machine ids from inclusive (a, b) intervals."""
    ids: list[int] = []
    for a, b in alloc:
        ids.extend(range(a, b + 1))
    return sorted(ids)


def first_difference(ours: dict, ref: dict, jobs) -> str:
    """A readable description of the earliest-starting job on which two schedules differ."""
    by_id = {(j[0] if isinstance(j, tuple) else j.id): j for j in jobs}
    diffs = sorted((min(ours.get(k, (float("inf"),))[0], ref.get(k, (float("inf"),))[0]), k)
                   for k in set(ours) | set(ref) if ours.get(k) != ref.get(k))
    if not diffs:
        return "no difference"
    _, k = diffs[0]
    return (f"{len(diffs)} jobs differ; first: job {k} {by_id.get(k)} ours={ours.get(k)} "
            f"reference={ref.get(k)}")


# --- a minimal private SWF reader (docs/semantics/workloads.md#cleaning) -----------------------


def read_swf_head(path: Path, n_jobs: int):
    """The first ``n_jobs`` kept jobs of an SWF file, cleaned per docs/semantics/workloads.md#cleaning.

    Returns (m, jobs) with jobs as (id, submit, procs, runtime, walltime)
    tuples sorted by (submit, id).  procs = field 8, or field 5 when field 8
    <= 0 (dropped if both are); drop runtime <= 0, walltime <= 0, walltime <
    runtime and procs > m.  m = MaxProcs from the header, else MaxNodes.  A
    trace with no requested time at all (lublin_256) uses walltime = runtime.
    This is independent of ``bftune.workloads.swf`` on purpose.
    """
    header: dict[str, str] = {}
    rows = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="latin-1") as fh:
        for line in fh:
            s = line.strip()
            if not s:
                continue
            if s.startswith(";"):
                body = s[1:].strip()
                if ":" in body:
                    k, v = body.split(":", 1)
                    header.setdefault(k.strip(), v.strip())
                continue
            f = s.split()
            assert len(f) == 18, f"{path}: malformed line {s!r}"
            rows.append([int(float(x)) for x in f])
            # enough raw rows: cleaning drops only a few percent on these traces
            if len(rows) >= 4 * n_jobs + 1000:
                break
    m = int(header.get("MaxProcs") or header["MaxNodes"])
    no_walltimes = all(r[8] <= 0 for r in rows)
    jobs = []
    for r in rows:
        jid, submit, runtime, alloc, req, wall = r[0], r[1], r[3], r[4], r[7], r[8]
        procs = req if req > 0 else alloc
        if no_walltimes:
            wall = runtime
        if procs <= 0 or runtime <= 0 or wall <= 0 or wall < runtime or procs > m:
            continue
        jobs.append((jid, submit, procs, runtime, wall))
        if len(jobs) == n_jobs:
            break
    jobs.sort(key=lambda j: (j[1], j[0]))
    return m, jobs
