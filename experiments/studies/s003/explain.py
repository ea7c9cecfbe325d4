"""What we know of study 003's gaps, table by table: every figure computed from the stored runs (:mod:`.stored`).

The main campaign gives our side of each table; the ablation campaigns of
:mod:`.plan` (each changes one thing) say how far a choice the study leaves
open moves it.  Where an ablation campaign is not stored (the quick scale
runs a few), the text says which one and the command that makes it, and
leaves the sentence out rather than quote a figure no run backs.  The
job-by-job analyses (Figures 2-3 and 5) are in :mod:`.jobs`.
"""

from __future__ import annotations

from bftune.experiments.reproduce.markdown import listed
from bftune.experiments.studies.s003.plan import MAIN
from bftune.experiments.studies.s003.published import value as pub
from bftune.experiments.studies.s003.stored import Store
from bftune.support.checkout import command

GAP = 0.10
PAPER = f"`{command('reproduce 003 --scale paper --out DIR')}`"


def missing(*names: str) -> str:
    """The note that stands for a figure whose ablation campaigns are not stored (no final period)."""
    listed = ", ".join(f"`{n}`" for n in names)
    return f"({listed} not stored at this scale: {PAPER} runs {'it' if len(names) == 1 else 'them'})"


def percent(x: float) -> str:
    """A maximum prediction error as the study writes it: "10 %"."""
    return f"{100 * x:.0f} %"


def change(new: float, old: float) -> str:
    return f"{new / old - 1:+.1%}"


def _workload(store: Store, trace: str) -> str:
    row = store.run(MAIN, trace, "EASY")
    row = row if row is not None else store.run(MAIN, trace, "PV-EASY")
    tail = "Our load uses the jobs as simulated (runtimes above the walltime cut at it)."
    if row is None or "trace_records" not in row:
        return tail
    jobs, records, never = int(row["trace_jobs"]), int(row["trace_records"]), int(row["trace_never_started"])
    text = f"The `ran` cleaning keeps {jobs:,} of the file's {records:,} records"
    text += f" (it drops the {never:,} records of jobs that never started)" if never else ""
    theirs = pub(trace, "workload", "jobs")
    if theirs is not None:
        text += (f"; the study counts {theirs:,.0f} jobs, mean parallelism {pub(trace, 'workload', 'mean_procs')} "
                 f"and mean runtime {pub(trace, 'workload', 'mean_runtime'):,.0f} s, against our "
                 f"{row['trace_mean_procs']:.2f} and {row['trace_mean_runtime']:,.0f} s")
    return text + ". " + tail


FAIRNESS = ("The study does not say how it measures \"delayed by later jobs\". We count every job that was ever the "
            "first waiting job while it would have fit without the running jobs of lower priority (bftune's unfair "
            "delay), however short; the last rows count only delays of at least 10, 30 and 60 minutes, to show how "
            "much of a count gap short delays make.")


def _violations(store: Store, trace: str) -> str:
    text = ("The study filters out the \"benign\" case (a late start caused by predecessors running past their "
            "predictions) without saying how; our rule (README, \"Fairness metrics\") counts a reservation as "
            "violated when, after it, the job was blocked while it would have fit without the running jobs of "
            "lower priority; the last rows count only the violations whose delay from reservation reaches 10, 30 "
            "and 60 minutes. Our EASY-Last plans a job that runs past its prediction to its walltime (Tsafrir's "
            "rule); ")
    kept = store.value("abl_expired", trace, "EASY-Last", "fair_reservation_violations")
    ours = store.value(MAIN, trace, "EASY-Last", "fair_reservation_violations")
    if kept is None or ours is None:
        return text + "what keeping the expired prediction instead does to the count is not measured here " + \
            missing("abl_expired") + "."
    return text + (f"a scheduler that keeps the expired prediction instead has {kept:,.0f} violations on this trace, "
                   f"against our {ours:,.0f} (`abl_expired`, option `overrun_estimate = \"expired\"`): the count "
                   "depends on that choice as much as on the filter (the study says only that its prediction-based EASY is "
                   "\"as [16]\", Tsafrir et al., whose rule ours follows).")


