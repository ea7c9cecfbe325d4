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
  predictions never revised;
- ``--mbs-gap``: Figure 5's MBS gap (PV-EASY-Last against EASY) taken apart job by
  job - which jobs carry it (runtime, size, kills), which step of the pass started the
  killed runs, why short jobs wait, and PV-EASY variants (predictors, venture steps):
  see :func:`mbs_gap_rows`;
- ``--sjf X``: Figure 4's SJF-EASY read three ways (shortest prediction, shortest
  request, requests only): see :func:`sjf_rows`.

    uv run python -m bftune.experiments.ablations_pveasy                  # CTC-SP2 on 430 processors
    uv run python -m bftune.experiments.ablations_pveasy TRACE.swf.gz --procs 1152
    uv run python -m bftune.experiments.ablations_pveasy --virtual 0.1
    uv run python -m bftune.experiments.ablations_pveasy TRACE.swf.gz --procs 1152 --blocked-groups
    uv run python -m bftune.experiments.ablations_pveasy --mbs-gap
    uv run python -m bftune.experiments.ablations_pveasy --sjf 0.1
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path
from typing import cast

import numpy as np

from bftune.experiments.campaign.kinds.pveasy import virtual_options
from bftune.experiments.local_run import run_local
from bftune.experiments.metrics import merge_jobs
from bftune.experiments.outjobs import runs_columns
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.easy import shadow_time
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.policies import FormulaPolicy
from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.pveasy import _BY_ESTIMATE, PvEasy, _ending_within, _take_fitting
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.state import MachineState
from bftune.schedulers.hooks.fairness import FairnessMonitor
from bftune.workloads.model import NO_CLOCK, Trace, TraceClock
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
               monitor: FairnessMonitor | None = None, adapt=None) -> SchedulerConfig:
    """The configuration of ``options`` with the fairness monitor on, its machine state and monitor swapped.

    ``adapt(core)``, when given, changes the built core further (its algorithm) before anything runs.
    """
    config = SchedulerConfig.from_options({**options, "fairness": True})
    if machine is None and monitor is None and adapt is None:
        return config
    build = config.build

    def build_with(m: int, clock: TraceClock = NO_CLOCK,
                   replay_memo: dict[str, float] | None = None):  # swap the core's parts first
        core = build(m, clock, replay_memo)
        if machine is not None:
            core.machine = machine(m)
        if monitor is not None:
            core.hooks = [monitor if isinstance(h, FairnessMonitor) else h for h in core.hooks]
        if adapt is not None:
            adapt(core)
        return core

    return cast(SchedulerConfig, _Config(config, build_with))  # a SchedulerConfig in all but its class


def row(name: str, trace: Trace, options: dict, machine: type[MachineState] | None = None,
        adapt=None) -> tuple[dict, object]:
    config = configured(options, machine, adapt=adapt)
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
    ap.add_argument("--mbs-gap", action="store_true", help="Figure 5's MBS gap: which jobs carry it")
    ap.add_argument("--sjf", type=float, metavar="X", help="Figure 4's SJF-EASY read three ways at error X")
    args = ap.parse_args(argv)
    ran = read_swf(args.trace, cleaning="ran", max_procs=args.procs)
    if args.blocked_groups:
        tables = [blocked_rows(ran)]
    elif args.virtual is not None:
        tables = [virtual_rows(ran, args.virtual)]
    elif args.mbs_gap:
        tables = mbs_gap_rows(ran)
    elif args.sjf is not None:
        tables = [sjf_rows(ran, args.sjf)]
    else:
        tables = [main_rows(ran, args.trace, args.procs)]
    for rows in tables:
        print(" | ".join(rows[0]))
        for r in rows:
            print(" | ".join(f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v)
                             for v in r.values()), flush=True)
        print()
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
    runs: list = dataclasses.field(default_factory=list, repr=False)  # every run, killed ones included

    def bsld(self, since: np.ndarray | None = None, tau: float = 10.0) -> np.ndarray:
        since = self.submit if since is None else since
        p = np.maximum(self.runtime, tau)
        return np.maximum((self.start + self.runtime - since) / p, 1.0)


