"""Campaigns: declarative TOML configs, run in parallel, stored run by run, resumable.

``bftune campaign CONFIG --out DIR`` turns one TOML file into a list of
independent runs (:class:`~.specs.RunSpec`), executes them on local cores
(default) or on a Dask cluster (``--dask ADDRESS``), stores every finished
run at once, and finally writes tidy CSV tables and a report (``report.md``
+ PNG plots, :mod:`bftune.experiments.campaign.report`).  ``docs/guides/campaigns.md``
is the user's guide; the kinds' modules document what each kind runs and
stores.

The package, by concern (this file imports nothing: import the module you need)
-------------------------------------------------------------------------------

=================  ==========================================================================
``config.py``      TOML in, :class:`Campaign` out: ``[campaign]``, ``[workload]``, which
                   sections may appear; :func:`~.config.load_config` is the entry point
``section.py``     typed access to one TOML table; every error names file, section and key
``limits.py``      size limits (weeks, resamples, runs, synthetic traces, seeds, workers) and why
``paths.py``       the repository root (relative trace paths) and the shipped configs
``specs.py``       :class:`~.specs.RunSpec` (one run, hashed into its ``run_id``),
                   :class:`~.specs.Campaign`, :func:`~.specs.derive_seed`, ``CampaignError``
``kinds/``         one module per kind (``offline.py``, ``online.py``,
                   ``classification.py``) and the registry (``kinds/__init__.py``);
                   ``kinds/kind.py`` says what a kind declares
``workloads.py``   trace sources: checked in the config, read / split / resampled and
                   cached in the workers
``worker.py``      one run in a worker: spec in, record out
``executors.py``   inline, local processes, Dask - one ``concurrent.futures`` loop
``loop.py``        the one resumable loop over them (progress, worker deaths, interrupts),
                   shared by campaigns and ``bftune learn-index``
``store.py``       the campaign directory: lock, run files, resume, tables, manifest
``runner.py``      the coordinator (:func:`~.runner.run_campaign`)
``cli.py``         the ``bftune campaign`` parser (light: built for every ``bftune`` command)
``command.py``     what ``bftune campaign`` does, SIGTERM as SIGINT, and its exit statuses
=================  ==========================================================================

Config format (TOML)
--------------------

::

    [campaign]
    kind = "online"            # a registered kind: offline | online | classification   (required)
    name = "online_selection"  # default: the file's stem
    seed = 1                   # master seed; every resample seed derives from it
                               # (classification: the forest seed of every run)
    tau = 10                   # bounded-slowdown constant (seconds, or "10s"); default: the kind's

    [workload]                 # kinds on one trace (offline, online)
    trace = "archive:KTH-SP2"  # a catalogue trace in the data directory; a file; or "synthetic:N:M[:SEED]"
    procs = 100                    # optional machine size (default: the trace header)
    walltime_from_runtime = false  # for traces without requested times (lublin_256)
    lenient = false                # skip (and count) malformed SWF lines
    cleaning = "drop-overruns"     # which SWF records become jobs: drop-overruns | keep-overruns | batsim-converter

    [online]                   # the section named after the kind; its keys: see kinds/<kind>.py

**Archive traces are named** ``archive:NAME`` (``archive:KTH-SP2``, a trace of
:mod:`bftune.workloads.catalogue`) and found in the data directory (``--data``,
``BFTUNE_DATA``, or the user's: :mod:`bftune.workloads.archive`), where a
missing one is downloaded or named in one line before any run; the shipped
configs name their traces so and work wherever the traces are.  **Relative
trace paths are resolved against the repository root** (the directory
holding ``pyproject.toml``, i.e. the ``bftune`` package root), not against
the config file.  Use absolute paths for traces elsewhere.  On a Dask cluster
the path must be readable by the workers (shared file system).  Unknown
sections or keys, wrong types, bad policy names and sizes beyond
``limits.py`` are errors naming the file, the section and the key.

Seeds: :func:`~.specs.derive_seed`; same config + seed = same runs =
byte-identical tables.  The output directory is described in ``store.py``,
the executors and what happens when a process dies in ``executors.py``.

How to add a campaign kind
--------------------------

1. Write ``kinds/<name>.py`` (copy the closest kind): its section's keys;
   ``expand(section, workload, seed, tau) -> Expansion`` (validate with the
   :class:`~.section.Section` methods, build one :class:`~.specs.RunSpec` per
   run, with ``labels`` for the tables); ``run(spec) -> {"summary": {...},
   <table field>: [rows], ...}`` (executed in a worker: it must be a
   module-level function, and it may use the cached workloads of
   ``workloads.py``); and ``KIND = CampaignKind(...)`` with the labels and
   :class:`~.kinds.kind.TableSpec` of its tables.
2. Add ``<name>.KIND`` to :data:`~.kinds.KINDS` in ``kinds/__init__.py``.
   That is all the campaign machinery needs: ``[campaign] kind = "<name>"``
   now works, with resume, failures, executors and ``runs.csv`` + its tables.
3. Optionally a report section: ``experiments/campaign/report/<name>.py`` with
   ``write(out, meta, lines)`` and ``FILES``, named in ``KIND`` (``report=``,
   ``report_files=``); without one, ``report.md`` has the campaign's frame.
4. A tiny config in ``experiments/configs/`` and tests in
   ``tests/experiments/campaign/`` (``run_campaign_once`` runs a config once
   per session).
"""
