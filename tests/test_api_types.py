"""A user's script type-checks against the installed API: ``mypy --strict`` passes on a right use of every
exported name and reports wrong ones.

mypy reads bftune as it reads an installed package (found on the search path, not as a source given to
it): it needs the ``py.typed`` marker, then the names ``bftune/__init__.py`` imports for type checkers
(at run time they are imported on first use).  The script is checked, never run.
"""

from __future__ import annotations

import re
import subprocess
import sys

import bftune
import pytest
from locations import REPO

pytest.importorskip("mypy", reason="mypy is in the dev dependency group (uv sync installs it)")

#: A right use of every name of ``bftune.__all__`` (the test checks that none is left out).
GOOD = '''\
from __future__ import annotations

from pathlib import Path

import bftune


def study(out: Path) -> float:
    trace: bftune.Trace = bftune.synthetic(500, procs=32, seed=2)
    again = bftune.Trace.from_dataframe(trace.to_dataframe(), max_procs=32, name="again")
    config: bftune.SchedulerConfig = bftune.SchedulerConfig(policy="SAF", threshold="40h")
    result: bftune.Result = bftune.simulate(again, tau=10.0, **config.to_dict())
    written: Path = result.write(out / "simulated")
    names: list[str] = [name for name in bftune.OPTIONS if bftune.OPTIONS[name].cli is not None]
    formulas: dict[str, str] = bftune.policies()
    try:
        read: bftune.Trace = bftune.read_workload(out / "trace.swf", cleaning="drop-overruns")
        comparison: bftune.Comparison = bftune.compare(read, out=out / "cmp", batsim="batsim", policy="SPF")
        kept: Path | None = comparison.directory
        print(comparison.agree, kept, written, names, formulas)
    except (bftune.ConfigError, bftune.WorkloadError) as error:
        print(f"bad input: {error}")
    try:
        campaign: bftune.CampaignRun = bftune.run_campaign({"campaign": {"kind": "offline"}}, out / "c", workers=1)
        ok: bool = campaign.ok
        print(ok, sorted(campaign.tables), campaign.runs, campaign.failures)
    except bftune.CampaignError as error:
        print(f"bad campaign: {error}")
    avg: float = result.summary["avg_wait"]
    return avg
'''

#: Wrong uses, one a line, each with the error mypy must report on it.
BAD = {
    "bftune.simulate(bftune.synthetic(100), tau=[1])": "arg-type",  # a list where a duration goes
    'bftune.synthetic("100")': "arg-type",  # a str where a count goes
    'bftune.synthetic(100).with_jobs("jobs")': "arg-type",  # a str where the jobs go
    'jobs: int = bftune.read_workload("trace.swf")': "assignment",  # a Trace is not an int
    "bftune.simulat(bftune.synthetic(100))": "attr-defined",  # a misspelt name: not Any
    "bftune.simulate(bftune.synthetic(100)).summry": "attr-defined",  # a misspelt field
    "bftune.compare(bftune.synthetic(100), out=3)": "arg-type",  # a number where a path goes
}


def mypy_strict(tmp_path, source: str) -> list[str]:
    """``mypy --strict`` on ``source`` with bftune installed as users get it (py.typed, no source tree)."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "bftune").symlink_to(REPO, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "user.py").write_text(source)
    env = {"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir",
                           str(tmp_path / "cache"), "user.py"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert "Traceback" not in done.stderr, done.stderr
    return [line for line in done.stdout.splitlines() if ": error:" in line]


def test_the_script_uses_every_exported_name():
    used = set(re.findall(r"bftune\.(\w+)", GOOD))
    assert set(bftune.__all__) <= used, set(bftune.__all__) - used


@pytest.mark.slow
def test_mypy_strict_passes_on_a_user_script_and_catches_wrong_uses(tmp_path):
    bad = "\n".join(BAD)
    errors = mypy_strict(tmp_path, GOOD + "\n\n" + bad + "\n")
    first_bad = GOOD.count("\n") + 3  # the line of the first wrong use
    good_errors = [e for e in errors if int(e.split(":")[1]) < first_bad]
    assert not good_errors, "\n".join(good_errors)
    for number, (line, code) in enumerate(BAD.items(), start=first_bad):
        found = [e for e in errors if e.startswith(f"user.py:{number}:")]
        assert any(e.endswith(f"[{code}]") for e in found), f"{line!r}: {found or 'no error'}"
