"""Adding a hook is one module and one registry entry: a toy hook, registered in a fresh process, is an option
of the CLI, of pybatsim's ``-o`` and of the Python configuration, builds itself and reports in summary.json."""

from __future__ import annotations

import json
import subprocess
import sys

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.hooks.registry import HOOKS
from bftune.schedulers.options import OPTIONS
from locations import REPO

#: The one line a contributor adds to hooks/registry.py, done in the process before anything reads the table.
REGISTER = ("import bftune.schedulers.hooks.registry as registry, toy_hook; "
            "registry.HOOKS = registry.HOOKS + (toy_hook.HOOK,); ")


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", REGISTER + code], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env={"PYTHONPATH": str(REPO / "tests" / "helpers"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_registered_toy_hook_is_an_option_everywhere_and_runs(tmp_path):
    out = tmp_path / "run"
    shown = run_python(
        "from bftune.schedulers.config import SchedulerConfig; from bftune.experiments.cli.main import main; "
        "c = SchedulerConfig.from_options({'count_starts': True, 'policy': 'SAF'}); print(c.describe()); "
        f"main(['simulate', '--synthetic', '300', '--procs', '32', '--count-starts', '--out', {str(out)!r}])")
    assert shown.splitlines()[0] == "EASY(SAF) counting starts"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["toy"] == {"starts": 300, "m": 32}
    assert summary["config"]["count_starts"] is True
    assert "--count-starts" in run_python("from bftune.experiments.cli.main import main; main(['simulate', '--help'])")


def test_unregistered_the_toy_is_unknown_here():
    assert "count_starts" not in OPTIONS and all(spec.name != "toy" for spec in HOOKS)
    assert "toy" not in SchedulerConfig().build(4).report()
