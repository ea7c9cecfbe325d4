"""Study 004 (small/large runtime classification, Zrigui et al. 2022): campaigns and report.

Campaigns (``[campaign] kind = "classification"``, tau = 60 s, forest seed 1 except ``forest_seed_*``):

- ``main``: the ``study004`` preset (``presets.toml`` of this folder) on
  KTH-SP2, CTC-SP2 and SDSC-SP2, policies FCFS, WFP3, SPF, SAF, all five
  variants; ``main_large``: the same on HPC2N and SDSC-BLUE (200k+ jobs
  each) with base / rf / class-clairvoyant only.  Quick scale: KTH-SP2
  only, FCFS and SPF, base / rf / class-clairvoyant.
- ``abl_*`` (paper scale): the ablation, one documented difference at a time,
  with FCFS on KTH-SP2, CTC-SP2 and SDSC-SP2 (base / rf / class-clairvoyant):
  the defaults, the default job set with live features, the study's job set
  with overruns killed at their walltime, the Batsim converter's job set with
  weekly features, the study's pipeline as its text describes it
  (``study004-text``), the preset with a 20 h threshold, the preset with the
  text's weekly divider (three of them also on SDSC-BLUE:
  ``ABLATION_EXTRA_TRACES``), and the preset with the safeguard checked at
  each week's end (every trace x policy).
- the readings on the misses (issue 30, paper scale; :mod:`.readings`): the
  preset with one sentence of the study read another way - the threshold
  (``abl_threshold_20h``, now with FCFS and SAF), the kill against the
  divider in force, categorical request features, aggregates of predicted
  classes, labels against last week's median, the calendar from the trace
  start - on the cells that miss (FCFS and SAF on the three main traces, SPF
  on SDSC-BLUE), rf only where the base and class-clairvoyant are the main
  campaigns'.
- ``easypp*`` (paper scale): EASY++ over EASY-FCFS on Table 7's traces under
  three job sets, the check of the base that Table 7's first column allows,
  and (variant ``avg2``) EASY++ as the study's text describes it, without
  its shortest-first backfilling.
- ``error_kinds`` (paper scale): rf with its false large, or its false small,
  classes corrected from the true runtimes, on Table 7's cells: what each
  kind of classifier error costs.
- ``forest_seed_2``, ``forest_seed_3`` (paper scale): base and rf on the three
  main traces x four policies with forest seeds 2 and 3, so that each miss
  carries its range over seeds (:mod:`.seeds`).

The report: job sets, dividers and size classes (Tables 1-3), classifier
quality (Tables 5-6, under both readings of :mod:`.published`), improvements
over EASY-FCFS (Table 7, with the three readings of the bsld of killed jobs),
what each kind of error costs, EASY++, improvements per trace and policy
(Section 6.1) with the class-clairvoyant check and the figures of Sections
6.4-6.5 and Figure 8, the forest's seed, the ablation, the readings on the
cells that miss, and what does not reproduce and why.
The plan is :mod:`.plan`, the report :mod:`.report`, the acceptance
:mod:`.acceptance`; Tables 1-3 come from the traces (:mod:`.jobsets`), Table 7
with its two checks (the kinds of error, EASY++) from :mod:`.table7`, Section
6's claims from :mod:`.claims`; every part reads the stored runs through
:mod:`.stored`.  Published figures: ``published.toml`` (read by
:mod:`.published`); presets: ``presets.toml``; the latest paper-scale report:
``REPRODUCTION.md``.
"""

from __future__ import annotations

from bftune.experiments.reproduce.study import Study
from bftune.experiments.studies.s004 import plan, report
from bftune.experiments.studies.s004.stored import TRACES


def traces(scale: str) -> tuple[str, ...]:
    """Tables 1-3 read every trace of the study, at every scale."""
    return TRACES


STUDY = Study(
    number="004", title="Improving the performance of batch schedulers using online job runtime classification",
    seed_file="004_444fe9ecbecc8f85.txt", plan=plan.plan, report=report.report, traces=traces,
    durations={"quick": "KTH-SP2, FCFS and SPF: about 30 s on 2 cores",
               "paper": "3 traces x 4 policies x 5 variants, 2 large traces x 4 policies x 3 variants, 13 "
                        "ablation campaigns (FCFS on 3 traces, some also on SDSC-BLUE; the threshold with FCFS and "
                        "SAF, and SPF on SDSC-BLUE; the safeguard's timing on every trace x policy; five readings of the classifier on "
                        "the cells that miss), EASY++ with FCFS on 4 traces x 3 job sets, the two kinds of "
                        "classifier error on Table 7's 4 traces x 2 policies, the forest's seeds 2 and 3 on the 3 "
                        "main traces x 4 policies: 393 runs, 305 of them distinct (the ablations share base runs "
                        "by id), about 8,500 CPU-seconds on the project machine (2026-11-25/26, compiled core; "
                        "the stored runs' cpu_s, each distinct run once): about 71 min on 2 idle cores"})

