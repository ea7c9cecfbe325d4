"""What the tests of archive traces share: the skip without ../shared, and a small online campaign config."""

from __future__ import annotations

import pytest
from locations import SHARED_WORKLOADS

needs_shared = pytest.mark.skipif(not (SHARED_WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").exists(),
                                  reason="the ../shared workload archive is missing")

#: One resample of two weeks, two fixed policies: the smallest campaign that reads its trace.
ONLINE = """[campaign]
kind = "online"
seed = 1

[workload]
trace = "{trace}"

[online]
resamples = 1
weeks = 2
fixed = ["FCFS", "SPF"]
selectors = []
"""
