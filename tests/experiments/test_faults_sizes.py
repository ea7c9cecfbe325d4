"""Fault families 4 and 5: seeds, sizes and units are checked before any work, by every entry point.

A negative seed, a machine larger than any archive system, a job count or
resampling length that cannot fit in memory, a selection period far shorter
than a job, and a duration whose unit could mean two things are each one
line naming the flag and exit status 2 - and the same limits hold for the
Python API (the synthetic generator, resampling, the readers, the platform
generator), so campaign files and scripts get them too.
"""

from __future__ import annotations

import json

import pytest
from bftune.experiments.cli.main import main
from bftune.platforms.generator import platform_xml
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.workloads import limits
from bftune.workloads.batsim_json import read_batsim_workload
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import WEEK, JobRecord, Trace
from bftune.workloads.resample import resample
from bftune.workloads.swf import parse_swf
from bftune.workloads.synthetic import generate

HUGE = "100000000000"


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bftune: error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, message", [
    # negative seeds, in every command that takes one
    (["simulate", "--synthetic", "500", "--seed", "-1"], "--seed: expected an integer >= 0"),
    (["resample", "--synthetic", "3000", "--weeks", "2", "--seed", "-1", "--out", "x.swf"], "--seed: expected"),
    (["convert", "--synthetic", "50", "--seed", "-1", "--out", "c"], "--seed: expected an integer >= 0"),
    (["demo", "--seed", "-1"], "--seed: expected an integer >= 0"),
    (["simulate", "--synthetic", "50", "--seed", "1.5"], "--seed: expected an integer"),
    (["simulate", "--synthetic", "50", "--seed", str(2**64)], "--seed: expected an integer <="),
    # sizes
    (["simulate", "--synthetic", HUGE], f"--synthetic = {HUGE} is more than bftune accepts (10,000,000"),
    (["convert", "--synthetic", "50", "--procs", "1000000000", "--out", "c"], "--procs = 1000000000 is more"),
    (["resample", "--synthetic", "3000", "--weeks", "100000000", "--out", "x.swf"], "--weeks = 100000000 is more"),
    (["simulate", "--synthetic", "200", "--procs", "0"], "--procs must be a positive integer, not 0"),
    (["simulate", "--synthetic", "-5"], "--synthetic must be a positive integer"),
    (["demo", "--jobs", "0"], "--jobs must be a positive integer"),
    (["demo", "--procs", "2000000"], "--procs = 2000000 is more"),
    (["resample", "--synthetic", "3000", "--weeks", "0", "--out", "x.swf"], "--weeks must be a positive integer"),
    # periods far shorter than a job, and units that could mean two things
    (["simulate", "--synthetic", "50", "--selector", "bandit", "--period", "1"], "--period: '1' is shorter than 1h"),
    (["simulate", "--synthetic", "50", "--selector", "bandit", "--period", "59m"], "shorter than 1h"),
    (["simulate", "--synthetic", "50", "--selector", "bandit", "--period", "1M"], "unit 'M' is not accepted"),
    (["simulate", "--synthetic", "50", "--threshold", "40H"], "units are lowercase, 'h' means hours"),
    (["simulate", "--synthetic", "50", "--selector", "full", "--period", "1mo"], "months and years have no fixed"),
    (["simulate", "--synthetic", "50", "--threshold", "1y"], "write 30d or 52w"),
])
def test_bad_sizes_are_one_line_before_any_work(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in one_error_line(capsys)
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_the_shortest_period_is_accepted(tmp_path):
    out = tmp_path / "o"
    assert main(["simulate", "--synthetic", "80", "--procs", "16", "--selector", "bandit", "--period", "1h",
                 "--out", str(out)]) == 0
    assert json.loads((out / "summary.json").read_text())["config"]["period"] == "1h"


def test_the_option_table_holds_the_period_limit_for_every_entry_point():
    for options in ({"selector": "bandit", "period": 1}, {"selector": "bandit", "period": "10m"}):
        with pytest.raises(ConfigError, match="shorter than 1h"):
            SchedulerConfig.from_options(options)  # pybatsim -o and campaign TOML come in this way
    with pytest.raises(ConfigError, match="unit 'M'"):
        SchedulerConfig.from_options({"selector": "bandit", "period": "1M"})


def test_the_api_refuses_what_the_cli_refuses():
    with pytest.raises(WorkloadError, match="seed must be an integer in 0..2\\^32-1"):
        generate(10, 8, -1)
    with pytest.raises(WorkloadError, match="n_jobs = 100000000000 is more"):
        generate(10**11, 8, 1)
    with pytest.raises(WorkloadError, match="procs = 1073741824 is more"):
        generate(10, 2**30, 1)
    with pytest.raises(ValueError, match="1,048,576"):
        platform_xml(limits.MAX_PROCS + 1)
    with pytest.raises(WorkloadError, match="header MaxProcs = 1000000000 is more"):
        parse_swf("; MaxProcs: 1000000000\n1 0 -1 10 1 -1 -1 1 20 -1 1 1 -1 -1 -1 -1 -1 -1\n", source="big.swf")


def test_resampling_refuses_more_jobs_than_fit(tmp_path):
    # 2,000 jobs in one whole week: 10,000 weeks of them would be 20 million jobs.
    jobs = [JobRecord(i, i * 100, 1, 10, 20, user=i % 7) for i in range(1, 2001)]
    jobs.append(JobRecord(2001, int(1.5 * WEEK), 1, 10, 20, user=1))
    trace = Trace(jobs=jobs, max_procs=4, name="dense")
    with pytest.raises(WorkloadError, match="20,000,000 jobs, more than bftune accepts"):
        resample(trace, limits.MAX_WEEKS, 1)
    with pytest.raises(WorkloadError, match="seed must be"):
        resample(trace, 2, -1)
    assert len(resample(trace, 2, 1).jobs) == 4000


def test_a_batsim_workload_larger_than_any_machine(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"nb_res": 10**9, "jobs": [], "profiles": {}}))
    with pytest.raises(WorkloadError, match="'nb_res' = 1000000000 is more"):
        read_batsim_workload(path)
