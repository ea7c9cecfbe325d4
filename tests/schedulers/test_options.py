"""The one option table: every scheduler option defined once, for the CLI, pybatsim -o, TOML and docs."""

from __future__ import annotations

import math

import pytest
from bftune.learning.features import FEATURE_MODES
from bftune.learning.selectors import SELECTORS
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.core.easy import RESERVATION_MODELS
from bftune.schedulers.hooks.classified import MODES
from bftune.schedulers.hooks.registry import HOOKS
from bftune.schedulers.options import CORE_OPTIONS, OPTIONS, markdown_table, parse_options
from locations import REPO


def test_the_table_is_the_cores_options_then_every_hooks_in_registry_order():
    assert list(OPTIONS) == [o.name for o in CORE_OPTIONS] + [o.name for spec in HOOKS for o in spec.options]
    assert len(HOOKS) == len({spec.name for spec in HOOKS}) >= 5


def test_a_default_configuration_holds_every_option_at_its_default():
    config = SchedulerConfig()
    assert list(config) == list(OPTIONS)
    for name, option in OPTIONS.items():
        assert config[name] == getattr(config, name) == option.default, name
    with pytest.raises(AttributeError, match="no option 'polcy'"):
        config.polcy  # noqa: B018


def test_choices_come_from_the_registries():
    assert OPTIONS["selector"].choices == tuple(SELECTORS)
    assert OPTIONS["classifier"].choices == tuple(MODES)
    assert OPTIONS["features"].choices == FEATURE_MODES
    assert OPTIONS["reservation"].choices == RESERVATION_MODELS


@pytest.mark.parametrize("raw, message", [
    ({"threshold": "4x"}, "threshold: cannot read '4x'"),
    ({"policy": "nope"}, "policy: unknown policy 'nope'"),
    ({"candidates": "FCFS,FCFS"}, "candidates: a policy is listed twice"),
    ({"selector": "bandit", "epsilon": "x"}, "epsilon: expected a number, got 'x'"),
    ({"selector": "noisy", "noise": 1}, "noise: expected a number in [0, 1)"),
    ({"selector": "full", "decay": 0}, "decay: expected a number in (0, 1]"),
    ({"kill_after": 0}, "kill_after: expected a positive duration"),
    ({"backfill": "yes"}, "backfill: expected true or false, got 'yes'"),
    ({"seed": -1}, "seed: expected an integer >= 0"),
    ({"epsilon": 0.3}, "epsilon needs selector"),
    ({"safeguard": False}, "safeguard needs classifier"),
    ({"divider_window": "inf"}, "divider_window needs classifier"),
    ({"classifier": "rf", "learning": "decoupled", "divider_window": "inf"}, "divider_window needs learning='online'"),
    ({"classifier": "rf", "divider_window": 0}, "divider_window: expected a positive duration"),
    ({"backfill": False, "reservation": "machines"}, "reservation needs backfilling"),
    ({"policy": "SAF", "primary": "SPF"}, "given twice"),
    ({"polcy": "SAF"}, "unknown option(s) polcy"),
])
def test_every_bad_value_names_its_option(raw, message):
    with pytest.raises(ConfigError, match=None) as info:
        SchedulerConfig.from_options(raw)
    assert message in str(info.value)


@pytest.mark.parametrize("raw, option, reason", [
    ({"classifier": "rf", "learning": "decoupled", "divider_window": "inf"}, "divider_window",
     "needs learning='online'"),
    ({"classifier": "rf", "learning": "decoupled", "features": "live"}, "learning",
     "decoupled learning uses weekly features (drop features = live)"),
    ({"selector": "full", "classifier": "rf"}, "classifier", "cannot be combined with a selector (one policy per run)"),
])
def test_a_rule_between_options_says_which_option_it_blames(raw, option, reason):
    """A campaign names its own key with the rule's words (Section.scheduler), so no campaign restates a rule."""
    with pytest.raises(ConfigError) as info:
        SchedulerConfig.from_options(raw)
    assert (info.value.option, info.value.reason) == (option, reason)


def test_where_names_options_the_way_the_user_wrote_them():
    with pytest.raises(ConfigError) as info:
        parse_options({"threshold": "4x"}, where=lambda name: f"[online] {name}")
    assert str(info.value).startswith("[online] threshold:")


def test_values_are_normalised_and_aliases_accepted():
    cfg = SchedulerConfig.from_options({"primary": "saf", "bf_policy": "spf", "threshold": "40h",
                                        "kill_after": None})
    assert (cfg.policy, cfg.backfill_policy, cfg.threshold, cfg.kill_after) == ("SAF", "SPF", 144000.0, None)
    cfg = SchedulerConfig.from_options({"selector": "bandit", "candidates": "fcfs, saf", "period": "1d",
                                        "epsilon": "0.25"})
    assert cfg.candidates == ["FCFS", "SAF"] and cfg.period == 86400.0 and cfg.epsilon == 0.25


