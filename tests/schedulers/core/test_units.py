"""Small units of the decision core: machine sets, durations, policy formulas, options."""

from __future__ import annotations

import json
import math

import pytest
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.durations import (
    DurationError,
    format_duration,
    parse_duration,
)
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.policies import REGISTRY, get_policy
from bftune.schedulers.core.polynomial import SHIPPED_DIR as SHIPPED_FITS
from hypothesis import given, settings
from hypothesis import strategies as st


def _ids(intervals):
    return {v for a, b in intervals for v in range(a, b + 1)}


@settings(max_examples=300, deadline=None)
@given(m=st.integers(1, 70), ops=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), max_size=60))
def test_machine_set_behaves_like_a_set_of_ids(m, ops):
    free = ms.MachineSet.full(m)
    model = set(range(m))
    held: list[list[ms.Interval]] = []
    for take, r in ops:
        if take and free.size:
            n = 1 + r % free.size
            alloc = ms.lowest(free.intervals, n)
            assert _ids(alloc) == set(sorted(model)[:n])  # the lowest-numbered free machines
            free.remove(alloc, n if r % 2 else -1)
            model -= _ids(alloc)
            held.append(alloc)
        elif held:
            alloc = held.pop(r % len(held))
            free.add(alloc)
            model |= _ids(alloc)
        assert _ids(free.intervals) == model and free.size == len(model)
        assert free.intervals == ms.normalise(free.intervals)  # sorted, disjoint, not adjacent


def test_interval_text_round_trips_in_batsims_notation():
    assert ms.to_string([(0, 3), (7, 7), (9, 12)]) == "0-3 7 9-12"
    assert ms.parse("43-50 67") == [(43, 50), (67, 67)]
    assert ms.parse("3 1-2") == [(1, 3)]
    assert ms.difference([(0, 9)], [(2, 3), (5, 5)]) == [(0, 1), (4, 4), (6, 9)]


@pytest.mark.parametrize("text, seconds", [("40h", 144000), ("2d", 172800), ("3600", 3600), ("90m", 5400),
                                           ("1w", 604800), ("1.5h", 5400), (" 10 s ", 10), (7200, 7200)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["4x", "h", "-3", "", "1e3", "40 hours", "1M", "40H", "2y", "1month", "nan"])
def test_bad_durations_say_what_is_accepted(text):
    with pytest.raises(DurationError, match="40h"):
        parse_duration(text, "threshold")


def test_infinite_durations_and_formatting():
    assert parse_duration("inf") == math.inf and parse_duration(None) == math.inf and parse_duration("none") == math.inf
    with pytest.raises(DurationError):
        parse_duration("inf", allow_infinite=False)
    assert [format_duration(x) for x in (144000, 86400, 90, 5400, math.inf, 1.5)] == ["40h", "1d", "90s", "90m",
                                                                                     "inf", "1.5s"]


def test_policy_formulas_on_one_job():
    job = Job("0000001", 1, submit=100.0, procs=8, walltime=400.0)
    now = 500.0  # wait = 400
    expect = {
        "FCFS": 100.0, "LCFS": -100.0, "SPF": 400.0, "LPF": -400.0, "SQF": 8.0, "LQF": -8.0,
        "SEXP": (400 + 400) / 400, "LEXP": -(400 + 400) / 400, "SRF": 50.0, "LRF": -50.0, "SAF": 3200.0,
        "LAF": -3200.0, "WFP3": -((400 / 400) ** 3) * 8, "UNICEF": -400 / (3 * 400),
        "F1": math.log10(400) * 8 + 870 * 2, "F2": 20 * 8 + 25600 * 2, "F3": 3200 + 6.86e6 * 2,
        "F4": 400 * math.sqrt(8) + 5.3e5 * 2,
    }
    for family in ("Lin", "Qdr", "Cub", "Qua"):  # the shipped fits: their JSON, evaluated independently
        coefs = json.loads((SHIPPED_FITS / f"{family}.json").read_text())["coefficients"]
        expect[family] = sum(c * eval(f.replace("^", "**"), {"p": 400.0, "q": 8.0, "r": 100.0})  # noqa: S307
                             for f, c in coefs.items())
    assert set(expect) == {p.name for p in REGISTRY.values()}
    for name, value in expect.items():
        assert get_policy(name).key(job, now) == pytest.approx(value), name


def test_policy_guards():
    one = Job("0000001", 1, submit=0.0, procs=1, walltime=10.0)
    assert get_policy("UNICEF").key(one, 20.0) == pytest.approx(-20 / (1 * 10))  # log2(max(q, 2)) = 1
    assert get_policy("F1").key(one, 5.0) == pytest.approx(math.log10(10) * 1)  # log10(max(r, 1)) = 0
    assert get_policy("wfp3").dynamic and not get_policy("saf").dynamic


@pytest.mark.parametrize("options, field", [
    ({"policy": "NOPE"}, "policy"),
    ({"backfill_policy": "X"}, "policy"),
    ({"reservation": "cores"}, "reservation"),
    ({"threshold": "soon"}, "threshold"),
    ({"kill_after": "inf"}, "kill_after"),
    ({"backfill": "yes"}, "backfill"),
    ({"classifier": "svm"}, "classifier"),
    ({"features": "daily", "classifier": "rf"}, "features"),
    ({"polcy": "SAF"}, "unknown option"),
    ({"seed": 1.5}, "seed"),
])
def test_options_are_validated_with_their_name(options, field):
    with pytest.raises(ConfigError, match=field):
        SchedulerConfig.from_options(options)


def test_options_round_trip_through_to_dict():
    cfg = SchedulerConfig.from_options({"policy": "saf", "backfill_policy": "SPF", "threshold": "40h",
                                        "reservation": "machines"})
    d = cfg.to_dict()
    assert d["threshold"] == "40h" and d["reservation"] == "machines"
    assert d["algorithm"] == "EASY[machines](SAF+threshold(40h), SPF+threshold(40h))"
    again = SchedulerConfig.from_options({k: v for k, v in d.items() if k not in ("algorithm", "extra")})
    assert again.describe() == cfg.describe()
