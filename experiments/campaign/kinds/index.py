"""``kind = "index"``: index policies on non-overlapping 15-day windows.

The rules: docs/semantics/learning.md#learned-index-policies.

The kind evaluates learned index functions against FCFS, SPF, SAF, WFP3,
UNICEF and F1-F4 in two scenarios, each a list of *sources* cut into windows:

- ``lublin`` (a clean model): Lublin-Feitelson sequences on 256 processors,
  scheduled with the **actual runtimes** (p~ := p: every job's walltime is
  its runtime) and **no backfilling** (strict order of the policy).  The
  sequences are the first ``lublin_sequences`` (50) full windows of one
  synthetic trace generated for the purpose, seed ``lublin_seed`` (2023: not
  the training collection's seed 1, so the policies are not evaluated on the
  jobs they were fitted on);
- ``archive`` (real workloads): every full window of each trace of ``traces``,
  with the **requested runtimes** and **EASY backfilling** (both queues in
  the policy's order, count model); with ``no_backfilling`` also without it,
  which gives each policy's gain from backfilling.

A window holds the jobs submitted in ``[t0 + k L, t0 + (k + 1) L)`` (t0 =
the source's first submission, L = ``window``, 15 days; the trailing partial
window is dropped) and is simulated alone, from an empty machine, until its
jobs all finish.  Its jobs' times are **re-based to the window's start**: a
window is a workload of its own, as a Batsim workload cut from the trace
would be, so r - the submission time F1-F4 and the learned functions read -
is the window's own clock, from 0 to L.  With ``clock_ablation`` the
policies whose order depends on r's origin (F1-F4 and the learned ones) also
run with the trace's clock, in both scenarios (the report's ablation: how
much the r terms then dominate).

One run = one (scenario, source, policy, backfilling, clock) over all the
source's windows; the spec's ``split`` field says how the source is cut
(``windows:<seconds>:<clock>``).  Per run: AVGbsld, AvgWait, MaxWait per
window (tau = 10 s), and their median and quartiles over windows.

Section ``[index]`` (every key optional)::

    traces = ["archive:KTH-SP2", "synthetic:3000:64:3"]   # the archive scenario ([]: none)
    lublin_sequences = 50      # the lublin scenario (0: none)
    lublin_procs = 256
    lublin_seed = 2023
    policies = ["FCFS", "SPF", "SAF", "WFP3", "UNICEF", "F1", "F2", "F3", "F4", "Lin", "Qdr", "Cub", "Qua"]
    window = "15d"
    no_backfilling = true      # archive traces also without backfilling
    clock_ablation = true      # r-dependent policies also in the trace's clock

``[workload]`` may hold ``walltime_from_runtime`` and ``lenient`` (applied to
every trace).  Table: ``windows.csv`` (per run and window).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from bftune.experiments.campaign.kinds.kind import CampaignKind, Expansion, TableSpec, whole_trace_columns
from bftune.experiments.campaign.limits import MAX_PROCS, check_run_count
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import RunSpec
from bftune.experiments.campaign.workloads import base_trace, trace_label, trace_path
from bftune.experiments.runs.metrics import period_metrics
from bftune.experiments.campaign.report import index as report
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.synthetic import generate

DAY = 86400.0
POLICIES = report.POLICIES
#: Policies whose order depends on r's origin (the clock ablation runs these only).
CLOCK_DEPENDENT = ("F1", "F2", "F3", "F4", "Lin", "Qdr", "Cub", "Qua")
CLOCKS = ("window", "trace")
KEYS = ("traces", "lublin_sequences", "lublin_procs", "lublin_seed", "policies", "window", "no_backfilling",
        "clock_ablation")
LABELS = ("scenario", "source", "policy", "backfill", "clock", "baseline")
MAX_SEQUENCES = 1000


def cut_windows(jobs, length: float, clock: str = "window", limit: int | None = None) -> list[list[JobRecord]]:
    """The full windows of ``jobs`` (sorted by submission), re-based to each window's start unless ``clock = "trace"``."""
    if not jobs:
        return []
    t0 = jobs[0].submit
    full = int((jobs[-1].submit - t0) // length)
    if limit is not None:
        full = min(full, limit)
    windows: list[list[JobRecord]] = [[] for _ in range(full)]
    for job in jobs:
        k = int((job.submit - t0) // length)
        if k >= full:
            break
        windows[k].append(replace(job, submit=job.submit - t0 - k * length) if clock == "window" else job)
    return windows


def lublin_trace(sequences: int, procs: int, seed: int, length: float) -> Trace:
    """A Lublin-Feitelson trace with at least ``sequences`` full windows, walltime := runtime (actual runtimes)."""
    n = 2000
    while True:
        trace = generate(n, procs, seed)
        span = trace.jobs[-1].submit - trace.jobs[0].submit
        if span >= (sequences + 1) * length:
            break
        n = int(n * max(2.0, 1.1 * (sequences + 1) * length / max(span, 1.0)))
    return trace.with_jobs([replace(j, walltime=j.runtime) for j in trace.jobs], name=f"lublin-{procs}p-s{seed}")


def window_split(length: float, clock: str) -> str:
    """How a run cuts its source, in its spec's ``split`` field."""
    return f"windows:{length:g}:{clock}"


@lru_cache(maxsize=2)
def source_windows(trace: str, path: str | None, wff: bool, lenient: bool, split: str) -> tuple[int, tuple]:
    """``(m, windows)`` of one source and cut (cached per worker: every policy of a source shares it)."""
    _, length_text, clock = split.split(":")
    length = float(length_text)
    if trace.startswith("lublin:"):
        sequences, procs, seed = (int(x) for x in trace.split(":")[1:])
        src = lublin_trace(sequences, procs, seed, length)
        return src.max_procs, tuple(map(tuple, cut_windows(src.jobs, length, clock, limit=sequences)))
    src = base_trace(trace, path, None, wff, lenient)
    return src.max_procs, tuple(map(tuple, cut_windows(src.jobs, length, clock)))


def scenario_options(policy: str, backfill: bool) -> dict:
    """EASY backfilling in the policy's order, or its strict order."""
    return {"policy": policy} if backfill else {"policy": policy, "backfill": False}


def expand(t: Section, workload: dict, seed: int, tau: float) -> Expansion:
    """Every (scenario, source, policy, backfilling, clock) of ``[index]``."""
    raw = t.get("traces", [])
    traces = t.strings("traces") if raw != [] else []
    sequences = t.integer("lublin_sequences", 50, minimum=0, maximum=MAX_SEQUENCES,
                          why="each sequence is 15 days of a generated trace")
    procs = t.integer("lublin_procs", 256, minimum=1, maximum=MAX_PROCS)
    lublin_seed = t.integer("lublin_seed", 2023, minimum=0)
    policies = t.option_list("policies", list(POLICIES), "policy")
    length = t.seconds("window", "15d")
    no_bf = t.boolean("no_backfilling", True)
    ablation = t.boolean("clock_ablation", True)
    if not traces and not sequences:
        raise t.error("traces", "nothing to evaluate: give traces, or lublin_sequences > 0")
    sources: list[tuple[str, str, str | None, str, tuple[bool, ...]]] = []  # (scenario, source, path, label, backfilling modes)
    if sequences:
        sources.append(("lublin", f"lublin:{sequences}:{procs}:{lublin_seed}", None, f"lublin-{procs}", (False,)))
    seen: dict[str, str] = {}
    for trace in traces:
        path = trace_path(t, "traces", trace)
        label = trace_label(trace)
        if label in seen:
            raise t.error("traces", f"{trace!r} and {seen[label]!r} have the same name {label!r} in the tables")
        seen[label] = trace
        sources.append(("archive", trace, path, label, (True, False) if no_bf else (True,)))
    runs = sum(len(modes) for *_, modes in sources) * (len(CLOCKS) if ablation else 1) * len(policies)
    if why := check_run_count(runs):  # an upper bound (the clock ablation skips some): counted before built
        raise t.error("policies", f"{len(sources)} sources x {len(policies)} policies: {why}")
    specs = []
    for scenario, src, path, label, modes in sources:
        for clock in CLOCKS if ablation else CLOCKS[:1]:
            for backfill in modes:
                if clock == "trace" and scenario == "archive" and not backfill:
                    continue  # the ablation in the two scenarios only (with backfilling on archive traces)
                for policy in policies:
                    if clock == "trace" and policy not in CLOCK_DEPENDENT and not policy.startswith("learned:"):
                        continue  # FCFS, SPF, SAF, WFP3, UNICEF do not depend on r's origin
                    labels = {"scenario": scenario, "source": label, "policy": policy, "backfill": backfill,
                              "clock": clock, "baseline": policy == "FCFS"}
                    specs.append(RunSpec(kind="index", trace=src, split=window_split(length, clock), weeks=0,
                                         resample_seed=seed, options=t.scheduler("policies",
                                                                                 scenario_options(policy, backfill)),
                                         tau=tau, labels=labels, trace_path=path, procs=None,
                                         walltime_from_runtime=workload["walltime_from_runtime"],
                                         lenient=workload["lenient"]))
    settings = {"sources": [s[3] for s in sources], "policies": policies, "window_days": length / DAY,
                "lublin_sequences": sequences, "lublin_procs": procs, "lublin_seed": lublin_seed,
                "no_backfilling": no_bf, "clock_ablation": ablation, "baseline": "FCFS"}
    return Expansion(settings, specs, {"traces": settings["sources"], "procs": None, **workload})


def run(spec: RunSpec) -> dict:
    """Every window of the source alone, from an empty machine: jobs, AVGbsld, AvgWait, MaxWait per window."""
    m, windows = source_windows(spec.trace, spec.trace_path, spec.walltime_from_runtime, spec.lenient, spec.split)
    config = SchedulerConfig.from_options(spec.options)
    rows = []
    for k, jobs in enumerate(windows):
        runs = simulate(list(jobs), m, config.build(m)).runs if jobs else []
        rows.append({"window": k, **period_metrics(runs, spec.tau)})
    vals = np.array([r["avg_bsld"] for r in rows if r["jobs"]], dtype=float)
    q1, med, q3 = np.percentile(vals, [25, 50, 75]) if len(vals) else (np.nan,) * 3
    summary = {"algorithm": config.describe(), "windows": int(len(vals)), "jobs": int(sum(r["jobs"] for r in rows)),
               "median_avg_bsld": float(med), "q1_avg_bsld": float(q1), "q3_avg_bsld": float(q3),
               "mean_avg_bsld": float(vals.mean()) if len(vals) else float("nan")}
    return {"summary": summary, "windows": rows}


KIND = CampaignKind(
    name="index", help="index policies, learned and classic, on 15-day windows",
    keys=KEYS, expand=expand, run=run, labels=LABELS, run_columns=whole_trace_columns,
    tables=(TableSpec("windows", "windows", LABELS,
                      ("run_id", *LABELS, "window", "jobs", "avg_wait", "max_wait", "avg_bsld", "total_wait")),),
    report=report.write, report_files=report.FILES, single_trace=False)
