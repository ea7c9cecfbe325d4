"""Run specs: ids are stable and depend on what decides the results, not on labels."""

from __future__ import annotations

import copy

from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.specs import RunSpec

TINY_ONLINE = CONFIG_DIR / "tiny_synthetic_online.toml"


def test_run_ids_are_stable_and_depend_on_what_matters():
    a = load_config(TINY_ONLINE).specs
    b = load_config(TINY_ONLINE).specs
    assert [s.run_id for s in a] == [s.run_id for s in b]
    spec = a[0]
    other = copy.deepcopy(spec.to_dict())
    other["labels"] = {"renamed": True}
    other["run_id"] = ""
    assert RunSpec.from_dict(other).run_id == spec.run_id  # labels are not identity
    other["resample_seed"] += 1
    assert RunSpec.from_dict(other).run_id != spec.run_id
