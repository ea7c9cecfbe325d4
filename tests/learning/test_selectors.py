"""Online policy selection (docs/semantics/learning.md#online-selection): selectors alone, then inside the simulator."""

from __future__ import annotations

import numpy as np
import pytest
from bftune.learning.selectors import (
    EpsilonGreedySelector,
    FeedbackSelector,
    FixedSelector,
    Observation,
    RandomSelector,
    make_selector,
)
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord

DAY = 86400.0


def obs(period, used, simulated=None, real_wait=0.0, finished=0):
    return Observation(period=period, used=used, simulated=simulated, real_wait=real_wait, finished=finished)


def test_full_feedback_picks_argmin_of_summed_costs_with_first_candidate_on_ties():
    sel = FeedbackSelector(["A", "B", "C"])
    rng = np.random.default_rng(0)
    assert sel.choose(0, rng) == "A"  # all costs 0: the first candidate
    sel.observe(obs(0, "A", {"A": 10.0, "B": 4.0, "C": 5.0}), rng)
    assert sel.choose(1, rng) == "B"
    sel.observe(obs(1, "B", {"A": 0.0, "B": 3.0, "C": 1.0}), rng)
    assert sel.costs() == {"A": 10.0, "B": 7.0, "C": 6.0}
    assert sel.choose(2, rng) == "C"


def test_decay_weights_older_periods_by_lambda_powers():
    sel = FeedbackSelector(["A", "B"], decay=0.5)
    rng = np.random.default_rng(0)
    for w in ({"A": 8.0, "B": 0.0}, {"A": 4.0, "B": 0.0}, {"A": 2.0, "B": 10.0}):
        sel.observe(obs(0, "A", w), rng)
    # C_A = 0.25*8 + 0.5*4 + 2 = 6 ; C_B = 10
    assert sel.costs() == pytest.approx({"A": 6.0, "B": 10.0})


def test_noisy_feedback_factors_stay_in_the_band_and_are_seeded():
    factors = []
    for seed in range(200):
        sel = FeedbackSelector(["A", "B"], noise=0.2)
        sel.observe(obs(0, "A", {"A": 1.0, "B": 1.0}), np.random.default_rng(seed))
        factors.extend(sel.costs().values())
    assert min(factors) >= 0.8 and max(factors) <= 1.2
    assert max(factors) - min(factors) > 0.3  # really random, not constant
    a = FeedbackSelector(["A", "B"], noise=0.2)
    b = FeedbackSelector(["A", "B"], noise=0.2)
    a.observe(obs(0, "A", {"A": 1.0, "B": 1.0}), np.random.default_rng(7))
    b.observe(obs(0, "A", {"A": 1.0, "B": 1.0}), np.random.default_rng(7))
    assert a.costs() == b.costs()


def test_bandit_tries_every_policy_first_then_exploits_with_epsilon_zero():
    sel = EpsilonGreedySelector(["A", "B", "C"], epsilon=0.0)
    rng = np.random.default_rng(0)
    seen = []
    for t, (wait, n) in enumerate([(100.0, 10), (30.0, 10), (50.0, 10)]):
        p = sel.choose(t, rng)
        seen.append(p)
        sel.observe(obs(t, p, real_wait=wait, finished=n), rng)
    assert seen == ["A", "B", "C"]
    assert sel.costs() == {"A": 10.0, "B": 3.0, "C": 5.0}
    assert all(sel.choose(t, rng) == "B" for t in range(3, 30))


def test_bandit_cost_is_decayed_wait_over_jobs_of_the_policy():
    sel = EpsilonGreedySelector(["A", "B"], decay=0.5, epsilon=0.0)
    rng = np.random.default_rng(0)
    sel.observe(obs(0, "A", real_wait=40.0, finished=4), rng)
    sel.observe(obs(1, "B", real_wait=10.0, finished=5), rng)
    sel.observe(obs(2, "A", real_wait=20.0, finished=2), rng)
    # A: (0.25*40 + 20) / 6 = 5 ; B: (0.5*10) / 5 = 1
    assert sel.costs() == pytest.approx({"A": 5.0, "B": 1.0})


def test_bandit_with_epsilon_one_is_uniform():
    sel = EpsilonGreedySelector(["A", "B", "C", "D"], epsilon=1.0)
    rng = np.random.default_rng(3)
    for p in "ABCD":
        sel.observe(obs(0, p, real_wait=1.0, finished=1), rng)
    picks = [sel.choose(t, rng) for t in range(2000)]
    counts = {p: picks.count(p) for p in "ABCD"}
    assert all(400 < c < 600 for c in counts.values()), counts


