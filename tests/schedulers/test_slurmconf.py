"""slurm.conf in and out (schedulers/slurmconf.py): Slurm's file idioms read, bad values in one line, diffs that
change only what differs and round-trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.option import ConfigError
from bftune.schedulers.options import OPTIONS
from bftune.schedulers.slurmconf import (SLURM_KEYS, conf_diff, expand_hostlist, fragment, parse_slurm_conf,
                                         read_slurm_conf, slurm_time, slurm_value)

SITE = Path(__file__).parent / "data" / "slurm.conf"


def test_a_sites_file_gives_its_priority_and_backfill_settings():
    conf = read_slurm_conf(SITE)
    assert conf.options == {
        "scheduler": "slurm", "scheduler_type": "sched/backfill", "bf_window": 2880 * 60.0, "bf_max_job_test": 1000,
        "default_queue_depth": 200, "priority_type": "priority/multifactor",
        "priority_decay_half_life": 14 * 86400.0, "priority_max_age": 7 * 86400.0, "priority_favor_small": False,
        "priority_weight_age": 1000, "priority_weight_fairshare": 10000, "priority_weight_job_size": 500,
        "priority_weight_partition": 1000, "priority_weight_qos": 0}
    assert conf.lines["priority_weight_age"] == f"{SITE}:37"  # written in lower case on line 37
    config = conf.config()
    assert config["scheduler"] == "slurm" and config["bf_window"] == 2 * 86400


def test_other_keys_are_named_once_and_node_lines_count_cpus():
    conf = read_slurm_conf(SITE)
    assert conf.ignored[:3] == ["ClusterName", "SlurmctldHost", "SlurmUser"]
    assert "SelectType" in conf.ignored and "NodeName" in conf.ignored
    assert "RealMemory" not in conf.ignored and "CPUs" not in conf.ignored  # a node's own keys, not the file's
    assert conf.unmodelled == ["SchedulerParameters:bf_continue",
                               "NodeName CPUs=4,8 (nodes differ: node_cpus left at 1)"]
    assert "node_cpus" not in conf.options
    # NodeName=DEFAULT gives 2 x 4 x 1 = 8 CPUs to tn01-02 (continued line); tn03-04 say CPUs=4
    assert (conf.nodes, conf.node_cpus) == (4, 24)
    assert conf.partitions == {"batch": 24, "debug": 8}
    notes = conf.notes()
    assert notes[0].startswith(f"slurm.conf: ignored {len(conf.ignored)} keys not about priority or backfill: "
                               "ClusterName, SlurmctldHost")


def test_nodes_of_equal_cpus_give_the_job_size_factors_nodes_and_are_never_written():
    text = ("PriorityType=priority/multifactor\nPriorityWeightJobSize=100\n"
            "NodeName=DEFAULT CPUs=8\nNodeName=c[1-4]\nNodeName=c[5-6] Sockets=2 CoresPerSocket=4\n")
    conf = parse_slurm_conf(text)
    assert conf.options["node_cpus"] == 8 and (conf.nodes, conf.node_cpus) == (6, 48)
    config = conf.config()
    assert conf_diff(text, config) == ""
    assert conf_diff(text, config.replace(node_cpus=4)) == ""  # the machine is not a setting to change
    assert "CPUs" not in fragment(config)


def test_comments_continuations_case_and_last_value_wins():
    text = ("# PriorityWeightAge=5\n"
            "PRIORITYWEIGHTAGE=10 # a comment PriorityWeightJobSize=7\n"
            "PriorityType=Priority/Multifactor \\\n"
            "  PriorityWeightJobSize=20\n"
            "priorityweightage=30\n")
    options = parse_slurm_conf(text).options
    assert options["priority_weight_age"] == 30 and options["priority_weight_job_size"] == 20
    assert options["priority_type"] == "priority/multifactor"


def test_without_priority_type_slurm_orders_by_submission_and_weights_are_ignored():
    conf = parse_slurm_conf("PriorityWeightAge=1000\nSchedulerType=sched/backfill\n")
    assert conf.options["priority_type"] == "priority/basic"
    assert "priority_weight_age" not in conf.options
    assert conf.unmodelled == ["PriorityWeightAge (under PriorityType=priority/basic)"]
    conf.config()  # valid: the weight is not passed


def test_scheduler_parameters_keep_their_other_sub_options():
    conf = parse_slurm_conf("SchedulerParameters=default_queue_depth=50,bf_continue,BF_WINDOW=60,bf_max_job_user=4\n")
    assert conf.options["bf_window"] == 3600 and conf.options["default_queue_depth"] == 50
    assert conf.unmodelled == ["SchedulerParameters:bf_continue", "SchedulerParameters:bf_max_job_user"]
    changed = conf.config().replace(bf_window="2h", bf_max_job_test=20)
    diff = conf_diff("SchedulerParameters=default_queue_depth=50,bf_continue,BF_WINDOW=60,bf_max_job_user=4\n",
                     changed)
    assert "+SchedulerParameters=default_queue_depth=50,bf_continue,BF_WINDOW=120,bf_max_job_user=4," \
           "bf_max_job_test=20\n" in diff


@pytest.mark.parametrize("text, seconds", [
    ("7-0", 7 * 86400), ("14-0", 14 * 86400), ("1-12:00", 36 * 3600), ("1-12", 36 * 3600), ("90", 90 * 60),
    ("2:30:00", 9000), ("90:30", 91 * 60),  # minutes:seconds, rounded up to whole minutes as Slurm does
    ("0", 0), ("1-0:0:1", 86400 + 60)])
def test_slurm_time_formats(text, seconds):
    assert slurm_time(text, "x") == seconds


@pytest.mark.parametrize("line, message", [
    ("PriorityWeightAge=lots", "site.conf:2: PriorityWeightAge: expected a whole number, got 'lots'"),
    ("PriorityMaxAge=UNLIMITED", "site.conf:2: PriorityMaxAge: UNLIMITED: bftune takes a finite time"),
    ("PriorityMaxAge=7d", "site.conf:2: PriorityMaxAge: cannot read '7d' as a Slurm time"),
    ("PriorityFavorSmall=maybe", "site.conf:2: PriorityFavorSmall: expected YES or NO, got 'maybe'"),
    ("SchedulerParameters=bf_window=0", "site.conf:2: SchedulerParameters:bf_window: expected 1m to 30d"),
    ("SchedulerParameters=bf_window", "site.conf:2: SchedulerParameters: bf_window needs a value"),
    ("PriorityFlags=MAX_TRES", "site.conf:2: PriorityFlags: MAX_TRES"),
    ("PriorityType=priority/fancy", "site.conf:2: PriorityType: expected one of"),
])
def test_a_bad_value_is_one_line_naming_file_line_and_key(line, message):
    with pytest.raises(ConfigError) as info:
        parse_slurm_conf(f"ClusterName=x\n{line}\n", "site.conf")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_every_slurm_option_of_the_table_has_a_key_read_here():
    assert {o.name for o in SLURM_KEYS.values()} == {n for n, o in OPTIONS.items() if o.slurm_key}
    assert all(o.slurm_unit in ("integer", "seconds", "minutes", "duration", "yesno", "flags", "choice")
               for o in SLURM_KEYS.values())


def test_the_sites_file_written_back_unchanged_is_an_empty_diff():
    text = SITE.read_text()
    assert conf_diff(text, read_slurm_conf(SITE).config()) == ""


def test_a_diff_changes_only_the_lines_of_keys_that_differ():
    text = SITE.read_text()
    config = read_slurm_conf(SITE).config().replace(
        priority_weight_age=3000, priority_favor_small=True, priority_flags="SMALL_RELATIVE_TO_TIME", bf_window="1d")
    diff = conf_diff(text, config, header=["bftune"])
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-SchedulerParameters=bf_window=2880,bf_max_job_test=1000,default_queue_depth=200,bf_continue",
                       "-PriorityFavorSmall=NO", "-priorityweightage=1000      # keys are case-insensitive"]
    assert added == ["+SchedulerParameters=bf_window=1440,bf_max_job_test=1000,default_queue_depth=200,bf_continue",
                     "+PriorityFavorSmall=YES", "+priorityweightage=3000      # keys are case-insensitive",
                     "+# bftune", "+PriorityFlags=SMALL_RELATIVE_TO_TIME"]
    patched = _apply(text, diff)
    assert read_slurm_conf_text(patched).config() == config


def test_flags_turned_off_remove_the_key():
    text = "PriorityType=priority/multifactor\nPriorityFlags=SMALL_RELATIVE_TO_TIME\nPriorityWeightAge=1\n"
    config = parse_slurm_conf(text).config().replace(priority_flags=[])
    diff = conf_diff(text, config)
    assert "-PriorityFlags=SMALL_RELATIVE_TO_TIME\n" in diff and "+PriorityFlags" not in diff
    assert parse_slurm_conf(_apply(text, diff)).config() == config


@pytest.mark.parametrize("options", [
    {"scheduler": "slurm"},
    {"scheduler": "slurm", "priority_type": "priority/basic", "scheduler_type": "sched/builtin"},
    {"scheduler": "slurm", "priority_weight_age": 1000, "priority_weight_job_size": 3000, "priority_max_age": "1d",
     "priority_favor_small": True, "priority_flags": "SMALL_RELATIVE_TO_TIME,NO_FAIR_TREE",
     "priority_decay_half_life": "36h", "bf_window": "90m", "bf_max_job_test": 20, "bf_interval": 45,
     "bf_resolution": 300, "priority_calc_period": "10m"},
])
def test_a_fragment_reads_back_as_the_same_configuration(options):
    config = SchedulerConfig.from_options(options)
    assert parse_slurm_conf(fragment(config)).config() == config
    assert conf_diff(fragment(config), config) == ""


def test_values_are_written_in_slurm_conf_units():
    assert slurm_value(OPTIONS["bf_window"], 86400.0) == "1440"
    assert slurm_value(OPTIONS["bf_interval"], 45.0) == "45"
    assert slurm_value(OPTIONS["priority_max_age"], 36 * 3600.0) == "1-12:00"
    assert slurm_value(OPTIONS["priority_max_age"], 7 * 86400.0) == "7-0"
    assert slurm_value(OPTIONS["priority_max_age"], 9000.0) == "2:30:00"
    assert slurm_value(OPTIONS["priority_max_age"], 1800.0) == "30"
    assert slurm_value(OPTIONS["priority_favor_small"], True) == "YES"
    for seconds in (60, 1800, 9000, 86400, 36 * 3600, 7 * 86400 + 60):
        assert slurm_time(slurm_value(OPTIONS["priority_max_age"], float(seconds)), "x") == seconds


def test_only_a_slurm_configuration_is_written():
    with pytest.raises(ConfigError, match="only a --scheduler slurm configuration"):
        fragment(SchedulerConfig(policy="SPF"))


def test_include_lines_are_named_not_followed():
    conf = parse_slurm_conf("Include /etc/slurm/nodes.conf\ninclude prio.conf\nPriorityType=priority/basic\n")
    assert conf.includes == ["/etc/slurm/nodes.conf", "prio.conf"]
    assert any("Include not followed" in note for note in conf.notes())


def test_hostlists():
    assert expand_hostlist("n[01-03,07],gpu1") == ["n01", "n02", "n03", "n07", "gpu1"]


def test_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        read_slurm_conf(tmp_path / "none.conf")


def read_slurm_conf_text(text: str):
    return parse_slurm_conf(text)


def _apply(text: str, diff: str) -> str:
    """A unified diff applied (hunks in order; the context is checked as it goes)."""
    lines = text.splitlines()
    out: list[str] = []
    at = 0
    body = diff.splitlines()[2:]
    for line in body:
        if line.startswith("@@"):
            start = int(line.split()[1].split(",")[0][1:]) - 1
            out += lines[at:start]
            at = start
        elif line.startswith(" "):
            assert lines[at] == line[1:]
            out.append(line[1:])
            at += 1
        elif line.startswith("-"):
            assert lines[at] == line[1:]
            at += 1
        elif line.startswith("+"):
            out.append(line[1:])
    out += lines[at:]
    return "\n".join(out) + "\n"


def test_the_guides_list_of_keys_is_the_tables():
    """docs/guides/slurm.md lists the keys read by hand (its words); it must name exactly the table's keys."""
    guide = (Path(__file__).parents[2] / "docs" / "guides" / "slurm.md").read_text()
    section = guide.split("## The keys read", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:4] for line in section.splitlines() if line.startswith("| `")]
    listed = {cells[0].strip().strip("`"): (cells[1].strip().strip("`"), cells[2].strip()) for cells in rows}
    assert listed == {o.slurm_key: (o.name, o.slurm_unit) for o in OPTIONS.values() if o.slurm_key}
