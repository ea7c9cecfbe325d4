"""Study 001 (online tuning of EASY with queue reordering policies, Legrand et al. TPDS 2018): campaigns, report.

Campaigns (``kind = "online"``): per shared trace of the study (KTH-SP2,
CTC-SP2, SDSC-SP2, SDSC-BLUE, CEA-Curie), the 12 fixed policies and the
random, full, noisy and bandit selectors with daily and weekly periods, all
in EASY(P, 40 h), on resampled two-year traces (paper: 60 per trace; quick:
3 one-year traces of KTH-SP2).

Extra step (when ``ocs-obps``, the study's own simulator, is installed:
``../shared/tools/build-ocst.sh``): Table 3 measured with both simulators on
the same resampled traces (:mod:`.naming`), which settles what the study's
policy names mean.  Without it the report says so and relies on the names'
analysis alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.experiments.reproduce import naming
from bftune.experiments.reproduce.markdown import diff, num, table
from bftune.experiments.reproduce.study import STUDY_PROCS, CampaignPlan, Execution, Study, trace

TRACES = {
    "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "SDSC-BLUE": "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "CEA-Curie": "CEA-Curie-2011-2.1-cln.swf.gz",
}
#: Table 4: best fixed policy (hindsight), then random, full, noisy, bandit with weekly and daily periods (%).
TABLE4_COLUMNS = ("best", "random/1w", "random/1d", "full/1w", "full/1d", "noisy/1w", "noisy/1d", "bandit/1w",
                  "bandit/1d")
TABLE4 = {
    "KTH-SP2": (-16, -6, -8, -12, -11, -12, -12, -7, -10),  # full/1d printed "11%": the sign was lost
    "CTC-SP2": (-47, -20, -23, -44, -44, -44, -44, -26, -31),
    "SDSC-SP2": (-15, -4, -7, -13, -13, -13, -13, -5, -8),
    "SDSC-BLUE": (-32, -12, -14, -31, -31, -30, -29, -12, -17),
    "CEA-Curie": (-57, -35, -42, -53, -47, -53, -48, -36, -46),
}
#: The study's column name -> the SPEC order that produced it (settled by :mod:`.naming`).
STUDY_NAMING = {"LEXP": "SEXP", "SEXP": "LEXP", "LRF": "SRF", "SRF": "LRF"}
NAMING_TRACES = ("KTH-SP2", "SDSC-SP2", "CTC-SP2")
NAMING_SEED = 1000


def _config(name: str, resamples: int, weeks: int) -> str:
    procs = [f"procs = {STUDY_PROCS[name]}"] if name in STUDY_PROCS else []  # the study's machine, not the file's
    return "\n".join([
        "[campaign]", 'kind = "online"', f'name = "study001_{name}"', "seed = 1", "tau = 10", "",
        "[workload]", f'trace = "{trace(TRACES[name])}"', *procs, "",
        "[online]", f"resamples = {resamples}", f"weeks = {weeks}", 'threshold = "40h"',
        'fixed = ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF"]',
        'selectors = ["random", "full", "noisy", "bandit"]', 'periods = ["1d", "1w"]',
        "epsilon = 0.1", "noise = 0.2", "decay = 1.0", 'baseline = "FCFS"']) + "\n"


def plan(scale: str) -> list[CampaignPlan]:
    if scale == "quick":
        return [CampaignPlan("KTH-SP2", _config("KTH-SP2", 3, 52))]
    return [CampaignPlan(name, _config(name, 60, 104)) for name in TRACES]


def extra(scale: str, out: Path, execution: Execution) -> list[str]:
    ocs = naming.ocs_available()
    if ocs is None:
        return ["study 001: ocs-obps is not installed (../shared/tools/build-ocst.sh): naming evidence skipped"]
    traces = ("KTH-SP2",) if scale == "quick" else NAMING_TRACES
    resamples = 1 if scale == "quick" else 3
    for name in traces:
        naming.measure(naming.Measurement(name, trace(TRACES[name]), resamples, NAMING_SEED), out / "naming", ocs)
    return [f"study 001: naming evidence measured with {ocs} on {', '.join(traces)}"]


def _summary(out: Path, name: str) -> pd.DataFrame | None:
    path = out / "campaigns" / name / "summary_online.csv"
    return pd.read_csv(path) if path.exists() else None


def _rel(summary: pd.DataFrame | None, strategy: str) -> float | None:
    if summary is None:
        return None
    sel = summary[summary["strategy"] == strategy]
    return 100.0 * float(sel["rel_total_wait"].iloc[0]) if len(sel) else None


def report(out: Path, scale: str) -> str:
    summaries = {name: _summary(out, name) for name in TRACES}
    done = [n for n, s in summaries.items() if s is not None]
    return "\n\n".join([_intro(done, summaries), _naming_section(out), _table3(summaries, done),
                        _table4(summaries, done), _claims(out, summaries, done), _gaps()])


def _intro(done: list[str], summaries: dict) -> str:
    sizes = []
    for name in done:
        meta = summaries[name]
        n = int(meta["resamples"].max()) if "resamples" in meta.columns else None
        sizes.append(f"{name} ({n} resamples)")
    return ("Values are the study's eq. (12): the change of the total waiting time summed over the resampled traces, "
            "against EASY(FCFS, 40 h), in % (negative = less waiting). Traces run: "
            f"{', '.join(sizes) or 'none yet'} (ANL-Intrepid and Unilu-Gaia are not in `../shared/workloads`).")


def _naming_section(out: Path) -> str:
    head = ("## What the study's policy names mean\n\n"
            "The study's simulator (ocst, `obps-article` line) sorts every criterion highest value first, and the "
            "study names its criteria with S and L swapped (`spf` is named LPF...). That is right for p~, q and the "
            "area, whose criteria are the values themselves, and wrong for the ratio p~/q and the expansion factor, "
            "whose criteria are already oriented: the study's LEXP/SEXP and LRF/SRF columns are the SEXP/LEXP and "
            "SRF/LRF orders of SPEC (and of study 000, whose EXP is the largest expansion factor first). ")
    ocs_dir = out / "naming"
    totals = naming.load(ocs_dir) if ocs_dir.is_dir() else {}
    rows = naming.evidence_rows(totals) if totals else []
    if not rows:
        return head + ("Measured evidence: none here (ocs-obps not installed, or not measured at this scale); "
                       "`tests/experiments/reproduce/test_naming.py` checks the criterion-to-order mapping job by "
                       "job when it is.")
    body = [[r["trace"], r["column"], r["published"], num(r["bftune_same_name"]), num(r["bftune_opposite_name"]),
             num(r["ocs_same_behaviour"]), num(r["ocs_opposite_name"]), r["ocs_criteria"], r["resamples"]]
            for r in rows]
    return head + ("Evidence: both simulators on the same resampled two-year traces (seed 1000 + i; "
                   "`experiments/reproduce/naming.py`). For every column the published value sits with the ocst "
                   "criterion of the *opposite* name; for SPF/SQF/SAF that criterion runs the named order, for "
                   "LEXP/SEXP/LRF/SRF it runs the opposite one (and so does bftune's opposite policy).\n\n"
                   + table(["trace", "published column", "published (%)", "bftune, same name", "bftune, opposite",
                            "ocst, same order", "ocst, opposite name", "ocst criteria (same / opposite)",
                            "resamples"], body))


def _table3(summaries: dict, done: list[str]) -> str:
    rows = []
    agree = total = 0
    for name in done:
        s = summaries[name]
        for col, theirs in zip(naming.TABLE3_COLUMNS, naming.TABLE3[name]):
            ours = _rel(s, STUDY_NAMING.get(col, col))
            if ours is not None and theirs != 0:
                total += 1
                agree += (ours < 0) == (theirs < 0)
            rows.append([name, col, STUDY_NAMING.get(col, col), num(ours), theirs, diff(ours, theirs)])
    return ("## Fixed policies (Table 3)\n\n"
            "\"run as\": the SPEC order that produced the study's column (previous section). "
            f"Signs agree on {agree} of {total} columns.\n\n"
            + table(["trace", "study's column", "run as", "ours (%)", "theirs (%)", "diff"], rows))


def _table4(summaries: dict, done: list[str]) -> str:
    rows = []
    for name in done:
        s = summaries[name]
        fixed = s[s["family"] == "fixed"] if s is not None else None
        best_name = "" if fixed is None or fixed.empty else fixed.loc[fixed["rel_total_wait"].idxmin(), "strategy"]
        values = _table4_values(s)
        for col, theirs in zip(TABLE4_COLUMNS, TABLE4[name]):
            label = f"best ({best_name})" if col == "best" else col
            rows.append([name, label, num(values[col]), theirs, diff(values[col], theirs)])
    return ("## Policy selection (Table 4)\n\n"
            + table(["trace", "strategy", "ours (%)", "theirs (%)", "diff"], rows))


def _table4_values(summary: pd.DataFrame | None) -> dict[str, float | None]:
    """Ours, by Table 4's column names (``best``: the best fixed policy in hindsight)."""
    fixed = summary[summary["family"] == "fixed"] if summary is not None else None
    best = None if fixed is None or fixed.empty else 100.0 * float(fixed["rel_total_wait"].min())
    return {col: best if col == "best" else _rel(summary, col) for col in TABLE4_COLUMNS}


