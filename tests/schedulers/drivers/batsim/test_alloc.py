"""Batsim's interval-set notation: procset (the wire format) and the core's fast intervals agree."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from procset import ProcSet

from bftune.schedulers.core import machines as ms
from bftune.schedulers.drivers.batsim.driver import alloc_text

machine_sets = st.sets(st.integers(0, 300), max_size=60)


def intervals_of(ids: set[int]) -> list[tuple[int, int]]:
    return ms.normalise([(i, i) for i in sorted(ids)])


@given(machine_sets)
def test_the_wire_text_equals_the_cores_notation(ids):
    intervals = intervals_of(ids)
    assert alloc_text(intervals) == ms.to_string(intervals) == str(ProcSet(*ids))


@given(machine_sets)
def test_parsing_agrees(ids):
    text = str(ProcSet(*ids))
    assert ms.parse(text) == [(iv.inf, iv.sup) for iv in ProcSet.from_str(text).intervals()]
    assert ms.count(ms.parse(text)) == len(ids)


@given(machine_sets, st.integers(1, 60))  # a job asks for at least one machine
def test_lowest_free_machines_are_procsets_first_ids(ids, q):
    intervals = intervals_of(ids)
    if q > len(ids):
        return
    taken = ms.lowest(intervals, q)
    assert str(ProcSet(*taken)) == str(ProcSet(*sorted(ids)[:q]))
