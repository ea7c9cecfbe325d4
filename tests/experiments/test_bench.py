"""The benchmark script keeps working (its figures are printed, never asserted: see README, Performance)."""

from __future__ import annotations

import sys

import pytest
from bftune.experiments import bench
from bftune.experiments.cli import build_parser, config_from_args


@pytest.mark.parametrize("key", list(bench.CONFIGS))
def test_every_benchmarked_configuration_is_a_valid_simulate_command(key):
    _, options, reference = bench.CONFIGS[key]
    args = build_parser().parse_args(["simulate", "--trace", "t.swf", *options, "--out", "o"])
    config_from_args(args)  # raises on an option the table refuses
    if reference is not None:
        assert "{swf}" in reference  # the reference reads the cleaned copy


def test_measure_reports_a_childs_time_and_memory(tmp_path):
    m = bench.measure([sys.executable, "-c", "x = b\"x\" * (40 << 20)"])
    assert m.wall > 0 and m.cpu >= 0 and m.peak_mib >= 40 and m.sim is None
    with pytest.raises(RuntimeError, match="failed"):
        bench.measure([sys.executable, "-c", "raise SystemExit(3)"])


def test_the_phase_benchmark_times_every_phase_of_simulate(tmp_path, capsys):
    from bftune.experiments import bench_phases
    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    write_swf(generate(400, 32, 2), tmp_path / "t.swf")
    assert bench_phases.main([str(tmp_path / "t.swf"), "--repeat", "1"]) == 0
    printed = capsys.readouterr().out
    for phase in ("imports", "read", "simulate", "columns", "summary", "out_jobs.csv", "garbage collection"):
        assert f"| {phase}" in printed or f"| of which {phase}" in printed, phase
    assert "numpy imported: False" in printed  # a small trace is parsed line by line, with no numpy
