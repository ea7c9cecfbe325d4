"""Run specs: ids are stable and depend on what decides the results, not on labels."""

from __future__ import annotations

import copy

from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import CONFIG_DIR, REPO_ROOT, trace_key
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


def test_a_run_that_stores_more_is_another_run_and_none_keeps_older_ids():
    spec = load_config(TINY_ONLINE).specs[0].to_dict()
    older = {k: v for k, v in spec.items() if k not in ("outputs", "run_id")}  # a spec stored before the field
    assert RunSpec.from_dict(older).run_id == spec["run_id"]
    assert RunSpec.from_dict({**older, "outputs": ["job_table"]}).run_id != spec["run_id"]


def test_one_trace_file_named_relatively_or_absolutely_is_one_run():
    spec = load_config(TINY_ONLINE).specs[0].to_dict()

    def run_id(trace: str) -> str:
        return RunSpec.from_dict({**spec, "trace": trace, "run_id": ""}).run_id

    relative = "../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz"
    absolute = str(REPO_ROOT.parent / "shared" / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz")
    assert run_id(relative) == run_id(absolute) == run_id("./" + relative) == run_id(absolute.replace(
        "/shared/", "/shared/./"))
    assert trace_key(relative) == absolute  # stored runs of absolute configs keep their ids
    assert run_id(relative.replace("KTH", "CTC")) != run_id(relative)
    assert trace_key("synthetic:100:64") == "synthetic:100:64"
    assert trace_key("lublin:5:256:2023") == "lublin:5:256:2023"  # generated: the same id from any checkout
