"""Which order each published policy name of study 001 really is: evidence from the study's own simulator.

Study 001's tables were computed with ocst, Valentin Reis's OCaml EASY
simulator (the ``obps-article`` line, installed by
``../shared/tools/build-ocst.sh`` as ``ocs-obps``; a measuring instrument
only, never part of bftune).  In that line every criterion is sorted
*highest value first* (see the build script's trap 2), so its criterion
``spf`` (value p~) runs Longest-Processing-time-First, ``lqf`` (value -q)
runs Smallest-resource-First, but ``srf`` (value q/p~) runs
Smallest-Ratio-p~/q-First and ``mexpfact`` (the expansion factor itself) runs
Largest-EXpansion-factor-First.  :data:`OCS_BEHAVES_AS` is that mapping,
read off the criteria's definitions and checked here by running both
simulators on the same traces (their starts differ only by tie rules).

:func:`measure` runs, on the same resampled traces, every ocst criterion
(``ocs-obps threshold``, 40 h) and every policy of bftune (EASY(P, 40 h))
and sums the waits; :func:`evidence_rows` then sets each published column of
study 001's Table 3 beside (a) bftune's policy of that name, (b) bftune's
policy of the opposite name, (c) the ocst criterion that *behaves* as the
name and (d) the ocst criterion whose *name* is the opposite one (``LRF`` ->
``srf``).  The published columns match (d) for every name: the study's
analysis swapped S and L in every criterion name, which turns ocst's
inverted names right for p~, q and area (SPF, SQF, SAF and their opposites)
but swaps the ratio and expansion-factor columns (LRF/SRF, LEXP/SEXP).

Results are checkpointed one JSON file per (trace, resample, simulator,
policy), so an interrupted measurement resumes.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bftune.experiments.reproduce.study import published
from bftune.support.files import atomic_write_text
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.resample import resample
from bftune.workloads.swf import read_swf
from bftune.workloads.swf_write import write_swf

OCS_BINARY = "ocs-obps"
THRESHOLD_S = 40 * 3600  # Theta of study 001's fixed policies
WEEKS = 104  # two-year resampled traces

#: ocst criterion -> the bftune policy it behaves as (every criterion sorted highest first).
OCS_BEHAVES_AS = {
    "wait": "FCFS", "mwait": "LCFS",
    "spf": "LPF", "lpf": "SPF",
    "sqf": "LQF", "lqf": "SQF",
    "saf": "LAF", "laf": "SAF",
    "srf": "SRF", "lrf": "LRF",
    "mexpfact": "LEXP", "expfact": "SEXP",
}
#: ocst criterion whose name is the opposite of a published name (S <-> L; LEXP <-> expfact, SEXP <-> mexpfact).
OCS_BY_SWAPPED_NAME = {
    "FCFS": "wait", "LCFS": "mwait",
    "SPF": "lpf", "LPF": "spf", "SQF": "lqf", "LQF": "sqf", "SAF": "laf", "LAF": "saf",
    "SRF": "lrf", "LRF": "srf", "LEXP": "expfact", "SEXP": "mexpfact",
}
OPPOSITE = {"SPF": "LPF", "LPF": "SPF", "SQF": "LQF", "LQF": "SQF", "SAF": "LAF", "LAF": "SAF",
            "SRF": "LRF", "LRF": "SRF", "SEXP": "LEXP", "LEXP": "SEXP", "LCFS": "LCFS"}
POLICIES = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF")

#: Study 001, Table 3 (``published.toml``): total-wait change (%) of EASY(P, 40 h) against EASY(FCFS, 40 h).
_TABLE3 = published(__file__)["table3"]
TABLE3_COLUMNS: tuple[str, ...] = tuple(_TABLE3["columns"])
TABLE3: dict[str, tuple[int, ...]] = {t: tuple(v) for t, v in _TABLE3["values"].items()}


def ocs_available() -> str | None:
    """The path of the ocst binary, or None (the evidence table is then skipped, with a note)."""
    return shutil.which(OCS_BINARY)


@dataclass(frozen=True)
class Measurement:
    trace: str  # short name (KTH-SP2)
    path: str  # SWF file
    resamples: int
    seed: int
    weeks: int = WEEKS


def _result_path(out: Path, trace: str, r: int, sim: str, policy: str) -> Path:
    return out / f"{trace}_r{r}_{sim}_{policy}.json"


def measure(m: Measurement, out: Path, ocs: str) -> None:
    """Run every missing (resample, simulator, policy) of ``m``; one JSON file each, written atomically."""
    out.mkdir(parents=True, exist_ok=True)
    base = read_swf(m.path)
    for r in range(m.resamples):
        todo_ocs = [c for c in OCS_BEHAVES_AS if not _result_path(out, m.trace, r, "ocs", c).exists()]
        todo_ours = [p for p in POLICIES if not _result_path(out, m.trace, r, "bftune", p).exists()]
        if not todo_ocs and not todo_ours:
            continue
        trace = resample(base, m.weeks, m.seed + r)
        if todo_ocs:
            swf = out / f".{m.trace}_r{r}.swf"
            write_swf(trace, swf)
            try:
                for criterion in todo_ocs:
                    _write(out, m.trace, r, "ocs", criterion, _ocs_total_wait(ocs, swf, criterion, out))
            finally:
                swf.unlink(missing_ok=True)
        for policy in todo_ours:
            config = SchedulerConfig(policy=policy, threshold=float(THRESHOLD_S))
            result = simulate(trace.jobs, trace.max_procs, config.build(trace.max_procs))
            total = math.fsum(run.start - run.original_submit for run in result.runs)
            _write(out, m.trace, r, "bftune", policy, total)


def _ocs_total_wait(ocs: str, swf: Path, criterion: str, out: Path) -> float:
    schedule = out / f".{swf.stem}_{criterion}.out"
    try:
        subprocess.run([ocs, "threshold", str(swf), f"--primary={criterion}", f"--backfill={criterion}",
                        f"--threshold={THRESHOLD_S}", f"--output={schedule}"],
                       check=True, capture_output=True, text=True, timeout=3600)
        # --output: SWF rows in start order, field 3 = the job's wait
        return math.fsum(float(line.split()[2]) for line in schedule.read_text().splitlines()
                         if line.strip() and ";" not in line)
    finally:
        schedule.unlink(missing_ok=True)


def _write(out: Path, trace: str, r: int, sim: str, policy: str, total_wait: float) -> None:
    atomic_write_text(_result_path(out, trace, r, sim, policy),
                      json.dumps({"trace": trace, "resample": r, "simulator": sim, "policy": policy,
                                  "total_wait": total_wait}))


def load(out: Path) -> dict[tuple[str, str, str], float]:
    """(trace, simulator, policy) -> total wait summed over the resamples measured for *every* policy."""
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    per: dict[tuple[str, int], dict[tuple[str, str], float]] = {}
    for row in rows:
        per.setdefault((row["trace"], row["resample"]), {})[(row["simulator"], row["policy"])] = row["total_wait"]
    totals: dict[tuple[str, str, str], float] = {}
    counts: dict[str, int] = {}
    for (trace, _), values in sorted(per.items()):
        if len(values) < len(POLICIES) + len(OCS_BEHAVES_AS):
            continue  # an interrupted resample: left out until complete
        counts[trace] = counts.get(trace, 0) + 1
        for (sim, policy), total in values.items():
            totals[(trace, sim, policy)] = totals.get((trace, sim, policy), 0.0) + total
    totals.update({(trace, "count", ""): float(n) for trace, n in counts.items()})
    return totals


def change(totals: dict, trace: str, sim: str, policy: str) -> float:
    """Study 001's eq. (12): total wait of P against that of FCFS, in %."""
    base = totals[(trace, sim, "wait" if sim == "ocs" else "FCFS")]
    return 100.0 * (totals[(trace, sim, policy)] - base) / base


def evidence_rows(totals: dict) -> list[dict]:
    """One row per (trace, published column): the published value beside the four candidate readings."""
    rows = []
    behaves = {policy: criterion for criterion, policy in OCS_BEHAVES_AS.items()}
    for trace, values in TABLE3.items():
        if (trace, "count", "") not in totals:
            continue
        for name, value in zip(TABLE3_COLUMNS, values):
            rows.append({
                "trace": trace, "column": name, "published": value,
                "bftune_same_name": change(totals, trace, "bftune", name),
                "bftune_opposite_name": change(totals, trace, "bftune", OPPOSITE[name]),
                "ocs_same_behaviour": change(totals, trace, "ocs", behaves[name]),
                "ocs_opposite_name": change(totals, trace, "ocs", OCS_BY_SWAPPED_NAME[name]),
                "ocs_criteria": f"{behaves[name]} / {OCS_BY_SWAPPED_NAME[name]}",
                "resamples": int(totals[(trace, "count", "")]),
            })
    return rows
