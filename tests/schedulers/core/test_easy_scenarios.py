"""Hand-built EASY scenarios, worked out on paper from docs/semantics/scheduling.md (#easy, #batsim-semantics).

Every scenario states its expected start times (and ends where they matter)
with the reasoning in comments, and checks them against BOTH our simulator
and the slow reference (tests/reference_easy.py): the paper schedule is the
ground truth for both.

Jobs are (id, r, q, p, p~) = (id, submit, procs, runtime, walltime).
"""

from __future__ import annotations

import math
import random

import easy_support as H
import pytest
import reference_easy as REF

SUCCESS = "COMPLETED_SUCCESSFULLY"
WALLTIME = "COMPLETED_WALLTIME_REACHED"
KILLED = "COMPLETED_KILLED"


def check(jobs, m, expected_starts, expected_ends=None, **cfg):
    """Assert ours and the reference both produce exactly the paper schedule."""
    res = H.run_ours(jobs, m, **cfg)
    ours = H.starts_ends(res)
    ref = REF.simulate_reference(
        jobs, m, cfg.get("policy", "FCFS"), cfg.get("backfill_policy"),
        cfg.get("theta", math.inf), cfg.get("backfill", True))
    got_starts = {k: v[0] for k, v in ours.items()}
    ref_starts = {k: v[0] for k, v in ref.items()}
    assert got_starts == expected_starts, f"ours {got_starts} != paper {expected_starts}"
    assert ref_starts == expected_starts, f"reference {ref_starts} != paper {expected_starts}"
    if expected_ends is not None:
        assert {k: v[1] for k, v in ours.items()} == expected_ends
        assert {k: v[1] for k, v in ref.items()} == expected_ends
    return res


# --- backfilling -----------------------------------------------------------------


def test_backfill_ends_by_shadow_time_including_equality():
    # m = 4, EASY-FCFS.
    # t=0: job 1 (q3, p~100) starts; 1 free.
    # t=1: job 2 (q4) does not fit -> head.  Shadow s = 100 (job 1's expected
    #      end, 4 free then), extra = 4 - 4 = 0.
    # t=2: job 3 (q1, p~98): fits now and 2 + 98 = 100 <= s (equality is allowed)
    #      -> backfilled at 2; its actual end is 2 + 40 = 42.
    # t=3: job 4 (q1, p~98): no free processor.
    # t=42: job 3 ends, 1 free; job 4: 42 + 98 = 140 > s = 100 and q=1 > extra=0
    #       -> must NOT be backfilled (it would delay job 2).
    # t=99: job 1 ends (runtime 99 < p~ 100): job 2 starts at 99 (before its
    #       reservation); job 4 is the new head, s = 99 + 60 = 159.
    # t=149: job 2 ends (runtime 50) -> job 4 starts at 149.
    jobs = [(1, 0, 3, 99, 100), (2, 1, 4, 50, 60), (3, 2, 1, 40, 98), (4, 3, 1, 10, 98)]
    check(jobs, 4, {1: 0, 2: 99, 3: 2, 4: 149},
          expected_ends={1: 99, 2: 149, 3: 42, 4: 159})


def test_backfill_on_extra_processors_and_extra_is_consumed():
    # m = 4, EASY-FCFS.
    # t=0: job 1 (q2, p~100) starts; 2 free.
    # t=1: job 2 (q3) blocked -> head; at s = 100 there are 4 free, extra = 4-3 = 1.
    # t=2: job 3 (q1, p~500) runs past s (502 > 100) but q=1 <= extra=1
    #      -> backfilled at 2 on the extra processor.
    # t=3: job 4 (q1, p~500): 1 processor free now, but the new pass computes
    #      s = 100 with free(s) = 1 + 2 = 3, extra = 0 -> q=1 > 0, not backfilled
    #      (had extra not been consumed by job 3, job 4 would wrongly start).
    # t=90: job 1 ends: job 2 starts at 90 (3 free); job 4 head, s = 100.
    # t=100: job 2 ends -> job 4 starts at 100.
    jobs = [(1, 0, 2, 90, 100), (2, 1, 3, 10, 10), (3, 2, 1, 500, 500), (4, 3, 1, 500, 500)]
    check(jobs, 4, {1: 0, 2: 90, 3: 2, 4: 100})


