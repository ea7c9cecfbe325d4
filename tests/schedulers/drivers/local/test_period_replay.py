"""The full/noisy selectors' period replay keeps only waits (WaitLog), with the same sum as full rows."""

from __future__ import annotations

from operator import sub

import pytest
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Core
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.drivers.local.simulator import PeriodReplay, Simulator, replay_key, simulate
from bftune.workloads.model import JobRecord
from bftune.workloads.synthetic import generate


def core(m: int, policy: str) -> Core:
    order = Order.of(policy, 144000.0)
    return Core(m, Easy(order, order))


@pytest.mark.parametrize("policy", ["FCFS", "SAF", "LCFS"])
def test_the_replay_sums_the_same_waits_as_the_full_runs(policy):
    jobs = generate(400, 16, seed=3).jobs
    runs = simulate(jobs, 16, core(16, policy)).runs
    expected = float(sum(map(sub, runs.start, runs.subtime)))
    assert expected > 0
    assert PeriodReplay(144000.0)(jobs, 16, policy) == expected
    assert Simulator(jobs, 16, core(16, policy), waits_only=True).total_wait() == expected


def test_a_waits_only_simulator_has_no_runs_to_return():
    jobs = generate(20, 4, seed=1).jobs
    with pytest.raises(TypeError, match="total_wait"):
        Simulator(jobs, 4, core(4, "FCFS"), waits_only=True).run()
    with pytest.raises(TypeError, match="waits_only"):
        Simulator(jobs, 4, core(4, "FCFS")).total_wait()
    assert PeriodReplay(144000.0)([], 4, "FCFS") == 0.0


def test_a_rejected_run_adds_no_wait():
    jobs = [JobRecord(1, 0.0, 2, 10.0, 20.0), JobRecord(2, 0.0, 9, 10.0, 20.0), JobRecord(3, 5.0, 4, 10.0, 20.0)]
    # job 2 (9 processors) never fits the 4: rejected at t = 0; job 3 waits for job 1 (5 s)
    assert Simulator(jobs, 4, core(4, "FCFS"), waits_only=True).total_wait() == 5.0


def test_a_memo_gives_the_same_waits_and_is_keyed_by_everything_a_replay_depends_on():
    jobs = generate(300, 16, seed=5).jobs
    memo: dict[str, float] = {}
    shared = PeriodReplay(144000.0, memo=memo)
    plain = PeriodReplay(144000.0)
    for policy in ("FCFS", "SAF"):
        assert shared(jobs, 16, policy) == plain(jobs, 16, policy)
    assert len(memo) == 2
    memo[replay_key(jobs, 16, "FCFS", 144000.0, "count")] = -1.0  # a memo entry is used as it is
    assert shared(jobs, 16, "FCFS") == -1.0
    base = replay_key(jobs, 16, "FCFS", 144000.0, "count")
    renumbered = [JobRecord(j.id + 1, j.submit, j.procs, j.runtime, j.walltime) for j in jobs]
    assert len({base, replay_key(renumbered, 16, "FCFS", 144000.0, "count"),  # ids break ties
                replay_key(jobs, 17, "FCFS", 144000.0, "count"), replay_key(jobs, 16, "SPF", 144000.0, "count"),
                replay_key(jobs, 16, "FCFS", 72000.0, "count"), replay_key(jobs, 16, "FCFS", 144000.0, "machines"),
                replay_key(jobs[:-1], 16, "FCFS", 144000.0, "count")}) == 7