def _near_best(v: dict) -> float:
    """How far the full and noisy selectors stay from the best fixed policy, at worst (points)."""
    return max(v[c] for c in ("full/1w", "full/1d", "noisy/1w", "noisy/1d")) - v["best"]


@dataclass(frozen=True)
class Claim:
    """A claim of the study's Section 6: every ``(a, b)`` of ``less`` has a lower Table 4 value than b."""

    text: str
    less: tuple[tuple[str, str], ...]

    def holds(self, v: dict) -> bool:
        return all(v[a] < v[b] for a, b in self.less)

    def shows(self, v: dict) -> str:
        return "; ".join(f"{v[a]:.1f} {'<' if v[a] < v[b] else '>='} {v[b]:.1f}" for a, b in self.less)


#: The study's qualitative claims about Table 4 (Section 6), each a test on a row of Table 4's values.
CLAIMS = tuple(
    [Claim(f"bandit between full feedback and random, {word} periods",
           ((f"full/{p}", f"bandit/{p}"), (f"bandit/{p}", f"random/{p}"))) for p, word in (("1w", "weekly"),
                                                                                           ("1d", "daily"))]
    + [Claim(f"daily periods better than weekly for {who}", ((f"{s}/1d", f"{s}/1w"),))
       for s, who in (("random", "random"), ("bandit", "the bandit"))])
