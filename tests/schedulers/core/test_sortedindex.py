"""The sorted index of waiting and running jobs (schedulers/core/sortedindex.py), against a sorted list."""

from __future__ import annotations

import bisect
import pickle

import pytest
from bftune.schedulers.core import search
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.ordering import Order, RankKey, _StaticKey
from bftune.schedulers.core.policies import REGISTRY
from bftune.schedulers.core.sortedindex import FunctionKey, SortedIndex
from hypothesis import given, settings
from hypothesis import strategies as st


class Item:
    """An indexed thing with a key of its own (items are told apart by identity, as jobs are)."""

    def __init__(self, key: tuple) -> None:
        self.key = key


def _key(item: Item) -> tuple:
    return item.key


# Heads with many ties (the walk among equal heads), ints beyond 2**53 (they round to shared floats), floats.
heads = st.one_of(st.integers(0, 4), st.integers(2**53, 2**53 + 6), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=300, deadline=None)
@pytest.mark.slow
@given(ops=st.lists(st.tuples(st.booleans(), heads, st.integers(0, 10**6)), max_size=80),
       compiled_loops=st.booleans())
def test_index_stays_sorted_like_a_sorted_list(ops, compiled_loops):
    # Interpreted, the bisections are the C ones; the loops used when compiled are checked here too.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search, "COMPILED", compiled_loops)
        _check_against_a_sorted_list(ops)


def _check_against_a_sorted_list(ops) -> None:
    index: SortedIndex[Item] = SortedIndex(_key)
    model: list[tuple] = []
    for seq, (add, head, r) in enumerate(ops):
        if add or not model:
            item = Item((head, seq))  # unique keys: the job's seq ends every key
            index.add(item)
            bisect.insort(model, (item.key, seq, item))
        else:
            _, _, item = model.pop(r % len(model))
            index.remove(item)
        assert [it for _, _, it in model] == index.items
        assert index.keys == [k for k, _, _ in model]
        probe = (head, r % (len(ops) + 1))
        assert index.above(probe) == [it for k, _, it in model if k > probe]


def test_index_built_from_items_equals_one_built_by_adding():
    items = [Item((h, i)) for i, h in enumerate([3, 1.5, 3, 0, 2**53 + 1, 2**53])]
    built = SortedIndex(FunctionKey(_key), items)
    added: SortedIndex[Item] = SortedIndex(_key)
    for item in items:
        added.add(item)
    assert built.items == added.items == sorted(items, key=_key)


def test_removing_an_absent_item_says_so():
    index: SortedIndex[Item] = SortedIndex(_key, [Item((1, 0))])
    with pytest.raises(KeyError):
        index.remove(Item((1, 0)))  # an equal key, but not the indexed item


def test_index_keys_pickle():
    key = RankKey(Order.of("SAF", 3600.0))
    assert pickle.loads(pickle.dumps(key)).order == key.order


@pytest.mark.parametrize("by_class", [False, True])
@pytest.mark.parametrize("name", [name for name, policy in sorted(REGISTRY.items()) if not policy.dynamic])
def test_a_static_orders_index_key_is_the_orders_key(name, by_class):
    """The waiting queue's index calls a formula policy's score itself: it must give ``Order.key`` exactly.

    (Dynamic orders are sorted at each pass, never indexed.)"""
    policy = REGISTRY[name]
    order = Order(policy, by_class=by_class)
    jobs = [Job("0000001", 1, 10.0, 4, 3600.0, qclass=1), Job("0000002", 2, 0.0, 1, 60.0, estimate=30.0),
            Job("0000003", 3, 5.5, 16, 7200.0, qclass=0)]
    key = _StaticKey(order)
    assert [key.of(job) for job in jobs] == [order.key(job, 0.0) for job in jobs]
