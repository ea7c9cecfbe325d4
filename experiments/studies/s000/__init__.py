"""Study 000 (tuning EASY-Backfilling queues, Legrand et al. JSSPP 2017): campaigns and report.

Campaigns (``kind = "offline"``, :mod:`.plan`): per trace of the catalogue
(KTH-SP2, SDSC-SP2, CTC-SP2, SDSC-BLUE, CEA-Curie), the 49 EASY-Pr-Pb pairs
of FCFS, LCFS, SPF, LPF, SQF, LQF, LEXP (the study's EXP: its published
3,074 s is the largest expansion factor first, see study 001's naming
evidence) with the 20 h threshold of Section 7.4, on resampled weeks of each
half (paper: 250 per half, the study's number, CEA-Curie on the study's
80,640 processors; quick: KTH-SP2, 20).  The report (:mod:`.report`) sets
the best training pair's test AvgWait beside Section 7.4.

Extra step (:mod:`.tables12`): Tables 1 and 2 (absolute AvgWait and MaxWait
on the original CTC-SP2 and SDSC-SP2), simulated here and, when ``ocs-obps``
is installed, with the study's own simulator too.

Published figures: ``published.toml``; the latest paper-scale report: ``REPRODUCTION.md``.
"""

from __future__ import annotations

from bftune.experiments.reproduce.study import Study
from bftune.experiments.studies.s000 import plan, report, tables12

STUDY = Study(
    number="000", title="Tuning EASY-Backfilling queues", seed_file="000_d60d5c521d90969e.txt", plan=plan.plan,
    report=report.report, extra=tables12.extra, traces=tables12.traces,
    durations={"quick": "KTH-SP2, 20 resampled weeks per half, plus Tables 1-2: about 20 s on 2 cores",
               "paper": "5 traces x 100 runs x 250 weeks per half, measured on the project machine with the "
                        "compiled core (2026-11-24 / 2026-11-26, another CPU): KTH-SP2, SDSC-SP2, CTC-SP2 and SDSC-BLUE "
                        "about 630 / 850 CPU-seconds in all, CEA-Curie about 2,200 / 3,200 (22 / 32 a run): about "
                        "25 / 36 min on 2 cores"})
