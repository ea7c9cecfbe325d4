"""The core owns the whole kill/requeue lifecycle, rejects, and the declared extension points."""

from __future__ import annotations

from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.hooks.killing import KillOnceAfter


def job(i: int, procs: int = 1, walltime: float = 100.0, submit: float = 0.0) -> Job:
    return Job(str(i).zfill(7), i, submit, procs, walltime)


def fcfs_core(m: int = 4, hooks=()) -> Core:
    order = Order.of("FCFS")
    return Core(m, Easy(order, order), hooks)


class KillFirstStart(Hook):
    """Kill the first job it sees start, at the next pass, with a rerun."""

    may_kill = True
    kill_reason = "test"

    def __init__(self) -> None:
        self.target: Job | None = None

    def on_start(self, core, job, now):
        if self.target is None:
            self.target = job

    def before_pass(self, core, now, decisions):
        if self.target is not None and self.target.id in core.machine.running:
            core.kill(self.target, "test", decisions, requeue=self.target.rerun())


def test_end_of_a_requeued_kill_queues_the_rerun_and_returns_it():
    hook = KillFirstStart()
    core = fcfs_core(hooks=[hook])
    core.submit(job(1, procs=4), 0.0)
    assert [j.id for j in core.decide(0.0).starts] == ["0000001"]
    d = core.decide(5.0)
    assert [k.job.id for k in d.kills] == ["0000001"]
    assert "0000001" in core.killing and "0000001" in core.machine.running  # machines held until done
    rerun = core.end("0000001", 5.0, EndState.COMPLETED_KILLED)
    assert rerun is not None and rerun.id == "0000001#1" and rerun.submit == 0.0 and rerun.attempt == 1
    assert rerun.id in core.queue and not core.killing
    assert [j.id for j in core.decide(5.0).starts] == ["0000001#1"]


def test_a_run_ending_by_itself_before_its_kill_is_not_requeued():
    hook = KillFirstStart()
    core = fcfs_core(hooks=[hook])
    core.submit(job(1), 0.0)
    core.decide(0.0)
    core.decide(1.0)  # the kill is decided
    assert core.end("0000001", 1.0, EndState.COMPLETED_SUCCESSFULLY) is None
    assert core.kills_overtaken == 1 and not core.queue.jobs and not core.killing


def test_plain_end_returns_nothing():
    core = fcfs_core()
    core.submit(job(1), 0.0)
    core.decide(0.0)
    assert core.end("0000001", 10.0, EndState.COMPLETED_SUCCESSFULLY) is None


def test_impossible_jobs_become_reject_decisions_of_the_next_pass():
    core = fcfs_core(m=4)
    assert core.submit(job(1, procs=5), 0.0) is False
    assert core.submit(job(2, walltime=0.0), 0.0) is False
    assert core.submit(job(3, procs=2), 0.0) is True
    assert len(core.queue) == 1
    d = core.decide(0.0)
    assert [(r.job.id, r.reason) for r in d.rejects] == [
        ("0000001", "asks for 5 processors; the machine has 4"), ("0000002", "has no positive walltime")]
    assert [j.id for j in d.starts] == ["0000003"]
    assert core.rejected == 2
    assert not core.decide(0.0).rejects  # said once


def test_a_lone_reject_is_decided_even_with_nothing_waiting():
    core = fcfs_core(m=2)
    core.submit(job(1, procs=3), 0.0)
    d = core.decide(0.0)
    assert [r.job.id for r in d.rejects] == ["0000001"] and bool(d)


def test_may_kill_comes_from_what_the_algorithm_and_hooks_declare():
    assert not fcfs_core().may_kill
    core = fcfs_core(hooks=[KillOnceAfter(10.0)])
    assert core.may_kill and core.kill_reasons() == ["kill_after"]

    class Preempting(Easy):
        may_kill = True

    order = Order.of("FCFS")
    assert Core(4, Preempting(order, order)).kill_reasons() == ["EASY(FCFS)"]


def test_use_order_switches_every_queue_of_the_algorithm():
    core = Core(4, Easy(Order.of("FCFS"), Order.of("SPF")))
    saf = Order.of("SAF", 3600.0)
    core.use_order(saf)
    assert core.algorithm.primary == saf and core.algorithm.backfill == saf
    assert core.algorithm.priority == saf


def test_kill_once_after_kills_at_exactly_its_time_and_asks_for_the_wakeup():
    core = fcfs_core(hooks=[KillOnceAfter(30.0)])
    core.submit(job(1), 0.0)
    d = core.decide(0.0)
    assert d.wakeups == [30.0]
    assert not core.decide(29.0).kills
    kills = core.decide(30.0).kills
    assert [k.job.id for k in kills] == ["0000001"] and kills[0].requeue.id == "0000001#1"
    rerun = core.end("0000001", 30.0, EndState.COMPLETED_KILLED)
    d = core.decide(30.0)
    assert d.starts == [rerun] and not d.wakeups  # a rerun is never watched again
