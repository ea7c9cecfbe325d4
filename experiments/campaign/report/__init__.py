"""Campaign reports: ``report.md`` + PNG plots + summary CSVs, from a campaign directory's stored tables.

- ``build.py`` writes the frame of ``report.md`` (config, workload, runs
  stored, failures) around the kind's own section;
- one module per campaign kind: ``offline.py``, ``online.py``,
  ``classification.py``, ``index.py``, ``pveasy.py``, each with
  ``write(out, meta, lines)`` and ``FILES`` (the summary files it writes);
  a kind names its report module in its
  :class:`~bftune.experiments.campaign.kinds.kind.CampaignKind`
  (``report=`` and ``report_files=``);
- ``common.py``: reading tables, ratios, markdown tables, panels and plot files.

This package reads campaign directories and imports nothing from the
campaign package (the campaign calls it, never the other way round), and
this file imports nothing, so that a kind module can import its report
section without loading the others.
"""