def test_job_running_past_shadow_with_q_above_extra_is_not_backfilled():
    # m = 6, EASY-FCFS.
    # t=0: job 1 (q4, p~100) starts; 2 free.
    # t=1: job 2 (q5) -> head; s = 100 (6 free), extra = 1.
    # t=2: jobs 3 (q2) and 4 (q1) arrive together, both p~300 (past s).
    #      job 3: fits now (2 free) but q=2 > extra=1 -> skipped;
    #      job 4: q=1 <= extra=1 -> backfilled at 2 (backfilling does not stop
    #      at the first job that cannot be backfilled).
    # t=100: job 1 ends; 5 free -> job 2 starts; job 3 head, s = 110.
    # t=110: job 2 ends -> job 3 starts.
    jobs = [(1, 0, 4, 100, 100), (2, 1, 5, 10, 10), (3, 2, 2, 300, 300), (4, 2, 1, 300, 300)]
    check(jobs, 6, {1: 0, 2: 100, 3: 110, 4: 2})


def test_extra_counts_every_job_ending_at_the_shadow_time():
    # m = 4, EASY-FCFS.  Jobs 1, 2, 3 (q1 each) start at 0, expected ends 100,
    # 100, 200; 1 processor free.
    # t=1: job 4 (q2) blocked -> head.  At 100 BOTH jobs 1 and 2 end: free(s)
    #      = 1 + 1 + 1 = 3, so s = 100 and extra = 3 - 2 = 1 (an implementation
    #      that stops counting at the first job making the head fit would get
    #      free = 2 and extra = 0).
    # t=2: job 5 (q1, p~1000) runs past s but q=1 <= extra=1 -> backfilled at 2.
    # t=100: jobs 1 and 2 end, 2 free -> job 4 starts.
    jobs = [(1, 0, 1, 100, 100), (2, 0, 1, 100, 100), (3, 0, 1, 200, 200),
            (4, 1, 2, 50, 50), (5, 2, 1, 1000, 1000)]
    check(jobs, 4, {1: 0, 2: 0, 3: 0, 4: 100, 5: 2})


# --- orders ----------------------------------------------------------------------


# m = 4.  Job 1 (q4, p~100) holds the whole machine until 100.  At t=100 three
# jobs wait: A = job 2 (r10, q2, p~300, area 600), B = job 3 (r20, q4, p~100,
# area 400), C = job 4 (r30, q1, p~200, area 200).  Runtimes equal walltimes.
ORDER_JOBS = [(1, 0, 4, 100, 100), (2, 10, 2, 300, 300), (3, 20, 4, 100, 100), (4, 30, 1, 200, 200)]
ORDER_CASES = {
    # FCFS: A starts (2 free); B head, s = 400, extra 0; C: 100+200 <= 400 -> backfilled.
    "FCFS": {1: 0, 2: 100, 3: 400, 4: 100},
    # LCFS: C starts (3 free); B head, s = 300 (C's end), extra 0; A: 400 > 300,
    # q2 > 0 -> waits.  t=300: B starts; A head until B ends at 400.
    "LCFS": {1: 0, 4: 100, 3: 300, 2: 400},
    # SPF: B (p~100) starts on all 4; t=200: C and A both fit.
    "SPF": {1: 0, 3: 100, 4: 200, 2: 200},
    # SAF: C (200), B (400), A (600): same shape as LCFS.
    "SAF": {1: 0, 4: 100, 3: 300, 2: 400},
    # SQF: C (q1) and A (q2) start; B head, s = 400 (when A ends 4 are free).
    "SQF": {1: 0, 4: 100, 2: 100, 3: 400},
    # LQF: B (q4) first; t=200: A and C.
    "LQF": {1: 0, 3: 100, 2: 200, 4: 200},
    # LAF: A (600) first, then as FCFS.
    "LAF": {1: 0, 2: 100, 3: 400, 4: 100},
    # WFP3 at t=100: A (90/300)^3*2 = 0.054, B (80/100)^3*4 = 2.048,
    # C (70/200)^3*1 = 0.043 -> B first (largest); t=200 A and C fit together.
    "WFP3": {1: 0, 3: 100, 2: 200, 4: 200},
    # LEXP at t=100: (w+p~)/p~: A 390/300 = 1.3, B 180/100 = 1.8, C 270/200 = 1.35
    # -> B, C, A: B starts; t=200 C and A.
    "LEXP": {1: 0, 3: 100, 4: 200, 2: 200},
    # SEXP: A (1.3), C (1.35), B (1.8): A and C start at 100 (3 used);
    # B head, s = 300 (C) gives only 3 free, 400 (A) gives 4 -> B at 400.
    "SEXP": {1: 0, 2: 100, 4: 100, 3: 400},
}