def _starts(store: Store, trace: str) -> str:
    text = ("Blocked jobs: we count every job a pass stops at, including the job each preemption round of PV-EASY is "
            "for")
    one_pass = store.value(MAIN, trace, "PV-EASY", "fair_blocked_jobs_one_pass")
    theirs = pub(trace, "starts", "pv_blocked")
    if one_pass is not None:
        text += ("; counting only the first round at an instant, as a PV-EASY that preempts within one pass sees it "
                 f"(`fair_blocked_jobs_one_pass` in `runs.csv`), gives {one_pass:,.0f}")
        text += f" ({change(one_pass, theirs)} against the study)" if theirs else ""
    text += ". "
    easy_blocked = store.value(MAIN, trace, "EASY", "fair_blocked_jobs")
    easy_backfilled = store.value(MAIN, trace, "EASY", "fair_backfilled_jobs")
    their_blocked, their_backfilled = pub(trace, "starts", "easy_blocked"), pub(trace, "starts", "easy_backfilled")
    compared = None not in (easy_blocked, easy_backfilled, their_blocked, their_backfilled)
    if compared:
        more = "more" if easy_blocked > their_blocked else "fewer"  # type: ignore[operator]
        fewer = "fewer" if easy_backfilled < their_backfilled else "more"  # type: ignore[operator]
        text += f"Our EASY blocks {more} and backfills {fewer} jobs than the study's"
    else:
        text += "How EASY's counts depend on choices the study leaves open"
    variants = [(name, what, store.value(name, trace, "EASY", "fair_blocked_jobs"),
                 store.value(name, trace, "EASY", "fair_backfilled_jobs"))
                for name, what in (("abl_machines", "the machines reservation model"),
                                   ("abl_overruns_finish", "letting overruns run to their end"))]
    measured = [v for v in variants if v[2] is not None and v[3] is not None]
    if not measured:
        return text + "; the machines reservation model and letting overruns run to their end are not measured " \
            "here " + missing("abl_machines", "abl_overruns_finish") + "."
    figures = "; ".join(f"{what} (`{name}`): blocked {blocked:,.0f}, backfilled {backfilled:,.0f}"
                        for name, what, blocked, backfilled in measured)
    if not compared:
        return text + f": {figures}."
    closes = [what for _, what, blocked, _ in measured if abs(blocked / their_blocked - 1) <= GAP]  # type: ignore[operator]
    verdict = ("neither closes that gap: the study's EASY is not specified further than \"EASY\"" if not closes else
               f"{' and '.join(closes)} brings the blocked count within {GAP:.0%} of the study's")
    return text + f"; {figures}: {verdict}."


LOAD = "Total load counts every run's work, killed runs included, over m x (last end - first submission)."
PREEMPTION = ("Preempted jobs are jobs killed at least once; MKT their mean number of kills; RTW = (total run time - "
              "final runtime) / final runtime, averaged over them.")


def notes(store: Store, trace: str) -> dict[str, str]:
    """The text under each of one trace's tables (keys of :func:`bftune.experiments.campaign.report.pveasy.figures`)."""
    return {"workload": _workload(store, trace), "fairness": FAIRNESS, "violations": _violations(store, trace),
            "starts": _starts(store, trace), "preemption": f"{LOAD} {PREEMPTION}"}


