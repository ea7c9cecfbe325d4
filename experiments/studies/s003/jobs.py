"""Study 003's job-by-job explanations: Figure 5's MBS gap and Figures 2-3's big blocked jobs.

Both compare EASY and PV-EASY *on the same jobs*, which no summary can:
they read the per-job tables that the ablation campaigns keep
(``job_tables``; :mod:`bftune.experiments.campaign.kinds.jobtables`), one row
per job with its final run's start and runtime, its kills, the venture step
that started it, and whether and when the fairness monitor first saw it
blocked.  ``abl_jobs`` holds EASY and PV-EASY as the main campaign runs them;
the other ablations vary one choice.  Every figure of the texts is computed
here; a verdict in words ("carried by short jobs", "holds on the same
jobs") is written only when the figures beside it say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bftune.experiments.runs.metrics import aggregate, bounded_slowdown
from bftune.experiments.studies.s003.explain import GAP, missing
from bftune.experiments.studies.s003.plan import MAIN
from bftune.experiments.studies.s003.stored import Store

HOUR = 3600.0
TAU = 10.0  # the campaigns' tau
SHORT, TINY = 600.0, 10.0  # seconds: "p <= 10 min" and "p <= 10 s"


@dataclass
class Pair:
    """EASY's and another run's per-job tables, aligned on the same jobs."""

    easy: pd.DataFrame
    other: pd.DataFrame

    @classmethod
    def of(cls, easy: pd.DataFrame, other: pd.DataFrame) -> Pair:
        if not np.array_equal(easy["job"].to_numpy(), other["job"].to_numpy()):
            raise ValueError("the two runs' per-job tables hold different jobs")
        return cls(easy, other)


def bsld(t: pd.DataFrame, tau: float = TAU, since: str = "submit") -> np.ndarray:
    """Each job's bounded slowdown, its wait counted from ``since`` (r_j, or ``requeue``)."""
    return bounded_slowdown({"end": t["start"] + t["runtime"], "submit": t[since], "runtime": t["runtime"]}, tau)


