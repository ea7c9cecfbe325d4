"""Study 000's plan: the study's machine sizes, its traces by catalogue name."""

from __future__ import annotations

from bftune.experiments.studies.s000 import plan

import tomllib

def test_cea_curie_runs_on_the_studys_machine_size():
    """Study 000 lists CEA-Curie with 80,640 cores; the shared file says MaxProcs 93,312."""
    plans = {p.name: tomllib.loads(p.config) for p in plan.plan("paper")}
    assert plans["CEA-Curie"]["workload"]["procs"] == 80640
    assert all("procs" not in config["workload"] for name, config in plans.items() if name != "CEA-Curie")
    assert plans["CEA-Curie"]["workload"]["trace"] == "archive:CEA-Curie"
