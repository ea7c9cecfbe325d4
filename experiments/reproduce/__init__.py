"""``bftune reproduce STUDY``: run the campaigns a published study needs, then set its tables beside ours.

::

    uv run bftune reproduce 004 --scale quick --out results/repro004      # minutes
    uv run bftune reproduce 004 --scale paper --out results/repro004p     # hours on 2 cores; resumable
    uv run bftune reproduce 001 --scale paper --out DIR --dask tcp://host:8786
    uv run bftune reproduce 000 --scale quick --out DIR --data ~/traces   # where the archive traces are

This package is the command's machinery only; the studies are plug-in
folders registered in :mod:`bftune.experiments.studies` (one line each).  A
study (:class:`.study.Study`) says which campaigns it needs at each scale
(ordinary campaign configs naming their traces ``archive:NAME``: they are
written to ``DIR/configs/`` and run by the campaign machinery into
``DIR/campaigns/<name>/``, so an interrupted reproduction resumes run by run,
on local cores or Dask, and each campaign can be re-run or re-reported alone
with ``bftune campaign``), which archive traces its extra steps and report
read, any resumable extra measurement (study 001: the study's own simulator,
when installed), and writes ``DIR/report.md``: every published table the
traces allow, ours beside theirs, the difference, and a short explanation of
each gap.  ``--report-only`` rebuilds the report from what is stored.

Every archive trace is found in the data directory (``--data DIR``,
``BFTUNE_DATA``, else the user's data directory:
:mod:`bftune.workloads.archive`) and made present (downloaded when missing
and the network allows) before the first run; one that cannot be is one line
and exit status 2.

Modules: ``cli.py`` (the parser, import-light), ``command.py`` (the
sub-command: loading a study, running its plan, writing the report),
``study.py`` (what a study declares, and the helpers its plan uses: the
``archive:`` name of a trace, its ``published.toml``), ``markdown.py`` (table
helpers), ``embedded.py`` (a report made of the campaigns' own reports, for
a study that gathers them under its own sections).
"""
