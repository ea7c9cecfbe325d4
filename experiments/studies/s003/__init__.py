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
    durations={"quick": "CTC-SP2, 12 whole-trace runs and 4 ablation campaigns (9 runs): about a minute on 2 cores",
               "paper": "CTC-SP2 and SDSC-BLUE, 252 whole-trace runs: about two hours on 2 cores; the 11 ablation "
                        "campaigns (35 runs): not yet measured"})
