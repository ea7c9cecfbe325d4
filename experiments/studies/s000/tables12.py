"""Study 000's Tables 1 and 2: AvgWait and MaxWait on the original traces, simulated here and with ocst.

The extra step of the reproduction: one JSON file per simulation under ``DIR/tables12/`` (resumable), with
bftune and, when ``ocs-obps`` (the study's own simulator) is installed, with it too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bftune.experiments.reproduce.markdown import diff, num, table
from bftune.experiments.runs.metrics import aggregate
from bftune.experiments.reproduce.study import Execution, published
from bftune.experiments.studies.s001 import naming
from bftune.support.files import atomic_write_text
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.swf import read_swf
from bftune.workloads.swf_write import write_swf

#: (trace, EASY policy of both queues) -> published AvgWait (s), MaxWait (s) or None.
TABLES12: dict[tuple[str, str], tuple[int, int | None]] = {
    (row["trace"], row["policy"]): (row["avg_wait"], row.get("max_wait")) for row in published(__file__)["tables12"]}
OCS_CRITERION = {policy: criterion for criterion, policy in naming.OCS_BEHAVES_AS.items()}


def traces(scale: str) -> tuple[str, ...]:
    """The original traces the tables simulate (at every scale)."""
    return tuple(sorted({t for t, _ in TABLES12}))


def extra(scale: str, out: Path, execution: Execution) -> list[str]:
    """Tables 1-2 on the original traces (one JSON file per simulation: resumable)."""
    folder = out / "tables12"
    folder.mkdir(parents=True, exist_ok=True)
    ocs = naming.ocs_available()
    for name in traces(scale):
        base = read_swf(execution.archive.path(name))
        for policy in (p for t, p in TABLES12 if t == name):
            path = folder / f"{name}_{policy}_bftune.json"
            if not path.exists():
                result = simulate(base.jobs, base.max_procs, SchedulerConfig(policy=policy).build(base.max_procs))
                agg = aggregate(wait=[r.start - r.original_submit for r in result.runs])
                atomic_write_text(path, json.dumps({"avg_wait": agg.avg_wait, "max_wait": agg.max_wait}))
            opath = folder / f"{name}_{policy}_ocs.json"
            if ocs is not None and not opath.exists():
                atomic_write_text(opath, json.dumps(_ocs_waits(ocs, base, OCS_CRITERION[policy], folder)))
    return [] if ocs else ["study 000: ocs-obps not installed: Tables 1-2 without the study's simulator"]


def _ocs_waits(ocs: str, base, criterion: str, folder: Path) -> dict:
    swf, schedule = folder / ".trace.swf", folder / ".schedule.swf"
    try:
        write_swf(base, swf)
        subprocess.run([ocs, "oneshot", str(swf), criterion, f"--backfill={criterion}", f"--output={schedule}"],
                       check=True, capture_output=True, timeout=3600)
        waits = [float(line.split()[2]) for line in schedule.read_text().splitlines() if line.strip()]
        agg = aggregate(wait=waits)
        return {"avg_wait": agg.avg_wait, "max_wait": agg.max_wait, "criterion": criterion}
    finally:
        swf.unlink(missing_ok=True)
        schedule.unlink(missing_ok=True)


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def section(out: Path) -> str:
    rows = []
    for (name, policy), (avg, mx) in TABLES12.items():
        ours = _load(out / "tables12" / f"{name}_{policy}_bftune.json") or {}
        ocs = _load(out / "tables12" / f"{name}_{policy}_ocs.json") or {}
        label = "EXP (LEXP)" if policy == "LEXP" else policy
        rows.append([name, f"EASY-{label}", avg, num(ours.get("avg_wait")), diff(ours.get("avg_wait"), avg),
                     num(ocs.get("avg_wait")), mx or "-", num(ours.get("max_wait"), 0), num(ocs.get("max_wait"), 0)])
    return ("## Original traces (Tables 1 and 2)\n\n"
            "AvgWait and MaxWait (s) of EASY with the same policy in both queues on the original (default-cleaned) "
            "traces: ours, and the study's own simulator (ocst) where installed." + simulators(out) + "\n\n"
            + table(["trace", "scheduler", "published AvgWait", "ours", "diff", "ocst", "published MaxWait",
                     "ours MaxWait", "ocst MaxWait"], rows))


def simulators(out: Path) -> str:
    """How far ours and ocst lie apart, AvgWait and MaxWait separately, and what is known of why."""
    spread_ = spread(out)
    if not spread_:
        return ""
    return (f" Ours against ocst: {spread_}. The known differences between the simulators are their tie rules "
            "(study 001's report, `../shared/tools/build-ocst.sh` trap 11); a maximum wait is one job's, which a "
            "few tie decisions can move far. That they account for every difference here was not checked job by "
            "job.")


def spread(out: Path) -> str:
    """AvgWait's and MaxWait's relative differences, ours against ocst, over Tables 1-2 ('' if ocst not run)."""
    avg, worst = [], []
    for name, policy in TABLES12:
        ours = _load(out / "tables12" / f"{name}_{policy}_bftune.json") or {}
        ocs = _load(out / "tables12" / f"{name}_{policy}_ocs.json") or {}
        if ours and ocs:
            avg.append(100.0 * (ours["avg_wait"] / ocs["avg_wait"] - 1.0))
            worst.append((100.0 * (ours["max_wait"] / ocs["max_wait"] - 1.0), name, policy,
                          ours["max_wait"], ocs["max_wait"]))
    if not avg:
        return ""
    far = max(worst, key=lambda w: abs(w[0]))
    return (f"AvgWait {min(avg):+.1f} to {max(avg):+.1f} %, MaxWait {min(w[0] for w in worst):+.1f} to "
            f"{max(w[0] for w in worst):+.1f} % (most on {far[1]} EASY-{far[2]}: {far[3]:,.0f} s against "
            f"{far[4]:,.0f} s)")
