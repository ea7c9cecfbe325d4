"""Study 003's campaigns: the main one (the study's experiments) and the ablations behind the report's explanations.

``pv_easy_study`` is ``experiments/configs/pv_easy_study.toml`` with the
traces' absolute paths: CTC-SP2 on the study's 430 processors and SDSC-BLUE
on 1,152, the study's job sets (cleaning ``ran``), FCFS priority; EASY,
EASY-Last and PV-EASY with Last Model (Tables 1, 2, 4-6, Figures 2, 3, 5,
6), and the virtual predictor x in {0, 10, 20, 40, 80} % with 10 seeds for
FCFS-EASY, SJF-EASY and PV-EASY (Figure 4).  Quick scale: CTC-SP2 only,
x in {0, 40} %, 2 seeds.

Each ablation campaign (:data:`ABLATIONS`) changes one thing against it,
through public options only (``[pv-easy] options``, ``cleaning``), and the
report computes its explanations from what they store (``job_tables``: one
row per job, for the job-by-job analyses).  Paper scale: all of them, each
on the traces it explains; quick scale: :data:`QUICK`, on CTC-SP2, with
:data:`QUICK_ERRORS` for the virtual one.
"""

from __future__ import annotations

from dataclasses import dataclass

from bftune.experiments.reproduce.study import CampaignPlan, toml_list, trace

MAIN = "pv_easy_study"
TRACES = {"CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", 430), "SDSC-BLUE": ("SDSC-BLUE-2000-4.2-cln.swf.gz", 1152)}
SCALES = {  # scale -> (traces, virtual errors, virtual seeds) of the main campaign
    "quick": (["CTC-SP2"], [0, 0.4], 2),
    "paper": (["CTC-SP2", "SDSC-BLUE"], [0, 0.1, 0.2, 0.4, 0.8], 10),
}
BOTH = ("CTC-SP2", "SDSC-BLUE")


@dataclass(frozen=True)
class Ablation:
    """One ablation campaign: what it varies (for the report), its runs, the traces it explains."""

    name: str
    what: str
    schedulers: tuple[str, ...]
    options: str = ""  # the [pv-easy] options table, as TOML text ("" for none)
    cleaning: str = "ran"
    job_tables: bool = False
    virtual_errors: tuple[float, ...] = ()  # with virtual_seeds = 1
    traces: tuple[str, ...] = ("CTC-SP2",)


ABLATIONS = (
    Ablation("abl_jobs", "EASY and PV-EASY as the main campaign runs them, one row per job kept (Figures 2-3 and "
             "5 job by job)", ("EASY", "PV-EASY"), job_tables=True, traces=BOTH),
    Ablation("abl_expired", "EASY-Last and PV-EASY keeping an expired prediction instead of planning the job to "
             "its walltime", ("EASY-Last", "PV-EASY"), '{overrun_estimate = "expired"}', job_tables=True,
             traces=BOTH),
    Ablation("abl_exact", "PV-EASY with exact predictions instead of Last Model", ("PV-EASY",),
             '{predictor = "exact"}', job_tables=True, traces=BOTH),
    Ablation("abl_requests", "PV-EASY planning with the users' requests instead of Last Model", ("PV-EASY",),
             '{predictor = "walltime"}', job_tables=True),
    Ablation("abl_fill_none", "PV-EASY without venture backfilling's second step (idle processors stay idle)",
             ("PV-EASY",), '{venture_fill = "none"}', job_tables=True),
    Ablation("abl_fill_none_exact", "the same with exact predictions", ("PV-EASY",),
             '{venture_fill = "none", predictor = "exact"}', job_tables=True),
    Ablation("abl_fill_shortest", "PV-EASY whose venture second step takes the shortest prediction first",
             ("PV-EASY",), '{venture_fill = "shortest"}', job_tables=True),
    Ablation("abl_machines", "EASY with the machines reservation model (batsched's) instead of the count model",
             ("EASY",), '{reservation = "machines"}', traces=BOTH),
    Ablation("abl_overruns_finish", "EASY on the job set whose overruns run to their end instead of being killed "
             "at their request", ("EASY",), cleaning="ran-overruns-finish", traces=BOTH),
    Ablation("abl_expired_virtual", "FCFS-EASY, SJF-EASY and PV-EASY with the virtual predictor (seed 1), "
             "expired predictions kept", (), '{overrun_estimate = "expired"}', virtual_errors=(0.1, 0.4)),
    Ablation("abl_sjf_requests", "EASY backfilling shortest request first, no predictor (SJF-EASY on the "
             "requests)", ("EASY",), '{backfill_policy = "SPF"}'),
)
BY_NAME = {a.name: a for a in ABLATIONS}
#: The quick scale's ablations (CTC-SP2 only), and the virtual one's errors there.
QUICK = ("abl_jobs", "abl_expired", "abl_exact", "abl_expired_virtual")
QUICK_ERRORS = (0.4,)


def _section(traces: list[str]) -> list[str]:
    return [f"traces = {toml_list(trace(TRACES[t][0]) for t in traces)}",
            f"procs = [{', '.join(str(TRACES[t][1]) for t in traces)}]"]


def main_config(scale: str) -> str:
    traces, errors, seeds = SCALES[scale]
    return "\n".join([
        "[campaign]", 'kind = "pv-easy"', f'name = "{MAIN}"', "seed = 1", "tau = 10", "",
        "[pv-easy]", *_section(traces), 'cleaning = "ran"', 'policy = "FCFS"',
        'schedulers = ["EASY", "EASY-Last", "PV-EASY"]', f"virtual_errors = [{', '.join(map(str, errors))}]",
        f"virtual_seeds = {seeds}", 'virtual_schedulers = ["FCFS-EASY", "SJF-EASY", "PV-EASY"]']) + "\n"


def ablation_config(ablation: Ablation, scale: str) -> str:
    traces = [t for t in ablation.traces if t in SCALES[scale][0]]
    errors = QUICK_ERRORS if scale == "quick" else ablation.virtual_errors
    lines = ["[campaign]", 'kind = "pv-easy"', f'name = "study003_{ablation.name}"', "seed = 1", "tau = 10", "",
             "[pv-easy]", *_section(traces), f'cleaning = "{ablation.cleaning}"', 'policy = "FCFS"',
             f"schedulers = {toml_list(ablation.schedulers)}"]
    if ablation.virtual_errors:
        lines += [f"virtual_errors = [{', '.join(map(str, errors))}]", "virtual_seeds = 1"]
    if ablation.options:
        lines.append(f"options = {ablation.options}")
    if ablation.job_tables:
        lines.append("job_tables = true")
    return "\n".join(lines) + "\n"


def ablations(scale: str) -> tuple[Ablation, ...]:
    """The ablation campaigns of ``scale``."""
    return tuple(a for a in ABLATIONS if scale == "paper" or a.name in QUICK)


def plan(scale: str) -> list[CampaignPlan]:
    return [CampaignPlan(MAIN, main_config(scale))] + [CampaignPlan(a.name, ablation_config(a, scale))
                                                        for a in ablations(scale)]
