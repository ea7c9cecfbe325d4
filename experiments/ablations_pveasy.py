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
- ``--blocked-groups``: Figures 2-3's claim instead (big blocked jobs, q > m/4, have a
  lower MBS / MWBS under PV-EASY than under EASY): see :func:`blocked_rows`;
- ``--virtual X``: Figure 4's claim instead (PV-EASY better than FCFS-EASY and
  SJF-EASY at every prediction error): FCFS-EASY, SJF-EASY and PV-EASY with the
  virtual predictor at error X (seed 1), each as the campaign runs it and with
  predictions never revised.

    uv run python -m bftune.experiments.ablations_pveasy                  # CTC-SP2 on 430 processors
    uv run python -m bftune.experiments.ablations_pveasy TRACE.swf.gz --procs 1152
    uv run python -m bftune.experiments.ablations_pveasy --virtual 0.1
    uv run python -m bftune.experiments.ablations_pveasy TRACE.swf.gz --procs 1152 --blocked-groups
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

import numpy as np

from bftune.experiments.campaign.kinds.pveasy import virtual_options
from bftune.experiments.local_run import run_local
from bftune.experiments.metrics import merge_jobs
from bftune.experiments.outjobs import runs_columns
from bftune.schedulers.core.jobs import EndState
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.state import MachineState
from bftune.schedulers.hooks.fairness import FairnessMonitor
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


class _Config:
    """A SchedulerConfig whose ``build`` is replaced (everything else delegated)."""

    def __init__(self, config: SchedulerConfig, build) -> None:
        self._config, self.build = config, build

    def __getattr__(self, name):
        return getattr(self._config, name)


def configured(options: dict, machine: type[MachineState] | None = None,
               monitor: FairnessMonitor | None = None) -> SchedulerConfig | _Config:
    """The configuration of ``options`` with the fairness monitor on, its machine state and monitor swapped."""
    config = SchedulerConfig.from_options({**options, "fairness": True})
    if machine is None and monitor is None:
        return config
    build = config.build

    def build_with(m: int):  # swap the core's parts before anything runs
        core = build(m)
        if machine is not None:
            core.machine = machine(m)
        if monitor is not None:
            core.hooks = [monitor if isinstance(h, FairnessMonitor) else h for h in core.hooks]
        return core

    return _Config(config, build_with)


def row(name: str, trace: Trace, options: dict, machine: type[MachineState] | None = None) -> tuple[dict, object]:
    config = configured(options, machine)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?", default=str(CTC))
    ap.add_argument("--procs", type=int, default=430)
    ap.add_argument("--blocked-groups", action="store_true", help="Figures 2-3's ablation (blocked jobs by size)")
    ap.add_argument("--virtual", type=float, metavar="X", help="Figure 4's ablation at prediction error X")
    args = ap.parse_args(argv)
    ran = read_swf(args.trace, cleaning="ran", max_procs=args.procs)
    if args.blocked_groups:
        rows = blocked_rows(ran)
    elif args.virtual is not None:
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


class BlockedTimes(FairnessMonitor):
    """The fairness monitor, also noting when each blocked job was first blocked (its first pass as h)."""

    def __init__(self) -> None:
        super().__init__()
        self.first_blocked: dict[str, float] = {}

    def after_pass(self, core, now: float, decisions) -> None:
        n = len(self.reserved)
        super().after_pass(core, now, decisions)
        if len(self.reserved) > n:  # a dict keeps insertion order: the new key is the last one
            self.first_blocked[next(reversed(self.reserved))] = now


@dataclasses.dataclass
class JobTable:
    """One run's jobs, sorted by id: what Figures 2-3 need, and where each blocked job's wait went."""

    m: int
    ids: np.ndarray
    q: np.ndarray
    submit: np.ndarray  # r_j
    requeue: np.ndarray  # the final run's own submission (r_j if never killed)
    start: np.ndarray  # the final run's start
    runtime: np.ndarray
    kills: np.ndarray
    first_blocked: np.ndarray  # the first pass that stopped at the job (nan: never blocked)
    blocked: np.ndarray
    blocked_one_pass: np.ndarray

    def bsld(self, since: np.ndarray | None = None, tau: float = 10.0) -> np.ndarray:
        since = self.submit if since is None else since
        p = np.maximum(self.runtime, tau)
        return np.maximum((self.start + self.runtime - since) / p, 1.0)


