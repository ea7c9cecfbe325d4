"""Speed of `--scheduler slurm` against EASY, as users run it (not a test: it prints figures).

Each run is a fresh ``bftune simulate --trace T ... --out DIR`` process (interpreter start, imports,
reading the trace, simulating, writing out_jobs.csv and summary.json): EASY-FCFS, Slurm with every
priority weight 0 (submission order) and Slurm with age, job size and fair-share weights (the
multifactor priority recomputed at every PriorityCalcPeriod tick, Fair Tree usage charged at each).  It
reports the median wall-clock time of ``--repeat`` runs, the simulation alone (summary.json's
``simulation_seconds``) and both as ratios to EASY (docs/semantics/scheduling.md#slurm).

    uv run python benchmarks/slurm_speed.py                   # KTH-SP2 and CTC-SP2, 3 runs each
    uv run python benchmarks/slurm_speed.py --repeat 1 CTC    # one trace, one run each

By default one unmeasured run per trace first fills the parse cache, as after a user's first run of
that trace (benchmarks/simulate.py does the same).
"""

from __future__ import annotations

import sys

from simulate import options_table

#: label -> options of `bftune simulate`
CONFIGURATIONS = {
    "EASY-FCFS": [],
    "Slurm, weights 0": ["--scheduler", "slurm"],
    "Slurm, age+size+fair-share": ["--scheduler", "slurm", "--priority-weight-age", "1000",
                                   "--priority-weight-job-size", "1000", "--priority-weight-fairshare", "10000"],
}


def main(argv: list[str] | None = None) -> int:
    return options_table(__doc__ or "", argv, ("scheduler",), {(k,): v for k, v in CONFIGURATIONS.items()},
                            ("KTH-SP2", "CTC-SP2"), "bftune simulate --trace T [--scheduler slurm ...] --out DIR")


if __name__ == "__main__":
    sys.exit(main())
