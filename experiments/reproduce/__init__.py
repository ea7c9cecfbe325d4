"""``bftune reproduce STUDY``: run the campaigns a published study needs, then set its tables beside ours.

::

    uv run bftune reproduce 004 --scale quick --out results/repro004      # minutes
    uv run bftune reproduce 004 --scale paper --out results/repro004p     # hours on 2 cores; resumable
    uv run bftune reproduce 001 --scale paper --out DIR --dask tcp://host:8786

A study (``studyNNN.py``, registered in :mod:`.registry`) says which
campaigns it needs at each scale (ordinary campaign configs: they are
written to ``DIR/configs/`` and run by the campaign machinery into
``DIR/campaigns/<name>/``, so an interrupted reproduction resumes run by
run, on local cores or Dask, and each campaign can be re-run or re-reported
alone with ``bftune campaign``), any resumable extra measurement (study
001: the study's own simulator, when installed), and writes ``DIR/report.md``:
every published table the shared traces allow, ours beside theirs, the
difference, and a short explanation of each gap.  ``--report-only``
rebuilds the report from what is stored.

Modules: ``registry.py`` (the studies, import-light, for the parser),
``study.py`` (what a study declares), ``command.py`` (the sub-command),
``markdown.py`` (table helpers), ``embedded.py``, ``published004.py`` and ``naming.py``
(published data and the policy-naming evidence), ``studyNNN.py``.
``embedded.py`` gathers the campaigns' own reports for study 002, whose
campaign kind already sets the published figures beside ours.  Study 003
is a plug-in folder, ``experiments/studies/s003/``.
"""