def job_table(trace: Trace, options: dict, machine: type[MachineState] | None = None, adapt=None) -> JobTable:
    monitor = BlockedTimes()
    _, result = run_local(trace, configured(options, machine, monitor, adapt))
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
                    blocked_one_pass=np.array([i in monitor.blocked_one_pass for i in ids]),
                    runs=list(result.runs))


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


class StepTags(PvEasy):
    """PV-EASY noting which step of a pass started each run: ``1`` (priority order), ``3a`` (venture
    backfilling, predicted to end by the reservation) or ``3b`` (venture, whatever its prediction).

    A job started in 3b has an estimate beyond the horizon: one within it would have been taken by 3a,
    which walks every waiting job while no fewer processors are free, so the tag is exact.
    """

    def __init__(self, priority: Order) -> None:
        super().__init__(priority)
        self.step: dict[str, str] = {}

    def schedule(self, core, now: float, decisions) -> None:
        n = len(decisions.starts)
        super().schedule(core, now, decisions)
        for job in decisions.starts[n:]:
            self.step.setdefault(job.id, "1")

    def _venture(self, core, head: Job, now: float, shadow: list[Job], decisions) -> None:
        n = len(decisions.starts)
        avail = core.machine.free.size + sum(job.procs for job in shadow)
        horizon = shadow_time(core.machine.by_end, avail, head.procs, {job.id for job in shadow})[0] - now
        super()._venture(core, head, now, shadow, decisions)
        for job in decisions.starts[n:]:
            self.step[job.id] = "3a" if job.estimate <= horizon else "3b"


class VentureRest(PvEasy):
    """PV-EASY whose venture step 3b (idle processors left after 3a) walks ``rest`` instead of the
    priority order, or is left out (``rest`` None); with ``extra``, step 3a also takes a job predicted
    to end after the reservation when it fits in the processors the head leaves over then (EASY's
    "extra nodes" rule, which the study's step 3 does not have)."""

    def __init__(self, priority: Order, rest: Order | None, extra: bool = False) -> None:
        super().__init__(priority)
        self.rest, self.extra = rest, extra

    def _venture(self, core, head: Job, now: float, shadow: list[Job], decisions) -> None:
        queue, machine = core.queue, core.machine
        free = machine.free.size
        reserve, avail, _ = shadow_time(machine.by_end, free + sum(job.procs for job in shadow), head.procs,
                                        {job.id for job in shadow})
        chosen: list[Job] = []
        taken = {head.id}
        if self.extra:
            extra = avail - head.procs
            for job in queue.iterate(_BY_ESTIMATE, now):
                within = job.estimate <= reserve - now
                if job.id not in taken and job.procs <= free and (within or job.procs <= extra):
                    chosen.append(job)
                    taken.add(job.id)
                    free -= job.procs
                    extra -= 0 if within else job.procs
                    if free == 0:
                        break
        else:
            free = _take_fitting(_ending_within(queue.iterate(_BY_ESTIMATE, now), reserve - now), free, taken,
                                 chosen)
        if self.rest is not None and free > 0 and free >= queue.min_procs:
            _take_fitting(queue.iterate(self.rest, now), free, taken, chosen)
        for job in chosen:
            core.start(job, ms.lowest(machine.free.intervals, job.procs), now, decisions)


@dataclasses.dataclass
class VentureRestAdapter:
    """An ``adapt`` for :func:`configured`: PV-EASY with :class:`VentureRest` (``rest = "priority"``: the
    priority order, as the study's step 3b); each algorithm built is appended to ``built``."""

    rest: Order | str | None
    extra: bool = False
    kind: type[VentureRest] | None = None
    built: list[VentureRest] = dataclasses.field(default_factory=list)

    def __call__(self, core) -> None:
        priority = core.algorithm.priority
        rest = priority if self.rest == "priority" else self.rest
        assert not isinstance(rest, str), "an order, None, or the word priority"
        core.algorithm = (self.kind or VentureRest)(priority, rest, self.extra)
        self.built.append(core.algorithm)


