"""Speed and memory of ``bftune simulate`` as users run it (not a test: it prints figures).

For every archive trace of the data directory (``--data``, ``$BFTUNE_DATA``, else
../shared/workloads; or the traces given) and every
configuration of :data:`CONFIGS`, each run is a fresh ``bftune simulate
--trace T ... --out DIR`` process: interpreter start, imports, reading and
cleaning the gzipped SWF, simulating, computing the summary, writing
out_jobs.csv and summary.json, exiting.  It reports

- the whole process: wall-clock time, CPU time (user + system), jobs per
  second of wall-clock time, and peak resident memory (the child's own
  ``ru_maxrss``, from ``wait4``);
- the simulation alone: ``simulation_seconds`` of the run's summary.json
  (the same process), as jobs per second;
- with the OCaml simulator of the original studies on PATH (``ocs-obps``; how
  to build it: docs/developer/benchmarks.md), the same measures for it, run side by
  side (ours and its, alternately, ``--repeat`` times each; medians), and the
  ratios.  It reads a cleaned plain SWF that this script writes beforehand
  from the same cleaned jobs (it cannot clean a trace itself; that time is
  not counted for it) and writes its own per-job output file (``--output``).
  Its EASY-FCFS is ``oneshot wait --backfill=wait``, EASY(SAF, 40 h) is
  ``threshold --primary=laf --backfill=laf --threshold=144000`` (its size and
  area names are inverted: its ``laf`` is SAF), and the full-feedback selector
  is ``bandit-onpolicy --clairvoyant --period=604800 --threshold=144000`` over
  the same 12 policies.  It has no classifier.

    uv run python benchmarks/simulate.py                     # everything
    uv run python benchmarks/simulate.py --quick             # KTH-SP2, EASY-FCFS and EASY(SAF, 40 h)
    uv run python benchmarks/simulate.py --configs fcfs,saf40 --repeat 5 CTC-SP2 CEA-Curie
    uv run python benchmarks/simulate.py --cores compiled,interpreted --configs fcfs KTH CTC

Which core runs is printed (``bftune accelerate`` builds the compiled one;
without a build matching the sources, "compiled" runs interpreted and the
table says so).  By default one unmeasured run per trace first fills the
parse cache (``bftune.workloads.parsecache``), as after a user's first run
of that trace; ``--parse-cache off`` times the parse in every run.

Timings on a shared machine vary: the script prints the load average before
and after, and takes the median of ``--repeat`` runs.

Peak memory is the child's own maximum resident set size, as GNU time
reports it (see :func:`measure`); this script keeps its own process small
(standard library only) and reads traces in a child process.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import filecmp
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_data_argument, archive_traces, data_dir, find_trace, user_env

#: name -> (label, options of `bftune simulate`, arguments of the OCaml reference or None)
OCAML_12 = "wait,mwait,lpf,spf,lqf,sqf,mexpfact,expfact,lrf,srf,saf,laf"  # the 12 default candidates FCFS..SAF, its spelling
CONFIGS: dict[str, tuple[str, list[str], list[str] | None]] = {
    "fcfs": ("EASY-FCFS", [], ["oneshot", "{swf}", "wait", "--backfill=wait"]),
    "saf40": ("EASY(SAF, 40 h)", ["--policy", "SAF", "--threshold", "40h"],
              ["threshold", "{swf}", "--primary=laf", "--backfill=laf", "--threshold=144000"]),
    "lexp40": ("EASY(LEXP, 40 h)", ["--policy", "LEXP", "--threshold", "40h"],  # a time-dependent order
               ["threshold", "{swf}", "--primary=mexpfact", "--backfill=mexpfact", "--threshold=144000"]),
    "full": ("full-feedback selector, 1 week, 40 h",
             ["--selector", "full", "--period", "1w", "--threshold", "40h"],
             ["bandit-onpolicy", "{swf}", "--clairvoyant", "--period=604800", "--threshold=144000",
              f"--policies={OCAML_12}"]),
    "rf": ("classifier (rf, SAF)", ["--classifier", "rf", "--policy", "SAF"], None),
    "pvlast": ("PV-EASY(FCFS) + Last Model", ["--scheduler", "pv-easy", "--predictor", "last"], None),
}


@dataclasses.dataclass
class Measure:
    wall: float  # seconds
    cpu: float  # user + system seconds
    peak_mib: float
    sim: float | None = None  # simulation_seconds of summary.json (ours only)


#: GNU time, when installed, launches the children: see :func:`measure`.
GNU_TIME = "/usr/bin/time"


def measure(argv: list[str], out_dir: Path | None = None, env: dict[str, str] | None = None) -> Measure:
    """Run ``argv`` in a fresh process; its wall time, CPU time and peak memory.

    Linux counts in a process's peak memory the image of the process that
    forked it; GNU time (about 2 MiB) is therefore the launcher where it is
    installed, and reports the child's own figures.  Without it, ``wait4``
    gives them, with this script's own size (about 15 MiB) as a floor.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        gnu = os.access(GNU_TIME, os.X_OK)
        command = [GNU_TIME, "-f", "%M %U %S", "-o", report.name, *argv] if gnu else argv
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip().splitlines()[-1:]}")
        if gnu:
            kib, user, system = report.read().split()[-3:]
            peak_mib, cpu = int(kib) / 1024, float(user) + float(system)
        else:
            peak_mib, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    sim = None
    if out_dir is not None:
        sim = json.loads((out_dir / "summary.json").read_text())["simulation_seconds"]
    return Measure(wall, cpu, peak_mib, sim)