def test_random_and_fixed_selectors():
    rng = np.random.default_rng(1)
    assert {FixedSelector("SAF").choose(t, rng) for t in range(10)} == {"SAF"}
    picks = {RandomSelector(["A", "B", "C"]).choose(t, rng) for t in range(100)}
    assert picks == {"A", "B", "C"}
    with pytest.raises(ValueError):
        make_selector("nope", ["A"], "A")


def _daily_batches(days: int) -> list[JobRecord]:
    """One processor; every day at 00:00, 6 jobs of very different lengths arrive.

    On one machine, shortest-first minimises the summed wait (SPT rule), and
    longest-first maximises it: full feedback must learn SPF after day one.
    """
    jobs, jid = [], 1
    for d in range(days):
        for length in (3000, 100, 2000, 50, 1000, 200):
            jobs.append(JobRecord(id=jid, submit=d * DAY, procs=1, runtime=length, walltime=length))
            jid += 1
    return jobs


def _run(jobs, **options):
    cfg = SchedulerConfig.from_options(options)
    return simulate(jobs, 1, cfg.build(1))


def test_full_feedback_learns_the_clearly_better_policy():
    result = _run(_daily_batches(6), selector="full", period="1d", candidates=["LPF", "SPF"])
    periods = result.report["periods"]
    assert [p["policy"] for p in periods] == ["LPF"] + ["SPF"] * (len(periods) - 1)
    first = periods[1]["previous"]["simulated_waits"]
    assert first["SPF"] < first["LPF"]
    # Exactly the SPT sums: waits of 50,100,200,1000,2000 before each later job.
    assert first["SPF"] == 50 + 150 + 350 + 1350 + 3350
    assert [p["start"] for p in periods] == [d * DAY for d in range(len(periods))]


def test_bandit_in_the_simulator_charges_real_waits_to_the_policy_used():
    result = _run(_daily_batches(8), selector="bandit", period="1d", candidates=["LPF", "SPF"], epsilon=0.0)
    chosen = [p["policy"] for p in result.report["periods"]]
    assert chosen[:2] == ["LPF", "SPF"]  # untried first
    assert set(chosen[2:]) == {"SPF"}


def test_selection_wakes_up_at_every_boundary_while_work_remains():
    # One job that runs 5 days: passes must happen at each daily boundary.
    jobs = [JobRecord(id=1, submit=0, procs=1, runtime=5 * DAY, walltime=6 * DAY)]
    result = _run(jobs, selector="random", period="1d", seed=5)
    periods = result.report["periods"]
    assert [p["period"] for p in periods] == list(range(6))
    assert result.passes >= 6


def test_same_seed_same_choices_different_seed_differs():
    jobs = _daily_batches(20)
    a = [p["policy"] for p in _run(jobs, selector="random", period="1d", seed=1).report["periods"]]
    b = [p["policy"] for p in _run(jobs, selector="random", period="1d", seed=1).report["periods"]]
    c = [p["policy"] for p in _run(jobs, selector="random", period="1d", seed=2).report["periods"]]
    assert a == b and a != c


@pytest.mark.parametrize("options, field", [
    ({"selector": "greedy"}, "selector"),
    ({"selector": "full", "period": "0"}, "period"),
    ({"selector": "full", "candidates": "FCFS,NOPE"}, "candidates"),
    ({"selector": "bandit", "epsilon": 2}, "epsilon"),
    ({"selector": "full", "decay": 0}, "decay"),
    ({"selector": "full", "backfill_policy": "SPF"}, "backfill_policy"),
])
def test_selection_options_are_validated_with_their_name(options, field):
    with pytest.raises(ConfigError, match=field):
        SchedulerConfig.from_options(options)


def test_every_selector_is_registered_once_with_a_summary():
    from bftune.learning.selectors import SELECTOR_KINDS, SELECTORS, SelectorKind, register_selector

    assert SELECTORS == tuple(SELECTOR_KINDS) == ("fixed", "random", "full", "noisy", "bandit")
    assert all(kind.summary for kind in SELECTOR_KINDS.values())
    assert type(make_selector("full", ["FCFS", "SPF"], "FCFS")).__name__ == "FeedbackSelector"
    with pytest.raises(ValueError, match="registered twice"):
        register_selector(SelectorKind("full", SELECTOR_KINDS["full"].build, "again"))
