"""Ablations behind the PV-EASY report's explanations of its gaps (not a test: it prints a table).

Each row changes one thing against the campaign's EASY / EASY-Last / PV-EASY runs
(``pv_easy_study.toml``: cleaning ``ran``, FCFS, the fairness monitor on) and prints
the figures of the study's Tables 1, 2 and 4 and the MBS / MWBS:

- ``EASY, machines model``: batsched's reservation rule instead of the count model;
- ``EASY, overruns run to their end``: jobs whose runtime exceeds their walltime
  run it all (walltime raised to the runtime) instead of being killed at the walltime;
- ``EASY-Last, no walltime fallback``: a job running past its prediction keeps its
  predicted end (in the past) instead of being planned to its walltime - what a
  scheduler that never revises a prediction does;
- ``EASY-Last, spec cleaning``: SPEC section 1's job set (overruns dropped);
- ``PV-EASY, wait from the requeue``: the same PV-EASY run, its MBS / MWBS computed
  with a preempted job's wait counted from its last requeue (the kill) instead of
  its original submission (SPEC 3's rule) - what a simulator that resubmits a killed
  job as a new one would report;
- ``--virtual X``: Figure 4's claim instead (PV-EASY better than FCFS-EASY and
  SJF-EASY at every prediction error): FCFS-EASY, SJF-EASY and PV-EASY with the
  virtual predictor at error X (seed 1), each as the campaign runs it and with
  predictions never revised.

    uv run python -m bftune.experiments.ablations_pveasy                  # CTC-SP2 on 430 processors
    uv run python -m bftune.experiments.ablations_pveasy TRACE.swf.gz --procs 1152
    uv run python -m bftune.experiments.ablations_pveasy --virtual 0.1
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from bftune.experiments.campaign.kinds.pveasy import virtual_options
from bftune.experiments.local_run import run_local
from bftune.schedulers.core.jobs import EndState
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.state import MachineState
from bftune.workloads.model import Trace
from bftune.workloads.swf import read_swf

KILLED = EndState.COMPLETED_KILLED.value
CTC = Path(__file__).resolve().parents[1].parent / "shared" / "workloads" / "CTC-SP2-1996-3.1-cln.swf.gz"


class NeverRevised(MachineState):
    """Running jobs keep their predicted end even once it has passed (no fallback to the walltime)."""

    def refresh_overdue(self, now: float) -> None:
        pass


def overruns_to_their_end(trace: Trace) -> Trace:
    return trace.with_jobs([dataclasses.replace(j, walltime=max(j.walltime, j.runtime)) for j in trace.jobs])


def row(name: str, trace: Trace, options: dict, machine: type[MachineState] | None = None) -> tuple[dict, object]:
    config = SchedulerConfig.from_options({**options, "fairness": True})
    if machine is not None:  # swap the core's machine state before anything runs
        build = config.build

        def build_with(m: int):
            core = build(m)
            core.machine = machine(m)
            return core

        config = _Config(config, build_with)
    summary, result = run_local(trace, config)
    f = summary["fairness"]
    out = {"ablation": name, "jobs": summary["jobs"], "MBS": summary["avg_bsld"], "MWBS": summary["mwbs"],
            "blocked": f["blocked_jobs"], "blocked_one_pass": f["blocked_jobs_one_pass"],
            "backfilled": f["backfilled_jobs"],
            "delayed": f["strict_fairness_violations"], "delay_mean_min": f["unfair_delay_mean"] / 60,
            "violations": f["reservation_violations"], "dtr_mean_min": f["reservation_violation_mean"] / 60}
    return out, result


def from_requeue(result, tau: float = 10.0) -> tuple[float, float]:
    """MBS and MWBS with each job's wait counted from its final run's own submission (a rerun: its requeue)."""
    final = [r for r in result.runs if r.state != KILLED]
    bsld = [max((r.end - r.subtime) / max(r.end - r.start, tau), 1.0) for r in final]
    weights = [r.procs for r in final]
    return sum(bsld) / len(bsld), sum(b * q for b, q in zip(bsld, weights)) / sum(weights)


class _Config:
    """A SchedulerConfig whose ``build`` is replaced (everything else delegated)."""

    def __init__(self, config: SchedulerConfig, build) -> None:
        self._config, self.build = config, build

    def __getattr__(self, name):
        return getattr(self._config, name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?", default=str(CTC))
    ap.add_argument("--procs", type=int, default=430)
    ap.add_argument("--virtual", type=float, metavar="X", help="Figure 4's ablation at prediction error X")
    args = ap.parse_args(argv)
    ran = read_swf(args.trace, cleaning="ran", max_procs=args.procs)
    if args.virtual is not None:
        rows = virtual_rows(ran, args.virtual)
    else:
        rows = main_rows(ran, args.trace, args.procs)
    cols = list(rows[0])
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v)
                         for v in r.values()), flush=True)
    return 0


def virtual_rows(ran: Trace, error: float) -> list[dict]:
    rows = []
    for strategy in ("FCFS-EASY", "SJF-EASY", "PV-EASY"):
        options = virtual_options(strategy, "FCFS", error, 1)
        rows.append(row(f"{strategy}, virtual {error:g} (campaign)", ran, options)[0])
        rows.append(row(f"{strategy}, virtual {error:g}, never revised", ran, options, NeverRevised)[0])
    return rows


def main_rows(ran: Trace, trace: str, procs: int) -> list[dict]:
    rows = [
        row("EASY (campaign)", ran, {})[0],
        row("EASY, machines model", ran, {"reservation": "machines"})[0],
        row("EASY, overruns run to their end", overruns_to_their_end(ran), {})[0],
        row("EASY-Last (campaign)", ran, {"predictor": "last"})[0],
        row("EASY-Last, no walltime fallback", ran, {"predictor": "last"}, NeverRevised)[0],
        row("EASY-Last, spec cleaning", read_swf(trace, max_procs=procs), {"predictor": "last"})[0],
    ]
    pv, result = row("PV-EASY (campaign)", ran, {"scheduler": "pv-easy", "predictor": "last"})
    mbs, mwbs = from_requeue(result)
    return rows + [pv, {**pv, "ablation": "PV-EASY, wait from the requeue", "MBS": mbs, "MWBS": mwbs}]


if __name__ == "__main__":
    sys.exit(main())
