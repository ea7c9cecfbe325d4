"""Evaluation of index policies on non-overlapping 15-day windows (the study's Figures 1 and 2).

Two scenarios, each a list of *sources* cut into windows:

- ``lublin`` (Figure 1): Lublin-Feitelson sequences on 256 processors,
  scheduled with the **actual runtimes** (p~ := p: every job's walltime is
  its runtime) and **no backfilling** (strict order of the policy).  The
  sequences are the first ``sequences`` (50) full windows of one synthetic
  trace generated for the purpose (its seed differs from the training
  collection's, so the policies are not evaluated on the jobs they were
  fitted on);
- ``archive`` (Figure 2): every full window of each archive trace, with the
  **requested runtimes** and **EASY backfilling** (primary and backfilling
  queues in the policy's order, count model).

A window holds the jobs submitted in ``[t0 + k L, t0 + (k + 1) L)`` (t0 =
the source's first submission, L = 15 days; the trailing partial window is
dropped) and is simulated alone, from an empty machine, until its jobs all
finish.  Its jobs' times are **re-based to the window's start**: a window is
a workload of its own, as a Batsim workload cut from the trace would be, so
r - the submission time F1-F4 and the learned functions read - is the
window's own clock, from 0 to 15 days.  ``clock = "trace"`` keeps the
trace's clock instead (the ablation of the report: how much the r terms of
the higher-degree polynomials then dominate).

One run = one (source, policy) over all the source's windows; its record
holds AVGbsld, AvgWait and MaxWait per window (tau = 10 s).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from bftune.workloads.model import JobRecord, Trace

DAY = 86400.0
WINDOW = 15 * DAY
#: The policies of the study's Figures 1 and 2 plus F1-F4 and the four learned functions.
POLICIES = ("FCFS", "SPF", "SAF", "WFP3", "UNICEF", "F1", "F2", "F3", "F4", "Lin", "Qdr", "Cub", "Qua")
SCENARIOS = ("lublin", "archive")
LUBLIN_SEQUENCES = 50
LUBLIN_PROCS = 256
LUBLIN_SEED = 2023  # not the training collection's seed (1)
CLOCKS = ("window", "trace")


def cut_windows(jobs: list[JobRecord], length: float = WINDOW, clock: str = "window",
                limit: int | None = None) -> list[list[JobRecord]]:
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


def lublin_trace(sequences: int, procs: int, seed: int, length: float = WINDOW) -> Trace:
    """A Lublin-Feitelson trace with at least ``sequences`` full windows, walltime := runtime (actual runtimes)."""
    from bftune.workloads.synthetic import generate

    n = 2000
    while True:
        trace = generate(n, procs, seed)
        span = trace.jobs[-1].submit - trace.jobs[0].submit
        if span >= (sequences + 1) * length:
            break
        n = int(n * max(2.0, 1.1 * (sequences + 1) * length / max(span, 1.0)))
    jobs = [replace(j, walltime=j.runtime) for j in trace.jobs]
    return trace.with_jobs(jobs, name=f"lublin-{procs}p-s{seed}")


@lru_cache(maxsize=2)
def source_windows(scenario: str, source: str, clock: str, sequences: int = LUBLIN_SEQUENCES,
                   procs: int = LUBLIN_PROCS, seed: int = LUBLIN_SEED) -> tuple[int, tuple]:
    """``(m, windows)`` of one source (cached per worker process: every policy of a source shares it)."""
    if scenario == "lublin":
        trace = lublin_trace(sequences, procs, seed)
        return trace.max_procs, tuple(map(tuple, cut_windows(trace.jobs, clock=clock, limit=sequences)))
    from bftune.workloads.swf import read_swf

    trace = read_swf(source)
    return trace.max_procs, tuple(map(tuple, cut_windows(trace.jobs, clock=clock)))


def scenario_options(scenario: str, policy: str) -> dict:
    """The scheduler of a scenario: strict order (Figure 1) or EASY backfilling (Figure 2)."""
    if scenario == "lublin":
        return {"policy": policy, "backfill": False}
    return {"policy": policy}


def window_rows(m: int, windows, options: dict, tau: float, metrics) -> list[dict]:
    """Simulate every window alone; ``metrics(runs, tau)`` gives its jobs, AVGbsld, AvgWait, MaxWait."""
    from bftune.schedulers.config import SchedulerConfig
    from bftune.schedulers.drivers.local.simulator import simulate

    config = SchedulerConfig.from_options(options)
    rows = []
    for k, jobs in enumerate(windows):
        result = simulate(list(jobs), m, config.build(m)) if jobs else None
        rows.append({"window": k, **metrics(result.runs if result else [], tau)})
    return rows


def summarise(rows: list[dict]) -> dict:
    import numpy as np

    vals = np.array([r["avg_bsld"] for r in rows if r["jobs"]], dtype=float)
    if not len(vals):
        return {"windows": 0, "median_avg_bsld": math.nan, "mean_avg_bsld": math.nan}
    q1, med, q3 = np.percentile(vals, [25, 50, 75])
    return {"windows": int(len(vals)), "median_avg_bsld": float(med), "q1_avg_bsld": float(q1),
            "q3_avg_bsld": float(q3), "mean_avg_bsld": float(vals.mean()),
            "jobs": int(sum(r["jobs"] for r in rows))}


# --- report ---------------------------------------------------------------------------------------

#: The study's claims the report checks, point by point (its section 4).
STUDY_CLAIMS = (
    "Figure 1 (Lublin-Feitelson, actual runtimes, no backfilling): Lin among the best, comparable to SAF and F2; "
    "Qdr, Cub and Qua close to FCFS",
    "Figure 2 (archive traces, requested runtimes, EASY): SAF, F2 and Lin consistently best; backfilling helps "
    "poorly performing policies such as FCFS most",
)


def medians(windows) -> "pd.DataFrame":  # noqa: F821 - pandas imported by the caller
    """Median AVGbsld per (scenario, source, backfill) x policy."""
    frame = windows[windows["jobs"] > 0]
    table = frame.pivot_table(index=["scenario", "source", "backfill"], columns="policy", values="avg_bsld",
                              aggfunc="median")
    cols = [p for p in POLICIES if p in table.columns] + [p for p in table.columns if p not in POLICIES]
    return table[cols]


def claim_checks(table) -> list[str]:
    """One line per source: where Lin ranks, Lin vs SAF/F2, Qdr/Cub/Qua vs FCFS (ratios of medians)."""
    lines = []
    for key, row in table.iterrows():
        scenario, source, backfill = key
        if not backfill and scenario == "archive":
            continue
        ranks = row.rank(method="min")
        parts = [f"**{source}** ({scenario}): Lin ranks {int(ranks['Lin'])}/{row.notna().sum()}"
                 if "Lin" in row else f"**{source}**"]
        for ref in ("SAF", "F2"):
            if ref in row and "Lin" in row:
                parts.append(f"Lin/{ref} = {row['Lin'] / row[ref]:.2f}")
        for fam in ("Qdr", "Cub", "Qua"):
            if fam in row and "FCFS" in row:
                parts.append(f"{fam}/FCFS = {row[fam] / row['FCFS']:.2f}")
        lines.append("- " + ", ".join(parts))
    return lines


def backfilling_gains(table) -> list[str]:
    """Per archive source: median AVGbsld without / with backfilling, per policy (largest first)."""
    lines = []
    archive = table.xs("archive", level="scenario", drop_level=False) if "archive" in table.index.get_level_values(0) \
        else table.iloc[0:0]
    for source in sorted(set(archive.index.get_level_values("source"))):
        try:
            with_bf = table.loc[("archive", source, True)]
            without = table.loc[("archive", source, False)]
        except KeyError:
            continue
        gain = (without / with_bf).dropna().sort_values(ascending=False)
        lines.append(f"- **{source}**: " + ", ".join(f"{p} x{g:.2f}" for p, g in gain.items()))
    return lines


def box_plots(windows, plots_dir) -> list:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots_dir.mkdir(parents=True, exist_ok=True)
    written = []
    frame = windows[windows["jobs"] > 0]
    for (scenario, backfill), part in frame.groupby(["scenario", "backfill"], sort=False):
        sources = list(dict.fromkeys(part["source"]))
        fig, axes = plt.subplots(len(sources), 1, figsize=(11, 2.8 * len(sources)), squeeze=False)
        for ax, source in zip(axes[:, 0], sources):
            sel = part[part["source"] == source]
            pols = [p for p in POLICIES if p in set(sel["policy"])]
            data = [sel.loc[sel["policy"] == p, "avg_bsld"].to_numpy() for p in pols]
            ax.boxplot(data, showfliers=True, flierprops={"markersize": 2})
            ax.set_xticks(range(1, len(pols) + 1), pols)
            ax.set_yscale("log")
            ax.set_ylabel("AVGbsld")
            n = len(data[0]) if data else 0
            ax.set_title(f"{source}: {n} windows of 15 days", fontsize=9)
        mode = "EASY backfilling" if backfill else "no backfilling"
        fig.suptitle(f"{scenario}: AVGbsld per 15-day window ({mode})")
        fig.tight_layout()
        path = plots_dir / f"index_{scenario}_{'easy' if backfill else 'nobf'}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


# --- runs -----------------------------------------------------------------------------------------


def run_item(item: dict) -> dict:
    """One (scenario, source, policy, backfill, clock): AVGbsld etc. per window (a worker function)."""
    from bftune.experiments.campaign import week_metrics

    m, windows = source_windows(item["scenario"], item["source"], item["clock"], item.get("sequences", 50))
    options = scenario_options(item["scenario"], item["policy"])
    options["backfill"] = item["backfill"]
    rows = window_rows(m, windows, options, item.get("tau", 10.0), week_metrics)
    return {"item": item, "summary": summarise(rows), "windows": rows}


#: Policies whose order depends on r's origin (the clock ablation runs these only).
CLOCK_DEPENDENT = ("F1", "F2", "F3", "F4", "Lin", "Qdr", "Cub", "Qua")


def items(traces: list[str], policies=POLICIES, sequences: int = LUBLIN_SEQUENCES, no_backfilling: bool = True,
          clock_ablation: bool = True) -> list[dict]:
    """Every (scenario, source, policy, backfilling, clock); the trace-clock ablation only where r's origin matters."""
    out = []
    sources = [("lublin", f"lublin-{LUBLIN_PROCS}", (False,))] if sequences else []
    sources += [("archive", t, (True, False) if no_backfilling else (True,)) for t in traces]
    for scenario, source, modes in sources:
        for clock in CLOCKS if clock_ablation else CLOCKS[:1]:
            for backfill in modes:
                if clock == "trace" and scenario == "archive" and not backfill:
                    continue
                for policy in policies:
                    if clock == "trace" and policy not in CLOCK_DEPENDENT:
                        continue
                    out.append({"scenario": scenario, "source": source, "policy": policy, "backfill": backfill,
                                "clock": clock, "sequences": sequences})
    return out


