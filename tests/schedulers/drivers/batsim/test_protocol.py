"""Batsim protocol dataclasses: parse and serialise every event type; clear errors."""

from __future__ import annotations

import copy
import json

import pytest
from bftune.schedulers.drivers.batsim import protocol as P
from bftune.schedulers.drivers.batsim.protocol import (
    ProtocolError,
    parse_event,
    parse_message,
)
from locations import TRANSCRIPTS

BEGINS = {"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
    "nb_resources": 2, "nb_compute_resources": 2, "nb_storage_resources": 0, "allow_compute_sharing": False,
    "allow_storage_sharing": True,
    "config": {"redis-enabled": False, "profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": True,
               "dynamic-jobs-acknowledged": True, "profile-reuse-enabled": False, "sched-config": "",
               "forward-unknown-events": False},
    "compute_resources": [{"id": 0, "name": "h0", "state": "idle", "properties": {"role": ""}, "zone_properties": {}},
                          {"id": 1, "name": "h1", "state": "idle", "properties": {"role": ""}, "zone_properties": {}}],
    "storage_resources": [], "workloads": {"w0": "workloads/small_50.json"},
    "profiles": {"w0": {"d33": {"type": "delay", "delay": 33}}}}}

# One example of every event type, in Batsim's own shape (README "Message format").
FROM_BATSIM = [
    BEGINS,
    {"timestamp": 599850.0, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!0000015", "job": {
        "id": "w0!0000015", "subtime": 599850, "res": 4, "walltime": 53940, "profile": "d3477", "user": 12}}},
    {"timestamp": 603327.0, "type": "JOB_COMPLETED", "data": {"job_id": "w0!0000015",
                                                              "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                                                              "alloc": "0-3"}},
    {"timestamp": 50.0, "type": "JOB_COMPLETED", "data": {"job_id": "w0!0000002",
                                                          "job_state": "COMPLETED_WALLTIME_REACHED", "return_code": -1,
                                                          "alloc": "4-7"}},
    {"timestamp": 30.0, "type": "JOB_KILLED", "data": {"job_ids": ["w0!0000003"], "job_progress": {
        "w0!0000003": {"profile_name": "d120", "progress": 0.208333}}}},
    {"timestamp": 30.0, "type": "REQUESTED_CALL", "data": {}},
    {"timestamp": 614950.0, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}},
    {"timestamp": 815915.0, "type": "SIMULATION_ENDS", "data": {}},
    {"timestamp": 5.0, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": "0-3 7", "state": "1"}},
]
FROM_SCHEDULER = [
    {"timestamp": 599850.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!0000015", "alloc": "0-3"}},
    {"timestamp": 0.0, "type": "CALL_ME_LATER", "data": {"timestamp": 30.0}},
    {"timestamp": 30.0, "type": "KILL_JOB", "data": {"job_ids": ["w0!0000003"]}},
    {"timestamp": 30.0, "type": "REGISTER_JOB", "data": {"job_id": "w0!0000003#1", "job": {
        "profile": "d120", "id": "w0!0000003#1", "res": 4, "walltime": 200, "subtime": 30.0}}},
    {"timestamp": 30.0, "type": "SET_JOB_METADATA", "data": {
        "job_id": "w0!0000003#1", "metadata": "{'parent_job': 'w0!0000003', 'nb_resubmit': 1}"}},
    {"timestamp": 30.0, "type": "REGISTER_PROFILE", "data": {"workload_name": "dyn", "profile_name": "rest_95",
                                                             "profile": {"type": "delay", "delay": 95}}},
    {"timestamp": 30.0, "type": "NOTIFY", "data": {"type": "registration_finished"}},
    {"timestamp": 1.0, "type": "REJECT_JOB", "data": {"job_id": "w0!0000009"}},
    {"timestamp": 1.0, "type": "SET_RESOURCE_STATE", "data": {"resources": "0-3", "state": "2"}},
]


@pytest.mark.parametrize("raw", FROM_BATSIM, ids=lambda e: e["type"])
def test_batsim_events_round_trip(raw):
    event = parse_event(raw, 0, raw["timestamp"], "batsim")
    assert event.TYPE == raw["type"]
    assert event.to_dict() == raw


@pytest.mark.parametrize("raw", FROM_SCHEDULER, ids=lambda e: e["type"])
def test_scheduler_events_round_trip(raw):
    event = parse_event(raw, 0, raw["timestamp"], "scheduler")
    assert event.TYPE == raw["type"]
    assert event.to_dict() == raw


def test_every_event_class_is_covered():
    seen_b = {e["type"] for e in FROM_BATSIM}
    seen_s = {e["type"] for e in FROM_SCHEDULER}
    assert seen_b == set(P.BATSIM_EVENTS)
    assert seen_s == set(P.SCHEDULER_EVENTS)


def test_typed_fields():
    begins = parse_event(BEGINS, 0, 0.0)
    assert isinstance(begins, P.SimulationBegins)
    assert begins.nb_compute_resources == 2 and begins.compute_resource_ids == [0, 1]
    assert begins.dynamic_jobs_enabled and begins.dynamic_jobs_acknowledged and not begins.profile_reuse_enabled
    sub = parse_event(FROM_BATSIM[1], 0, 599850.0)
    assert (sub.workload, sub.name, sub.subtime, sub.res, sub.walltime, sub.profile_name, sub.user) == \
        ("w0", "0000015", 599850.0, 4, 53940.0, "d3477", 12)
    killed = parse_event(FROM_BATSIM[4], 0, 30.0)
    assert killed.job_ids == ("w0!0000003",)
    call = parse_event(FROM_SCHEDULER[1], 0, 0.0, "scheduler")
    assert call.at == 30.0 and call.timestamp == 0.0


def test_job_without_walltime_or_user():
    raw = {"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!a", "job": {
        "id": "w0!a", "subtime": 1, "res": 1, "profile": "p"}}}
    ev = parse_event(raw, 0, 1.0)
    assert ev.walltime == -1 and ev.user == -1
    assert ev.to_dict() == raw


def test_message_round_trip_and_serialise():
    raw = {"now": 30.0, "events": [FROM_BATSIM[4], FROM_BATSIM[5]]}
    msg = parse_message(raw)
    assert msg.now == 30.0 and [type(e) for e in msg.events] == [P.JobKilled, P.RequestedCall]
    assert msg.to_dict() == raw
    assert P.message(5.0, [P.ExecuteJob(5.0, job_id="w0!1", alloc="0-1")]) == {
        "now": 5.0, "events": [{"timestamp": 5.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1"}}]}
    assert parse_message({"now": 1, "events": []}).events == []


# --- errors ---------------------------------------------------------------------------------


def _submitted(**job):
    base = {"id": "w0!1", "subtime": 1, "res": 1, "walltime": 10, "profile": "p"}
    base.update(job)
    return {"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!1", "job": base}}]}


@pytest.mark.parametrize("raw, expected", [
    ([], "must be a JSON object"),
    ("hello", "must be a JSON object"),
    ({"events": []}, "no field 'now'"),
    ({"now": "x", "events": []}, "field 'now' must be a finite number"),
    ({"now": float("nan"), "events": []}, "field 'now' must be a finite number"),
    ({"now": 1.0}, "field 'events' must be a JSON array"),
    ({"now": 1.0, "events": {}}, "field 'events' must be a JSON array"),
    ({"now": 1.0, "events": [3]}, "event #0: an event must be a JSON object"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "data": {}}]}, "event #0: field 'type' must be a string"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "BOGUS", "data": {}}]},
     "event #0 (BOGUS): unknown event type 'BOGUS'"),
    ({"now": 1.0, "events": [{"type": "REQUESTED_CALL", "data": {}}]}, "missing field 'timestamp'"),
    ({"now": 1.0, "events": [{"timestamp": 2.0, "type": "REQUESTED_CALL", "data": {}}]},
     "timestamp 2.0 is later than the message's now"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "REQUESTED_CALL", "data": []}]},
     "field 'data' must be a JSON object"),
    (_submitted(res="x"), "event #0 (JOB_SUBMITTED): field 'job.res' must be an integer, got 'x'"),
    (_submitted(res=0), "field 'job.res' must be a positive integer, got 0"),
    (_submitted(subtime=None), "field 'job.subtime' must be a finite number"),
    (_submitted(walltime="1h"), "field 'job.walltime' must be a finite number"),
    (_submitted(profile=3), "field 'job.profile' must be a non-empty string"),
    (_submitted(id="w0!2"), "field 'job.id' is 'w0!2' but job_id is 'w0!1'"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {"job_id": "1", "job": {}}}]},
     "field 'job_id' must look like '<workload>!<job name>'"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!1"}}]},
     "missing field 'job'"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_COMPLETED", "data": {
        "job_id": "w0!1", "job_state": "DONE", "return_code": 0, "alloc": "0"}}]}, "field 'job_state' is 'DONE'"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_COMPLETED", "data": {
        "job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "3-1"}}]},
     "field 'alloc' is not an interval set"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_KILLED", "data": {"job_ids": "w0!1"}}]},
     "field 'job_ids' must be a JSON array"),
    ({"now": 1.0, "events": [{"timestamp": 1.0, "type": "NOTIFY", "data": {"type": "whatever"}}]},
     "unknown NOTIFY type 'whatever'"),
    ({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_compute_resources": 3, "compute_resources": []}}]}, "nb_compute_resources is 3 but compute_resources lists 0"),
    ({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_compute_resources": 1, "compute_resources": [{"id": 0}], "config": {"dynamic-jobs-enabled": "yes"}}}]},
     "field 'config.dynamic-jobs-enabled' must be true or false"),
])
def test_malformed_messages_name_the_problem(raw, expected):
    with pytest.raises(ProtocolError) as info:
        parse_message(raw)
    assert expected in str(info.value)


def test_error_names_index_and_type():
    raw = {"now": 30.0, "events": [FROM_BATSIM[5], {"timestamp": 30.0, "type": "JOB_SUBMITTED",
                                                     "data": {"job_id": "w0!1", "job": {"subtime": 1, "res": -2}}}]}
    with pytest.raises(ProtocolError, match=r"^Batsim message at now=30.0, event #1 \(JOB_SUBMITTED\): "):
        parse_message(raw)


def test_event_of_the_other_direction_is_unknown_with_a_hint():
    raw = {"now": 1.0, "events": [FROM_SCHEDULER[0]]}
    with pytest.raises(ProtocolError, match="unknown event type 'EXECUTE_JOB' \\(that is an event the scheduler sends\\)"):
        parse_message(raw, "batsim")
    with pytest.raises(ProtocolError, match="that is an event the batsim sends"):
        parse_message({"now": 1.0, "events": [FROM_BATSIM[5]]}, "scheduler")


def test_kill_job_needs_ids():
    with pytest.raises(ProtocolError, match="job_ids' must not be empty"):
        parse_event({"timestamp": 1.0, "type": "KILL_JOB", "data": {"job_ids": []}}, 0, 1.0, "scheduler")


def test_parsing_does_not_modify_input():
    raw = {"now": 599850.0, "events": [FROM_BATSIM[1]]}
    before = copy.deepcopy(raw)
    parse_message(raw).to_dict()
    assert raw == before


def test_transcripts_round_trip():
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"{TRANSCRIPTS} is not available (the ../shared checkout is missing)")
    count = 0
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            direction = "batsim" if rec["dir"] == "batsim->sched" else "scheduler"
            assert parse_message(rec["msg"], direction).to_dict() == rec["msg"], (path.name, rec["seq"])
            count += 1
    assert count == 296