def bftune_command() -> list[str]:
    """The installed console script next to this interpreter (what users run), else ``python -m``."""
    script = Path(sys.executable).with_name("bftune")
    return [str(script)] if script.exists() else [sys.executable, "-m", "bftune.experiments.cli.main"]


def median(values: list[float]) -> float:
    return statistics.median(values)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def write_clean(source: str, target: str) -> None:
    """Child mode: the cleaned jobs of ``source`` as a plain SWF with a bare MaxProcs header; prints the job count."""
    from bftune.workloads.swf import read_swf  # here, not at the top: see the module docstring
    from bftune.workloads.swf_write import write_swf

    trace = read_swf(source)
    write_swf(dataclasses.replace(trace, header_lines=()), target)
    print(len(trace.jobs))


#: ``--cores`` values: the environment each names (``bftune.support.compiled``).
CORES = {"compiled": "auto", "interpreted": "interpreted"}


def core_label(env: dict[str, str]) -> str:
    """Which core a fresh ``bftune`` process with ``env`` runs: "compiled" only if a build matches."""
    code = "import bftune.support.compiled as c; print('compiled' if c.active() else 'interpreted')"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", help="SWF traces, or name prefixes of the data directory's traces "
                                              "(default: every archive trace there)")
    add_data_argument(ap)
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each (median; default 3)")
    ap.add_argument("--quick", action="store_true", help="KTH-SP2, fcfs and saf40, one run each")
    ap.add_argument("--no-reference", action="store_true", help="do not run ocs-obps even if it is on PATH")
    ap.add_argument("--cores", default="compiled",
                    help="comma-separated, of compiled (the build of `bftune accelerate`, if any: what users "
                         "run) and interpreted; with both, alternately, checking out_jobs.csv byte-identical")
    ap.add_argument("--parse-cache", choices=("warm", "off"), default="warm",
                    help="warm (default): one unmeasured run first fills the parse cache, as after a user's "
                         "first run of a trace; off: every run parses the file (BFTUNE_TRACE_CACHE=off)")
    ap.add_argument("--write-clean", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.write_clean:
        write_clean(*args.write_clean)
        return 0
    configs = args.configs.split(",")
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown config(s) {', '.join(unknown)}; choose among {', '.join(CONFIGS)}")
    cores = args.cores.split(",")
    if not cores or any(c not in CORES for c in cores):
        ap.error(f"--cores takes {' and/or '.join(CORES)}, comma-separated")
    shared = data_dir(args.data)
    archive = archive_traces(shared)
    if args.quick:
        archive, configs, args.repeat = [p for p in archive if p.name.startswith("KTH")], ["fcfs", "saf40"], 1
    traces = []
    for t in args.traces or [str(p) for p in archive]:
        path = Path(t)
        if not path.exists():
            matches = [p for p in archive if p.name.startswith(t)]
            if len(matches) != 1:
                ap.error(f"{t}: no such file, and not the start of exactly one trace name in {shared}")
            path = matches[0]
        traces.append(path)
    if not traces:
        print(f"no traces found (looked in {shared})", file=sys.stderr)
        return 1
    reference = None if args.no_reference else shutil.which("ocs-obps")
    bftune = bftune_command()
    cache = {} if args.parse_cache == "warm" else {"BFTUNE_TRACE_CACHE": "off"}
    envs = {core: user_env(BFTUNE_CORE=CORES[core], **cache) for core in cores}
    actual = {core: core_label(env) for core, env in envs.items()}
    if actual.get("compiled") == "interpreted":
        print("# no compiled build matches these sources (bftune accelerate): 'compiled' runs interpreted")
    print(f"# bftune simulate vs {'ocs-obps' if reference else '(no reference on PATH)'}, "
          f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}")
    print(f"# {machine()}; load average before: {load()}; median of {args.repeat} run(s)")
    print(f"# command: {' '.join(bftune)} simulate --trace TRACE [options] --out DIR; core: "
          f"{', '.join(sorted(set(actual.values())))}; parse cache: {args.parse_cache}")
    print()
    print("| trace (jobs) | scheduler | core | simulation jobs/s | `bftune simulate` wall | CPU | whole-process jobs/s "
          "| peak memory | reference wall | reference CPU | reference peak | time ratio (wall, CPU) | memory ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    status = 0
    with tempfile.TemporaryDirectory(prefix="bftune-bench-") as tmp:
        work = Path(tmp)
        for trace_path in traces:
            swf = work / "clean.swf"  # the reference's input: the same cleaned jobs, a bare "; MaxProcs: N" header
            n = int(subprocess.run([sys.executable, str(Path(__file__).resolve()), "--write-clean", str(trace_path),
                                    str(swf)], check=True, capture_output=True, text=True).stdout)
            name = trace_path.name.replace(".swf.gz", "").replace(".swf", "")
            if args.parse_cache == "warm":  # the parse (and the file) cached, bytecode written: as on a 2nd run
                measure(bftune + ["simulate", "--trace", str(trace_path), "--out", str(work / "warm")], None,
                        envs[cores[0]])
            for key in configs:
                label, options, ocaml = CONFIGS[key]
                ours: dict[str, list[Measure]] = {core: [] for core in cores}
                theirs: list[Measure] = []
                for _ in range(args.repeat):
                    for core in cores:
                        out = work / f"out-{core}"
                        ours[core].append(measure(bftune + ["simulate", "--trace", str(trace_path), *options,
                                                            "--out", str(out)], out, envs[core]))
                    if reference and ocaml:
                        theirs.append(measure([reference, *(a.format(swf=swf) for a in ocaml),
                                               f"--output={work / 'ocs.out'}"]))
                for core in cores:
                    print(row(f"{name} ({n:,})", label, actual[core], n, ours[core], theirs), flush=True)
                if len(cores) > 1 and not filecmp.cmp(work / f"out-{cores[0]}" / "out_jobs.csv",
                                                      work / f"out-{cores[1]}" / "out_jobs.csv", shallow=False):
                    print(f"bench: {name} {label}: the two cores wrote different out_jobs.csv", file=sys.stderr)
                    status = 1
    print()
    print(f"# load average after: {load()}")
    return status


def row(trace: str, label: str, core: str, n: int, ours: list[Measure], theirs: list[Measure]) -> str:
    """One table row: our medians, and the reference's beside them when it ran."""
    wall, cpu = median([m.wall for m in ours]), median([m.cpu for m in ours])
    sim = median([m.sim for m in ours if m.sim is not None])
    peak = max(m.peak_mib for m in ours)
    text = (f"| {trace} | {label} | {core} | {n / sim:,.0f} | {wall:.2f} s | {cpu:.2f} s | {n / wall:,.0f} "
            f"| {peak:.0f} MiB |")
    if not theirs:
        return text + " - | - | - | - | - |"
    rwall, rcpu = median([m.wall for m in theirs]), median([m.cpu for m in theirs])
    rpeak = max(m.peak_mib for m in theirs)
    return text + (f" {rwall:.2f} s | {rcpu:.2f} s | {rpeak:.0f} MiB | {wall / rwall:.2f}x, {cpu / rcpu:.2f}x "
                   f"| {peak / rpeak:.1f}x |")



def options_run(trace: Path, options: list[str], env: dict[str, str]) -> Measure:
    with tempfile.TemporaryDirectory(prefix="bftune-speed-bench-") as out:
        return measure([*bftune_command(), "simulate", "--trace", str(trace), *options, "--out", out],
                       Path(out), env)


def options_table(doc: str, argv: list[str] | None, columns: tuple[str, ...], rows: dict[tuple[str, ...], list[str]],
         default_traces: tuple[str, ...], command: str) -> int:
    """The table of the option benchmarks (conservative_speed.py, slurm_speed.py): fresh ``bftune simulate`` runs.

    A row is compared with the first row of its group (rows whose labels agree but for the last): the baseline
    that group measures against (EASY with the same reservation model, EASY-FCFS).
    """
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", help="SWF traces, or name prefixes of the data directory's traces "
                                              f"(default: {', '.join(default_traces)})")
    add_data_argument(ap)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each (median; default 3)")
    args = ap.parse_args(argv)
    directory = data_dir(args.data)
    traces = [find_trace(name, directory) for name in (args.traces or default_traces)]
    env = user_env()
    print(f"machine: {machine()}; core: {core_label(env)}; load before: {load()}")
    print(f"command: {command}; median of {args.repeat}")
    print()
    heads = ("trace", *columns, "`bftune simulate` wall", "x base", "simulation", "x base")
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * len(heads))
    for trace in traces:
        options_run(trace, [], env)  # fills the parse cache, unmeasured
        name = trace.name.split(".swf")[0]
        bases: dict[tuple[str, ...], Measure] = {}
        for labels, options in rows.items():
            runs = [options_run(trace, options, env) for _ in range(args.repeat)]
            wall = median([r.wall for r in runs])
            sim = median([r.sim or 0.0 for r in runs])
            base = bases.setdefault(labels[:-1], Measure(wall, 0.0, 0.0, sim))
            print(f"| {name} | {' | '.join(labels)} | {wall:.2f} s | {wall / base.wall:.1f} | {sim:.2f} s | "
                  f"{sim / (base.sim or 1.0):.1f} |", flush=True)
    print()
    print(f"load after: {load()}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