def report_lines(windows, plots_dir) -> list[str]:
    """The evaluation's markdown: medians per source, the study's claims checked, backfilling's gains, plots."""
    lines = []
    for clock in [c for c in CLOCKS if c in set(windows["clock"])]:
        part = windows[windows["clock"] == clock]
        table = medians(part)
        title = "each window's own clock" if clock == "window" else "the trace's clock (ablation)"
        lines += [f"### Median AVGbsld per 15-day window, r in {title}", "",
                  "| scenario | source | backfilling | " + " | ".join(table.columns) + " |",
                  "|---" * (3 + len(table.columns)) + "|"]
        for (scenario, source, backfill), row in table.iterrows():
            cells = " | ".join("–" if pd_isna(v) else f"{v:.1f}" for v in row)
            lines.append(f"| {scenario} | {source} | {'EASY' if backfill else 'none'} | {cells} |")
        lines += ["", "Lin against SAF, F2 and FCFS (ratios of medians):", "", *claim_checks(table), ""]
        if clock == "window":
            gains = backfilling_gains(table)
            if gains:
                lines += ["Backfilling's gain per policy (median without / with EASY backfilling):", "", *gains, ""]
            for path in box_plots(part, plots_dir):
                lines.append(f"![{path.stem}]({path.parent.name}/{path.name})")
            lines.append("")
    return lines


def pd_isna(value) -> bool:
    return value is None or value != value
