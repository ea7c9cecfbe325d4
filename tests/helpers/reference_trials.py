"""A literal, one-trial-at-a-time reference of the trial simulator of
docs/semantics/learning.md#learned-index-policies.

Written from those words alone, as an event-driven simulation, and
deliberately unlike the batched kernel (no sorted ends, no cumulative sums):
the clock moves from event to event (an arrival or a completion); at each
event the next job of the list starts if it has arrived and fits, and so on
while jobs start.  Used by the tests to check the batched simulator job for job.
"""

from __future__ import annotations

import math


def simulate_list(jobs: list[tuple[float, float, int]], m: int) -> list[float]:
    """Start times of ``jobs`` = [(submit, runtime, procs), ...] started strictly in list order."""
    starts: list[float] = []
    running: list[tuple[float, int]] = []  # (end, procs)
    clock = -math.inf
    nxt = 0
    while nxt < len(jobs):
        submit, runtime, procs = jobs[nxt]
        free = m - sum(q for end, q in running if end > clock)
        if submit <= clock and free >= procs:
            starts.append(clock)
            running.append((clock + runtime, procs))
            nxt += 1
            continue  # the next job may start at the same instant
        events = [end for end, _ in running if end > clock]
        if submit > clock:
            events.append(submit)
        clock = min(events)
    return starts


def trial(window, order: list[int], m: int, tau: float = 10.0) -> tuple[float, list[float]]:
    """AVGbsld over Q and Q's start times (in ``order``) of one trial of ``window``."""
    s = window.warmup
    jobs = [(float(window.submit[i]), float(window.runtime[i]), int(window.procs[i])) for i in range(s)]
    jobs += [(float(window.submit[s + i]), float(window.runtime[s + i]), int(window.procs[s + i])) for i in order]
    starts = simulate_list(jobs, m)[s:]
    bsld = []
    for i, start in zip(order, starts):
        r, p = float(window.submit[s + i]), float(window.runtime[s + i])
        bsld.append(max((start - r + p) / max(p, tau), 1.0))
    return sum(bsld) / len(bsld), starts


def scores(window, orders: list[list[int]], m: int, tau: float = 10.0) -> list[float]:
    """score(j) = sum of AVGbsld over the trials where j is first / sum over all trials."""
    avgs = [trial(window, o, m, tau)[0] for o in orders]
    total = sum(avgs)
    return [sum(a for a, o in zip(avgs, orders) if o[0] == j) / total for j in range(window.queue)]
