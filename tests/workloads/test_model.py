"""The workload model's bulk constructor (workloads/model.py)."""

from __future__ import annotations

import pickle

import pytest
from bftune.workloads.model import JobRecord, records_from_columns


def test_records_from_columns_equal_records_made_by_the_class():
    columns = ([1, 2], [0, 5.5], [4, 1], [10, 3], [20.0, 3], [7, -1], [1, 2], [3, 4], [5, 6], [7, 8], [1, 0], [30, -1])
    made = records_from_columns(*columns)
    expected = [JobRecord(*row) for row in zip(*columns)]
    assert made == expected
    assert [hash(r) for r in made] == [hash(r) for r in expected]
    assert [type(r.submit) for r in made] == [int, float]
    assert pickle.loads(pickle.dumps(made)) == expected
    with pytest.raises(AttributeError):  # still frozen
        made[0].procs = 3


def test_records_from_columns_refuses_ragged_or_missing_columns():
    with pytest.raises(ValueError):
        records_from_columns([1, 2], *([[0]] * 11))
    with pytest.raises(TypeError):
        records_from_columns([1])


def test_records_from_columns_are_job_records_through_and_through():
    """The twin that fills them in gives them JobRecord's class: nothing of it shows."""
    made = records_from_columns([1], [0], [4], [10], [20], [7], [1], [3], [5], [7], [1], [-1])[0]
    assert type(made) is JobRecord
    assert not hasattr(made, "__dict__")
    with pytest.raises(AttributeError):
        made.id = 2
    assert repr(made).startswith("JobRecord(id=1, submit=0,")
