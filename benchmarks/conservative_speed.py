"""Speed of backfilling with k reservations against EASY, as users run it (not a test: it prints figures).

Each run is a fresh ``bftune simulate --trace T ... --out DIR`` process
(interpreter start, imports, reading the trace, simulating, writing
out_jobs.csv and summary.json): EASY (``--reservations 1``, the default),
four reservations and conservative backfilling (``--reservations all``),
each with the count and the machines reservation model, FCFS.  It reports
the median wall-clock time of ``--repeat`` runs, the simulation alone
(summary.json's ``simulation_seconds``) and both as ratios to EASY with the
same reservation model (docs/semantics/scheduling.md#conservative).

    uv run python benchmarks/conservative_speed.py                   # KTH-SP2 and CTC-SP2, 3 runs each
    uv run python benchmarks/conservative_speed.py --repeat 1 CTC    # one trace, one run each

By default one unmeasured run per trace first fills the parse cache, as
after a user's first run of that trace (benchmarks/simulate.py does the same).
"""

from __future__ import annotations

import sys

from simulate import options_table

#: label -> options of `bftune simulate` (FCFS, the default order, in every row)
DEPTHS = {"EASY": [], "4 reservations": ["--reservations", "4"], "conservative": ["--reservations", "all"]}
MODELS = ("count", "machines")
ROWS = {(model, label): ["--reservation", model, *options] for model in MODELS for label, options in DEPTHS.items()}


def main(argv: list[str] | None = None) -> int:
    return options_table(__doc__ or "", argv, ("model", "scheduler"), ROWS, ("KTH-SP2", "CTC-SP2"),
                            "bftune simulate --trace T [--reservation MODEL] [--reservations K|all] --out DIR")


if __name__ == "__main__":
    sys.exit(main())