@pytest.mark.parametrize("policy", sorted(ORDER_CASES))
def test_policy_order_changes_the_head(policy):
    check(ORDER_JOBS, 4, ORDER_CASES[policy], policy=policy)


def test_primary_and_backfill_policies_differ():
    # m = 4.  t=0: job 1 (q3, p~100) starts, 1 free.  t=1: job 2 (q4) blocked
    # (head, s = 100, extra 0) and jobs 3 (q1, p~90) and 4 (q1, p~50) arrive
    # with it; both end by s if started at 1, but only one processor is free.
    # EASY-FCFS (Pb = FCFS): job 3 (lower id at equal r) is backfilled at 1 and
    #   runs to 91; at 91, job 4 would end at 141 > 100 -> waits; 100: job 2
    #   starts (ends 110); job 4 at 110.
    # EASY-FCFS-SPF: the backfill walk takes job 4 (p~50) first -> starts at 1;
    #   job 3 then waits until 110.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 4, 10, 10), (3, 1, 1, 90, 90), (4, 1, 1, 50, 50)]
    check(jobs, 4, {1: 0, 2: 100, 3: 1, 4: 110}, policy="FCFS", backfill_policy="FCFS")
    check(jobs, 4, {1: 0, 2: 100, 3: 110, 4: 1}, policy="FCFS", backfill_policy="SPF")


def test_equal_keys_fall_back_to_submission_then_id():
    # m = 1, SPF, all p~ equal: order must be r, then id (input order irrelevant).
    # Jobs 7 and 3 both r=5, job 9 r=2.  t=0: job 1 runs to 10.  t=10: order
    # 9 (r2), 3 (r5, id 3), 7 (r5, id 7).
    jobs = [(1, 0, 1, 10, 10), (7, 5, 1, 10, 10), (3, 5, 1, 10, 10), (9, 2, 1, 10, 10)]
    check(jobs, 1, {1: 0, 9: 10, 3: 20, 7: 30}, policy="SPF")
    # LCFS key -r_j: 7 and 3 tie on key (-5) and on r, so id decides: 3 before 7.
    check(jobs, 1, {1: 0, 3: 10, 7: 20, 9: 30}, policy="LCFS")


# --- threshold -------------------------------------------------------------------

# m = 2, primary SPF.  Job 1 (q2) holds the machine until 100.  Jobs 5 (p~400)
# and 3 (p~500) arrive together at r=10; job 4 (p~10) at r=50.  All q2.
THRESHOLD_JOBS = [(1, 0, 2, 100, 100), (5, 10, 2, 400, 400), (3, 10, 2, 500, 500), (4, 50, 2, 10, 10)]


def test_threshold_promotes_old_jobs_ordered_by_r_then_id():
    # Theta = 60.  t=100: waits 90 (jobs 5, 3) > 60 -> promoted, ordered by r
    # then id: 3 before 5 although SPF prefers 5; job 4 (wait 50) stays behind.
    # Job 3 starts at 100 (ends 600); job 5 head (s = 600, extra 0); job 4
    # cannot backfill (no free processor).  t=600: waits 590 and 550 -> both
    # promoted, by r: 5 then 4.  Job 5 600..1000, job 4 at 1000.
    check(THRESHOLD_JOBS, 2, {1: 0, 3: 100, 5: 600, 4: 1000}, policy="SPF", theta=60.0)