class WaitReasons(VentureRest):
    """Counts, at every venture pass (there are idle processors: venture runs only then), why each
    waiting job of a watched set (by SWF number) is or is not taken by step 3a: too wide for the
    idle processors, predicted to end after the head's reservation, or eligible (then taken, or
    beaten to the processors by other jobs); and the job's prediction at each of those passes."""

    watched: dict[int, str] = {}

    def __init__(self, priority: Order, rest, extra: bool = False) -> None:
        super().__init__(priority, rest, extra)
        self.reasons: dict[str, dict[str, int]] = {}
        self.predictions: dict[str, list[float]] = {}

    def _venture(self, core, head: Job, now: float, shadow: list[Job], decisions) -> None:
        free = core.machine.free.size
        reserve = shadow_time(core.machine.by_end, free + sum(job.procs for job in shadow), head.procs,
                              {job.id for job in shadow})[0]
        for job in core.queue.jobs.values():
            group = self.watched.get(job.seq)
            if group is None or job is head:
                continue
            reason = ("too wide" if job.procs > free
                      else "predicted past reservation" if job.estimate > reserve - now else "eligible")
            counts = self.reasons.setdefault(group, {})
            counts[reason] = counts.get(reason, 0) + 1
            self.predictions.setdefault(group, []).append(job.estimate)
        super()._venture(core, head, now, shadow, decisions)


def _reasons(ran: Trace) -> list[dict]:
    """Third table of :func:`mbs_gap_rows`: :class:`WaitReasons` for the short jobs, Last Model and exact."""
    WaitReasons.watched = {j.id: "p <= 10 s" if j.runtime <= 10 else "p in (10s, 10m]"
                           for j in ran.jobs if j.runtime <= 600}
    out = []
    for predictor in ("last", "exact"):
        adapt = VentureRestAdapter("priority", kind=WaitReasons)
        run_local(ran, configured({"scheduler": "pv-easy", "predictor": predictor}, adapt=adapt))
        algorithm = adapt.built[0]
        assert isinstance(algorithm, WaitReasons)
        for group, counts in sorted(algorithm.reasons.items()):
            total = sum(counts.values())
            out.append({"run": f"PV-EASY {predictor}", "jobs": group, "job-passes waiting": total,
                        **{k: counts.get(k, 0) / total for k in ("too wide", "predicted past reservation", "eligible")},
                        "median prediction s": float(np.median(algorithm.predictions[group]))})
    return out

    return adapt


def _gap_row(name: str, easy: JobTable, pv: JobTable, mask: np.ndarray, tau: float = 10.0) -> dict:
    """One job set under both schedulers; ``share of gap`` adds up to PV-EASY's MBS minus EASY's."""
    e, p = easy.bsld(tau=tau), pv.bsld(tau=tau)
    hours = 3600.0
    n = int(mask.sum())
    return {"jobs": name, "n": n, "MBS EASY": float(e[mask].mean()) if n else math.nan,
            "MBS PV": float(p[mask].mean()) if n else math.nan,
            "share of gap": float((p[mask] - e[mask]).sum() / len(e)),
            "wait h EASY": float((easy.start - easy.submit)[mask].mean() / hours) if n else math.nan,
            "wait h PV": float((pv.start - pv.submit)[mask].mean() / hours) if n else math.nan,
            "PV preempted": int((pv.kills[mask] > 0).sum()),
            "PV kills/job": float(pv.kills[mask].mean()) if n else math.nan}


def _seconds(x: float) -> str:
    return "0" if x == -math.inf else "inf" if x == math.inf else format_duration(x)