def claims_note(store: Store, trace: str) -> str:
    """Under Figures 2, 3, 5, 6: where EASY-Last stands on each metric, as we run it and keeping expired
    predictions (EASY-Last and PV-EASY alike: like with like), and how a preempted job's wait is counted."""
    pv = store.value(MAIN, trace, "PV-EASY", "avg_bsld")
    parts, rows = [], []
    for metric, key, figure in (("MBS", "avg_bsld", 5), ("MWBS", "mwbs", 6)):
        e, p, lt = (store.value(MAIN, trace, s, key) for s in ("EASY", "PV-EASY", "EASY-Last"))
        kl, kp = (store.value("abl_expired", trace, s, key) for s in ("EASY-Last", "PV-EASY"))
        if e is None or p is None or lt is None:
            continue
        row = f"{metric} (Figure {figure}): EASY-Last {lt:.2f} against EASY's {e:.2f} and PV-EASY's {p:.2f}, {_rank(lt, e, p)}"
        if kl is not None and kp is not None:
            row += f"; keeping them, EASY-Last {kl:.2f} and PV-EASY {kp:.2f}, {_rank(kl, e, kp)}"
        rows.append(row)
    if rows:
        kept = store.value("abl_expired", trace, "EASY-Last", "avg_bsld") is not None
        parts.append("Our EASY-Last revises an expired prediction to the walltime (Tsafrir's rule); "
                     + ("beside it, both EASY-Last and PV-EASY keeping expired predictions instead (`abl_expired`; "
                        "EASY plans with the requests and has none to keep)." if kept else
                        f"keeping expired predictions instead is not measured here {missing('abl_expired')}.")
                     + "".join(f" {row}." for row in rows) + " The study has EASY-Last worse than EASY on both "
                     "(its Section 6) and the worst of the three on MWBS (Figure 6).")
    requeue = store.value(MAIN, trace, "PV-EASY", "avg_bsld_from_requeue")
    if pv is not None and requeue is not None:
        parts.append(f"PV-EASY's slowdowns {'do not come' if abs(requeue / pv - 1) <= GAP else 'come partly'} from "
                     "how a preempted job's wait is counted: from its requeue instead of its submission "
                     f"(`avg_bsld_from_requeue` in `runs.csv`), its MBS moves by {abs(requeue / pv - 1):.0%} "
                     f"({pv:.2f} to {requeue:.2f}).")
    return " ".join(parts)


def _rank(last: float, easy: float, pv: float) -> str:
    """Where EASY-Last stands against EASY and PV-EASY (lower is better)."""
    if last >= max(easy, pv):
        return "the worst of the three"
    return "worse than EASY, not the worst" if last > easy else "better than EASY"


def _virtual_pairs(store: Store, trace: str) -> list[float]:
    """The errors at which both the main campaign and ``abl_expired_virtual`` stored seed 1 of every strategy."""
    errors: list[float] = []
    table = store.table("abl_expired_virtual")
    if table is None:
        return errors
    for error in sorted(set(table["error"].dropna())):
        if all(store.run(n, trace, s, error=error, seed=1) is not None for n in (MAIN, "abl_expired_virtual")
               for s in ("FCFS-EASY", "SJF-EASY", "PV-EASY")):
            errors.append(float(error))
    return errors


def _at(errors: list[float], values: list[float]) -> str:
    """ "7.63 and 7.78": one value per error, in their order."""
    return listed([f"{v:.2f}" for v in values])


def _xs(errors: list[float]) -> str:
    return listed([percent(e) for e in errors])


def _from_to(errors: list[float], old: list[float], new: list[float]) -> str:
    """ "from 7.63 to 10.83 at x = 10 % and from 7.78 to 12.63 at x = 40 %"."""
    return " and ".join(f"from {a:.2f} to {b:.2f} at x = {percent(e)}" for e, a, b in zip(errors, old, new))


def covers(store: Store, name: str, trace: str) -> bool:
    """Whether campaign ``name`` is stored with runs on ``trace``, or not stored at all (then its absence is said)."""
    table = store.table(name)
    return table is None or trace in set(table["short"])


