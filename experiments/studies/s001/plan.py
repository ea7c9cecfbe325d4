"""Study 001's campaigns (``kind = "online"``) and its extra step, the policy-naming evidence (:mod:`.naming`)."""

from __future__ import annotations

from pathlib import Path

from bftune.experiments.reproduce.study import CampaignPlan, Execution, published, trace
from bftune.experiments.studies.s001 import naming

#: The study's traces that the catalogue has, in the report's order.
TRACES = ("KTH-SP2", "CTC-SP2", "SDSC-SP2", "SDSC-BLUE", "CEA-Curie")
#: Machine sizes the study simulated where the file says otherwise (``published.toml``: CEA-Curie's 80,640).
MACHINES: dict[str, int] = published(__file__)["machines"]
NAMING_TRACES = ("KTH-SP2", "SDSC-SP2", "CTC-SP2")
NAMING_SEED = 1000


def _config(name: str, resamples: int, weeks: int) -> str:
    procs = [f"procs = {MACHINES[name]}"] if name in MACHINES else []  # the study's machine, not the file's
    return "\n".join([
        "[campaign]", 'kind = "online"', f'name = "study001_{name}"', "seed = 1", "tau = 10", "",
        "[workload]", f'trace = "{trace(name)}"', *procs, "",
        "[online]", f"resamples = {resamples}", f"weeks = {weeks}", 'threshold = "40h"',
        'fixed = ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF"]',
        'selectors = ["random", "full", "noisy", "bandit"]', 'periods = ["1d", "1w"]',
        "epsilon = 0.1", "noise = 0.2", "decay = 1.0", 'baseline = "FCFS"']) + "\n"


def plan(scale: str) -> list[CampaignPlan]:
    if scale == "quick":
        return [CampaignPlan("KTH-SP2", _config("KTH-SP2", 3, 52))]
    return [CampaignPlan(name, _config(name, 60, 104)) for name in TRACES]


def naming_traces(scale: str) -> tuple[str, ...]:
    """The traces the naming evidence resamples (read only when ocs-obps is installed)."""
    return ("KTH-SP2",) if scale == "quick" else NAMING_TRACES


def extra(scale: str, out: Path, execution: Execution) -> list[str]:
    ocs = naming.ocs_available()
    if ocs is None:
        return ["study 001: ocs-obps is not installed (../shared/tools/build-ocst.sh): naming evidence skipped"]
    traces = naming_traces(scale)
    resamples = 1 if scale == "quick" else 3
    for name in traces:
        naming.measure(naming.Measurement(name, str(execution.archive.path(name)), resamples, NAMING_SEED),
                       out / "naming", ocs)
    return [f"study 001: naming evidence measured with {ocs} on {', '.join(traces)}"]