def test_threshold_is_strict_and_reevaluated_each_pass():
    # Theta = 90.  t=100: waits are exactly 90 -> NOT promoted (now - r > Theta
    # is strict): plain SPF, job 4 (p~10) starts at 100.  t=110: waits 100 > 90
    # -> 3 and 5 promoted, by id: 3 at 110 (ends 610), 5 at 610.
    check(THRESHOLD_JOBS, 2, {1: 0, 4: 100, 3: 110, 5: 610}, policy="SPF", theta=90.0)


def test_without_threshold_plain_spf():
    # Theta = inf: t=100 SPF order 4 (10), 5 (400), 3 (500).
    check(THRESHOLD_JOBS, 2, {1: 0, 4: 100, 5: 110, 3: 510}, policy="SPF")


def test_threshold_applies_to_the_backfill_order_too():
    # m = 4, EASY-FCFS-SPF.  t=0: jobs 1 (q3, p~100) and 9 (q1, p~20) start
    # (equal r, id order), 0 free.  t=1: job 2 (q4) head.  Job 3 (r2, q1,
    # p~70) and job 4 (r5, q1, p~60) wait.  t=20: job 9 ends, 1 free; head 2
    # blocked, s = 100, extra 0.  Both 3 and 4 end by s if started at 20.
    # Theta = inf: SPF backfill order takes job 4 (60) at 20 (ends 80); at 80
    #   job 3 would end at 150 > 100 -> waits; t=100 job 2 starts (to 110);
    #   job 3 at 110.
    # Theta = 15: at t=20 job 3's wait is 18 > 15 -> promoted to the head of
    #   the backfill order too (job 4's wait is exactly 15: not promoted), so
    #   job 3 is backfilled at 20 (ends 90); job 4 at 90 would end at 150 > 100
    #   -> waits; t=100 job 2 starts (the promoted job 2, waits 99); job 4 at 110.
    jobs = [(1, 0, 3, 100, 100), (9, 0, 1, 20, 20), (2, 1, 4, 10, 10),
            (3, 2, 1, 70, 70), (4, 5, 1, 60, 60)]
    check(jobs, 4, {1: 0, 9: 0, 2: 100, 3: 110, 4: 20}, policy="FCFS", backfill_policy="SPF")
    check(jobs, 4, {1: 0, 9: 0, 2: 100, 3: 20, 4: 110}, policy="FCFS", backfill_policy="SPF",
          theta=15.0)


def test_threshold_from_options_string():
    from bftune.schedulers.config import SchedulerConfig

    cfg = SchedulerConfig.from_options({"policy": "SAF", "backfill_policy": "SPF", "threshold": "40h"})
    assert cfg.threshold == 40 * 3600
    assert cfg.policy == "SAF" and cfg.backfill_policy == "SPF"


# --- walltime --------------------------------------------------------------------


def test_walltime_kill_and_runtime_equal_to_walltime():
    # m = 2, EASY-FCFS.
    # job 1 (p150 > p~100): starts 0, killed at 0+100 -> WALLTIME_REACHED.
    # job 2 (p50 == p~50): starts 0, ends 50 -> WALLTIME_REACHED (Batsim does the
    #       same when delay == walltime, docs/semantics/scheduling.md#batsim-semantics).
    # job 3 (q1): head at 0, s = 50 -> starts at 50, ends 80 (success).
    # job 4 (q2) at 10: waits; after job 3 starts, s = 110 (job 3 expected end)
    #       but job 3 actually ends at 80 and job 1 at 100 -> starts at 100.
    jobs = [(1, 0, 1, 150, 100), (2, 0, 1, 50, 50), (3, 0, 1, 30, 60), (4, 10, 2, 5, 10)]
    res = check(jobs, 2, {1: 0, 2: 0, 3: 50, 4: 100}, expected_ends={1: 100, 2: 50, 3: 80, 4: 105})
    states = {r.seq: r.state for r in res.runs}
    assert states == {1: WALLTIME, 2: WALLTIME, 3: SUCCESS, 4: SUCCESS}
    ref = REF.simulate_reference(jobs, 2, details=True)
    assert {k: v[2] for k, v in ref.items()} == states
    # completion order (Batsim's out_jobs.csv order): 2 (50), 3 (80), 1 (100), 4 (105)
    assert [r.seq for r in res.runs] == [2, 3, 1, 4]


