"""The parse cache: a trace read twice is parsed once, and the cache never changes what is read."""

from __future__ import annotations

import dataclasses
import gzip
import os

import numpy as np
import pytest
from bftune.workloads import parsecache
from bftune.workloads.swf import FAST_PATH_MIN_CHARS, read_swf
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of this test's own."""
    monkeypatch.setenv("BFTUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(parsecache.SWITCH, raising=False)
    return tmp_path / "cache" / "parsed"


@pytest.fixture(scope="module")
def big_swf(tmp_path_factory):
    """A gzipped SWF large enough for the vectorised path and the cache (30,000 jobs, some overruns)."""
    trace = generate(30_000, 128, seed=11)
    jobs = [dataclasses.replace(j, runtime=j.walltime + 5) if i % 97 == 0 else j for i, j in enumerate(trace.jobs)]
    path = tmp_path_factory.mktemp("swf") / "big.swf"
    write_swf(trace.with_jobs(jobs), path)
    gz = path.with_suffix(".swf.gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert gz.stat().st_size >= parsecache.MIN_BYTES and path.stat().st_size >= FAST_PATH_MIN_CHARS
    return gz


def no_parsing(*args, **kwargs):
    raise AssertionError("the file was parsed again")


def test_a_second_read_comes_from_the_cache_and_equals_the_first(cache, big_swf, monkeypatch):
    first = read_swf(big_swf)
    assert len(list(cache.glob("*.npy"))) == 1 and len(list(cache.glob("*.json"))) == 1
    monkeypatch.setattr(np, "loadtxt", no_parsing)
    second = read_swf(big_swf)
    assert second == first


@pytest.mark.parametrize("cleaning", ["keep-overruns", "batsim-converter", "ran"])
def test_every_cleaning_runs_on_the_cached_table(cache, big_swf, monkeypatch, cleaning):
    monkeypatch.setenv(parsecache.SWITCH, "off")
    expected = read_swf(big_swf, cleaning=cleaning)
    monkeypatch.delenv(parsecache.SWITCH)
    read_swf(big_swf)  # fills the cache with SPEC's cleaning
    monkeypatch.setattr(np, "loadtxt", no_parsing)
    cached = read_swf(big_swf, cleaning=cleaning)
    assert cached == expected and cached.cleaning == expected.cleaning
    assert cached.cleaning != read_swf(big_swf).cleaning  # the cleanings do differ on this file


def test_a_changed_file_is_parsed_afresh(cache, big_swf, tmp_path):
    read_swf(big_swf)
    lines = gzip.decompress(big_swf.read_bytes()).decode().splitlines(keepends=True)
    last = lines[-1].split()
    last[3] = str(int(last[3]) + 1)  # one runtime, one second longer
    changed = tmp_path / big_swf.name  # the same name, elsewhere
    changed.write_bytes(gzip.compress("".join(lines[:-1] + [" ".join(last) + "\n"]).encode()))
    a, b = read_swf(big_swf), read_swf(changed)
    assert {j.id: j.runtime for j in b.jobs}[int(last[0])] == {j.id: j.runtime for j in a.jobs}[int(last[0])] + 1
    assert len(list(cache.glob("*.npy"))) == 2


def test_a_damaged_entry_is_ignored(cache, big_swf):
    expected = read_swf(big_swf)
    (table,) = cache.glob("*.npy")
    table.write_bytes(table.read_bytes()[:1000])  # truncated
    assert read_swf(big_swf) == expected
    table.write_bytes(b"not numpy at all")
    assert read_swf(big_swf) == expected


def test_switched_off_nothing_is_written(cache, big_swf, monkeypatch):
    monkeypatch.setenv(parsecache.SWITCH, "off")
    read_swf(big_swf)
    assert not cache.exists()


def test_an_unwritable_cache_changes_nothing(tmp_path, big_swf, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("BFTUNE_CACHE_DIR", str(blocker))
    monkeypatch.delenv(parsecache.SWITCH, raising=False)
    assert len(read_swf(big_swf).jobs) > 29_000


def test_small_files_are_not_cached(cache, tmp_path):
    trace = generate(200, 64, seed=2)
    path = tmp_path / "small.swf"
    write_swf(trace, path)
    read_swf(path)
    assert not cache.exists()


def test_the_least_recently_read_entries_go_first(cache, monkeypatch):
    monkeypatch.setattr(parsecache, "MAX_ENTRIES", 2)
    table = np.zeros((3, 18))
    for n, key in enumerate(("a", "b", "c")):
        parsecache.store(key, table, [f"; {key}"])
        os.utime(cache / f"{key}.npy", (1000 + n, 1000 + n))
        if key == "b":
            assert parsecache.load("a") is not None  # read again: now the most recent
    assert sorted(p.name for p in cache.iterdir()) == ["a.json", "a.npy", "c.json", "c.npy"]
    loaded, header = parsecache.load("c")
    assert header == ["; c"] and loaded.shape == (3, 18)
