"""The parse cache: a trace read twice is parsed once, and the cache never changes what is read."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import subprocess
import sys
from array import array

import numpy as np
import pytest
from bftune.workloads import parsecache, swf
from bftune.workloads.swf import FAST_PATH_MIN_CHARS, JobRecord, read_swf
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


@pytest.mark.slow
def test_a_second_read_comes_from_the_cache_and_equals_the_first(cache, big_swf, monkeypatch):
    first = read_swf(big_swf)
    assert len(list(cache.glob("*.bin"))) == 1 and len(list(cache.glob("*.json"))) == 1
    monkeypatch.setattr(np, "loadtxt", no_parsing)
    second = read_swf(big_swf)
    assert second == first


@pytest.mark.slow
@pytest.mark.parametrize("cleaning", ["keep-overruns", "batsim-converter", "ran"])
def test_every_cleaning_runs_on_the_cached_table(cache, big_swf, monkeypatch, cleaning):
    monkeypatch.setenv(parsecache.SWITCH, "off")
    expected = read_swf(big_swf, cleaning=cleaning)
    monkeypatch.delenv(parsecache.SWITCH)
    read_swf(big_swf)  # fills the cache with the default cleaning
    monkeypatch.setattr(np, "loadtxt", no_parsing)
    cached = read_swf(big_swf, cleaning=cleaning)
    assert cached == expected and cached.cleaning == expected.cleaning
    assert cached.cleaning != read_swf(big_swf).cleaning  # the cleanings do differ on this file


@pytest.mark.slow
def test_a_changed_file_is_parsed_afresh(cache, big_swf, tmp_path):
    read_swf(big_swf)
    lines = gzip.decompress(big_swf.read_bytes()).decode().splitlines(keepends=True)
    last = lines[-1].split()
    last[3] = str(int(last[3]) + 1)  # one runtime, one second longer
    changed = tmp_path / big_swf.name  # the same name, elsewhere
    changed.write_bytes(gzip.compress("".join(lines[:-1] + [" ".join(last) + "\n"]).encode()))
    a, b = read_swf(big_swf), read_swf(changed)
    assert {j.id: j.runtime for j in b.jobs}[int(last[0])] == {j.id: j.runtime for j in a.jobs}[int(last[0])] + 1
    assert len(list(cache.glob("*.bin"))) == 2


@pytest.mark.slow
def test_a_damaged_entry_is_ignored(cache, big_swf):
    expected = read_swf(big_swf)
    (table,) = cache.glob("*.bin")
    (header,) = cache.glob("*.json")
    whole = table.read_bytes()
    for damaged in (whole[:1000], whole + b"\0" * 8, b"not a table"):
        table.write_bytes(damaged)
        assert read_swf(big_swf) == expected
        table.write_bytes(damaged)  # (the read above stored the entry afresh)
    meta = json.loads(header.read_text())
    for damaged in ({**meta, "rows": -1}, {**meta, "columns": [[0, "x"]]}, {**meta, "header_lines": [3]}, [], "{"):
        header.write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
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
    columns = {0: array("q", [1, 2, 3]), 3: array("d", [0.5, 2.0, -1.0])}
    for n, key in enumerate(("a", "b", "c")):
        parsecache.store(key, columns, [f"; {key}"])
        os.utime(cache / f"{key}.bin", (1000 + n, 1000 + n))
        if key == "b":
            assert parsecache.load("a") is not None  # read again: now the most recent
    assert sorted(p.name for p in cache.iterdir()) == ["a.bin", "a.json", "c.bin", "c.json"]
    loaded, header = parsecache.load("c")
    assert header == ["; c"] and loaded == columns and [c.typecode for c in loaded.values()] == ["q", "d"]


def test_columns_are_stored_as_little_endian_8_byte_values(cache):
    parsecache.store("k", {1: array("q", [-1, 2**40]), 8: array("d", [0.25])}, ["; Note: x"])
    assert (cache / "k.bin").read_bytes() == (-1).to_bytes(8, "little", signed=True) + (2**40).to_bytes(8, "little") \
        + np.float64(0.25).astype("<f8").tobytes()
    assert json.loads((cache / "k.json").read_text()) == \
        {"header_lines": ["; Note: x"], "rows": 2, "columns": [[1, "q"], [8, "d"]]}


def test_only_the_fields_the_cleanings_read_are_kept(cache, big_swf):
    read_swf(big_swf)
    (header,) = cache.glob("*.json")
    assert [field for field, _ in json.loads(header.read_text())["columns"]] == list(swf.CLEANED_FIELDS)


def test_a_warm_read_imports_no_numpy(tmp_path, big_swf):
    """numpy's import alone costs a warm read of CTC-SP2 60 ms and 20 MiB: only a cold read may use it."""
    env = {**os.environ, "BFTUNE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop(parsecache.SWITCH, None)
    code = ("import sys; from bftune.workloads.swf import read_swf; "
            "print(len(read_swf(sys.argv[1]).jobs), 'numpy' in sys.modules)")

    def fresh_process() -> list[str]:
        done = subprocess.run([sys.executable, "-c", code, str(big_swf)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    cold = fresh_process()
    assert cold[1] == "True" and list((tmp_path / "cache" / "parsed").glob("*.bin"))  # parsed, and kept
    assert fresh_process() == [cold[0], "False"]


def test_an_entry_of_the_old_format_is_ignored_and_evicted_first(cache, big_swf, monkeypatch):
    expected = read_swf(big_swf)
    for entry in list(cache.iterdir()):
        entry.unlink()
    digest = hashlib.blake2b(big_swf.read_bytes(), digest_size=16).hexdigest()
    wrong = np.zeros((3, 18))  # what FORMAT 1 kept: one .npy table of the 18 fields (here a wrong one)
    np.save(cache / f"v1-{digest}.npy", wrong)
    (cache / f"v1-{digest}.json").write_text(json.dumps(["; MaxProcs: 4"]))
    assert read_swf(big_swf) == expected
    assert (cache / f"v{parsecache.FORMAT}-{digest}.bin").exists()
    monkeypatch.setattr(parsecache, "MAX_ENTRIES", 1)
    parsecache.store("another", {0: array("q", [1])}, [])
    assert sorted(p.name for p in cache.iterdir()) == ["another.bin", "another.json"]


def test_old_format_content_under_a_current_name_is_ignored(cache, big_swf):
    expected = read_swf(big_swf)
    (header,) = cache.glob("*.json")
    header.write_text(json.dumps(expected.header_lines))  # FORMAT 1's header: a bare list of lines
    assert read_swf(big_swf) == expected


# --- every path runs the same cleaning ----------------------------------------------------------

HAND_MADE_HEADER = "; MaxProcs: 8\n; UnixStartTime: 100\n; Note: hand-made, one line per case\n"


def swf_line(*fields) -> str:
    return " ".join(str(x) for x in list(fields) + [-1] * (18 - len(fields)))


#: id, submit, wait, runtime, alloc, avg cpu, memory, requested procs, requested time, req. memory, status, user
HAND_MADE = [
    swf_line(1, 0, -1, 10.5, 2, 3.25, -1, 2, 20, -1, 1, 7),  # fractional runtime: converter raises to int 21
    swf_line(2, 5, -1, 0, 1, -1, -1, 1, 20),  # runtime 0: ran raises it to 1
    swf_line(3, 5, -1, 30, 9, -1, -1, 9, 40),  # too wide
    swf_line(4, 6, -1, 30, 1, -1, -1, -1, 20),  # overrun, procs from field 5
    swf_line(5, 6, -1, 30, -1, -1, -1, 2, 40),  # requested procs only: never started
    swf_line(6, 7, -1, 30, 1, -1, -1, 1, -1),  # no requested time
    swf_line(7, 8, -1, 30, 1, -1, -1, 1, 45),  # request below 2 x runtime
    swf_line(8, -1, -1, 30, 1, -1, -1, 1, 40),  # negative submit
    swf_line(9, 9, -1, 30, -1, -1, -1, -1, 40),  # no processors at all
    swf_line(10, 9, -1, -1, 2, -1, -1, 2, 40),  # runtime not recorded
    swf_line(11, 9.5, -1, 0.3, 1, -1, -1, 1, 0.5),  # under a second; the converter's delay 1 > walltime 0.6
    swf_line(13, 3, -1, 12, 8, -1, -1, 8, 12.0),  # out of (submit, id) order, a request written "12.0"
    swf_line(12, 3, -1, 12, 8, -1, -1, 8, 12),  # a tie on submit, ids out of order
    swf_line(14, 4, -1, 600, 4, -1, -1, 4, 3600, -1, 0, 5),
]
#: Every cleaning, as read_swf's keyword arguments.
CLEANING_ARGS = [{"cleaning": c} for c in swf.CLEANINGS] + [{"walltime_fallback": "runtime"}]


def field_types(trace) -> list[tuple[type, ...]]:
    return [tuple(type(getattr(job, f)) for f in JobRecord.__slots__) for job in trace.jobs]


@pytest.mark.parametrize("kwargs", CLEANING_ARGS, ids=[str(k) for k in CLEANING_ARGS])
def test_cache_fast_path_and_careful_path_clean_alike(cache, tmp_path, monkeypatch, kwargs):
    path = tmp_path / "hand.swf.gz"
    path.write_bytes(gzip.compress((HAND_MADE_HEADER + "\n".join(HAND_MADE) + "\n").encode()))
    monkeypatch.setattr(parsecache, "MIN_BYTES", 0)
    reads = {}
    monkeypatch.setenv(parsecache.SWITCH, "off")
    monkeypatch.setattr(swf, "FAST_PATH_MIN_CHARS", float("inf"))
    reads["careful"] = read_swf(path, **kwargs)
    monkeypatch.setattr(swf, "FAST_PATH_MIN_CHARS", 0)
    reads["fast"] = read_swf(path, **kwargs)
    monkeypatch.delenv(parsecache.SWITCH)
    reads["cold"] = read_swf(path, **kwargs)
    assert list(cache.glob("*.bin"))
    monkeypatch.setattr(np, "loadtxt", no_parsing)
    reads["warm"] = read_swf(path, **kwargs)
    careful = reads["careful"]
    for how, trace in reads.items():
        assert trace.jobs == careful.jobs, how
        assert field_types(trace) == field_types(careful), how
        assert (trace.cleaning, trace.header, trace.header_lines) == \
            (careful.cleaning, careful.header, careful.header_lines), how
    assert [job.id for job in careful.jobs][:3] == [1, 12, 13]  # sorted by (submit, id)
    assert {"kept": len(careful), **{k: v for k, v in careful.cleaning.items() if v}} == EXPECTED[str(kwargs)]


#: Worked out by hand from the comments of HAND_MADE and the module docstring of bftune.workloads.swf.
EXPECTED = {
    "{'cleaning': 'drop-overruns'}": {"kept": 7, "negative_submit": 1, "missing_procs": 1, "procs_gt_machine": 1,
                             "runtime_le_0": 2, "walltime_le_0": 1, "walltime_lt_runtime": 1},
    "{'cleaning': 'keep-overruns'}": {"kept": 9, "negative_submit": 1, "missing_procs": 1, "procs_gt_machine": 1,
                                      "runtime_le_0": 2, "walltime_from_runtime": 1, "overruns_kept": 1},
    "{'cleaning': 'batsim-converter'}": {"kept": 8, "negative_submit": 1, "missing_procs": 2,
                                         "procs_gt_machine": 1, "runtime_le_0": 2, "walltime_raised": 7},
    "{'cleaning': 'ran'}": {"kept": 10, "negative_submit": 1, "missing_procs": 1, "procs_gt_machine": 1,
                            "never_started": 1, "walltime_from_runtime": 1, "overruns_kept": 1,
                            "runtime_raised": 2},
    "{'cleaning': 'ran-overruns-finish'}": {"kept": 10, "negative_submit": 1, "missing_procs": 1,
                                            "procs_gt_machine": 1, "never_started": 1, "walltime_from_runtime": 1,
                                            "walltime_raised": 1, "runtime_raised": 2},
    "{'walltime_fallback': 'runtime'}": {"kept": 8, "negative_submit": 1, "missing_procs": 1,
                                         "procs_gt_machine": 1, "runtime_le_0": 2, "walltime_from_runtime": 1,
                                         "walltime_lt_runtime": 1},
}


def test_the_converter_raises_a_fractional_runtime_to_an_int_walltime(cache, tmp_path):
    trace = swf.parse_swf(HAND_MADE_HEADER + "\n".join(HAND_MADE) + "\n", cleaning="batsim-converter")
    first = {job.id: job for job in trace.jobs}[1]
    assert (first.runtime, first.walltime) == (11, 21) and type(first.walltime) is int
    under_a_second = {job.id: job for job in trace.jobs}[11]
    assert (under_a_second.runtime, under_a_second.walltime) == (1, 0.6)  # kept, as Batsim's converter does