# --- same-timestamp batching --------------------------------------------------------


def test_completion_and_submission_at_same_time_share_one_pass():
    # m = 2, SPF.  Job 1 (q2) ends at exactly 100, when jobs 7 (p~50) and 8
    # (p~20) are submitted.  The completion is applied first, then both
    # submissions, then ONE pass: SPF sees both and starts 8 at 100 (not 7,
    # which a pass per submission in id order would have started), 7 at 110.
    jobs = [(1, 0, 2, 100, 200), (7, 100, 2, 50, 50), (8, 100, 2, 10, 20)]
    check(jobs, 2, {1: 0, 8: 100, 7: 110}, policy="SPF")


def test_walltime_kill_and_submission_at_same_time():
    # As in the Batsim walltime_kill transcript: job 1's walltime kill at 100
    # arrives with job 2's submission; job 2 starts at 100 on the freed machines.
    jobs = [(1, 0, 4, 500, 100), (2, 100, 4, 10, 10)]
    res = check(jobs, 4, {1: 0, 2: 100})
    assert {r.seq: H.machine_ids(r.alloc) for r in res.runs} == {1: [0, 1, 2, 3], 2: [0, 1, 2, 3]}


def test_decisions_do_not_depend_on_input_order():
    rng = random.Random(7)
    jobs = [(i, rng.choice([0, 0, 5, 10]), rng.randint(1, 4), rng.randint(1, 30), 30) for i in range(1, 25)]
    base = H.starts_ends(H.run_ours(jobs, 4, policy="SAF"))
    for _ in range(5):
        shuffled = list(jobs)
        rng.shuffle(shuffled)
        assert H.starts_ends(H.run_ours(shuffled, 4, policy="SAF")) == base


def test_allocations_are_lowest_numbered_free_machines():
    # m = 4.  t=0: job 1 (q1) -> machine 0, job 2 (q2) -> 1-2.  t=5: job 1
    # ends; job 3 (q2) arrives: free {0, 3} -> allocated 0 and 3 (no contiguity).
    jobs = [(1, 0, 1, 5, 5), (2, 0, 2, 100, 100), (3, 5, 2, 10, 10)]
    res = check(jobs, 4, {1: 0, 2: 0, 3: 5})
    assert {r.seq: H.machine_ids(r.alloc) for r in res.runs} == {1: [0], 2: [1, 2], 3: [0, 3]}


# --- strict order (no backfilling) ------------------------------------------------


def test_strict_no_backfill():
    # The first scenario's jobs with backfilling off: job 3 (which EASY
    # backfilled at 2) must wait behind job 2.  t=99: job 2 starts (q4) and
    # takes everything.  t=149: job 2 ends; jobs 3 and 4 (q1 each) start.
    jobs = [(1, 0, 3, 99, 100), (2, 1, 4, 50, 60), (3, 2, 1, 40, 98), (4, 3, 1, 10, 98)]
    check(jobs, 4, {1: 0, 2: 99, 3: 149, 4: 149}, backfill=False)


def test_strict_mode_starts_in_order_while_the_head_fits():
    # m = 4, no backfill, SPF.  t=0: order 2 (p~5, q2), 3 (p~6, q3), 1 (p~50, q1):
    # 2 starts, 3 does not fit -> stop; job 1 would fit but must not start.
    # t=5: 2 ends, 4 free: 3 starts, then 1 fits (1 left) -> starts.
    jobs = [(1, 0, 1, 50, 50), (2, 0, 2, 5, 5), (3, 0, 3, 6, 6)]
    check(jobs, 4, {2: 0, 3: 5, 1: 5}, policy="SPF", backfill=False)