def means(b: np.ndarray, q: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """MBS and MWBS of the jobs of ``mask``."""
    agg = aggregate(bsld=b[mask], procs=q[mask])
    return agg.avg_bsld, agg.mwbs


def _count(mask: np.ndarray) -> str:
    n = int(mask.sum())
    return "none" if n == 0 else f"{n:,}"


def _wait(t: pd.DataFrame, mask: np.ndarray) -> float:
    return float((t["start"] - t["submit"]).to_numpy()[mask].mean() / HOUR)


# --- Figure 5: PV-EASY's MBS against EASY's ---------------------------------------------------------------


def mbs_gap(store: Store, trace: str) -> str:
    """Figure 5's MBS gap, taken apart job by job (empty when PV-EASY's MBS is within 10 % of EASY's)."""
    easy_mbs, pv_mbs = (store.value(MAIN, trace, s, "avg_bsld") for s in ("EASY", "PV-EASY"))
    if easy_mbs is None or pv_mbs is None or pv_mbs <= easy_mbs * (1 + GAP):
        return ""
    e, p = store.jobs("abl_jobs", trace, "EASY"), store.jobs("abl_jobs", trace, "PV-EASY")
    head = f"Figure 5, PV-EASY's MBS on {trace} ({pv_mbs:.2f} against EASY's {easy_mbs:.2f})"
    if e is None or p is None:
        return f"{head}: not taken apart job by job here {missing('abl_jobs')}.\n"
    pair = Pair.of(e, p)
    n = len(e)
    be, bp = bsld(e), bsld(p)
    gap = float(bp.mean() - be.mean())
    runtime, q, kills = e["runtime"].to_numpy(), e["procs"].to_numpy(), p["kills"].to_numpy()

    def share(mask: np.ndarray) -> float:
        return float((bp[mask] - be[mask]).sum() / n)

    short, tiny, never = runtime <= SHORT, runtime <= TINY, kills == 0
    carried = share(short) > gap / 2 and share(never) > gap / 2
    text = [f"{head}, job by job against EASY (per-job tables of `abl_jobs`): the gap ({gap:.2f}) is "
            + ("carried by short jobs that PV-EASY does not kill but starts late, not by preemption. " if carried
               else "spread as follows. ")
            + f"Jobs of runtime p <= 10 min carry {share(short):.2f} of it, the {int(tiny.sum()):,} jobs of p <= 10 s "
            f"alone {share(tiny):.2f} (bounded slowdown {bp[tiny].mean():.0f} against {be[tiny].mean():.0f}: they "
            f"wait {_wait(p, tiny):.2f} h against {_wait(e, tiny):.2f} h, {_count(tiny & ~never)} of them ever "
            f"preempted); jobs of one processor carry {share(q <= 1):.2f}; jobs PV-EASY never kills carry "
            f"{share(never):.2f}, preempted jobs {share(~never):.2f} (killed once {share(kills == 1):.2f}, 2-3 times "
            f"{share((kills >= 2) & (kills <= 3)):.2f}, 4 or more {share(kills >= 4):.2f})"
            + (", so the gap is carried by jobs that are never killed, not by the killed jobs' own slowdowns."
               if share(~never) < gap / 4 else ".")]
    text.append(_victims(store, trace, p, short, kills))
    text.append(_short_starts(p, tiny))
    text.append(_variants(store, trace, pair, tiny, easy_mbs))
    be60, bp60 = bsld(e, 60.0).mean(), bsld(p, 60.0).mean()
    text.append(f"The bound tau {'does not close it either' if bp60 > be60 * (1 + GAP) else 'closes it'} "
                f"(tau = 60 s: {bp60:.2f} against {be60:.2f}, a gap of {bp60 - be60:.2f} against {gap:.2f} at "
                f"tau = {TAU:g} s).")
    verdict = _conclusion(store, trace, easy_mbs, bp60 > be60 * (1 + GAP))
    return " ".join(t for t in text if t) + (f" {verdict}" if verdict else "") + "\n"


def _victims(store: Store, trace: str, p: pd.DataFrame, short: np.ndarray, kills: np.ndarray) -> str:
    """Which runs preemption kills: by the venture step that started them (``starts.csv``)."""
    starts = store.starts("abl_jobs", trace, "PV-EASY")
    if starts is None or not {"predicted", "fill"} <= set(starts.index):
        return ""
    predicted, fill = starts.loc["predicted"], starts.loc["fill"]
    wasted = starts["killed_work"].sum() / HOUR
    typical = float(p["runtime"].median())
    long = min(predicted["killed_median_job_runtime"], fill["killed_median_job_runtime"]) > typical
    return (("The victims are long jobs" if long else "The victims") + " (median runtime of every job "
            f"{typical / HOUR:.1f} h): the jobs of killed runs have a median runtime of "
            f"{predicted['killed_median_job_runtime'] / HOUR:.1f} h (runs started by venture backfilling's first step, "
            f"predicted to end by the reservation: `predicted` in `starts.csv`) and "
            f"{fill['killed_median_job_runtime'] / HOUR:.1f} h (its second step, started whatever the prediction: "
            f"`fill`; {fill['killed'] / fill['runs']:.0%} of those runs are killed, "
            f"{fill['killed_work'] / HOUR:,.0f} of the {wasted:,.0f} processor-hours wasted); only "
            f"{int((short & (kills > 0)).sum()):,} of the {int(short.sum()):,} jobs of p <= 10 min are ever killed.")


def _short_starts(p: pd.DataFrame, tiny: np.ndarray) -> str:
    """How PV-EASY started the jobs of p <= 10 s (their final runs), and after what wait."""
    step = p["venture_step"].to_numpy()
    prio = tiny & (step == "none")
    if not prio.any():
        return ""
    return (f"Venture backfilling rarely takes them: {int(prio.sum()):,} of the {int(tiny.sum()):,} wait until they "
            f"reach the head and start in priority order, after {_wait(p, prio):.2f} h on average "
            f"({int((tiny & (step == 'predicted')).sum()):,} start by venture backfilling's first step, "
            f"{int((tiny & (step == 'fill')).sum()):,} by its second)." if 2 * prio.sum() > tiny.sum() else
            f"{int(prio.sum()):,} of the {int(tiny.sum()):,} start in priority order, after "
            f"{_wait(p, prio):.2f} h on average.")


def _variants(store: Store, trace: str, pair: Pair, tiny: np.ndarray, easy_mbs: float) -> str:
    """PV-EASY with other predictions, and with venture backfilling's second step changed."""
    parts = []
    exact = store.value("abl_exact", trace, "PV-EASY", "avg_bsld")
    exact_jobs = store.jobs("abl_exact", trace, "PV-EASY")
    if exact is None or exact_jobs is None:
        parts.append(f"PV-EASY with exact predictions is not measured here {missing('abl_exact')}")
    else:
        tiny_exact = bsld(Pair.of(pair.easy, exact_jobs).other)[tiny].mean()
        parts.append(f"With exact predictions PV-EASY's MBS is {exact:.2f}, "
                     f"{'better than' if exact < easy_mbs else 'still above'} EASY's (p <= 10 s: {tiny_exact:.0f} "
                     f"against {bsld(pair.easy)[tiny].mean():.0f})")
    for name, what in (("abl_requests", "with the requests as predictions"),
                       ("abl_expired", "keeping expired predictions")):
        value = store.value(name, trace, "PV-EASY", "avg_bsld")
        parts.append(f"{what} {value:.2f}" if value is not None else f"{what} not measured {missing(name)}")
    text = "; ".join(parts) + "."
    fills = [(name, what, store.value(name, trace, "PV-EASY", "avg_bsld"))
             for name, what in (("abl_fill_none", "without it"), ("abl_fill_none_exact", "without it and with exact "
                                                                  "predictions"),
                                ("abl_fill_shortest", "shortest prediction first"))]
    measured = [(name, what, v) for name, what, v in fills if v is not None]
    if not measured:
        return (f"{text} Changes of venture backfilling's second step are not measured here "
                f"{missing(*(f[0] for f in fills))}.")
    last_model = [v for name, _, v in measured if name != "abl_fill_none_exact"]
    closes = any(v <= easy_mbs * (1 + GAP) for v in last_model)
    return (f"{text} {'No' if not closes else 'A'} change of venture backfilling's second step "
            f"{'closes it with Last Model' if not closes else 'closes it'}: "
            + ", ".join(f"{what} {v:.2f} (`{name}`)" for name, what, v in measured) + ".")


def _conclusion(store: Store, trace: str, easy_mbs: float, tau_keeps: bool) -> str:
    exact = store.value("abl_exact", trace, "PV-EASY", "avg_bsld")
    others = [store.value(n, trace, "PV-EASY", "avg_bsld") for n in ("abl_fill_none", "abl_fill_shortest")]
    if exact is None or None in others or not tau_keeps:
        return ""
    if exact <= easy_mbs * (1 + GAP) and all(v > easy_mbs * (1 + GAP) for v in others if v is not None):
        return ("So our gap is Last Model's predictions of short jobs meeting venture backfilling's test that a "
                "job be predicted to end before the reservation, our reading of the study's step 3 (\"from the "
                "nearest predicted completion time to the furthest within the reservation time\"); what made "
                "the study's PV-EASY-Last \"similar\" to EASY (its word; we test within 10 %) is not in the paper.")
    return ""


# --- Figures 2-3: big blocked jobs --------------------------------------------------------------------


def queue_ahead(t: pd.DataFrame, mask: np.ndarray, m: int) -> tuple[float, float, float]:
    """At each masked job's submission, the jobs of higher (FCFS) priority whose final run has not started:
    their mean count, how many of them are preempted at some point, and their work in machine-hours."""
    order = np.lexsort((t["job"].to_numpy(), t["submit"].to_numpy()))
    start, submit = t["start"].to_numpy()[order], t["submit"].to_numpy()[order]
    kills, work = t["kills"].to_numpy()[order], (t["procs"] * t["runtime"]).to_numpy()[order]
    counts, preempted, hours = [], [], []
    for j in np.flatnonzero(mask[order]):
        waiting = start[:j] > submit[j]
        counts.append(waiting.sum())
        preempted.append((waiting & (kills[:j] > 0)).sum())
        hours.append(work[:j][waiting].sum() / HOUR / m)
    return float(np.mean(counts)), float(np.mean(preempted)), float(np.mean(hours))


def _split(t: pd.DataFrame, mask: np.ndarray) -> tuple[float, float, float, float]:
    """Hours to reach the head (submission -> first blocked pass) and as the blocked head (-> start), and the
    same two parts of the MBS (each over max(runtime, tau))."""
    p = np.maximum(t["runtime"].to_numpy()[mask], TAU)
    before = (t["blocked_at"] - t["submit"]).to_numpy()[mask]
    after = (t["start"] - t["blocked_at"]).to_numpy()[mask]
    return (float(before.mean() / HOUR), float(after.mean() / HOUR), float((before / p).mean()),
            float((after / p).mean()))


def blocked_gap(store: Store, trace: str) -> str:
    """Figures 2-3's claim (big blocked jobs, q > m/4, better off under PV-EASY) taken apart job by job."""
    e, p = store.jobs("abl_jobs", trace, "EASY"), store.jobs("abl_jobs", trace, "PV-EASY")
    m = store.value(MAIN, trace, "EASY", "trace_m")
    if e is None or p is None or m is None:
        return f"Figures 2-3, big blocked jobs, job by job: not measured here {missing('abl_jobs')}.\n"
    Pair.of(e, p)
    q = e["procs"].to_numpy()
    big, ge = q > m / 4, q >= m / 4
    eb, pb = e["blocked"].to_numpy() == 1, p["blocked"].to_numpy() == 1
    be, bp = bsld(e), bsld(p)
    own_e, own_p = means(be, q, eb & big), means(bp, q, pb & big)
    same_e, same_p = means(be, q, eb & big), means(bp, q, eb & big)
    both = eb & pb & big
    both_e, both_p = means(be, q, both), means(bp, q, both)
    all_e, all_p = means(be, q, big), means(bp, q, big)
    holds = same_p[0] < same_e[0] and same_p[1] < same_e[1]
    n_p, n_e, n_b = int((pb & big).sum()), int((eb & big).sum()), int(both.sum())
    text = [f"Figures 2-3, big blocked jobs (q > m/4; job by job, the per-job tables of `abl_jobs`): the rows above "
            f"compare different job sets - PV-EASY blocks {n_p:,} big jobs, EASY {n_e:,}, {n_b:,} of them under both. "
            f"On the same jobs the study's claim {'holds' if holds else 'does not hold either'}: the {n_e:,} big "
            f"jobs EASY blocks have MBS {same_p[0]:.2f} and MWBS {same_p[1]:.2f} under PV-EASY against "
            f"{same_e[0]:.2f} and {same_e[1]:.2f} under EASY (the {n_b:,} blocked under both: {both_p[0]:.2f} and "
            f"{both_p[1]:.2f} against {both_e[0]:.2f} and {both_e[1]:.2f}; every big job, blocked or not: "
            f"{all_p[0]:.2f} and {all_p[1]:.2f} against {all_e[0]:.2f} and {all_e[1]:.2f})."]
    if holds and own_p[0] >= own_e[0]:
        text.append(f"The MBS miss comes mostly from the {n_p - n_b:,} big jobs that only PV-EASY blocks (and the "
                    f"{n_e - n_b:,} that only EASY blocks).")
    to_p, as_p, to_ps, as_ps = _split(p, pb & big)
    to_e, as_e, to_es, as_es = _split(e, eb & big)
    text.append(f"Split at its first blocked pass, a big blocked job waits {as_p:.2f} h as the blocked head (to its "
                f"start: what strict fairness acts on) under PV-EASY against {as_e:.2f} h under EASY ({as_ps:.1f} "
                f"against {as_es:.1f} of the MBS), and {to_p:.2f} h against {to_e:.2f} h to reach the head of the "
                f"queue ({to_ps:.1f} against {to_es:.1f} of the MBS).")
    ahead_p, ahead_e = queue_ahead(p, pb & big, int(m)), queue_ahead(e, eb & big, int(m))
    wait_p, wait_e = (store.value(MAIN, trace, s, "avg_wait") for s in ("PV-EASY", "EASY"))
    wasted = store.value(MAIN, trace, "PV-EASY", "wasted_load")
    text.append(f"At its submission it finds {ahead_p[0]:.1f} jobs and {ahead_p[2]:.2f} machine-hours of higher "
                f"priority whose final run has not started under PV-EASY ({ahead_p[1]:.1f} of these jobs preempted at "
                f"some point), against {ahead_e[0]:.1f} and {ahead_e[2]:.2f} under EASY"
                + (f"; every job waits {wait_p / HOUR:.2f} h on average against {wait_e / HOUR:.2f} h (PV-EASY's "
                   f"wasted load {wasted:.2%})." if wait_p is not None and wait_e is not None and wasted is not None
                   else "."))
    text.append(_rules(store, trace, p, bp, q, big, ge, pb, own_p[0], own_e[0], n_p))
    if as_p < as_e and to_p > to_e and not holds:
        text.append("So on this trace our PV-EASY shortens a big job's time as the blocked head, as the study says, "
                    "but keeps a longer queue in front of it; the paper reports no queue lengths to compare.")
    elif as_p < as_e and holds:
        text.append("Strict fairness acts where the study says: on the time a big job spends as the blocked head.")
    return " ".join(text) + "\n"


def _rules(store: Store, trace: str, p: pd.DataFrame, bp: np.ndarray, q: np.ndarray, big: np.ndarray,
           ge: np.ndarray, pb: np.ndarray, own: float, easy: float, n_p: int) -> str:
    """PV-EASY's MBS of its big blocked jobs under each counting rule and each prediction choice."""
    one = p["blocked_one_pass"].to_numpy() == 1
    rules: list[tuple[str, float | None]] = [("blocked counted once per instant", means(bp, q, one & big)[0]),
             ("q >= m/4", means(bp, q, pb & ge)[0]),
             ("a preempted job's wait from its requeue", means(bsld(p, since="requeue"), q, pb & big)[0])]
    for name, what in (("abl_expired", "expired predictions kept"), ("abl_exact", "exact predictions instead of "
                                                                                 "Last Model")):
        value = store.value(name, trace, "PV-EASY", "fair_blocked_big_mbs")
        rules.append((f"{what} (`{name}`)", value))
    measured = [v for _, v in rules if v is not None]
    side = "above" if all(v > easy for v in measured) else "below" if all(v < easy for v in measured) else None
    kills = int(((p["kills"].to_numpy() > 0) & pb & big).sum())
    listed = ", ".join(f"{what} {v:.2f}" if v is not None else f"{what} not stored" for what, v in rules)
    head = (f"Under every counting rule and scheduler variant measured, PV-EASY's MBS of its big blocked jobs "
            f"({own:.2f}) stays {side} EASY's ({easy:.2f}, under EASY's default rule)" if side else
            f"PV-EASY's MBS of its big blocked jobs ({own:.2f}; EASY {easy:.2f}, under its default rule) under each "
            "counting rule and scheduler variant measured")
    rarely = "rarely " if kills < 0.05 * n_p else ""
    return f"{head}: {listed}; big blocked jobs are {rarely}preempted themselves ({kills:,} of {n_p:,})."
