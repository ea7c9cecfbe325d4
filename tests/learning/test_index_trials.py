"""The trial simulator (docs/semantics/learning.md#learned-index-policies): hand-computed scores, the batched
kernel against a literal reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import reference_trials
from bftune.learning.index import trials as tr
from bftune.workloads.synthetic import generate


def window(jobs, warmup=0, index=0):
    """A window from (r, p, q) tuples, r already relative to the first Q arrival."""
    arr = np.array(jobs, dtype=np.float64)
    return tr.Window(index=index, position=0, ids=tuple(range(1, len(jobs) + 1)), submit=arr[:, 0].copy(),
                     runtime=arr[:, 1].copy(), procs=arr[:, 2].astype(np.int64), warmup=warmup)


def all_orders(n):
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64)


def test_scores_of_a_hand_computed_case():
    # m = 2, no warm-up.  A (r 0, p 10, q 2), B (r 0, p 20, q 1), C (r 5, p 10, q 1).  By hand (tau = 10):
    # ABC 4/3, ACB 4/3, BAC 7.5/3, BCA 5/3, CAB 5.75/3, CBA 5.75/3 (AVGbsld of each order); total 32/3.
    w = window([(0, 10, 2), (0, 20, 1), (5, 10, 1)])
    orders = all_orders(3)
    avg, starts = tr.run_trials(w, orders, 2, starts_out=True)
    expected = {(0, 1, 2): 4 / 3, (0, 2, 1): 4 / 3, (1, 0, 2): 2.5, (1, 2, 0): 5 / 3, (2, 0, 1): 5.75 / 3,
                (2, 1, 0): 5.75 / 3}
    for order, a in zip(orders, avg):
        assert a == pytest.approx(expected[tuple(order)], rel=1e-15)
    assert starts[list(map(tuple, orders)).index((1, 2, 0))].tolist() == [0, 5, 20]  # B, C, then A at 20
    res = tr.window_scores(w, 0, 2, perms=orders)
    assert res.scores == pytest.approx([8 / 32, 12.5 / 32, 11.5 / 32], rel=1e-14)
    assert res.first_count.tolist() == [2, 2, 2] and res.total == pytest.approx(32 / 3)


def test_warmup_delays_the_queue():
    # X (S, r -5, p 10, q 2) holds the machine until 5.  AB: A 5..15, B 15; BA: B 5..105, A 105.
    w = window([(-5, 10, 2), (0, 10, 2), (1, 100, 1)], warmup=1)
    state = tr.warmup(w, 2)
    assert state.starts.tolist() == [-5.0] and state.alive_end.tolist() == [5.0] and state.last_start == -5.0
    avg, starts = tr.run_trials(w, np.array([[0, 1], [1, 0]]), 2, starts_out=True)
    assert starts.tolist() == [[5, 15], [5, 105]]
    ab, ba = (1.5 + 1.14) / 2, (1.04 + 11.5) / 2
    assert avg.tolist() == pytest.approx([ab, ba])
    assert tr.window_scores(w, 0, 2, perms=np.array([[0, 1], [1, 0]])).scores == pytest.approx(
        [ab / (ab + ba), ba / (ab + ba)])


def random_window(rng, n_s, n_q, m):
    """Small integer times and sizes: many ties between arrivals, ends and starts."""
    jobs = [(float(rng.integers(-30, 0)), float(rng.integers(1, 20)), int(rng.integers(1, m + 1))) for _ in range(n_s)]
    jobs.sort()
    q = sorted((float(rng.integers(0, 40)), float(rng.integers(1, 30)), int(rng.integers(1, m + 1)))
               for _ in range(n_q))
    q[0] = (0.0, q[0][1], q[0][2])
    return window(jobs + q, warmup=n_s)


@pytest.mark.parametrize("seed", range(6))
def test_batched_equals_reference_job_for_job_on_tie_heavy_windows(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 9))
    w = random_window(rng, int(rng.integers(0, 6)), int(rng.integers(1, 9)), m)
    perms = tr.permutations(rng, 60, w.queue)
    avg, starts = tr.run_trials(w, perms, m, starts_out=True)
    for t, order in enumerate(perms.tolist()):
        ref_avg, ref_starts = reference_trials.trial(w, order, m)
        assert starts[t].tolist() == ref_starts, (seed, order)
        assert avg[t] == pytest.approx(ref_avg, rel=1e-12)
    ref = reference_trials.scores(w, perms.tolist(), m)
    assert tr.window_scores(w, 0, m, perms=perms).scores == pytest.approx(ref, rel=1e-12)


def test_batched_equals_reference_on_lublin_feitelson_windows():
    trace = generate(3000, 256, 5)
    for i, pos in enumerate(tr.window_positions(len(trace.jobs), 4, 16, 32, seed=2)):
        w = tr.make_window(trace.jobs, i, pos, 16, 32, 256)
        assert w.submit[16] == 0.0 and w.queue == 32
        perms = tr.permutations(np.random.default_rng(i), 25, 32)
        avg, starts = tr.run_trials(w, perms, 256, starts_out=True)
        for t, order in enumerate(perms.tolist()):
            ref_avg, ref_starts = reference_trials.trial(w, order, 256)
            assert starts[t].tolist() == ref_starts
            assert avg[t] == pytest.approx(ref_avg, rel=1e-12)


def test_seeded_reproducible_and_batch_independent():
    trace = generate(2000, 64, 1)
    w = tr.make_window(trace.jobs, 3, 100, 16, 32, 64)
    a = tr.window_scores(w, 500, 64, seed=7)
    b = tr.window_scores(w, 500, 64, seed=7)
    c = tr.window_scores(w, 500, 64, seed=8)
    assert a.scores.tolist() == b.scores.tolist() and a.scores.tolist() != c.scores.tolist()
    assert a.scores.sum() == pytest.approx(1.0) and a.first_count.sum() == 500
    perms = tr.permutations(np.random.default_rng(0), 300, 32)
    small = tr.window_scores(w, 0, 64, perms=perms, batch=7)
    large = tr.window_scores(w, 0, 64, perms=perms)
    assert small.scores == pytest.approx(large.scores, rel=1e-12)


def test_window_positions_and_bad_input():
    pos = tr.window_positions(100, 5, 16, 32, seed=1)
    assert pos == tr.window_positions(100, 5, 16, 32, seed=1) and len(set(pos)) == 5
    assert all(0 <= p <= 52 for p in pos)
    with pytest.raises(tr.TrialError, match="larger than the trace"):
        tr.window_positions(40, 1, 16, 32, seed=1)
    with pytest.raises(tr.TrialError, match="room for only 3"):
        tr.window_positions(50, 4, 16, 32, seed=1)
    with pytest.raises(tr.TrialError, match="--windows"):
        tr.window_positions(100, 0, 16, 32, seed=1)
    trace = generate(200, 64, 1)
    big = max(trace.jobs[:48], key=lambda j: j.procs)
    with pytest.raises(tr.TrialError, match=f"--procs 1: smaller than job {big.id}'s size"):
        tr.make_window(trace.jobs, 0, 0, 16, 32, 1)
    w = tr.make_window(trace.jobs, 0, 0, 16, 32, 64)
    with pytest.raises(tr.TrialError, match="--trials"):
        tr.window_scores(w, 0, 64)
    with pytest.raises(tr.TrialError, match="--queue"):
        tr.check_sizes(16, 0, 256)


def test_the_same_kernel_runs_over_a_strict_array_api_namespace():
    """The optional accelerated path (cupy, torch) is this code over another namespace: check it on the strict one."""
    xp = pytest.importorskip("array_api_strict")
    trace = generate(2000, 256, 1)
    w = tr.make_window(trace.jobs, 0, 100, 16, 32, 256)
    perms = tr.permutations(np.random.default_rng(0), 300, 32)
    ref, ref_starts = tr.run_trials(w, perms, 256, starts_out=True)
    got, got_starts = tr.run_trials(w, xp.asarray(perms), 256, xp=xp, starts_out=True)
    assert np.array_equal(tr.to_numpy(got), ref) and np.array_equal(tr.to_numpy(got_starts), ref_starts)
    assert tr.window_scores(w, 0, 256, perms=perms, xp=xp).scores.tolist() == \
        tr.window_scores(w, 0, 256, perms=perms).scores.tolist()