# --- kill and requeue (kill_after) ------------------------------------------------


def runs_by_id(res):
    return {r.id: r for r in res.runs}


def test_kill_after_requeues_once_and_reuses_machines():
    # m = 4, kill_after = 100.  Job 1 (q4, p300, p~1000) starts at 0; killed at
    # exactly 0 + 100 (COMPLETED_KILLED).  Its rerun "0000001#1" is submitted at
    # 100 with r_j = 0, starts at 100 on the same (just freed) machines, runs
    # its whole 300 s from scratch (ends 400), and is never killed again
    # (otherwise it would end at 200).
    res = H.run_ours([(1, 0, 4, 300, 1000)], 4, kill_after=100.0)
    runs = runs_by_id(res)
    assert set(runs) == {"0000001", "0000001#1"}
    first, rerun = runs["0000001"], runs["0000001#1"]
    assert (first.start, first.end, first.state) == (0.0, 100.0, KILLED)
    assert (rerun.start, rerun.end, rerun.state) == (100.0, 400.0, SUCCESS)
    assert rerun.subtime == 100.0 and rerun.original_submit == 0.0
    assert rerun.first_id == first.first_id == "0000001"
    assert rerun.seq == first.seq == 1 and rerun.attempt == 1 and first.attempt == 0
    assert H.machine_ids(rerun.alloc) == H.machine_ids(first.alloc) == [0, 1, 2, 3]
    assert [r.id for r in res.runs] == ["0000001", "0000001#1"]  # completion order


def test_kill_after_leaves_short_jobs_alone():
    # job 2 (p50 < 100) ends normally; job 1 (p == 100 == kill_after) completes
    # at 100 before any kill can apply (completions first); job 3 has p~ = 100
    # <= kill_after and ends by walltime at 100, not killed.  Job 4 (q2) starts
    # at 100 when jobs 1 and 3 free their machines.
    jobs = [(1, 0, 2, 100, 1000), (2, 0, 1, 50, 1000), (3, 0, 1, 100, 100), (4, 10, 2, 30, 1000)]
    res = H.run_ours(jobs, 4, kill_after=100.0)
    got = {r.id: (r.start, r.end, r.state) for r in res.runs}
    assert got == {
        "0000001": (0.0, 100.0, SUCCESS),
        "0000002": (0.0, 50.0, SUCCESS),
        "0000003": (0.0, 100.0, WALLTIME),
        "0000004": (100.0, 130.0, SUCCESS),
    }


def test_rerun_restarts_from_scratch_and_keeps_its_walltime():
    # p 1500 > p~ 1000: killed at 100, the rerun runs from scratch and hits its
    # full walltime: 100 + 1000 = 1100, COMPLETED_WALLTIME_REACHED.
    res = H.run_ours([(1, 0, 4, 1500, 1000)], 4, kill_after=100.0)
    got = {r.id: (r.start, r.end, r.state) for r in res.runs}
    assert got == {"0000001": (0.0, 100.0, KILLED), "0000001#1": (100.0, 1100.0, WALLTIME)}


def test_rerun_keeps_r_j_for_ordering():
    # m = 4, EASY-FCFS, kill_after = 100.
    # t=0: job 1 (r0, q2, p300, p~5000) starts.  t=10: job 2 (r10, q2, p1000,
    # p~2000) starts.  t=20: job 3 (r20, q4) waits (head).
    # t=100: job 1 killed; 2 free, job 3 (q4) still blocked.  The rerun 1#1
    #   keeps r = 0, so FCFS ranks it before job 3: it starts at 100 (ends 400).
    #   (Had it been ranked by its resubmission time 100, job 3 would be the
    #   head with s = 2010 and 1#1, expected to end at 5100 with extra 0, could
    #   not be backfilled.)
    # t=110: job 2 killed; its rerun 2#1 (r = 10) precedes job 3 (r20) again
    #   and starts at 110 (ends 1110).  Job 3 waits for both: starts at 1110.
    # (Under the wrong ranking job 3 would start at 110 on the 4 free machines.)
    jobs = [(1, 0, 2, 300, 5000), (2, 10, 2, 1000, 2000), (3, 20, 4, 10, 10)]
    res = H.run_ours(jobs, 4, policy="FCFS", kill_after=100.0)
    got = {r.id: (r.start, r.end, r.state) for r in res.runs}
    assert got == {
        "0000001": (0.0, 100.0, KILLED),
        "0000002": (10.0, 110.0, KILLED),
        "0000001#1": (100.0, 400.0, SUCCESS),
        "0000002#1": (110.0, 1110.0, SUCCESS),
        "0000003": (1110.0, 1120.0, WALLTIME),
    }


