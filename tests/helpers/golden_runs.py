"""Reading Batsim's recorded out_jobs.csv and finding the jobs our run places otherwise (the golden tests)."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

from bftune.schedulers.core import machines as ms


def read_golden(path: Path) -> dict[str, dict]:
    """Rows of a recorded out_jobs.csv (plain or .gz) by job id, without the workload prefix."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:
        return {row["job_id"].split("!")[-1]: row for row in csv.DictReader(fh)}


def mismatches(result, golden: dict[str, dict], compare_alloc: bool = True) -> list[tuple]:
    """(time, job, our start, Batsim's start, our machines, Batsim's) of every job that differs, by time."""
    bad = []
    assert {r.id for r in result.runs} == set(golden), "job sets differ"
    for run in result.runs:
        g = golden[run.id]
        same = (float(g["starting_time"]) == run.start and float(g["finish_time"]) == run.end
                and g["final_state"] == run.state)
        if compare_alloc:
            same = same and ms.parse(g["allocated_resources"]) == run.alloc
        if not same:
            bad.append((min(run.start, float(g["starting_time"])), run.id, run.start, g["starting_time"],
                        ms.to_string(run.alloc), g["allocated_resources"]))
    return sorted(bad)
