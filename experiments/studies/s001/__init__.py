"""Study 001 (online tuning of EASY with queue reordering policies, Legrand et al. TPDS 2018): campaigns, report.

Campaigns (``kind = "online"``, :mod:`.plan`): per trace of the study that
the catalogue has (KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE, CEA-Curie), the 12
fixed policies and the random, full, noisy and bandit selectors with daily
and weekly periods, all in EASY(P, 40 h), on resampled two-year traces
(paper: 60 per trace; quick: 3 one-year traces of KTH-SP2).

Extra step (when ``ocs-obps``, the study's own simulator, is installed:
``../shared/tools/build-ocst.sh``): Table 3 measured with both simulators on
the same resampled traces (:mod:`.naming`), which settles what the study's
policy names mean.  Without it the report says so and relies on the names'
analysis alone.

The report (:mod:`.report`): Tables 3 and 4 (:mod:`.tables`) and the study's
claims (:mod:`.claims`).  Published figures: ``published.toml``; the latest
paper-scale report: ``REPRODUCTION.md``.
"""

from __future__ import annotations

from bftune.experiments.reproduce.study import Study
from bftune.experiments.studies.s001 import plan, report

STUDY = Study(
    number="001", title="Online tuning of EASY-Backfilling using queue reordering policies",
    seed_file="001_11d0b492e262f996.txt", plan=plan.plan, report=report.report, extra=plan.extra,
    traces=plan.naming_traces,
    durations={"quick": "KTH-SP2, 3 one-year resamples, plus the ocst evidence on one resample: about 1 min on 2 cores",
               "paper": "5 traces x 60 two-year resamples x 20 strategies, plus the ocst evidence on 3 traces "
                        "(8 min on one core); measured on the project machine with the compiled core "
                        "(2026-11-24): 1,300 CPU-seconds for KTH-SP2, 3,200 for CTC-SP2, 1,000 for SDSC-SP2, "
                        "3,100 for SDSC-BLUE (1 h 15 min for the four on 2 cores), CEA-Curie on the study's "
                        "80,640 processors about 28,500 (23.8 a run): about 37,000 CPU-seconds for all five, "
                        "about 5 h on 2 cores; use --dask"})
