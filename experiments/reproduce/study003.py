"""Study 003 (PV-EASY: shadow-load preemption and venture backfilling): campaigns and report.

One campaign of kind ``pv-easy`` (:mod:`bftune.experiments.campaign.kinds.pveasy`):
CTC-SP2 on the study's 430 processors and SDSC-BLUE on 1,152, the study's job
sets (cleaning ``ran``), FCFS priority; EASY, EASY-Last and PV-EASY with Last
Model (Tables 1, 2, 4-6, Figures 2, 3, 5, 6), and the virtual predictor
x in {0, 10, 20, 40, 80} % with 10 seeds for FCFS-EASY, SJF-EASY and PV-EASY
(Figure 4).  This is ``experiments/configs/pv_easy_study.toml`` with the
traces named by their catalogue names (``archive:CTC-SP2``).  Quick scale: CTC-SP2 only, x in {0, 40} %, 2 seeds.

The report is the campaign's own (:mod:`bftune.experiments.report.pveasy`):
the study's tables beside ours, gaps beyond 10 % marked and explained with the
ablations of ``experiments/ablations_pveasy.py``.
"""

from __future__ import annotations

from pathlib import Path

from bftune.experiments.reproduce.embedded import campaigns_report
from bftune.experiments.reproduce.study import CampaignPlan, Study, toml_list, trace
from bftune.workloads.archive import Archive

TRACES = {"CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", 430), "SDSC-BLUE": ("SDSC-BLUE-2000-4.2-cln.swf.gz", 1152)}
SCALES = {  # scale -> (traces, virtual errors, virtual seeds)
    "quick": (["CTC-SP2"], [0, 0.4], 2),
    "paper": (["CTC-SP2", "SDSC-BLUE"], [0, 0.1, 0.2, 0.4, 0.8], 10),
}


def _config(traces: list[str], errors: list[float], seeds: int) -> str:
    return "\n".join([
        "[campaign]", 'kind = "pv-easy"', 'name = "pv_easy_study"', "seed = 1", "tau = 10", "",
        "[pv-easy]", f"traces = {toml_list(trace(TRACES[t][0]) for t in traces)}",
        f"procs = [{', '.join(str(TRACES[t][1]) for t in traces)}]", 'cleaning = "ran"', 'policy = "FCFS"',
        'schedulers = ["EASY", "EASY-Last", "PV-EASY"]', f"virtual_errors = [{', '.join(map(str, errors))}]",
        f"virtual_seeds = {seeds}", 'virtual_schedulers = ["FCFS-EASY", "SJF-EASY", "PV-EASY"]']) + "\n"


def plan(scale: str) -> list[CampaignPlan]:
    return [CampaignPlan("pv_easy_study", _config(*SCALES[scale]))]


def report(out: Path, scale: str, archive: Archive) -> str:
    return campaigns_report(out, plan(scale))


STUDY = Study(
    number="003", title="PV-EASY: shadow-load preemption and venture backfilling",
    seed_file="003_dd76c05782ff7524.txt", plan=plan, report=report,
    durations={"quick": "CTC-SP2, 12 whole-trace runs: about 20 s on 2 cores",
               "paper": "CTC-SP2 and SDSC-BLUE, 252 whole-trace runs: about two hours on 2 cores"})
