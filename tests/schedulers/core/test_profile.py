"""The plan of conservative backfilling: free processors and machines over time (docs/semantics/scheduling.md#conservative).

Each answer of the profile is checked against its definition computed the slow way on random plans.
"""

from __future__ import annotations

import math
import random

from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.profile import Profile, intervals_of, lowest_bits, mask_of



def test_machine_sets_as_bits_round_trip():
    for intervals in ([], [(0, 0)], [(0, 3), (7, 7), (9, 12)], [(5, 100)]):
        assert intervals_of(mask_of(intervals)) == intervals
    assert intervals_of(lowest_bits(mask_of([(2, 3), (7, 9)]), 3)) == [(2, 3), (7, 7)]


def _brute_fit(profile: Profile, procs: int, duration: float) -> tuple[float, int]:
    """Every anchor, every machine of every segment of its window: the definition, slowly."""
    times, sets = profile.times, profile.sets
    n = len(times)
    for i in range(n):
        common = -1
        for x in range(i, n):
            if x > i and times[x] >= times[i] + duration:
                break
            common &= sets[x]
        if common.bit_count() >= procs:
            return times[i], lowest_bits(common, procs)
    return math.inf, 0


def test_the_sliding_window_fit_is_the_brute_force_one():
    rng = random.Random(3)
    for _ in range(400):
        m = rng.randint(1, 12)
        profile = Profile(m, 0.0, machines=True)
        for _ in range(rng.randint(0, 12)):
            procs = rng.randint(1, m)
            duration = float(rng.randint(1, 30))
            when, mask = profile.fit(procs, duration)
            assert (when, mask) == _brute_fit(profile, procs, duration)
            profile.occupy(when, when + duration, procs, mask)
            if rng.random() < 0.3:  # and give some back, as an early end does
                profile.release(when, when + duration, procs, mask)
            assert profile.counts == [s.bit_count() for s in profile.sets]
        for procs in range(1, m + 1):
            for duration in (1.0, 7.0, 25.0):
                assert profile.fit(procs, duration) == _brute_fit(profile, procs, duration)


def test_whether_a_job_would_move_is_known_without_taking_it_out():
    # may_move(place): exactly whether giving the place up and fitting again gives another one.
    rng = random.Random(5)
    answers = set()  # the cases met, so that the test cannot pass by meeting none
    for machines in (False, True):
        for _ in range(300):
            m = rng.randint(1, 10)
            profile = Profile(m, 0.0, machines=machines)
            placed = []
            for _ in range(rng.randint(1, 10)):
                procs, duration = rng.randint(1, m), float(rng.randint(1, 30))
                when, mask = profile.fit(procs, duration)
                profile.occupy(when, when + duration, procs, mask)
                placed.append((when, when + duration, procs, mask))
            for start, end, procs, mask in placed[: rng.randint(0, len(placed))]:  # some end: room appears
                if rng.random() < 0.5:
                    profile.release(start, end, procs, mask)
                    placed.remove((start, end, procs, mask))
            for start, end, procs, mask in placed:
                said = profile.may_move(start, end, procs, mask)
                profile.release(start, end, procs, mask)
                again = profile.fit(procs, end - start)
                profile.occupy(start, end, procs, mask)
                moved = again != (start, mask)
                assert said == moved, (machines, start, procs, again)
                answers.add((machines, said, moved))
    assert answers >= {(False, True, True), (False, False, False), (True, True, True), (True, False, False)}


# --- the count model a Slurm backfill pass plans on (docs/semantics/scheduling.md#slurm) ----------------


def _running(now: float, ends: list[tuple[float, int]]) -> list[Job]:
    jobs = []
    for seq, (end, procs) in enumerate(ends):
        job = Job(str(seq), seq, 0.0, procs, end - now)
        job.expected_end = end
        jobs.append(job)
    return jobs


