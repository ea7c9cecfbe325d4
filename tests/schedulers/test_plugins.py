"""A user's own policies, predictors, selectors and hooks, by import path and by entry point (docs/guides/plugins.md).

What is checked: a unit of a user's module is found by ``MODULE:NAME`` and ``FILE.py:NAME`` wherever its
option is (policy, backfilling order, selector candidates, predictor, selector, hooks; the CLI, the API,
campaigns on worker processes and on Dask), keeps its spelling as its name (what travels to workers), and
a bad one is one line naming the option, the module and why; installed packages add units by entry
points, and a built-in name wins over an entry point with a warning; a script that runs a campaign on
worker processes works without a main guard, and one whose workers would run it again says so in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from bftune.api import run_campaign, simulate, synthetic
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core import plugins
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.policies import FormulaPolicy, get_policy
from bftune.schedulers.option import ConfigError

ORDERS = '''
import math

from bftune.learning.predictors import WalltimePredictor
from bftune.learning.selectors import Selector
from bftune.schedulers.core.engine import Hook
from bftune.schedulers.core.policies import FormulaPolicy


def sqrt_area(job, now):
    return math.sqrt(job.estimate * job.procs)


def patience(job, now):
    return -(now - job.submit) / job.estimate


SQRT_AREA = FormulaPolicy("sqrt-area", "sqrt(p~*q)", sqrt_area, dynamic=False)


def one_argument(job):
    return 1.0


def not_a_number(job, now):
    return "soon"


def nan(job, now):
    return float("nan")


def fails(job, now):
    return 1 / 0


VALUE = 3


class Half(WalltimePredictor):
    name = "half"

    def __init__(self, seed):
        self.seed = seed

    def predict(self, seq, user, walltime, runtime, now):
        return walltime / 2


class Cycle(Selector):
    name = "cycle"

    def choose(self, period, rng):
        return self.candidates[period % len(self.candidates)]


def cycle(candidates, policy, decay, epsilon, noise):
    return Cycle(candidates, decay)


class Starts(Hook):
    def __init__(self):
        self.starts = 0

    def on_start(self, core, job, now):
        self.starts += 1

    def report(self):
        return {"starts_seen": self.starts}
'''


@pytest.fixture(autouse=True)
def fresh():
    """Every test finds its units afresh (modules of the same name are written by several tests)."""
    plugins.forget()
    yield
    plugins.forget()
    for name in [name for name in sys.modules if name.startswith("plug_")]:
        del sys.modules[name]


@pytest.fixture
def orders(tmp_path, monkeypatch) -> str:
    """A module of the user's, importable as the returned name (unique per test: modules stay imported)."""
    name = f"plug_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{name}.py").write_text(ORDERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return name


TRACE = synthetic(400, procs=32, seed=3)
#: The command line of this environment.
BFTUNE = str(Path(sys.executable).parent / "bftune")


# --- queue policies -------------------------------------------------------------------------------------------


def test_a_score_function_by_import_path_is_a_policy_named_by_its_spelling(orders):
    policy = get_policy(f" {orders}:sqrt_area ")
    assert policy.name == f"{orders}:sqrt_area" and policy.dynamic  # a function may read `now`
    assert get_policy(policy.name) is policy  # the name finds it again: what a worker is given
    config = SchedulerConfig(policy=f"{orders}:sqrt_area")
    assert config["policy"] == f"{orders}:sqrt_area" and config.describe() == f"EASY({orders}:sqrt_area)"


def test_a_policy_object_keeps_its_order_and_whether_it_is_dynamic_under_its_spelling(orders):
    policy = get_policy(f"{orders}:SQRT_AREA")
    assert isinstance(policy, FormulaPolicy) and policy.name == f"{orders}:SQRT_AREA" and not policy.dynamic
    assert Order.of(policy.name).static


def test_a_users_policy_decides_as_the_same_order_built_in(orders):
    """SAF by import path (bftune's own area function) schedules exactly as SAF."""
    spelled = simulate(TRACE, policy="bftune.schedulers.core.policies:area")
    builtin = simulate(TRACE, policy="SAF")
    assert spelled.jobs["starting_time"].tolist() == builtin.jobs["starting_time"].tolist()
    assert spelled.summary["config"]["algorithm"] == "EASY(bftune.schedulers.core.policies:area)"


def test_a_users_policy_runs_as_primary_backfilling_order_and_selector_candidate(orders):
    mine = simulate(TRACE, policy=f"{orders}:sqrt_area")
    backfill = simulate(TRACE, policy="FCFS", backfill_policy=f"{orders}:patience")
    fcfs = simulate(TRACE, policy="FCFS")
    selected = simulate(TRACE, selector="random", period="1d", candidates=["FCFS", f"{orders}:SQRT_AREA"])
    assert mine.summary["config"]["algorithm"] == f"EASY({orders}:sqrt_area)"
    assert backfill.summary["config"]["algorithm"] == f"EASY(FCFS, {orders}:patience)"
    assert mine.jobs["starting_time"].tolist() != fcfs.jobs["starting_time"].tolist()
    assert set(selected.periods["policy"]) == {"FCFS", f"{orders}:SQRT_AREA"}


def test_a_file_path_names_a_policy_without_the_module_on_sys_path(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.py").write_text("def score(job, now):\n    return -job.procs\n")
    monkeypatch.chdir(tmp_path)
    relative = get_policy("./sub/mine.py:score")
    absolute = get_policy(f"{tmp_path}/sub/mine.py:score")
    assert relative.name == "./sub/mine.py:score" and absolute.name == f"{tmp_path}/sub/mine.py:score"
    assert isinstance(relative, FormulaPolicy) and isinstance(absolute, FormulaPolicy)
    assert relative.score is absolute.score  # one module per file, however its path is written
    assert simulate(TRACE, policy="sub/mine.py:score").summary["jobs"] == 400


@pytest.mark.parametrize("spelling, says", [
    ("{m}:nowhere", "{m} has no attribute 'nowhere'"),
    ("{m}:one_argument", "a score function takes (job, now); one_argument(job) does not"),
    ("{m}:not_a_number", "a score must be a number; it returned 'soon' (of type str)"),
    ("{m}:nan", "a score must be a number; it returned nan"),
    ("{m}:fails", "scoring a sample job raised ZeroDivisionError: division by zero"),
    ("{m}:VALUE", "3 (of type int) is neither a score function"),
    ("no_such_module_here:score", "cannot import no_such_module_here: no module no_such_module_here on sys.path"),
    ("./missing.py:score", "no such file"),
    ("__main__:score", "__main__ is your script, which worker processes do not import"),
    ("{m}:", "expected MODULE:NAME or FILE.py:NAME"),
    ("not a name", "unknown policy 'not a name'; known policies: FCFS"),
])
def test_a_bad_policy_is_one_line_naming_the_option_the_module_and_why(orders, spelling, says):
    spelling = spelling.format(m=orders)
    for option in ("policy", "backfill_policy", "candidates"):
        with pytest.raises(ConfigError) as caught:
            SchedulerConfig.from_options({option: spelling, **({"selector": "random"} if option == "candidates"
                                                               else {})}, where=lambda name: f"--{name}")
        message = str(caught.value)
        assert "\n" not in message and message.startswith(f"--{option}: ") and says.format(m=orders) in message


def test_a_module_that_fails_to_import_is_one_line_with_its_error(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "plug_broken.py").write_text("x = (\n")
    (tmp_path / "plug_raises.py").write_text("raise RuntimeError('no licence server\\nsecond line')\n")
    (tmp_path / "plug_needs.py").write_text("import plug_absent_dependency\n")
    for name, says in (("plug_broken", "importing plug_broken raised SyntaxError: "),
                       ("plug_raises", "importing plug_raises raised RuntimeError: no licence server"),
                       ("plug_needs", "importing plug_needs failed: ModuleNotFoundError: No module named "
                                      "'plug_absent_dependency'")):
        with pytest.raises(ConfigError, match=f"^policy: {name}:score: {says}") as caught:
            SchedulerConfig(policy=f"{name}:score")
        assert "\n" not in str(caught.value)


def test_a_module_in_the_current_directory_but_not_on_sys_path_is_named_in_the_hint(tmp_path, monkeypatch):
    (tmp_path / "plug_here.py").write_text("def score(job, now):\n    return 0.0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    with pytest.raises(ConfigError, match=r"plug_here.py is in this directory, which is not on sys.path: run with "
                                          r"PYTHONPATH=. or give the file: ./plug_here.py:score"):
        SchedulerConfig(policy="plug_here:score")


def test_a_module_is_imported_once_per_process(orders, tmp_path):
    get_policy(f"{orders}:sqrt_area")
    (tmp_path / f"{orders}.py").write_text("raise RuntimeError('imported again')\n")
    assert get_policy(f"{orders}:patience").name == f"{orders}:patience"  # the module imported before


# --- predictors, selectors, hooks -----------------------------------------------------------------------------


def test_a_users_predictor_selector_and_hooks_run_by_import_path(orders):
    result = simulate(TRACE, predictor=f"{orders}:Half", selector=f"{orders}:cycle", period="1d",
                      candidates=["FCFS", f"{orders}:sqrt_area"], hooks=[f"{orders}:Starts"])
    assert result.summary["config"]["algorithm"] == (
        f"EASY({orders}:cycle[FCFS|{orders}:sqrt_area] per 1d) predictor={orders}:Half hooks={orders}:Starts")
    assert result.summary["predictor"]["name"] == "half"
    assert result.summary["starts_seen"] == 400
    assert [p["policy"] for p in result.summary["periods"][:3]] == ["FCFS", f"{orders}:sqrt_area", "FCFS"]


def test_hooks_are_a_comma_separated_list_on_the_command_line_and_off_by_default(orders):
    assert SchedulerConfig()["hooks"] == [] and "hooks" not in SchedulerConfig().describe()
    config = SchedulerConfig.from_options({"hooks": f"{orders}:Starts"})
    assert config["hooks"] == [f"{orders}:Starts"]
    with pytest.raises(ConfigError, match="a hook is listed twice"):
        SchedulerConfig(hooks=[f"{orders}:Starts", f"{orders}:Starts"])


@pytest.mark.parametrize("option, spelling, says", [
    ("predictor", "{m}:sqrt_area", "a predictor factory is called with the run's seed"),
    ("predictor", "{m}:Cycle", "making one (seed 0) raised ValueError: a selector needs at least one candidate"),
    ("predictor", "{m}:nowhere", "{m} has no attribute 'nowhere'"),
    ("predictor", "{m}:VALUE", "is not a predictor factory"),
    ("predictor", "lastt", "unknown predictor 'lastt'; choose one of walltime"),
    ("selector", "{m}:sqrt_area", "a selector factory is called as sqrt_area(candidates, policy, decay, "),
    ("selector", "{m}:Half", "a selector factory is called as Half(candidates"),
    ("selector", "nope", "unknown selector 'nope'; choose one of fixed, random"),
    ("hooks", "{m}:sqrt_area", "a hook is made with no argument"),
    ("hooks", "{m}:SQRT_AREA", "is not a hook"),
    ("hooks", "plug_no_module:Hook", "cannot import plug_no_module"),
    ("hooks", "count", "unknown hook 'count'"),
])
def test_a_bad_predictor_selector_or_hook_is_one_line(orders, option, spelling, says):
    with pytest.raises(ConfigError) as caught:
        SchedulerConfig(**{option: spelling.format(m=orders)})
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{option}: ") and says.format(m=orders) in message


def test_a_predictor_made_without_its_members_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "plug_partial.py").write_text("class P:\n    def __init__(self, seed):\n        pass\n"
                                              "    def predict(self, *a):\n        return 1.0\n")
    with pytest.raises(ConfigError, match="what it makes has no name, clairvoyant, observe, report"):
        SchedulerConfig(predictor="plug_partial:P")


# --- entry points ---------------------------------------------------------------------------------------------

ENTRY_POINTS = """
[bftune.policies]
sqrt-area = {m}:sqrt_area
SAF = {m}:patience

[bftune.predictors]
half = {m}:Half

[bftune.selectors]
cycle = {m}:cycle

[bftune.hooks]
starts = {m}:Starts
"""


@pytest.fixture
def installed(orders, tmp_path) -> str:
    """A package installed on sys.path (a dist-info folder) whose entry points name ``orders``' units."""
    info = tmp_path / "plug_extra-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-extra\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.format(m=orders))
    plugins.forget()
    return orders


def test_installed_units_are_found_by_their_plain_names(installed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plugins.PluginWarning)
        result = simulate(TRACE, policy="SQRT-AREA", predictor="half", selector="cycle", period="1d",
                          candidates="FCFS,sqrt-area", hooks="starts")
    assert result.summary["config"]["algorithm"] == \
        "EASY(cycle[FCFS|sqrt-area] per 1d) predictor=half hooks=starts"
    assert get_policy("Sqrt-Area").name == "sqrt-area"  # policy names are case-insensitive, as built-in ones
    assert result.summary["starts_seen"] == 400


def test_a_built_in_name_wins_over_an_entry_point_with_a_one_line_warning(installed):
    assert get_policy("SAF").name == "SAF"  # a built-in name never reads the entry points
    with pytest.warns(plugins.PluginWarning) as caught:
        with pytest.raises(ConfigError, match="unknown policy 'nothing'; known policies: FCFS.*, sqrt-area; or "
                                              "your own"):
            SchedulerConfig(policy="nothing")
    [warning] = caught
    message = str(warning.message)
    assert "\n" not in message and message == (
        f"bftune: entry point SAF = {installed}:patience (package plug-extra 1.0) in group bftune.policies is "
        "ignored: SAF is a built-in policy, which wins")
    assert warning.filename.endswith("plug_extra-1.0.dist-info/entry_points.txt")
    assert SchedulerConfig(policy="saf").describe() == "EASY(SAF)"


@pytest.mark.slow
def test_bftune_policies_lists_the_installed_ones(installed, tmp_path):
    done = subprocess.run([BFTUNE, "policies"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"  sqrt-area  {installed}:sqrt_area" in done.stdout
    assert "is ignored: SAF is a built-in policy" in done.stderr


# --- the command line ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_command_line_takes_a_users_policy_selector_and_hooks(orders, tmp_path):
    base = [BFTUNE, "simulate", "--synthetic", "300", "--procs", "32"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([*base, "--policy", f"./{orders}.py:sqrt_area", "--selector", f"{orders}:cycle",
                           "--candidates", f"FCFS,{orders}:patience", "--period", "1d", "--hooks", f"{orders}:Starts"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"EASY({orders}:cycle[FCFS|{orders}:patience] per 1d) hooks={orders}:Starts" in done.stdout
    bad = subprocess.run([*base, "--backfill", f"{orders}:nowhere"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        f"bftune: error: --backfill: {orders}:nowhere: {orders} has no attribute 'nowhere'"]


# --- campaigns: worker processes, Dask, scripts -------------------------------------------------------------

CAMPAIGN: dict[str, dict[str, Any]] = {"campaign": {"kind": "offline", "name": "mine", "seed": 7}, "workload": {"trace": "synthetic:4500:16:3"},
            "offline": {"thresholds": ["none"], "weeks": 1}}


def _campaign(policies: list[str]) -> dict:
    return {**CAMPAIGN, "offline": {**CAMPAIGN["offline"], "policies": policies}}


@pytest.mark.slow
def test_a_campaign_runs_a_users_policy_on_two_worker_processes(orders, tmp_path):
    """Without the import path, a policy registered in this process was unknown in the workers."""
    runs = run_campaign(_campaign(["FCFS", f"{orders}:sqrt_area", f"./{orders}.py:patience"]), tmp_path / "out",
                        workers=2)
    assert runs.ok and runs.runs == 18
    assert set(runs.tables["weeks"]["backfill"]) == {"FCFS", f"{orders}:sqrt_area", f"./{orders}.py:patience"}


@pytest.mark.slow
def test_a_campaign_runs_a_users_policy_on_a_dask_local_cluster(orders, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        runs = run_campaign(_campaign(["FCFS", f"{orders}:sqrt_area"]), tmp_path / "out",
                            dask=client.scheduler.address)
    assert runs.ok and runs.runs == 8
    assert f"{orders}:sqrt_area" in set(runs.tables["weeks"]["primary"])


SCRIPT_HEAD = '''
import bftune

def score(job, now):
    return job.estimate * job.procs ** 0.5

CONFIG = {config!r}
'''


def _script(tmp_path: Path, name: str, policies: list[str], guarded: bool) -> subprocess.CompletedProcess:
    call = f"runs = bftune.run_campaign(CONFIG, {str(tmp_path / ('out-' + name))!r}, workers=2)\n" \
           "print(runs.runs, 'runs', len(runs.failures), 'failed')\n"
    body = SCRIPT_HEAD.format(config=_campaign(policies))
    body += 'if __name__ == "__main__":\n' + textwrap.indent(call, "    ") if guarded else call
    (tmp_path / f"{name}.py").write_text(body)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, f"{name}.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_a_campaign_on_worker_processes(orders, tmp_path):
    """Spawned workers used to run the script again: 120 restarts and 3,242 lines of tracebacks."""
    done = _script(tmp_path, "unguarded", ["FCFS", f"{orders}:sqrt_area"], guarded=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["8 runs 0 failed"] and not done.stderr


@pytest.mark.slow
def test_a_guarded_script_runs_a_campaign_with_a_policy_of_its_own_file(tmp_path):
    done = _script(tmp_path, "guarded", ["FCFS", "./guarded.py:score"], guarded=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["8 runs 0 failed"]


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["./unguarded_own.py:score", "unguarded_own:score"])
def test_an_unguarded_script_whose_workers_would_run_it_again_is_stopped_in_one_line(tmp_path, spelling):
    done = _script(tmp_path, "unguarded_own", ["FCFS", spelling], guarded=False)
    lines = (tmp_path / "unguarded_own.py").read_text().splitlines()
    line = next(number for number, text in enumerate(lines, 1) if "run_campaign" in text)
    assert done.returncode == 1 and not done.stdout
    assert done.stderr.splitlines() == [
        f"bftune: {spelling}: every worker imports unguarded_own.py to find score, and unguarded_own.py starts "
        f"this campaign again at line {line}; put the campaign under `if __name__ == \"__main__\":` (or score in a "
        "module of its own)"]
    assert not (tmp_path / "out-unguarded_own" / "runs").exists() or \
        not any((tmp_path / "out-unguarded_own" / "runs").iterdir())


def test_a_campaign_started_inside_a_run_is_refused(monkeypatch, tmp_path):
    """A plug-in module that starts a campaign when a worker imports it: refused there, not run recursively."""
    from bftune.experiments.campaign import script
    from bftune.experiments.campaign.specs import CampaignError

    monkeypatch.setattr(script, "running_a_run", True)
    with pytest.raises(CampaignError, match="a campaign started while a worker was importing a plug-in"):
        run_campaign(_campaign(["FCFS"]), tmp_path / "out", workers=1)
