"""The Slurm dump options on the command line, in campaign configs and in tune (issue 38): --partition,
--cores-per-node, --sacct-format/--sacct-delimiter, --cluster, --overrun-grace reach the reader everywhere."""

from __future__ import annotations

import dataclasses
import json

import pytest
from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.cli.main import main
from bftune.experiments.runs.tables import read_out_jobs
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate
from slurm_dump import swf_to_slurm

HEADER = "JobID|User|Partition|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|State|AllocTRES"
ROWS = [
    "1|alice|cpu|2025-01-01T00:00:00|2025-01-01T00:00:10|2025-01-01T01:00:10|01:00:00|02:00:00|8|1|COMPLETED|cpu=8,node=1",
    "2|bob|gpu|2025-01-01T00:01:00|2025-01-01T00:02:00|2025-01-01T00:32:00|00:30:00|01:00:00|4|1|COMPLETED|"
    "cpu=4,gres/gpu=1,node=1",
    "3|carol|cpu|2025-01-01T00:02:00|2025-01-01T01:00:10|2025-01-01T03:00:40|02:00:30|02:00:00|16|2|TIMEOUT|"
    "cpu=16,node=2",
    "4|dave|gpu|2025-01-01T00:03:00|2025-01-01T00:33:00|2025-01-01T00:43:00|00:10:00|01:00:00|4|1|COMPLETED|"
    "cpu=4,gres/gpu=2,node=1",
    "5|erin|cpu|2025-01-01T00:04:00|2025-01-01T00:05:00|2025-01-01T00:15:00|00:10:00|00:30:00|8|1|COMPLETED|cpu=8,node=1",
]


@pytest.fixture
def dump(tmp_path):
    path = tmp_path / "jobs.sacct"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n")
    return path


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_a_partition_on_its_machine_size(dump, tmp_path, capsys):
    assert main(["simulate", "--trace", str(dump), "--partition", "cpu", "--procs", "32", "--out",
                 str(tmp_path / "s")]) == 0
    summary = _summary(tmp_path / "s")
    assert summary["jobs"] == 3 and summary["m"] == 32
    assert summary["cleaning"]["other_partition"] == 2 and summary["cleaning"]["runtime_capped_at_limit"] == 1
    assert "TRES" not in capsys.readouterr().out  # the GPU jobs are the other partition's


def test_whole_node_allocation(dump, tmp_path):
    assert main(["simulate", "--trace", str(dump), "--partition", "cpu", "--cores-per-node", "16", "--procs", "64",
                 "--out", str(tmp_path / "s")]) == 0
    jobs = read_out_jobs(tmp_path / "s" / "out_jobs.csv")
    assert sorted(jobs["requested_number_of_resources"]) == [16, 16, 32]  # NNodes x 16


def test_gpu_jobs_are_said_in_the_summary(dump, capsys):
    assert main(["simulate", "--trace", str(dump), "--partition", "gpu"]) == 0
    assert "TRES          2 jobs asked for GPUs or other TRES: bftune schedules processors only" in \
        capsys.readouterr().out


def test_a_headerless_dump_with_its_format_and_delimiter(dump, tmp_path):
    bare = tmp_path / "bare.txt"
    bare.write_text("\n".join(row.replace("|", ";") for row in ROWS) + "\n")
    argv = ["--sacct-format", HEADER.replace("|", ","), "--sacct-delimiter", ";"]
    assert main(["simulate", "--trace", str(bare), *argv, "--out", str(tmp_path / "a")]) == 0
    assert main(["simulate", "--trace", str(dump), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "out_jobs.csv").read_text() == (tmp_path / "b" / "out_jobs.csv").read_text()


def test_the_grace_is_an_option(dump, tmp_path):
    assert main(["simulate", "--trace", str(dump), "--overrun-grace", "0", "--out", str(tmp_path / "s")]) == 0
    assert _summary(tmp_path / "s")["cleaning"]["walltime_lt_runtime"] == 1


@pytest.mark.parametrize("argv, message", [
    (["--cores-per-node", "x"], "--cores-per-node must be a positive integer"),
    (["--overrun-grace", "-5"], "--overrun-grace"),
    (["--partition", ","], "--partition: give one partition name or more"),
])
def test_bad_values_are_one_line(dump, capsys, argv, message):
    assert main(["simulate", "--trace", str(dump), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_dump_options_refused_for_an_swf_trace(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    write_swf(generate(50, 8, seed=1), swf)
    assert main(["simulate", "--trace", str(swf), "--partition", "cpu"]) == 2
    assert "applies to Slurm accounting dumps only" in capsys.readouterr().err


def test_campaign_configs_take_them_and_they_are_part_of_the_run(dump):
    def config(**keys):
        return {"campaign": {"kind": "online"}, "workload": {"trace": str(dump), **keys},
                "online": {"resamples": 1, "weeks": 1}}

    plain, cpu = campaign_from_dict(config()), campaign_from_dict(config(partition="cpu", cores_per_node=16))
    assert cpu.specs[0].dump == {"partitions": ["cpu"], "cores_per_node": 16}
    assert plain.specs[0].dump == {} and "dump" not in plain.specs[0].identity()
    assert {s.run_id for s in plain.specs}.isdisjoint(s.run_id for s in cpu.specs)
    with pytest.raises(CampaignError, match=r"\[workload\] partition: expected a partition name"):
        campaign_from_dict(config(partition=[]))
    with pytest.raises(CampaignError, match=r"\[workload\] overrun_grace"):
        campaign_from_dict(config(overrun_grace="soon"))


@pytest.mark.slow
def test_tune_on_one_partition_names_it_and_its_forms_carry_the_option(tmp_path):
    trace = generate(4000, 16, seed=1)
    trace = trace.with_jobs([dataclasses.replace(j, partition=1 + j.id % 2) for j in trace.jobs])
    swf = tmp_path / "t.swf"
    write_swf(trace, swf)
    dump = tmp_path / "t.sacct"
    swf_to_slurm(swf, dump)
    out = tmp_path / "o"
    assert main(["tune", "--trace", str(dump), "--partition", "p1", "--procs", "16", "--weeks", "8",
                 "--policies", "FCFS,SPF", "--budget", "5m", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    record = json.loads((out / "recommendation.json").read_text())
    assert record["data"]["name"].endswith("(partition p1)")
    assert record["data"]["cleaning"]["other_partition"] > 1000
    assert "--partition p1" in record["forms"]["simulate"]


def test_users_keep_their_names_for_the_reports(dump, tmp_path):
    """tune named users by an internal number ("user 62" was the dump's user64): the trace carries the names,
    also through an SWF file written from it."""
    from bftune.workloads.read import read_workload
    from bftune.workloads.slurm import user_names

    trace = read_workload(dump)
    names = user_names(trace)
    assert names == {1: "alice", 2: "bob", 3: "carol", 4: "dave", 5: "erin"}
    assert {names[j.user] for j in trace.jobs} == set(names.values())
    swf = tmp_path / "t.swf"
    write_swf(trace, swf)
    assert user_names(read_workload(swf)) == names
