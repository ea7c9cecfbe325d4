"""Study 003 (PV-EASY: shadow-load preemption and venture backfilling) as a plug-in of ``bftune reproduce``.

- :mod:`.plan`: the campaigns (the main one, the study's experiments, and
  the ablation campaigns behind the explanations);
- ``published.toml`` (:mod:`.published`): the study's Tables 1-6;
- :mod:`.report`: the study's tables beside ours, its claims checked, every
  gap explained with figures computed from the stored runs (:mod:`.explain`,
  :mod:`.jobs`, reading them through :mod:`.stored`);
- ``fixtures/``: the tests' hand-made runs.
"""

from __future__ import annotations

from bftune.experiments.reproduce.study import Study
from bftune.experiments.studies.s003 import plan, report

STUDY = Study(
    number="003", title="PV-EASY: shadow-load preemption and venture backfilling",
    seed_file="003_dd76c05782ff7524.txt", plan=plan.plan, report=report.report,
    durations={"quick": "CTC-SP2, 12 whole-trace runs and 4 ablation campaigns (9 runs): about 100 CPU-seconds with "
                        "the interpreted core, under a minute on 2 idle cores",
               "paper": "CTC-SP2 and SDSC-BLUE, 252 whole-trace runs (1,250 CPU-seconds: CTC-SP2 318, SDSC-BLUE 932) "
                        "and 11 ablation campaigns (25 runs, 120 CPU-seconds), compiled core, the stored runs' "
                        "cpu_s on the project machine (2026-11-26); 12 min 17 s of wall time on 2 cores"})
