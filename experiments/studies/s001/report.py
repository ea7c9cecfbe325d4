"""Study 001's report: the policy names' meaning, Tables 3 and 4, the study's claims, and the gaps explained."""

from __future__ import annotations

from pathlib import Path

from bftune.experiments.reproduce.markdown import num, table
from bftune.experiments.studies.s001 import claims, naming
from bftune.experiments.studies.s001.plan import TRACES
from bftune.experiments.studies.s001.tables import resamples, summary, table3, table4
from bftune.workloads.archive import Archive


def report(out: Path, scale: str, archive: Archive) -> str:
    summaries = {name: summary(out, name) for name in TRACES}
    done = [n for n, s in summaries.items() if s is not None]
    return "\n\n".join([_intro(done, summaries), _naming_section(out), table3(summaries, done),
                        table4(summaries, done), claims.section(out, summaries, done), _gaps()])


def _intro(done: list[str], summaries: dict) -> str:
    sizes = []
    for name in done:
        counts = set(resamples(summaries[name]).values())
        n = ("? resamples" if not counts else f"{min(counts)} resamples" if len(counts) == 1 else
             f"{min(counts)} to {max(counts)} resamples by strategy: see each table's column")
        sizes.append(f"{name} ({n})")
    return ("Values are the study's eq. (12): the change of the total waiting time summed over the resampled traces, "
            "against EASY(FCFS, 40 h), in % (negative = less waiting). Traces run: "
            f"{', '.join(sizes) or 'none yet'} (ANL-Intrepid and Unilu-Gaia are not in `../shared/workloads`).")


def _naming_section(out: Path) -> str:
    head = ("## What the study's policy names mean\n\n"
            "The study's simulator (ocst, `obps-article` line) sorts every criterion highest value first, and the "
            "study names its criteria with S and L swapped (`spf` is named LPF...). That is right for p~, q and the "
            "area, whose criteria are the values themselves, and wrong for the ratio p~/q and the expansion factor, "
            "whose criteria are already oriented: the study's LEXP/SEXP and LRF/SRF columns are the SEXP/LEXP and "
            "SRF/LRF orders of bftune (and of study 000, whose EXP is the largest expansion factor first). ")
    ocs_dir = out / "naming"
    totals = naming.load(ocs_dir) if ocs_dir.is_dir() else {}
    rows = naming.evidence_rows(totals) if totals else []
    if not rows:
        return head + ("Measured evidence: none here (ocs-obps not installed, or not measured at this scale); "
                       "`tests/experiments/studies/s001/test_naming.py` checks the criterion-to-order mapping job by "
                       "job when it is.")
    body = [[r["trace"], r["column"], r["published"], num(r["bftune_same_name"]), num(r["bftune_opposite_name"]),
             num(r["ocs_same_behaviour"]), num(r["ocs_opposite_name"]), r["ocs_criteria"], r["resamples"]]
            for r in rows]
    return head + ("Evidence: both simulators on the same resampled two-year traces (seed 1000 + i; "
                   "`experiments/studies/s001/naming.py`). " + _nearer(rows) + " For SPF/SQF/SAF the ocst criterion "
                   "of the opposite name runs the named order, for LEXP/SEXP/LRF/SRF it runs the opposite one (and so "
                   "does bftune's opposite policy).\n\n"
                   + table(["trace", "published column", "published (%)", "bftune, same name", "bftune, opposite",
                            "ocst, same order", "ocst, opposite name", "ocst criteria (same / opposite)",
                            "resamples"], body))


def _nearer(rows: list[dict]) -> str:
    """Where the published value lies nearer: the ocst criterion of the same name or of the opposite one, counted
    over the columns where the two differ (the ratio and the expansion factor), each exception named."""
    split = [r for r in rows if r["ocs_same_behaviour"] != r["ocs_opposite_name"]]
    if not split:
        return ""
    nearer = [r for r in split if abs(r["published"] - r["ocs_opposite_name"]) < abs(r["published"] - r["ocs_same_behaviour"])]
    others = [f"{r['trace']} {r['column']} ({r['published']}: same order {r['ocs_same_behaviour']:.1f}, opposite name "
              f"{r['ocs_opposite_name']:.1f})" for r in split if r not in nearer]
    resamples = sorted({int(r["resamples"]) for r in split})
    return (f"In {len(nearer)} of the {len(split)} cells where the two differ (LEXP/SEXP/LRF/SRF, "
            f"{'/'.join(map(str, resamples))} resample{'' if resamples == [1] else 's'} each), the published value lies nearer the ocst criterion of "
            "the *opposite* name" + (f"; not in {'; '.join(others)}" if others else "") + ".")


def _gaps() -> str:
    return """## Differences, and why

- **Names**: settled above; Table 3 is compared under the study's naming read right.
- **Simulator**: ocst breaks ties differently from bftune's EASY (same-time events in heap order, the
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
  Measured and ruled out (`experiments/studies/s001/REPRODUCTION.md`, study 001's CEA-Curie section): the machine size
  (93,312 also gives LQF and LAF positive, +19.1 and +21.2), the simulator (ocst on our resamples gives
  LQF and LAF positive too), the policy names, the job set (ocst accepts only jobs with 0 < runtime <=
  requested time; dropping the 84,604 jobs without a requested processor
  count, which ocst reads, leaves LQF and LAF positive and moves study 000 away; so does keeping only the
  thin-node partition, whose size the study's 80,640 processors are) and the source span
  (resamples drawn from 3 months of the file, the first and the last 91 days tried: LQF and LAF turn negative
  only with the first, and SQF and SAF then fall further short).
  The study's resampled traces remain; its workflow code was not found.
- **Not compared**: ANL-Intrepid and Unilu-Gaia (no shared trace); the figures (shapes only)."""
