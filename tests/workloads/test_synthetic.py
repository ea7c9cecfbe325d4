"""The Lublin-Feitelson synthetic workload (bftune.workloads.synthetic)."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest
from bftune.workloads.errors import WorkloadError
from bftune.workloads.swf import read_swf
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import (
    WALLTIME_VALUES,
    _bucket_weights,
    _gamma_cdf,
    _points_to_seconds,
    generate,
    offered_load,
)
from locations import SHARED

LUBLIN_256 = SHARED / "workloads" / "lublin_256.swf.gz"


@pytest.mark.parametrize("variant", ["typeless", "typed"])
@pytest.mark.parametrize("m", [1, 16, 100, 256])
def test_bounds_and_shape(m, variant):
    trace = generate(2000, m, seed=11, variant=variant)
    assert len(trace) == 2000 and trace.max_procs == m
    assert [j.id for j in trace.jobs] == list(range(1, 2001))
    assert trace.jobs[0].submit == 0
    assert all(a.submit <= b.submit for a, b in zip(trace.jobs, trace.jobs[1:]))
    assert all(1 <= j.procs <= m for j in trace.jobs)
    assert all(j.runtime >= 1 for j in trace.jobs)
    assert all(j.walltime > j.runtime for j in trace.jobs)  # never equal: no walltime kill
    assert all(isinstance(j.submit, int) and isinstance(j.runtime, int) for j in trace.jobs)
    assert all(1 <= j.user <= 64 for j in trace.jobs)
    assert trace.header["MaxProcs"] == str(m)


def test_deterministic_by_seed():
    a = generate(3000, 128, seed=5)
    b = generate(3000, 128, seed=5)
    c = generate(3000, 128, seed=6)
    assert a.jobs == b.jobs
    assert a.jobs != c.jobs
    assert a.unix_start_time == b.unix_start_time


@pytest.mark.parametrize("m", [16, 128, 1024])
@pytest.mark.parametrize("target", [0.7, 0.85])
def test_offered_load_hits_target(m, target):
    trace = generate(5000, m, seed=2, load=target)
    assert offered_load(trace) == pytest.approx(target, rel=0.01)
    assert 0.6 <= offered_load(generate(5000, m, seed=2)) <= 0.9


def test_model_features():
    trace = generate(20_000, 128, seed=1)
    procs = np.array([j.procs for j in trace.jobs])
    runtime = np.array([j.runtime for j in trace.jobs])
    # serial jobs and powers of two dominate (typeless: 24.4 % serial, 57.6 % rounded to 2^k)
    assert 0.22 <= np.mean(procs == 1) <= 0.27
    assert np.mean((procs & (procs - 1)) == 0) >= 0.8
    # runtime grows with size
    assert np.median(runtime[procs >= 64]) > 10 * np.median(runtime[procs == 1])
    assert runtime.max() <= np.exp(12)
    # daily cycle: more arrivals in the afternoon than in the early morning
    hours = (np.array([j.submit for j in trace.jobs]) + trace.unix_start_time) // 3600 % 24
    counts = np.bincount(hours, minlength=24)
    assert counts[12:16].sum() > 3 * counts[3:7].sum()
    # Zipf-like users: user 1 is the most active, about 1 / H(64) = 21 % of the jobs
    users = Counter(j.user for j in trace.jobs)
    assert users.most_common(1)[0][0] == 1
    assert 0.18 <= users[1] / len(trace) <= 0.24
    # walltimes are round values and above the runtime
    assert {j.walltime for j in trace.jobs} <= set(WALLTIME_VALUES)


def test_typed_variant_has_both_types():
    kinds = Counter(j.queue for j in generate(5000, 128, seed=3, variant="typed").jobs)
    assert set(kinds) == {0, 1}
    assert kinds[0] > kinds[1]  # interactive jobs dominate in the published model
    assert set(Counter(j.queue for j in generate(100, 128, seed=3).jobs)) == {0}


def test_matches_archive_lublin_256_size_classes():
    if not LUBLIN_256.exists():
        pytest.skip(f"shared trace {LUBLIN_256} is not available (the ../shared checkout is missing)")
    archive = read_swf(LUBLIN_256, walltime_fallback="runtime")
    ours = generate(10_000, 256, seed=3)
    classes = [(1, 1), (2, 8), (9, 32), (33, 64), (65, 256)]

    def shares(trace):
        procs = np.array([j.procs for j in trace.jobs])
        return [np.mean((procs >= lo) & (procs <= hi)) for lo, hi in classes]

    assert shares(ours) == pytest.approx(shares(archive), abs=0.03)


def test_small_cases_and_errors():
    one = generate(1, 8, seed=0)
    assert len(one) == 1 and one.jobs[0].submit == 0
    for kwargs in ({"n_jobs": 0, "procs": 4}, {"n_jobs": 5, "procs": 0}, {"n_jobs": 5, "procs": 4, "load": 0}):
        with pytest.raises(WorkloadError):
            generate(seed=0, **kwargs)
    with pytest.raises(WorkloadError, match="variant"):
        generate(5, 4, seed=0, variant="nope")


def test_round_trips_through_swf(tmp_path):
    trace = generate(500, 64, seed=9)
    back = read_swf(write_swf(trace, tmp_path / "syn.swf"))
    assert back.jobs == trace.jobs
    assert back.unix_start_time == trace.unix_start_time
    assert back.max_procs == 64


def test_helpers():
    # gamma cdf: exponential case (shape 1) has a closed form
    assert _gamma_cdf(2.0, 1.0, 1.0) == pytest.approx(1 - np.exp(-2.0), rel=1e-12)
    assert _gamma_cdf(0.0, 3.0, 2.0) == 0.0
    weights = _bucket_weights(8.1737, 3.9631)
    assert weights.shape == (48,) and weights.mean() == pytest.approx(1.0)
    # points -> seconds: one day of points is one day; inside a bucket time is linear
    assert _points_to_seconds(np.array([48.0]), weights)[0] == pytest.approx(86_400)
    half_first = weights[0] / 2
    assert _points_to_seconds(np.array([half_first]), weights)[0] == pytest.approx(900)


def test_ten_thousand_jobs_quickly():
    started = time.perf_counter()
    trace = generate(10_000, 256, seed=1)
    elapsed = time.perf_counter() - started
    assert len(trace) == 10_000
    print(f"generate(10000, 256): {elapsed:.3f} s")  # informational; no timed assert
