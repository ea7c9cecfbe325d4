"""Study 002 (index policies learned by regression, Legrand et al.): collection, fits, evaluation, report.

Extra step: ``bftune learn-index`` on Lublin-Feitelson (S, Q) windows
(:mod:`bftune.experiments.campaign.index_collection`, resumable window by window) into
``DIR/learn``; the report sets its stored fits beside the study's Table 2
(:mod:`.table2`, figures in ``published.toml``).  Paper scale: the study's
440 windows x 256,000 trials (the collection behind the shipped fits
``schedulers/core/fits/``); quick: 20 windows x 2,000 trials.

Campaign (kind ``index``): FCFS, SPF, SAF, WFP3, UNICEF, F1-F4 and the four
shipped fits (Lin, Qdr, Cub, Qua) on 15-day windows: Lublin-Feitelson
sequences without backfilling (the study's Figure 1) and the archive traces
with EASY and without (its Figure 2), plus the r-clock ablation; this is
``experiments/configs/index_policies.toml``.  Quick: 5 sequences and KTH-SP2
only.  The evaluation uses the shipped fits, not the ones this run's
collection produces (at paper scale they are the same collection).

The latest paper-scale report: ``REPRODUCTION.md``.
"""

from __future__ import annotations

from pathlib import Path

from bftune.experiments.campaign.index_collection import finish, run_collection
from bftune.experiments.reproduce.embedded import campaigns_report
from bftune.experiments.reproduce.study import CampaignPlan, Execution, Study, toml_list, trace
from bftune.experiments.studies.s002 import claims, table2
from bftune.learning.index import collect as col
from bftune.workloads.archive import Archive

TRACES = ("KTH-SP2", "SDSC-SP2", "CTC-SP2", "HPC2N", "SDSC-BLUE", "CEA-Curie")
POLICIES = ("FCFS", "SPF", "SAF", "WFP3", "UNICEF", "F1", "F2", "F3", "F4", "Lin", "Qdr", "Cub", "Qua")
SCALES = {  # scale -> (traces, Lublin-Feitelson sequences, windows, trials)
    "quick": (TRACES[:1], 5, 20, 2_000),
    "paper": (TRACES, 50, 440, 256_000),
}


def _config(traces, sequences: int) -> str:
    return "\n".join([
        "[campaign]", 'kind = "index"', 'name = "index_policies"', "seed = 1", "",
        "[index]", f"traces = {toml_list(trace(t) for t in traces)}", f"lublin_sequences = {sequences}",
        f"policies = {toml_list(POLICIES)}", "no_backfilling = true", "clock_ablation = true"]) + "\n"


def plan(scale: str) -> list[CampaignPlan]:
    traces, sequences, _, _ = SCALES[scale]
    return [CampaignPlan("index_policies", _config(traces, sequences))]


def extra(scale: str, out: Path, execution: Execution) -> list[str]:
    """The score collection and its fits (resumable: stored windows are reused), on the command's executors."""
    _, _, windows, trials = SCALES[scale]
    settings = col.Settings(source="synthetic", windows=windows, trials=trials)
    outcome = run_collection(settings, out / "learn", workers=execution.workers, dask=execution.dask,
                             progress=execution.progress)
    if outcome.failures:
        return [f"learn-index: {len(outcome.failures)} windows failed (in learn/failures/); the same command "
                "retries them; no fit written"]
    finish(settings, out / "learn")
    return [f"learn-index: {outcome.windows} windows x {trials:,} trials; fits in {out / 'learn' / 'fits.md'}"]


def report(out: Path, scale: str, archive: Archive) -> str:
    _, _, windows, trials = SCALES[scale]
    fits = table2.load(out / "learn")
    if fits is not None:
        body = "\n".join("#" + line if line.startswith("#") else line for line in table2.markdown(fits).splitlines())
    else:
        body = "## Index functions learned by regression\n\nNot collected yet (no `learn/fits/*.json`)."
    learning = (f"Collection: `bftune learn-index --source synthetic --windows {windows} --trials {trials}` "
                "(the extra step, in `learn/`). The shipped fits (`schedulers/core/fits/`, the policies Lin, "
                "Qdr, Cub, Qua below) come from the paper-scale collection.\n\n" + body.strip())
    evaluation = campaigns_report(out, plan(scale))
    return "\n\n".join([learning, claims.markdown(out / "campaigns" / "index_policies"), evaluation])


STUDY = Study(
    number="002", title="On limits of machine learning techniques in the learning of scheduling policies",
    seed_file="002_da4de8ef99934c67.txt", plan=plan, report=report, extra=extra,
    durations={"quick": "20 windows x 2,000 trials, 5 sequences and KTH-SP2's windows: about 15 s on 2 cores",
               "paper": "225 evaluation runs (312 CPU-seconds, 2 min 42 s on 2 cores) and 440 windows x 256,000 "
                        "trials (7 min 27 s on 2 cores), compiled core, measured on the project machine 2026-11-26"})
