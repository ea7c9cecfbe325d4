"""A campaign plan is counted before it is built (issue 42, item 7).

An offline campaign of ~38.9 M runs once built every run (5.8 GB, a MemoryError after 138 s) before the
100,000-run limit was checked.  Each kind now counts its runs from the sizes of its lists: these tests make
building a run fail, so a refusal that came after building would show up as the wrong error.
"""

from __future__ import annotations

import pytest

from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.campaign.kinds import classification, index, offline, online, pveasy
from bftune.experiments.campaign.limits import MAX_RUNS, check_run_count
from bftune.experiments.campaign.specs import CampaignError

THRESHOLDS = [f"{s}s" for s in range(1, 3000)]  # 2 halves x 2,999 x 7^2 = 293,902 runs
ERRORS = [round(k / 1000, 3) for k in range(1, 200)]  # 199 errors x 1,000 seeds x 3 virtual = 597,000 runs

TOO_BIG = {
    "offline": {"campaign": {"kind": "offline"}, "workload": {"trace": "synthetic:100:8"},
                "offline": {"weeks": 1, "thresholds": THRESHOLDS}},
    "pv-easy": {"campaign": {"kind": "pv-easy"},
                "pv-easy": {"traces": ["synthetic:100:8"], "virtual_errors": ERRORS, "virtual_seeds": 1000}},
    "index": {"campaign": {"kind": "index"},
              "index": {"traces": ["synthetic:100:8"], "lublin_sequences": 0,
                        "policies": ["FCFS", "SAF"]}},
}


class Built(Exception):
    """A run was built: the count came too late."""


def _refuse_building(*args, **kwargs):
    raise Built


@pytest.fixture
def no_run_built(monkeypatch):
    for module in (offline, pveasy, classification, index, online):
        monkeypatch.setattr(module, "RunSpec", _refuse_building)


def test_the_limit_is_stated_in_one_line():
    assert check_run_count(MAX_RUNS) is None
    assert check_run_count(MAX_RUNS + 1) == f"{MAX_RUNS + 1:,} runs: at most {MAX_RUNS:,} in one campaign " \
                                            "(split it into several)"


@pytest.mark.parametrize("kind", ["offline", "pv-easy"])
def test_a_huge_plan_is_refused_before_any_run_is_built(kind, no_run_built):
    with pytest.raises(CampaignError, match=r"runs: at most 100,000 in one campaign") as err:
        campaign_from_dict(TOO_BIG[kind], "big.toml")
    assert str(err.value).startswith(f"big.toml: [{kind}] ") and "\n" not in str(err.value)


def test_a_plan_within_the_limit_is_still_built(no_run_built):
    small = {**TOO_BIG["offline"], "offline": {"weeks": 1, "thresholds": ["none"], "policies": ["FCFS"]}}
    with pytest.raises(Built):  # counted, allowed, then built
        campaign_from_dict(small, "small.toml")


def test_classification_and_index_count_before_building(no_run_built, monkeypatch):
    monkeypatch.setattr("bftune.experiments.campaign.limits.MAX_RUNS", 3)
    cls = {"campaign": {"kind": "classification"},
           "classification": {"traces": ["synthetic:100:8"], "policies": ["FCFS", "SPF"]}}
    with pytest.raises(CampaignError, match=r"\[classification\] policies: 1 traces x 2 policies x \d variants"):
        campaign_from_dict(cls, "c.toml")
    with pytest.raises(CampaignError, match=r"\[index\] policies: 1 sources x 2 policies"):
        campaign_from_dict(TOO_BIG["index"], "i.toml")
