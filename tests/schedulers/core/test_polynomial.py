"""Learned index functions in the core: JSON validation, formula, ordering, configuration."""

from __future__ import annotations

import json
import math

import pytest
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.ordering import Order, WaitingQueue
from bftune.schedulers.core.policies import REGISTRY, UnknownPolicyError, get_policy
from bftune.schedulers.core.polynomial import (
    FAMILIES,
    IndexFunctionError,
    feature_name,
    parse_feature,
    policy_from_dict,
)

FIT = {"format": "bftune-index-function/1", "features": ["1", "p", "q", "r", "p*q"],
       "coefficients": {"1": 0.5, "p": 1e-3, "q": -2e-2, "r": 1e-4, "p*q": 1e-5}}


def test_features_parse_and_print_canonically():
    assert parse_feature("1") == (0, 0, 0)
    assert parse_feature("p^2*q") == (2, 1, 0) and parse_feature("q * p^2") == (2, 1, 0)
    assert feature_name((1, 3, 0)) == "p*q^3" and feature_name((0, 0, 4)) == "r^4"
    for bad in ("x", "p^0", "p^^2", "", "p*", "2*p"):
        with pytest.raises(ValueError):
            parse_feature(bad)


def fit_file(tmp_path, data, name="fit.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return f"learned:{path}"


def test_learned_policy_orders_a_queue_exactly_as_its_formula(tmp_path):
    policy = get_policy(fit_file(tmp_path, FIT))
    jobs = [Job(f"{i:07d}", i, submit=float(r), procs=q, walltime=float(p))
            for i, (r, q, p) in enumerate([(0, 1, 3600), (10, 64, 60), (20, 8, 600), (30, 2, 10), (40, 32, 7200),
                                          (50, 16, 100), (60, 4, 30000)])]

    def formula(job):  # the JSON's polynomial, written out by hand, p~ in place of p
        p, q, r = job.estimate, job.procs, job.submit
        return 0.5 + 1e-3 * p - 2e-2 * q + 1e-4 * r + 1e-5 * p * q

    for job in jobs:
        assert policy.key(job, 1e6) == pytest.approx(formula(job), rel=1e-12)
    queue = WaitingQueue()
    for job in jobs:
        queue.add(job)
    order = queue.ordered(Order.of(policy), now=100.0)
    assert [j.id for j in order] == [j.id for j in sorted(jobs, key=lambda j: (formula(j), j.submit, j.seq))]
    assert not policy.dynamic and "p = p~" in policy.formula


def test_learned_policy_in_configurations(tmp_path):
    spec = fit_file(tmp_path, FIT)
    config = SchedulerConfig.from_options({"policy": spec, "threshold": "40h"})
    assert config.policy == spec and config.orders()[0].policy.name == spec
    again = {k: v for k, v in config.to_dict().items() if k != "algorithm"}
    assert SchedulerConfig.from_options(again).policy == spec  # the name round-trips through to_dict
    sel = SchedulerConfig.from_options({"selector": "full", "candidates": f"FCFS,{spec},lin"})
    assert sel.candidates == ["FCFS", spec, "Lin"]  # a path keeps its case; names take the registry's
    with pytest.raises(ConfigError, match="policy: .*no such file"):
        SchedulerConfig.from_options({"policy": "learned:/nonexistent/fit.json"})


@pytest.mark.parametrize("data, message", [
    ({"coefficients": {}}, "coefficients: expected a non-empty object"),
    ({"name": "x"}, "coefficients: missing"),
    ({"coefficients": {"1": 1.0, "p": None}}, r"coefficients\.p: expected a number"),
    ('{"coefficients": {"1": 1.0, "q": NaN}}', r"coefficients\.q: not a finite number"),
    ('{"coefficients": {"1": 1.0, "r": Infinity}}', r"coefficients\.r: not a finite number"),
    ({"coefficients": {"1": 1.0, "w": 2.0}}, r"coefficients\.w: unknown feature"),
    ({"coefficients": {"p*q": 1.0, "q*p": 2.0}}, r"coefficients\.q\*p: the same feature as 'p\*q'"),
    ({"features": ["1", "p"], "coefficients": {"1": 1.0}}, r"coefficients\.p: missing \(listed in features\)"),
    ({"features": ["1"], "coefficients": {"1": 1.0, "q": 1.0}}, r"coefficients\.q: not listed in features"),
    ({"format": "other/2", "coefficients": {"1": 1.0}}, "format: expected"),
    ("[1, 2]", "expected a JSON object"),
    ("{nope", "not valid JSON"),
])
def test_bad_fit_files_name_the_field(tmp_path, data, message):
    with pytest.raises(UnknownPolicyError, match=message):
        get_policy(fit_file(tmp_path, data))
    with pytest.raises(IndexFunctionError):
        policy_from_dict({"coefficients": {"1": math.nan}}, "x", "x.json")


def test_shipped_fits_are_named_policies():
    for family in FAMILIES:
        policy = REGISTRY[family.upper()]
        assert policy.name == family and not policy.dynamic
        assert get_policy(family.lower()) is policy
        coefs = policy.coefficients
        assert "1" in coefs and all(math.isfinite(c) for c in coefs.values())
    assert len(REGISTRY["QUA"].coefficients) == 19
