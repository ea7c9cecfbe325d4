"""Would compiling the core close issue 13's gap?  An ablation: the same sources, interpreted and mypyc-compiled.

Issue 13 allows compiling "the same pure-Python modules (for example mypyc)".
Before building that into installs, this script measures what it would buy:
it copies the package to a temporary directory, compiles the decision core
(``schedulers/core/*.py``) and the local driver's event loop
(``schedulers/drivers/local/simulator.py``) there with mypyc, and times
``bftune simulate`` (fresh processes, outputs written) on the interpreted
checkout and on the compiled copy, alternately, checking that out_jobs.csv is
byte-identical.  With the OCaml reference on PATH it is timed beside them.

    uv run --with mypy==2.4.0 --with setuptools python -m bftune.experiments.bench_mypyc --repeat 3 KTH CTC

It needs mypy (which ships mypyc), setuptools and a C compiler; the project
itself does not depend on them.  What compiling demanded of the sources is
listed in :data:`ADJUSTMENTS` (applied to the copy only), and
``drivers/local/runs.py`` stays interpreted: mypyc 2.4 fails on its
iteration over a ``bytearray`` (an internal error).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import filecmp
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bftune.experiments.bench import SHARED, Measure, bftune_command, load, machine, measure, median

ROOT = Path(__file__).resolve().parents[1]
COMPILED = ("schedulers/core/*.py", "schedulers/drivers/local/simulator.py")


@dataclasses.dataclass(frozen=True)
class Adjustment:
    """One change the copy needs before mypyc accepts it, and why."""

    path: str
    old: str
    new: str
    why: str


ADJUSTMENTS = (
    Adjustment("schedulers/core/engine.py", "class OracleMissingError(RuntimeError):",
               "class OracleMissingError(Exception):",
               "mypyc native classes cannot inherit from RuntimeError (Exception is supported)"),
    Adjustment("schedulers/__init__.py", "", "",
               "mypyc names modules by their __init__.py chain; the top-level folders are namespace packages"),
)


def mypyc_available() -> bool:
    return importlib.util.find_spec("mypyc") is not None


def copy_package(target: Path) -> None:
    """The checkout's tracked files (git) into ``target``: no virtual environment, results or bytecode."""
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(f"bench_mypyc: {ROOT} is not a git checkout (the copy is made of its tracked files)") from None
    for name in filter(None, files.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def adjust(package: Path) -> None:
    for change in ADJUSTMENTS:
        path = package / change.path
        if not change.old:  # a new, empty file
            path.touch()
            continue
        text = path.read_text()
        if change.old not in text:
            raise SystemExit(f"bench_mypyc: {change.path} no longer contains {change.old!r}: update ADJUSTMENTS")
        path.write_text(text.replace(change.old, change.new, 1))


def compile_copy(root: Path) -> None:
    """mypyc over :data:`COMPILED` in ``root`` (which holds the package as ``bftune/``); extensions land in place."""
    package = root / "bftune"
    sources = sorted(str(p.relative_to(root)) for pattern in COMPILED for p in package.glob(pattern))
    done = subprocess.run([sys.executable, "-m", "mypyc", "--ignore-missing-imports", *sources], cwd=root,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("bench_mypyc: mypyc failed:\n" + "\n".join((done.stdout + done.stderr).splitlines()[-15:]))
    probe = subprocess.run([sys.executable, "-c", "import bftune.schedulers.core.easy as m; print(m.__file__)"],
                           env=compiled_env(root), capture_output=True, text=True, check=True).stdout.strip()
    if not probe.endswith(".so"):
        raise SystemExit(f"bench_mypyc: the copy imports {probe}, not a compiled module")


def compiled_env(root: Path) -> dict[str, str]:
    """Our environment with the compiled copy first on the path (before the editable checkout's finder)."""
    return {**os.environ, "PYTHONPATH": str(root)}


def row(label: str, n: int, runs: list[Measure], base: list[Measure] | None) -> str:
    wall, cpu = median([m.wall for m in runs]), median([m.cpu for m in runs])
    sims = [m.sim for m in runs if m.sim is not None]
    sim = f"{median(sims):.3f} s" if sims else "-"
    peak = max(m.peak_mib for m in runs)
    ratio = "-"
    if base:
        ratio = f"{wall / median([m.wall for m in base]):.2f}x, {cpu / median([m.cpu for m in base]):.2f}x"
    return f"| {label} | {sim} | {wall:.2f} s | {cpu:.2f} s | {n / wall:,.0f} | {peak:.0f} MiB | {ratio} |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", default=["KTH", "CTC"],
                    help="name prefixes of ../shared/workloads traces, or SWF paths (default: KTH CTC)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each (median; default 3)")
    ap.add_argument("--no-reference", action="store_true", help="do not run ocs-obps even if it is on PATH")
    args = ap.parse_args(argv)
    if not mypyc_available():
        print("bench_mypyc: mypyc is not installed; run it as "
              "`uv run --with mypy==2.4.0 --with setuptools python -m bftune.experiments.bench_mypyc`", file=sys.stderr)
        return 2
    archive = sorted(p for p in SHARED.glob("*.swf.gz") if "lublin" not in p.name)
    traces = []
    for t in args.traces:
        matches = [Path(t)] if Path(t).exists() else [p for p in archive if p.name.startswith(t)]
        if len(matches) != 1:
            ap.error(f"{t}: no such file, and not the start of exactly one trace name in {SHARED}")
        traces.append(matches[0])
    reference = None if args.no_reference else shutil.which("ocs-obps")
    bftune = bftune_command()
    with tempfile.TemporaryDirectory(prefix="bftune-mypyc-") as tmp:
        work = Path(tmp)
        root = work / "compiled"
        copy_package(root / "bftune")
        adjust(root / "bftune")
        compile_copy(root)
        env = compiled_env(root)
        print(f"# interpreted vs mypyc-compiled core, {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}")
        print(f"# {machine()}; load average before: {load()}; median of {args.repeat} run(s); EASY-FCFS")
        print(f"# compiled: {', '.join(COMPILED)}; command: {' '.join(bftune)} simulate --trace TRACE --out DIR")
        print()
        print("| trace (jobs) / variant | simulation | `bftune simulate` wall | CPU | whole-process jobs/s "
              "| peak memory | against interpreted (wall, CPU) |")
        print("|---|---|---|---|---|---|---|")
        for trace_path in traces:
            swf = work / "clean.swf"
            n = int(subprocess.run([sys.executable, "-m", "bftune.experiments.bench", "--write-clean",
                                    str(trace_path), str(swf)], check=True, capture_output=True, text=True).stdout)
            outs = {"interpreted": work / "out_i", "compiled": work / "out_c"}
            envs = {"interpreted": None, "compiled": env}
            for variant in outs:  # once each unmeasured: bytecode written, file cache warm
                measure(bftune + ["simulate", "--trace", str(trace_path), "--out", str(outs[variant])],
                        outs[variant], envs[variant])
            runs: dict[str, list[Measure]] = {"interpreted": [], "compiled": [], "reference": []}
            for _ in range(args.repeat):
                for variant in outs:
                    runs[variant].append(measure(bftune + ["simulate", "--trace", str(trace_path), "--out",
                                                           str(outs[variant])], outs[variant], envs[variant]))
                if reference:
                    runs["reference"].append(measure([reference, "oneshot", str(swf), "wait", "--backfill=wait",
                                                      f"--output={work / 'ocs.out'}"]))
            same = filecmp.cmp(outs["interpreted"] / "out_jobs.csv", outs["compiled"] / "out_jobs.csv", shallow=False)
            name = trace_path.name.replace(".swf.gz", "")
            base = runs["interpreted"]
            print(row(f"{name} ({n:,}) interpreted", n, base, None))
            print(row(f"{name} mypyc-compiled (out_jobs.csv {'identical' if same else 'DIFFERS'})", n,
                      runs["compiled"], base))
            if runs["reference"]:
                print(row(f"{name} OCaml reference (ocs-obps)", n, runs["reference"], base))
            if not same:
                print(f"bench_mypyc: {name}: the compiled core wrote a different out_jobs.csv", file=sys.stderr)
                return 1
    print()
    print(f"# load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