def virtual_gap(store: Store, trace: str) -> str:
    """Figure 4: what keeping expired predictions does to FCFS-EASY and SJF-EASY (``abl_expired_virtual``)."""
    if not covers(store, "abl_expired_virtual", trace):
        return ""
    errors = _virtual_pairs(store, trace)
    easy = store.value(MAIN, trace, "EASY", "avg_bsld")
    if not errors or easy is None:
        return ("Where PV-EASY is not the best: our FCFS-EASY and SJF-EASY plan a job that runs past its prediction "
                "to its walltime; what keeping the expired prediction does instead is not measured here "
                + missing("abl_expired_virtual") + ".\n")

    def v(name: str, strategy: str, metric: str = "avg_bsld") -> list[float]:
        return [float(store.value(name, trace, strategy, metric, error=e, seed=1)) for e in errors]  # type: ignore[arg-type]

    fcfs, fcfs_kept = v(MAIN, "FCFS-EASY"), v("abl_expired_virtual", "FCFS-EASY")
    fcfs_kept_w = v("abl_expired_virtual", "FCFS-EASY", "mwbs")
    sjf_kept, pv_kept = v("abl_expired_virtual", "SJF-EASY"), v("abl_expired_virtual", "PV-EASY")
    sjf_kept_w, pv_kept_w = v("abl_expired_virtual", "SJF-EASY", "mwbs"), v("abl_expired_virtual", "PV-EASY", "mwbs")
    easy_w = store.value(MAIN, trace, "EASY", "mwbs")
    text = (f"Where PV-EASY is not the best: our FCFS-EASY and SJF-EASY plan a job that runs past its prediction to "
            f"its walltime. Keeping the expired prediction instead (`abl_expired_virtual`, {trace}, seed 1) "
            f"{'raises' if all(k > f for k, f in zip(fcfs_kept, fcfs)) else 'changes'} FCFS-EASY's MBS "
            f"{_from_to(errors, fcfs, fcfs_kept)}.")
    small = [i for i, e in enumerate(errors) if e <= 0.10 + 1e-9]
    if small and easy_w is not None:
        i = small[-1]  # the largest error the remark covers
        mbs_agrees, mwbs_agrees = fcfs_kept[i] > easy, fcfs_kept_w[i] > easy_w
        text += (" The study remarks (its Section 6) that EASY with the users' requests has a smaller MBS and MWBS "
                 f"than EASY with a virtual predictor within 10 %; at x = {percent(errors[i])} our revising FCFS-EASY "
                 f"{'contradicts' if fcfs[i] < easy else 'agrees with'} it on MBS ({fcfs[i]:.2f} against "
                 f"{easy:.2f}), and one that keeps expired predictions "
                 + ("agrees on both" if mbs_agrees and mwbs_agrees else
                    "agrees on MBS only" if mbs_agrees else "agrees on MWBS only" if mwbs_agrees else
                    "agrees on neither")
                 + f" (MBS {fcfs_kept[i]:.2f} against {easy:.2f}, MWBS {fcfs_kept_w[i]:.2f} against {easy_w:.2f}).")
    # Against a PV-EASY that keeps expired predictions too: like with like.
    for metric, mine, theirs in (("MBS", fcfs_kept, pv_kept), ("MWBS", fcfs_kept_w, pv_kept_w)):
        behind = [e for e, f, k in zip(errors, mine, theirs) if f > k]
        ahead = [e for e in errors if e not in behind]
        pairs = ", ".join(f"{f:.2f} against {k:.2f}" for f, k in zip(mine, theirs))
        where = ("at every x measured" if not ahead else f"at x = {_xs(behind)} only" if behind else
                 "at no x measured")
        text += (f" {'With PV-EASY keeping them too, FCFS-EASY' if metric == 'MBS' else 'On MWBS it'} is behind "
                 f"PV-EASY {where} ({metric} {pairs}, x = {_xs(errors)}).")
    text += (" An EASY that never revised an expired prediction would thus explain the study's FCFS-EASY behind "
             "PV-EASY only in those cells.")
    below = all(s < p for s, p in zip(sjf_kept, pv_kept))
    text += (f" {'It does not explain' if below else 'It also bears on'} SJF-EASY: never revised, its MBS is "
             f"{_at(errors, sjf_kept)} (x = {_xs(errors)}), {'still below' if below else 'not below'} PV-EASY's "
             f"{_at(errors, pv_kept)} under the same rule (MWBS {_at(errors, sjf_kept_w)} against "
             f"{_at(errors, pv_kept_w)}).")
    if below:
        text += (" Backfilling the shortest predictions first is simply strong on these traces; what in the study's "
                 "SJF-EASY made it weaker is not in the paper.")
    return text + "\n"