def test_rerun_is_queued_in_the_kill_acknowledgement_pass():
    # SEMANTIC CHOICE (docs/semantics/scheduling.md, "Kill and requeue"): the rerun joins the queue
    # in the same batch as the kill's acknowledgement, keeping r_j, so it
    # competes for the machines its kill freed with its original priority.
    # m = 4, FCFS, kill_after = 100.  Job 1 (r0, q4, p300) runs from 0; job 2
    # (r50, q4, p~60) waits.  At t=100 job 1 is killed; in the acknowledgement
    # pass the rerun 1#1 (r0) precedes job 2 (r50) in FCFS and takes the
    # machines at 100 (ends 400); job 2 starts at 400.
    jobs = [(1, 0, 4, 300, 1000), (2, 50, 4, 50, 60)]
    res = H.run_ours(jobs, 4, kill_after=100.0)
    got = {r.id: (r.start, r.end, r.state) for r in res.runs}
    assert got == {
        "0000001": (0.0, 100.0, KILLED),
        "0000001#1": (100.0, 400.0, SUCCESS),
        "0000002": (400.0, 450.0, SUCCESS),
    }


def test_no_pass_at_the_stale_end_time_of_a_killed_run():
    # m = 2, EASY-SPF, Theta = 20, kill_after = 10.  (id, r, q, p, p~):
    #   1 (0, 1, 30, 30), 2 (10, 2, 30, 30), 3 (5, 1, 50, 50).
    # t=0: 1 starts (would end at 30).  t=5: 3 starts (would end at 55).
    # t=10: 2 (q2) arrives; 1 is killed.  Ack pass: 2 blocked (1 free),
    #   s = 55, extra 0.  Rerun 1#1 (r0, p~30) queued: SPF ties 2 and 1#1 on
    #   p~ = 30, r breaks it -> 1#1 first, fits -> starts at 10 (ends 40).
    # t=15: 3 is killed; ack pass: 2 still blocked (s = 40, extra 0).  Rerun
    #   3#1 (r5, p~50): SPF puts 2 first; 3#1 runs past s with extra 0 -> waits.
    #   Waits are 5 (job 2) and 10 (3#1): nothing is promoted.
    # The next EVENT is 1#1's end at 40 (30 and 55 are the original ends of the
    #   killed runs: no event).  At 40: 2 free; waits 30 and 35 > 20 -> both
    #   promoted, by r: 3#1 (r5) starts at 40 (ends 90); 2 blocked, s = 90.
    # t=90: 2 starts; killed at 100; rerun 2#1 runs 100..130.
    # Ours (bug): a pass at 30 sees 3#1's wait 25 > 20 (job 2's wait is exactly
    #   20, not promoted), promotes it and starts it at 30.
    jobs = [(1, 0, 1, 30, 30), (2, 10, 2, 30, 30), (3, 5, 1, 50, 50)]
    res = H.run_ours(jobs, 2, policy="SPF", theta=20.0, kill_after=10.0)
    got = {r.id: (r.start, r.end, r.state) for r in res.runs}
    assert got == {
        "0000001": (0.0, 10.0, KILLED),
        "0000003": (5.0, 15.0, KILLED),
        "0000001#1": (10.0, 40.0, WALLTIME),
        "0000003#1": (40.0, 90.0, WALLTIME),
        "0000002": (90.0, 100.0, KILLED),
        "0000002#1": (100.0, 130.0, WALLTIME),
    }