BOOTSTRAP_DRAWS = 2000


def _margins(runs: pd.DataFrame | None, claim: Claim) -> str:
    """95 % bootstrap intervals (over resamples, paired) of each ``a - b`` of ``claim``, in points of Table 4.

    Table 4's value of a strategy is its total waiting time over the resamples against FCFS's; drawing the
    resamples with replacement (the same draw for every strategy) shows whether 60 of them settle the sign.
    """
    if runs is None:
        return "-"
    wait = runs.pivot_table(index="resample", columns="strategy", values="total_wait", aggfunc="sum")
    needed = {"FCFS", *(x for pair in claim.less for x in pair)}
    if not needed <= set(wait.columns):
        return "-"
    wait = wait.dropna()
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(wait), size=(BOOTSTRAP_DRAWS, len(wait)))
    base = wait["FCFS"].to_numpy()[draws].sum(axis=1)
    out = []
    for a, b in claim.less:
        d = 100.0 * (wait[a].to_numpy()[draws].sum(axis=1) - wait[b].to_numpy()[draws].sum(axis=1)) / base
        lo, hi = np.percentile(d, [2.5, 97.5])
        out.append(f"[{lo:+.1f}, {hi:+.1f}]")
    return "; ".join(out)


def _claims(out: Path, summaries: dict, done: list[str]) -> str:
    rows, agree, total = [], 0, 0
    for name in done:
        ours = _table4_values(summaries[name])
        if any(v is None for v in ours.values()):
            continue
        theirs = dict(zip(TABLE4_COLUMNS, TABLE4[name]))
        runs_path = out / "campaigns" / name / "runs.csv"
        runs = pd.read_csv(runs_path) if runs_path.exists() else None
        rows.append([name, "full and noisy feedback: worst gap to the best fixed policy (points)",
                     num(_near_best(ours)), "-", num(_near_best(theirs)), "-"])
        for claim in CLAIMS:
            a, b = claim.holds(ours), claim.holds(theirs)
            total += 1
            agree += a == b
            rows.append([name, claim.text, f"{'yes' if a else 'no'} ({claim.shows(ours)})", _margins(runs, claim),
                         f"{'yes' if b else 'no'} ({claim.shows(theirs)})", "yes" if a == b else "**no**"])
    if not rows:
        return "## The study's claims about policy selection\n\nNo trace has all of Table 4's strategies yet."
    return ("## The study's claims about policy selection\n\n"
            "Each claim of the study's Section 6 tested on our Table 4 and on the study's (values in %, as Table 4); "
            f"the two agree on {agree} of {total}. The interval is the 95 % paired bootstrap interval of each "
            "difference over our resamples: one that contains 0 means our resamples do not settle that "
            "comparison.\n\n"
            + table(["trace", "claim", "ours", "ours: 95 % interval of the difference (points)", "study's table",
                     "agree"], rows))


