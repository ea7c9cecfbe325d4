"""Benchmark (not a test): the online-selection campaign on KTH-SP2 with 10 resampled two-year traces.

It loads ``experiments/configs/online_selection.toml`` (the paper-scale
config), keeps everything but the number of resamples (10 by default), runs
it from scratch in a fresh directory on the local cores (2 workers by
default) and prints the wall time, then where the compute time went per
strategy family (from the per-run timings stored in ``runs/*.json``).

    uv run python benchmarks/campaign.py               # 10 resamples, 2 workers
    uv run python benchmarks/campaign.py --resamples 2 --out /tmp/bench
    uv run python benchmarks/campaign.py --resamples 2 --no-sharing   # every replay computed

The config's trace file is taken from the data directory (``--data``,
``$BFTUNE_DATA``, else ../shared/workloads) by its file name.

``--no-sharing`` hands no run the period replays of its group (full and
noisy feedback on one resampled trace replay mostly the same periods): the
results are the same, the CPU is what sharing saves.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from pathlib import Path

from common import add_data_argument, data_dir

from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.campaign.limits import default_workers
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.runner import run_campaign


def use_data_dir(workload: dict, directory: Path) -> None:
    """The config's trace file taken from ``directory``: ``archive:NAME`` through ``BFTUNE_DATA``, a path by its name."""
    trace = workload.get("trace", "")
    if trace.startswith("archive:"):
        os.environ["BFTUNE_DATA"] = str(directory)
    elif trace and not trace.startswith("synthetic:"):
        workload["trace"] = str(directory / Path(trace).name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(CONFIG_DIR / "online_selection.toml"))
    ap.add_argument("--resamples", type=int, default=10)
    ap.add_argument("--workers", type=int, default=default_workers())
    ap.add_argument("--out", help="campaign directory (default: a temporary one, removed afterwards)")
    ap.add_argument("--no-sharing", action="store_true", help="compute every period replay in every run")
    add_data_argument(ap)
    args = ap.parse_args(argv)

    path = Path(args.config)
    text = path.read_text()
    data = tomllib.loads(text)
    data.setdefault("online", {})["resamples"] = args.resamples
    use_data_dir(data.setdefault("workload", {}), data_dir(args.data))
    campaign = campaign_from_dict(data, str(path), text)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bftune-bench-campaign-"))
    if args.out and (out / "runs").exists() and any((out / "runs").iterdir()):
        print(f"{out} already holds runs: give an empty directory (the benchmark must start from scratch)",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    outcome = run_campaign(campaign, out, workers=args.workers, share_replays=not args.no_sharing)
    wall = time.perf_counter() - t0

    per_family: dict[str, list[float]] = defaultdict(list)
    cpu_family: dict[str, list[float]] = defaultdict(list)
    for spec in campaign.specs:
        rec = json.loads((out / "runs" / f"{spec.run_id}.json").read_text()) \
            if (out / "runs" / f"{spec.run_id}.json").exists() else None
        if rec:
            key = spec.labels["family"] + (f"/{spec.labels['period']}" if spec.labels["period"] else "")
            per_family[key].append(rec["elapsed_s"])
            cpu_family[key].append(rec.get("cpu_s", float("nan")))
    busy = sum(sum(v) for v in per_family.values())
    cpu = sum(sum(v) for v in cpu_family.values())
    s = campaign.settings
    print(f"\nbftune campaign benchmark: online selection on {campaign.workload['trace']}")
    print(f"  {s['resamples']} resampled traces x {s['weeks']} weeks, {len(s['strategies'])} strategies "
          f"= {outcome.total} runs, {outcome.executor}, {os.cpu_count()} cores, period replays "
          f"{'not shared' if args.no_sharing else 'shared within each group'}")
    print(f"  wall time (including tables and report): {wall:.1f} s = {wall / 60:.1f} min"
          f"   [{len(outcome.failures)} failed]")
    load = os.getloadavg()
    print(f"  summed run time: {busy:.1f} s wall in workers, {cpu:.1f} s CPU "
          f"(CPU/wall {cpu / busy:.0%}: below 100% means other processes shared the cores; "
          f"load average now {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f})")
    print(f"  ideal time on {args.workers} idle cores: {cpu / max(args.workers, 1) / 60:.1f} min")
    print(f"  {'strategy family':<16}{'runs':>6}{'wall s':>10}{'CPU s':>10}{'CPU/run':>9}{'share':>8}")
    for key, values in sorted(cpu_family.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {key:<16}{len(values):>6}{sum(per_family[key]):>10.1f}{sum(values):>10.1f}"
              f"{sum(values) / len(values):>9.2f}{sum(values) / cpu:>8.0%}")
    if not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if outcome.failures else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
