"""The waiting queue's orders: every walk equals sorting by ``Order.rank`` (threshold, classes, ties).

The queue sorts a time-dependent order by the policy's score alone, stably from FCFS order, and reuses a
sort within one instant; these tests hold both to the plain definition, sorting by the whole key.
"""

from __future__ import annotations

import math

from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.ordering import Order, WaitingQueue
from bftune.schedulers.core.policies import get_policy, sort_score
from hypothesis import given, settings
from hypothesis import strategies as st

DYNAMIC = ("SEXP", "LEXP", "WFP3", "UNICEF")
STATIC = ("FCFS", "LCFS", "SPF", "LPF", "LQF", "SAF")

jobs_strategy = st.lists(
    st.tuples(st.integers(0, 20), st.integers(1, 8), st.sampled_from([10.0, 60.0, 100.0, 3600.0]), st.integers(0, 1)),
    min_size=1, max_size=30)


def make_jobs(rows) -> list[Job]:
    # Few distinct values: many equal scores and equal submission times, so the tie rule decides often.
    return [Job(f"{i:03d}", seq=i % 7, submit=float(10 * r), procs=q, walltime=p, qclass=c)
            for i, (r, q, p, c) in enumerate(rows)]


def by_rank(jobs, order: Order, now: float) -> list[str]:
    return [j.id for j in sorted(jobs, key=lambda j: order.rank(j, now))]


@settings(max_examples=150, deadline=None)
@given(rows=jobs_strategy, name=st.sampled_from(DYNAMIC + STATIC), by_class=st.booleans(),
       threshold=st.sampled_from([math.inf, 0.0, 50.0]), now=st.sampled_from([200.0, 260.0]))
def test_a_walk_is_the_order_of_rank(rows, name, by_class, threshold, now):
    jobs = make_jobs(rows)
    queue = WaitingQueue()
    for job in reversed(jobs):  # added out of order: the queue's own FCFS index must put them right
        queue.add(job)
    order = Order.of(name, threshold, by_class)
    assert [j.id for j in queue.iterate(order, now)] == by_rank(jobs, order, now)


@settings(max_examples=100, deadline=None)
@given(rows=jobs_strategy, name=st.sampled_from(DYNAMIC), data=st.data())
def test_a_second_walk_at_the_same_instant_sees_removals_and_additions(rows, name, data):
    """Primary then backfill at one instant: the started jobs leave, and a job added in between counts."""
    jobs = make_jobs(rows)
    queue = WaitingQueue()
    for job in jobs:
        queue.add(job)
    order, same = Order.of(name), Order.of(name)  # equal orders, distinct objects (primary and backfill)
    now = 500.0
    first = list(queue.iterate(order, now))
    assert [j.id for j in first] == by_rank(jobs, order, now)
    started = data.draw(st.lists(st.sampled_from(first), unique=True))
    for job in started:
        queue.remove(job)
    left = [j for j in jobs if j not in started]
    assert [j.id for j in queue.iterate(same, now)] == by_rank(left, order, now)
    late = Job("late", seq=3, submit=now, procs=1, walltime=10.0)
    queue.add(late)
    assert [j.id for j in queue.iterate(order, now)] == by_rank([*left, late], order, now)
    assert [j.id for j in queue.iterate(order, now + 1000)] == by_rank([*left, late], order, now + 1000)


def test_an_inverse_sorts_its_base_score_descending():
    score, descending = sort_score(get_policy("LEXP"))
    assert descending and score is sort_score(get_policy("SEXP"))[0]
    assert sort_score(get_policy("SEXP"))[1] is False
    wfp3 = get_policy("WFP3")
    assert sort_score(wfp3) == (wfp3.score, False)
