"""Every benchmark of bftune by name: what each measures, and one command to run them.

::

    uv run python benchmarks/run.py                          # list them, with what each measures
    uv run python benchmarks/run.py simulate phases          # run these, each with its defaults
    uv run python benchmarks/run.py simulate -- --quick      # one benchmark with its own arguments
    uv run python benchmarks/run.py phases -- --help         # a benchmark's arguments

Each benchmark is a script of this folder (``uv run python benchmarks/NAME.py
...`` runs it directly), run here in a fresh process; none is a test: they
print figures.  Traces come from the data directory: ``--data DIR`` (give it
after ``--``), else ``$BFTUNE_DATA``, else ../shared/workloads.  Timings on a
shared machine vary: the scripts print the load average or the CPU/wall ratio.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> what it measures (the script is ``benchmarks/<name>.py``).
BENCHMARKS = {
    "simulate": "wall, CPU time and peak memory of `bftune simulate` as users run it (fresh processes), per archive "
                "trace and configuration; beside the OCaml reference `ocs-obps` when it is on PATH",
    "conservative_speed": "wall time of `bftune simulate` with EASY, 4 reservations and conservative backfilling "
                          "(--reservations), count and machines models, on KTH-SP2 and CTC-SP2 (fresh processes)",
    "slurm_speed": "wall time of `bftune simulate --scheduler slurm` (weights 0, and age + job size + fair-share) "
                   "against EASY-FCFS on KTH-SP2 and CTC-SP2 (fresh processes)",
    "real_slurm_check": "a 50-job scaled-down workload through a private real slurmctld 22.05.8 (16 emulated nodes) "
                        "and through `--scheduler slurm` with the same slurm.conf: order of starts compared (needs "
                        "Debian's slurm-wlm and root)",
    "phases": "where one `bftune simulate` spends its time and memory, phase by phase (imports, read, simulate, "
              "columns, summary, out_jobs.csv, garbage collection), in fresh processes",
    "campaign": "wall and CPU time of the online-selection campaign on KTH-SP2 (10 resampled traces by default), "
                "per strategy family (--no-sharing: every period replay computed)",
    "classifier": "the runtime classifier alone, replayed on a trace: retraining seconds per week, cost per job, "
                  "accuracy",
    "batsim": "wall time of a Batsim run with `bftune batsim` against the same run with batsched easy_bf, "
              "alternated, and where bftune's scheduler spends its time (needs batsim and batsched)",
    "background_fit": "how much of the classifier's weekly retraining a fit in the background could hide behind "
                      "Batsim's own time, counted in a finished classifier run (give the run and Batsim's "
                      "measured time after --)",
    "tune": "wall and CPU time of `bftune tune` on a synthetic log as users run it (fresh process)",
    "later_drift": "how far the gain of a later period moved from what the weeks before it suggest, at every cut "
                   "of the archive traces: the drift factors of tune's later-period interval, one set per objective (--write: "
                   "experiments/tune/drift.json; a few minutes)",
    "tune_coverage": "how often `bftune tune`'s later-period and testing-half intervals hold the gain realized on "
                     "the later part of each archive trace (tune on the first 60 %; several minutes per trace)",
    "tune_vs_campaign": "`bftune tune`'s recommendation against a finished offline campaign on the same trace "
                        "(give the two output directories after --)",
    "trials": "trials per second of `bftune learn-index`'s trial kernel in one process (numpy; cupy or torch "
              "optional, checked equal to numpy)",
}


def listing() -> str:
    width = max(map(len, BENCHMARKS))
    lines = ["benchmarks (uv run python benchmarks/run.py NAME... [-- ARGUMENTS]):"]
    lines += [f"  {name:<{width}}  {what}" for name, what in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(__doc__.strip() + "\n\n" + listing())
        return 0 if not extra else 2
    unknown = [name for name in argv if name not in BENCHMARKS]
    if unknown:
        print(f"run.py: unknown benchmark(s) {', '.join(unknown)}\n{listing()}", file=sys.stderr)
        return 2
    if extra and len(argv) > 1:
        print("run.py: arguments after -- go to one benchmark; name only one", file=sys.stderr)
        return 2
    status = 0
    for name in argv:
        print(f"## {name}: {BENCHMARKS[name]}", flush=True)
        status = max(status, subprocess.run([sys.executable, str(HERE / f"{name}.py"), *extra]).returncode)
    return status


if __name__ == "__main__":
    sys.exit(main())