def test_a_profile_of_the_running_jobs_frees_each_ones_processors_at_its_expected_end():
    # 2 free at 10; jobs end at 20 (3 and 1 processors) and 35 (4): 2, then 6 from 20, then 10 from 35.
    profile = Profile.of_running(10.0, 2, _running(10.0, [(20.0, 3), (20.0, 1), (35.0, 4)]))
    assert (profile.times, profile.counts, profile.machines) == ([10.0, 20.0, 35.0], [2, 6, 10], False)


def test_an_inclusive_window_needs_the_processors_at_its_end_too():
    # 4 free from 0 to 100, 1 from 100 on (a reservation of 3 starts at 100).  A job of 3 for 100 s ends
    # exactly at 100: it fits at 0 in the half-open plan (conservative), not in Slurm's (it waits forever).
    profile = Profile(4, 0.0, machines=False)
    profile.occupy(100.0, math.inf, 3, 0)
    assert profile.fit(3, 100.0) == (0.0, 0)
    assert profile.fit(3, 100.0, inclusive=True) == (math.inf, 0)
    assert profile.fit(3, 99.0, inclusive=True) == (0.0, 0)
    assert profile.lowest(0.0, 100.0) == 4
    assert profile.lowest(0.0, 100.0, inclusive=True) == 1


def test_a_reservation_before_its_start_takes_only_the_processors_still_free():
    # 1 free until 50, 5 from 50: 3 processors held over [40, 60) take the 1 free until 50, then 3 of 5.
    profile = Profile.of_running(0.0, 1, _running(0.0, [(50.0, 4)]))
    profile.occupy_free(40.0, 60.0, 3)
    assert (profile.times, profile.counts) == ([0.0, 40.0, 50.0, 60.0], [1, 0, 2, 5])


def _brute_count_fit(times: list[float], counts: list[int], procs: int, duration: float,
                     inclusive: bool) -> float:
    """Every segment start, every segment its window meets: the definition, slowly."""
    for i, start in enumerate(times):
        end = start + duration
        meets = [x for x in range(i, len(times)) if times[x] < end or (inclusive and times[x] == end)]
        if all(counts[x] >= procs for x in meets):
            return start
    return math.inf


def _brute_lowest(times: list[float], counts: list[int], start: float, end: float, inclusive: bool) -> int:
    """The fewest processors of the segments that meet [start, end) ([start, end] if inclusive)."""
    return min(counts[x] for x in range(len(times))
               if (x + 1 == len(times) or times[x + 1] > start)
               and (times[x] < end or (inclusive and times[x] == end)))


def test_the_count_fit_and_the_lowest_count_are_the_brute_force_ones_closed_or_not():
    rng = random.Random(7)
    met = set()  # whether closing the window changed an answer: the test must meet both cases
    for _ in range(300):
        m = rng.randint(1, 12)
        ends = sorted((float(rng.randint(1, 40)), rng.randint(1, 3)) for _ in range(rng.randint(0, 5)))
        free = max(0, m - sum(procs for _, procs in ends))
        profile = Profile.of_running(0.0, free, _running(0.0, ends))
        for _ in range(rng.randint(0, 8)):  # reservations at whole seconds, so windows end on boundaries
            start = float(rng.randint(0, 50))
            end = start + rng.randint(1, 30)
            procs = rng.randint(1, m)
            if rng.random() < 0.5:
                profile.occupy_free(start, end, procs)
            elif profile.lowest(start, end) >= procs:
                profile.occupy(start, end, procs, 0)
        times, counts = profile.times, profile.counts
        assert min(counts) >= 0
        for procs in range(1, m + 1):
            for duration in (1.0, 5.0, 20.0):
                for inclusive in (False, True):
                    when = profile.fit(procs, duration, inclusive=inclusive)[0]
                    assert when == _brute_count_fit(times, counts, procs, duration, inclusive)
                    met.add((inclusive, when != profile.fit(procs, duration)[0]))
        for start in (0.0, 3.0, 10.0, 25.0):
            for end in (start + 1, start + 10, start + 30):
                for inclusive in (False, True):
                    assert profile.lowest(start, end, inclusive) == _brute_lowest(times, counts, start, end, inclusive)
    assert (True, True) in met and (True, False) in met