def _gaps() -> str:
    return """## Differences, and why

- **Names**: settled above; Table 3 is compared under the study's naming read right.
- **Simulator**: ocst breaks ties differently from SPEC's EASY (same-time events in heap order, the
  backfill argmax keeping the last maximum, the reservation's extra processors counted up to the first job
  that lets the head fit: `../shared/tools/build-ocst.sh`, trap 11); on the original CTC-SP2, EASY-FCFS
  gives 3,974.7 s there and 3,913.6 s here. Its threshold puts a job above the threshold at criterion
  9,999,999 + wait, so with SAF/LAF old jobs do not all go first.
- **Resampling**: the same method (per-user weeks), another random generator: the study's 60 resamples and
  ours are different draws; with fewer resamples (quick scale) expect several points of noise. The claims
  table's intervals show which comparisons our resamples settle: a claim on which ours and the study's
  disagree while its interval contains 0 is within our resampling noise.
- **CEA-Curie** (run on the study's 80,640 processors; the file says 93,312): every reduction is 11 to 24
  points smaller than the study's, and LQF and LAF lengthen waiting where the study has them shorten it.
  Measured and ruled out (`experiments/REPRODUCTION.md`, study 001's CEA-Curie section): the machine size
  (93,312 gives the same signs), the simulator (ocst on our resamples gives our signs), the policy names,
  the job set (ocst accepts only SPEC-clean jobs; dropping the 84,604 jobs without a requested processor
  count, which ocst reads, leaves LQF and LAF positive and moves study 000 away; so does keeping only the
  thin-node partition, whose size the study's 80,640 processors are) and the source span
  (resamples drawn from 3 months of the file: LQF and LAF turn negative only with the lightest months, and
  SQF and SAF then fall further short).
  The study's resampled traces remain; its workflow code was not found.
- **Not compared**: ANL-Intrepid and Unilu-Gaia (no shared trace); the figures (shapes only)."""


STUDY = Study(
    number="001", title="Online tuning of EASY-Backfilling using queue reordering policies",
    seed_file="001_11d0b492e262f996.txt", plan=plan, report=report, extra=extra,
    durations={"quick": "KTH-SP2, 3 one-year resamples, plus the ocst evidence on one resample: about 1 min on 2 cores",
               "paper": "5 traces x 60 two-year resamples x 20 strategies, plus the ocst evidence on 3 traces "
                        "(8 min on one core); measured on the project machine with the compiled core "
                        "(2026-11-24): 1,300 CPU-seconds for KTH-SP2, 3,200 for CTC-SP2, 1,000 for SDSC-SP2, "
                        "3,100 for SDSC-BLUE (1 h 15 min for the four on 2 cores), CEA-Curie on the study's "
                        "80,640 processors about 28,500 (23.8 a run): about 37,000 CPU-seconds for all five, "
                        "about 5 h on 2 cores; use --dask"})
