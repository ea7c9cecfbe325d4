"""The plan of conservative backfilling: free processors and machines over time (docs/semantics/scheduling.md#conservative).

Each answer of the profile is checked against its definition computed the slow way on random plans.
"""

from __future__ import annotations

import math
import random

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
