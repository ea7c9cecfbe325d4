"""Study 000's campaigns: per trace, the 49 EASY-Pr-Pb pairs with the 20 h threshold on resampled weeks."""

from __future__ import annotations

from bftune.experiments.reproduce.study import CampaignPlan, published, trace

PUBLISHED = published(__file__)
#: The traces, in the report's order, and the resampled weeks per half at paper scale (the study's number).
TRACES = {"KTH-SP2": 250, "SDSC-SP2": 250, "CTC-SP2": 250, "SDSC-BLUE": 250, "CEA-Curie": 250}
#: Machine sizes the study simulated where the file says otherwise (its Table 3: CEA-Curie's 80,640).
MACHINES: dict[str, int] = PUBLISHED["machines"]


def _config(name: str, weeks: int) -> str:
    procs = MACHINES.get(name)
    return "\n".join([
        "[campaign]", 'kind = "offline"', f'name = "study000_{name}"', "seed = 1", "tau = 10", "",
        "[workload]", f'trace = "{trace(name)}"'] + ([f"procs = {procs}"] if procs else []) + [
        "", "[offline]", 'policies = ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP"]', 'thresholds = ["20h"]',
        f"weeks = {weeks}", 'splits = ["train", "test"]', 'baseline = ["FCFS", "FCFS"]']) + "\n"


def plan(scale: str) -> list[CampaignPlan]:
    if scale == "quick":
        return [CampaignPlan("KTH-SP2", _config("KTH-SP2", 20))]
    return [CampaignPlan(name, _config(name, weeks)) for name, weeks in TRACES.items()]