def _steps(pv: JobTable, tags: dict[str, str]) -> list[dict]:
    """Where PV-EASY's runs came from (step of the pass), which of them were killed, and the final
    runs of the jobs of p <= 10 s (how many each step started, after how long a wait)."""
    out = []
    tiny = {i for i, p in zip(pv.ids, pv.runtime) if p <= 10}
    for step in ("1", "3a", "3b"):
        runs = [r for r in pv.runs if tags.get(r.id) == step]
        killed = [r for r in runs if r.state == KILLED]
        done = [r for r in runs if r.state != KILLED]
        small = [r.start - r.original_submit for r in done if r.first_id in tiny]
        out.append({"step": step, "runs": len(runs), "killed": len(killed),
                    "killed share": len(killed) / max(len(runs), 1),
                    "wasted proc-h": sum(r.procs * (r.end - r.start) for r in killed) / 3600,
                    "killed: median job runtime s": _median([r.runtime for r in killed]),
                    "killed: median time run s": _median([r.end - r.start for r in killed]),
                    "killed: mean q": float(np.mean([r.procs for r in killed])) if killed else math.nan,
                    "finished: median runtime s": _median([r.end - r.start for r in done]),
                    "p <= 10 s jobs started": len(small),
                    "their wait h": float(np.mean(small)) / 3600 if small else math.nan})
    return out


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def mbs_gap_rows(ran: Trace) -> list[list[dict]]:
    """PV-EASY's MBS against EASY's (CTC-SP2: 15.34 against 10.56) taken apart, on the same jobs.

    EASY and PV-EASY-Last as the campaign runs them, plus PV-EASY with exact predictions.
    First table, one row per job set (the same jobs under both schedulers):

    - ``MBS EASY`` / ``MBS PV``: the set's mean bounded slowdown (tau = 10 s);
    - ``share of gap``: the set's sum of (PV-EASY's - EASY's) bounded slowdown over the number
      of all jobs - the rows of one grouping add up to the MBS gap, so this says which jobs carry it;
    - ``wait h``: mean wait (hours, r_j to the final start); ``PV preempted`` / ``PV kills/job``.

    Groupings: by final runtime (p), by parallelism (q), by how often PV-EASY killed the job;
    then ``every job, tau = 60 s`` (the bound at one minute) and the PV-EASY exact-prediction
    run on every job and on jobs of p <= 10 min; then, on every job and on the jobs of p <= 10 s,
    PV-EASY with the users' requests as predictions, PV-EASY-Last keeping expired predictions
    (``NeverRevised``), PV-EASY without venture step 3b (Last Model and exact), PV-EASY-Last
    whose step 3b walks shortest prediction first (:class:`VentureRest`), and EASY-Last - in
    those rows "MBS PV" is that run's.  Second table, PV-EASY-Last's runs by the step
    of the pass that started them (1: priority order; 3a: venture backfilling, predicted to end
    by the head's reservation; 3b: venture, whatever the prediction): how many were killed, the
    processor-hours they wasted, their jobs' runtimes and how long they ran before the kill, and
    how many of the jobs of p <= 10 s each step started (final run) after what mean wait.
    Third table (:class:`WaitReasons`, PV-EASY-Last and exact): for the waiting short jobs, at
    every venture pass, the share of (job, pass) pairs too wide for the idle processors,
    predicted to end after the head's reservation, or eligible for step 3a, and their median
    prediction.
    """
    m = ran.max_procs
    easy = job_table(ran, {})
    tagger: list[StepTags] = []

    def tag(core) -> None:
        core.algorithm = StepTags(core.algorithm.priority)
        tagger.append(core.algorithm)

    pv = job_table(ran, {"scheduler": "pv-easy", "predictor": "last"}, adapt=tag)
    exact = job_table(ran, {"scheduler": "pv-easy", "predictor": "exact"})
    for t in (pv, exact):
        if not np.array_equal(easy.ids, t.ids):
            raise ValueError("EASY and PV-EASY ran different job sets")
    everyone = np.ones(len(easy.ids), dtype=bool)
    p, q, k = easy.runtime, easy.q, pv.kills
    rows = [_gap_row("every job", easy, pv, everyone)]
    rows += [_gap_row(f"p in ({_seconds(lo)}, {_seconds(hi)}]", easy, pv, (p > lo) & (p <= hi))
             for lo, hi in _pairs([10, 60, 600, 3600, 4 * 3600])]
    rows += [_gap_row(f"q in ({lo:g}, {hi:g}]", easy, pv, (q > lo) & (q <= hi)) for lo, hi in _pairs([1, 8, 32, m / 4])]
    rows += [_gap_row(name, easy, pv, mask) for name, mask in (
        ("PV never killed", k == 0), ("PV killed once", k == 1), ("PV killed 2-3 times", (k >= 2) & (k <= 3)),
        ("PV killed 4+ times", k >= 4),
        ("p <= 10 min, PV never killed", (p <= 600) & (k == 0)), ("p <= 10 min, PV killed", (p <= 600) & (k > 0)))]
    rows.append(_gap_row("every job, tau = 60 s", easy, pv, everyone, tau=60.0))
    rows.append(_gap_row("every job, PV-EASY exact predictions", easy, exact, everyone))
    rows.append(_gap_row("p <= 10 min, PV-EASY exact predictions", easy, exact, p <= 600))
    rows.append(_gap_row("p <= 10 s, PV-EASY exact predictions", easy, exact, p <= 10))
    last, exact_options = {"scheduler": "pv-easy", "predictor": "last"}, {"scheduler": "pv-easy", "predictor": "exact"}
    for name, options, machine, adapt in (
            ("PV-EASY, requests as predictions", {"scheduler": "pv-easy", "predictor": "walltime"}, None, None),
            ("PV-EASY-Last, no walltime fallback", last, NeverRevised, None),
            ("PV-EASY-Last, no step 3b", last, None, VentureRestAdapter(None)),
            ("PV-EASY exact, no step 3b", exact_options, None, VentureRestAdapter(None)),
            ("PV-EASY-Last, 3b shortest prediction first", last, None, VentureRestAdapter(_BY_ESTIMATE)),
            ("PV-EASY-Last, 3a with EASY's extra processors", last, None, VentureRestAdapter(None, extra=True)),
            ("PV-EASY-Last, 3a with extra processors, then 3b", last, None, VentureRestAdapter("priority", True)),
            ("EASY-Last", {"predictor": "last"}, None, None)):
        other = job_table(ran, options, machine, adapt)
        rows.append(_gap_row(f"every job, {name}", easy, other, everyone))
        rows.append(_gap_row(f"p <= 10 s, {name}", easy, other, p <= 10))
    return [rows, _steps(pv, tagger[0].step), _reasons(ran)]


