"""What we know of study 003's gaps, table by table: every figure computed from the stored runs (:mod:`.stored`).

The main campaign gives our side of each table; the ablation campaigns of
:mod:`.plan` (each changes one thing) say how far a choice the study leaves
open moves it.  Where an ablation campaign is not stored (the quick scale
runs a few), the text says which one and the command that makes it, and
leaves the sentence out rather than quote a figure no run backs.  The
job-by-job analyses (Figures 2-3 and 5) are in :mod:`.jobs`.
"""

from __future__ import annotations

from bftune.experiments.studies.s003.plan import MAIN
from bftune.experiments.studies.s003.published import value as pub
from bftune.experiments.studies.s003.stored import Store

GAP = 0.10
PAPER = "`uv run bftune reproduce 003 --scale paper --out DIR`"


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
            "first waiting job while it would have fit without the running jobs of lower priority (SPEC 3's unfair "
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
                   "depends on that unstated choice as much as on the filter.")


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
    """The text under each of one trace's tables (keys of :func:`bftune.experiments.report.pveasy.figures`)."""
    return {"workload": _workload(store, trace), "fairness": FAIRNESS, "violations": _violations(store, trace),
            "starts": _starts(store, trace), "preemption": f"{LOAD} {PREEMPTION}"}


def claims_note(store: Store, trace: str) -> str:
    """Under Figures 2, 3, 5, 6: what makes EASY-Last the worst or not, and how a preempted job's wait is counted."""
    easy, pv, last = (store.value(MAIN, trace, s, "avg_bsld") for s in ("EASY", "PV-EASY", "EASY-Last"))
    kept = store.value("abl_expired", trace, "EASY-Last", "avg_bsld")
    kept_pv = store.value("abl_expired", trace, "PV-EASY", "avg_bsld")
    parts = []
    if easy is not None and pv is not None and last is not None:
        worst = last >= max(easy, pv)
        head = ("EASY-Last is the worst here" if worst else
                "EASY-Last is not the worst here (our EASY-Last revises an expired prediction to the walltime)")
        if kept is None:
            parts.append(f"{head}; {missing('abl_expired')}")
        else:
            above = kept >= max(easy, pv)
            text = (f"{head}: keeping expired predictions instead (`abl_expired`) "
                    f"{'makes it worse than' if above else 'does not make it worse than'} EASY and our PV-EASY "
                    f"(MBS {kept:.2f} against {easy:.2f} and {pv:.2f})")
            if kept_pv is None:
                text += f"; PV-EASY keeping them too is not measured here {missing('abl_expired')}."
            elif above and kept >= kept_pv:
                text += (f", and than a PV-EASY that keeps them too ({kept_pv:.2f}): the study's finding, if both of "
                         "its schedulers kept expired predictions.")
            else:
                text += (f"; a PV-EASY that keeps them too has {kept_pv:.2f}"
                         + (" (above EASY-Last's)" if kept_pv > kept else "")
                         + ", so keeping expired predictions does not make EASY-Last the worst of the three.")
            parts.append(text if text.endswith(".") else text + ".")
    requeue = store.value(MAIN, trace, "PV-EASY", "avg_bsld_from_requeue")
    if pv is not None and requeue is not None:
        parts.append(f"PV-EASY's slowdowns {'do not come' if abs(requeue / pv - 1) <= GAP else 'come partly'} from "
                     "how a preempted job's wait is counted: from its requeue instead of its submission "
                     f"(`avg_bsld_from_requeue` in `runs.csv`), its MBS moves by {abs(requeue / pv - 1):.0%} "
                     f"({pv:.2f} to {requeue:.2f}).")
    return " ".join(parts)


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


def listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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

    fcfs, fcfs_kept, pv = v(MAIN, "FCFS-EASY"), v("abl_expired_virtual", "FCFS-EASY"), v(MAIN, "PV-EASY")
    sjf_kept, pv_kept = v("abl_expired_virtual", "SJF-EASY"), v("abl_expired_virtual", "PV-EASY")
    sjf_kept_w, pv_kept_w = v("abl_expired_virtual", "SJF-EASY", "mwbs"), v("abl_expired_virtual", "PV-EASY", "mwbs")
    above_pv = all(k > p for k, p in zip(fcfs_kept, pv))
    above_easy = all(k > easy for k in fcfs_kept)
    revising_below = all(f < easy for f in fcfs)
    text = (f"Where PV-EASY is not the best: our FCFS-EASY and SJF-EASY plan a job that runs past its prediction to "
            f"its walltime. Keeping the expired prediction instead (`abl_expired_virtual`, {trace}, seed 1) "
            f"{'raises' if all(k > f for k, f in zip(fcfs_kept, fcfs)) else 'changes'} FCFS-EASY's MBS "
            f"{_from_to(errors, fcfs, fcfs_kept)}, {'above' if above_pv else 'not above'} PV-EASY's "
            f"{_at(errors, pv)}, and {'above' if above_easy else 'not above'} EASY with the users' requests "
            f"({easy:.2f})")
    if above_pv and above_easy and revising_below:
        text += (": that is the study's own remark that EASY with requests beats EASY with a virtual predictor "
                 "within 10 % (its Section 6), which our revising EASY contradicts "
                 f"({fcfs[0]:.2f} < {easy:.2f}). So the study's EASY most likely never revised an expired "
                 "prediction.")
        # The study's PV-EASY would have kept them too: FCFS-EASY against PV-EASY under the same rule.
        behind = [e for e, f, k in zip(errors, fcfs_kept, pv_kept) if f > k]
        if len(behind) == len(errors):
            text += (f" With PV-EASY keeping them too (MBS {_at(errors, pv_kept)}), FCFS-EASY stays above it: that "
                     "explains the study's FCFS-EASY.")
        elif behind:
            ahead = [e for e in errors if e not in behind]
            text += (f" With PV-EASY keeping them too (MBS {_at(errors, pv_kept)}), FCFS-EASY is above it at "
                     f"x = {_xs(behind)} only, below it at x = {_xs(ahead)}: that explains the study's FCFS-EASY at "
                     f"x = {_xs(behind)}, not at x = {_xs(ahead)}.")
        else:
            text += (f" With PV-EASY keeping them too (MBS {_at(errors, pv_kept)}), FCFS-EASY is below it at every "
                     "x measured: that does not explain the study's FCFS-EASY.")
    else:
        text += "."
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
    text += (f" No predictor at all (SJF on the requests, reservation on the requests; `abl_sjf_requests`): "
             f"{mbs:.2f} (MWBS {mwbs:.2f}). ")
    if all_below:
        text += "Every reading keeps SJF-EASY's MBS below PV-EASY's"
        text += (f"; only the requests-only reading comes within 1 % of PV-EASY's MWBS (at x = "
                 f"{_xs(within)})" if within else "")
        text += ". Which jobs count as short does not explain Figure 4's SJF-EASY."
    else:
        text += "Not every reading keeps SJF-EASY's MBS below PV-EASY's."
    return text + "\n"