def job_table(trace: Trace, options: dict, machine: type[MachineState] | None = None) -> JobTable:
    monitor = BlockedTimes()
    _, result = run_local(trace, configured(options, machine, monitor))
    jobs = merge_jobs(runs_columns(result.runs))
    order = np.argsort(jobs["job"])
    ids = jobs["job"][order]
    requeue = {r.first_id: r.subtime for r in result.runs if r.state != KILLED}
    first = monitor.first_blocked
    return JobTable(m=trace.max_procs, ids=ids, q=jobs["procs"][order].astype(float), submit=jobs["submit"][order],
                    requeue=np.array([requeue[i] for i in ids]), start=jobs["start"][order],
                    runtime=jobs["runtime"][order], kills=jobs["kills"][order],
                    first_blocked=np.array([first.get(i, np.nan) for i in ids]),
                    blocked=np.array([i in monitor.reserved for i in ids]),
                    blocked_one_pass=np.array([i in monitor.blocked_one_pass for i in ids]))


def _mbs(b: np.ndarray, q: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    if not mask.any():
        return math.nan, math.nan
    return float(b[mask].mean()), float((b[mask] * q[mask]).sum() / q[mask].sum())


def queue_ahead(t: JobTable, mask: np.ndarray) -> str:
    """At each masked job's submission r_j, the jobs of higher (FCFS) priority whose final run has not started.

    Mean count, of which preempted at some point, and their work in machine-hours
    (q * final runtime / m): what the job has to wait behind before it reaches the head.
    """
    order = np.lexsort((t.ids, t.submit))
    start, submit, kills = t.start[order], t.submit[order], t.kills[order]
    work = t.q[order] * t.runtime[order]
    counts, preempted, hours = [], [], []
    for j in np.flatnonzero(mask[order]):
        waiting = start[:j] > submit[j]
        counts.append(waiting.sum())
        preempted.append((waiting & (kills[:j] > 0)).sum())
        hours.append(work[:j][waiting].sum() / 3600 / t.m)
    return f"{np.mean(counts):.1f} ({np.mean(preempted):.1f}), {np.mean(hours):.2f}"


def _group(name: str, easy: JobTable, pv: JobTable, e_mask: np.ndarray, p_mask: np.ndarray,
           p_since: np.ndarray | None = None, tau: float = 10.0, ahead: bool = False) -> dict:
    """One row of :func:`blocked_rows`: a job set (``e_mask`` under EASY, ``p_mask`` under PV-EASY)."""
    e_mbs, e_mwbs = _mbs(easy.bsld(tau=tau), easy.q, e_mask)
    p_mbs, p_mwbs = _mbs(pv.bsld(p_since, tau), pv.q, p_mask)
    hours = 3600.0

    def split(t: JobTable, mask: np.ndarray) -> str:
        if not mask.any():
            return "-"
        wait = (t.start - t.submit)[mask].mean() / hours
        if np.isnan(t.first_blocked[mask]).any():  # not only jobs this scheduler blocked: no split
            return f"{wait:.2f}"
        before = (t.first_blocked - t.submit)[mask].mean() / hours
        after = (t.start - t.first_blocked)[mask].mean() / hours
        return f"{wait:.2f} = {before:.2f} + {after:.2f}"

    def bsld_split(t: JobTable, mask: np.ndarray, since: np.ndarray | None) -> str:
        """MBS = (r_j -> first blocked)/p + (first blocked -> start)/p + runtime/p, p = max(runtime, tau)."""
        if not mask.any() or since is not None or np.isnan(t.first_blocked[mask]).any():
            return "-"
        p = np.maximum(t.runtime[mask], tau)
        before = ((t.first_blocked - t.submit)[mask] / p).mean()
        after = ((t.start - t.first_blocked)[mask] / p).mean()
        return f"{before:.1f} + {after:.1f} + {(t.runtime[mask] / p).mean():.2f}"

    return {"jobs": name, "n EASY": int(e_mask.sum()), "n PV": int(p_mask.sum()),
            "MBS EASY": e_mbs, "MBS PV": p_mbs, "MWBS EASY": e_mwbs, "MWBS PV": p_mwbs,
            "PV better": f"{'yes' if p_mbs < e_mbs else 'no'}/{'yes' if p_mwbs < e_mwbs else 'no'}",
            "wait h EASY (to h + as h)": split(easy, e_mask), "wait h PV (to h + as h)": split(pv, p_mask),
            "MBS EASY (to h + as h + run)": bsld_split(easy, e_mask, None),
            "MBS PV (to h + as h + run)": bsld_split(pv, p_mask, p_since),
            "PV kills/job": float(pv.kills[p_mask].mean()) if p_mask.any() else math.nan,
            "ahead EASY: jobs (preempted), machine-h": queue_ahead(easy, e_mask) if ahead else "-",
            "ahead PV": queue_ahead(pv, p_mask) if ahead else "-"}


def blocked_rows(ran: Trace) -> list[dict]:
    """Figures 2-3 taken apart (the study: big blocked jobs, q > m/4, better off under PV-EASY).

    EASY and PV-EASY (Last Model) as the campaign runs them.  Each row is one
    job set (``n EASY`` / ``n PV`` jobs) and gives, under each scheduler:

    - ``MBS`` / ``MWBS`` and ``PV better`` (for MBS / MWBS);
    - ``wait h``: the mean wait in hours, for a set of jobs that scheduler
      blocked split into submission -> first blocked pass (the time to reach
      the head of the FCFS queue) + first blocked pass -> final start (the
      time spent as the blocked head and after: what strict fairness acts on);
    - ``MBS (to h + as h + run)``: the same split of the MBS itself, each part
      over max(runtime, tau) (the bound at 1 left out: the parts add up to
      the MBS up to it);
    - ``PV kills/job``: how often PV-EASY preempted the set's jobs themselves;
    - ``ahead``: at each job's submission, the jobs of higher priority whose
      final run had not started (mean count, of which jobs preempted at some
      point, and their work in machine-hours): the queue it must get through
      before it reaches the head (only on the first and the "both" rows).

    The job sets:

    - ``big|small, own blocked (campaign)``: the campaign's Figures 2-3, each
      scheduler's own blocked jobs (different job sets);
    - ``big, own blocked, one pass``: blocked counted once per instant
      (``blocked_jobs_one_pass``); ``big (q >= m/4), own blocked``: the other
      reading of "larger than a quarter";
    - ``big|small, blocked under both`` / ``big, blocked under EASY`` /
      ``under PV-EASY``: the same jobs under both schedulers;
    - ``big, every job`` and ``every job``: blocked or not;
    - ``big, own blocked, PV wait from the requeue``: PV-EASY's slowdowns
      with a preempted job's wait counted from its last requeue;
    - ``big, own blocked, PV never killed`` / ``PV killed``: PV-EASY's big
      blocked jobs split by whether they were preempted themselves;
    - ``..., PV-EASY no walltime fallback``: a second PV-EASY run whose
      overrun predictions are never revised to the walltime (``NeverRevised``);
    - ``..., PV-EASY exact predictions``: a third PV-EASY run with the exact
      predictor instead of Last Model (fewer wrong ventures).
    """
    easy = job_table(ran, {})
    pv = job_table(ran, {"scheduler": "pv-easy", "predictor": "last"})
    if not np.array_equal(easy.ids, pv.ids):
        raise ValueError("EASY and PV-EASY ran different job sets")
    m = ran.max_procs
    big, small, ge = easy.q > m / 4, easy.q <= m / 4, easy.q >= m / 4
    eb, pb = easy.blocked, pv.blocked
    both = eb & pb
    everyone = np.ones(len(easy.ids), dtype=bool)
    rows = [
        _group("big, own blocked (campaign)", easy, pv, eb & big, pb & big, ahead=True),
        _group("small, own blocked (campaign)", easy, pv, eb & small, pb & small),
        _group("big, own blocked, one pass", easy, pv, easy.blocked_one_pass & big, pv.blocked_one_pass & big),
        _group("big (q >= m/4), own blocked", easy, pv, eb & ge, pb & ge),
        _group("big, blocked under both", easy, pv, both & big, both & big, ahead=True),
        _group("big, blocked under EASY", easy, pv, eb & big, eb & big),
        _group("big, blocked under PV-EASY", easy, pv, pb & big, pb & big),
        _group("small, blocked under both", easy, pv, both & small, both & small),
        _group("big, every job", easy, pv, big, big),
        _group("every job", easy, pv, everyone, everyone),
        _group("big, own blocked, PV wait from the requeue", easy, pv, eb & big, pb & big, pv.requeue),
        _group("big, own blocked, PV never killed", easy, pv, eb & big, pb & big & (pv.kills == 0)),
        _group("big, own blocked, PV killed", easy, pv, eb & big, pb & big & (pv.kills > 0)),
    ]
    fallback = job_table(ran, {"scheduler": "pv-easy", "predictor": "last"}, NeverRevised)
    rows.append(_group("big, own blocked, PV-EASY no walltime fallback", easy, fallback, eb & big,
                       fallback.blocked & big))
    exact = job_table(ran, {"scheduler": "pv-easy", "predictor": "exact"})
    rows.append(_group("big, own blocked, PV-EASY exact predictions", easy, exact, eb & big, exact.blocked & big))
    rows.append(_group("every job, PV-EASY exact predictions", easy, exact, everyone, everyone))
    return rows


if __name__ == "__main__":
    sys.exit(main())