def sjf_gap(store: Store, trace: str) -> str:
    """Figure 4's SJF-EASY without any predictor (``abl_sjf_requests``), beside ours and PV-EASY's."""
    if not covers(store, "abl_sjf_requests", trace):
        return ""
    table = store.table(MAIN)
    errors = [] if table is None else sorted(float(e) for e in set(table["error"].dropna()) if e > 0
                                             and store.run(MAIN, trace, "SJF-EASY", error=e, seed=1) is not None
                                             and store.run(MAIN, trace, "PV-EASY", error=e, seed=1) is not None)
    errors = [e for e in errors if e in _virtual_pairs(store, trace)] or errors  # those of the text above
    requests = store.run("abl_sjf_requests", trace, "EASY")
    head = (f"SJF-EASY, read the ways the study allows ({trace}, seed 1). The study's SJF-EASY \"selects backfilled "
            "jobs according to the order of Short Job First\", and its virtual predictor \"replaced user estimates\" "
            "in FCFS-EASY and SJF-EASY; ours backfills shortest prediction first, with the reservation and the "
            "\"ends before it\" test on the predictions")
    if not errors:
        return ""
    sjf = [float(store.value(MAIN, trace, "SJF-EASY", "avg_bsld", error=e, seed=1)) for e in errors]  # type: ignore[arg-type]
    pv = [float(store.value(MAIN, trace, "PV-EASY", "avg_bsld", error=e, seed=1)) for e in errors]  # type: ignore[arg-type]
    pv_w = [float(store.value(MAIN, trace, "PV-EASY", "mwbs", error=e, seed=1)) for e in errors]  # type: ignore[arg-type]
    text = (f"{head} (MBS {_at(errors, sjf)} at x = {_xs(errors)}); PV-EASY has {_at(errors, pv)} (MWBS "
            f"{_at(errors, pv_w)}). Ordering the backfilling by the users' requests while planning with the "
            "predictions needs an order no option offers: not measured.")
    if requests is None:
        return text + " No predictor at all (SJF on the requests) is not measured here " + \
            missing("abl_sjf_requests") + ".\n"
    mbs, mwbs = float(requests["avg_bsld"]), float(requests["mwbs"])
    all_below = all(s < p for s, p in zip(sjf, pv)) and all(mbs < p for p in pv)
    within = [e for e, w in zip(errors, pv_w) if mwbs <= w * (1 + GAP / 10)]
    text += (f" No predictor at all (SJF on the requests, reservation on the requests; `abl_sjf_requests`, a proxy: "
             "the study's virtual predictor replaced the requests in SJF-EASY): "
             f"{mbs:.2f} (MWBS {mwbs:.2f}). ")
    if all_below:
        text += "Every reading keeps SJF-EASY's MBS below PV-EASY's"
        if within:
            sides = ", ".join(f"{'behind' if mwbs > w else 'ahead of'} it at x = {percent(e)} ({mwbs:.2f} against "
                              f"{w:.2f})" for e, w in zip(errors, pv_w) if e in within)
            text += f"; on MWBS the requests-only reading comes within 1 % of PV-EASY's: {sides}"
        text += ". On MBS, which jobs count as short does not explain Figure 4's SJF-EASY."
    else:
        text += "Not every reading keeps SJF-EASY's MBS below PV-EASY's."
    return text + "\n"