@pytest.mark.parametrize("options", [
    {},
    {"policy": "SAF", "backfill_policy": "SPF", "threshold": "40h", "reservation": "machines"},
    {"policy": "LCFS", "backfill": False},
    {"selector": "noisy", "period": "1d", "candidates": ["FCFS", "SAF"], "noise": 0.1, "seed": 3},
    {"classifier": "rf", "safeguard": False, "features": "live", "policy": "WFP3"},
    {"classifier": "class-clairvoyant", "divider_window": "inf"},
    {"classifier": "rf", "divider_window": "2w"},
    {"kill_after": "1h", "fairness": True},
])
def test_to_dict_round_trips_and_leaves_out_what_does_not_apply(options):
    cfg = SchedulerConfig.from_options(options)
    d = cfg.to_dict()
    again = SchedulerConfig.from_options({k: v for k, v in d.items() if k != "algorithm"})
    assert again == cfg
    if cfg.selector is None:
        assert not {"period", "candidates", "epsilon", "noise", "decay"} & d.keys()
    if cfg.classifier is None:
        assert not {"safeguard", "features"} & d.keys()
    if not cfg.backfill:
        assert not {"reservation", "backfill_policy"} & d.keys()


def test_the_docs_option_page_is_generated_from_the_option_table():
    """The site's option reference is the table itself, put in by docs/hooks.py when the site is built."""
    import docs_hooks

    assert "<!-- generated: options -->" in (REPO / "docs" / "reference" / "options.md").read_text()
    rendered = docs_hooks.render("reference/options.md")
    assert markdown_table() in rendered and "<!-- generated" not in rendered
    assert "| `threshold` | `--threshold` |" in rendered  # a real row, not an empty table


def test_api_construction_applies_the_same_rules():
    with pytest.raises(ConfigError, match="epsilon needs selector"):
        SchedulerConfig(epsilon=0.5)
    assert SchedulerConfig(threshold=math.inf).threshold == math.inf


def test_divider_window_reaches_the_classifier():
    """The option sets the window of the online classifier's divider (decoupled learning has its own)."""
    week = SchedulerConfig.from_options({"classifier": "rf"}).build(1).hooks[-1].clf
    assert week.divider_window == 7 * 86400.0
    whole = SchedulerConfig.from_options({"classifier": "class-clairvoyant", "divider_window": "inf"})
    assert whole.build(1).hooks[-1].clf.divider_window == math.inf
    assert whole.to_dict()["divider_window"] == "inf"


# --- reservations: how many waiting jobs hold one (docs/semantics/scheduling.md#conservative) ----------------


@pytest.mark.parametrize("raw, value", [(1, 1), ("4", 4), (12, 12), ("all", "all"), ("ALL", "all"),
                                        ("conservative", "all")])
def test_reservations_takes_a_positive_count_or_all(raw, value):
    assert SchedulerConfig.from_options({"reservations": raw}).reservations == value


@pytest.mark.parametrize("raw, message", [
    ({"reservations": 0}, "reservations: expected a positive integer or all, got 0"),
    ({"reservations": "-2"}, "reservations: expected a positive integer or all, got '-2'"),
    ({"reservations": "some"}, "reservations: expected a positive integer or all, got 'some'"),
    ({"reservations": True}, "reservations: expected a positive integer or all, got True"),
    ({"reservations": 2.5}, "reservations: expected a positive integer or all, got 2.5"),
    ({"reservations": "all", "backfill": False}, "reservations needs backfilling"),
    ({"reservations": 3, "scheduler": "pv-easy"}, "reservations needs scheduler='easy'"),
    ({"reservations": "all", "backfill_policy": "SPF"}, "backfill_policy needs reservations other than all"),
])
def test_bad_reservations_name_the_option(raw, message):
    with pytest.raises(ConfigError) as info:
        SchedulerConfig.from_options(raw)
    assert message in str(info.value)


def test_reservations_round_trip_and_leave_easy_alone():
    for options in ({"reservations": "all", "reservation": "machines"}, {"reservations": 3, "backfill_policy": "SPF"}):
        cfg = SchedulerConfig.from_options(options)
        again = SchedulerConfig.from_options({k: v for k, v in cfg.to_dict().items() if k != "algorithm"})
        assert again == cfg
    assert SchedulerConfig.from_options({"reservations": 1}) == SchedulerConfig()
    assert SchedulerConfig.from_options({"reservations": 1}).build_algorithm().describe() == "EASY(FCFS)"
    assert "reservations" not in SchedulerConfig(backfill=False).to_dict()