def _pairs(edges: list[float]) -> list[tuple[float, float]]:
    bounds = [-math.inf, *edges, math.inf]
    return list(zip(bounds, bounds[1:]))


def _requested(job: Job, now: float) -> float:
    return job.walltime


SHORTEST_REQUEST = Order(FormulaPolicy("SRQ", "requested p~", _requested))


def _backfill_by_request(core) -> None:
    core.algorithm.backfill = SHORTEST_REQUEST


def sjf_rows(ran: Trace, error: float) -> list[dict]:
    """Figure 4's SJF-EASY read three ways, beside PV-EASY and FCFS-EASY (virtual predictor, seed 1).

    - ``SJF-EASY (campaign)``: reservation and backfilling on the predictions, backfilling the
      shortest prediction first (``backfill_policy = SPF`` on the planning estimate);
    - ``SJF-EASY, short = request``: the same predictions for the reservation and the
      "fits before it" test, the backfilling order by the user's request instead;
    - ``SJF-EASY, requests only``: no predictor at all (reservation, test and order on the
      requests): the study's SJF-EASY if "replaced user estimates" did not reach it;
    - ``EASY, requests`` and ``FCFS-EASY`` / ``PV-EASY`` at error X for reference.
    """
    rows = [row("EASY, requests", ran, {})[0]]
    for strategy in ("FCFS-EASY", "SJF-EASY", "PV-EASY"):
        rows.append(row(f"{strategy}, virtual {error:g} (campaign)", ran, virtual_options(strategy, "FCFS", error, 1))[0])
    sjf = virtual_options("SJF-EASY", "FCFS", error, 1)
    rows.append(row(f"SJF-EASY, virtual {error:g}, short = request", ran, sjf, adapt=_backfill_by_request)[0])
    rows.append(row("SJF-EASY, requests only", ran, {"backfill_policy": "SPF"})[0])
    return rows


if __name__ == "__main__":
    sys.exit(main())
