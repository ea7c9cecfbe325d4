"""docs/guides/plugins.md runs as written: its files are written and its commands run, in order, in a fresh directory.

A block with a title (```` ```python title="orders.py" ````) is a file of the reader's, written under that
name; a ``bash`` block is run line by line as the reader would type it (with this environment's ``python`` and
``bftune`` first on PATH, and no PYTHONPATH of the test's); ``text`` blocks show output, and the first, the
one-line error of a module not on ``sys.path``, is checked against the command that gives it.  So the
tutorial cannot drift from what bftune does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from locations import REPO

PAGE = REPO / "docs" / "guides" / "plugins.md"
BLOCK = re.compile(r"^```(?P<lang>\w+)(?P<info>[^\n]*)\n(?P<body>.*?)^```\s*$", re.S | re.M)


def blocks() -> list[tuple[str, str | None, str]]:
    """``(language, title or None, body)`` of every fenced block of the page, in order."""
    out = []
    for match in BLOCK.finditer(PAGE.read_text(encoding="utf-8")):
        title = re.search(r'title="([^"]+)"', match["info"])
        out.append((match["lang"], title.group(1) if title else None, match["body"]))
    return out


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_tutorial_has_the_blocks_this_test_runs():
    found = blocks()
    titled = [title for _, title, _ in found if title]
    assert {"orders.py", "simulate_mine.py", "mine.toml", "campaign_mine.py", "dask_mine.py", "units.py"} <= set(titled)
    assert sum(lang == "bash" for lang, _, _ in found) >= 5
    assert all(lang in ("python", "bash", "toml", "text") for lang, _, _ in found)


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path):
    pytest.importorskip("distributed", reason="the tutorial's Dask section needs dask.distributed (bftune[dask])")
    env = environment()
    for lang, title, body in blocks():
        if title is not None:
            (tmp_path / title).write_text(body, encoding="utf-8")
        elif lang == "bash":
            for line in (line.strip() for line in body.splitlines()):
                if not line or line.startswith("#"):
                    continue
                done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                                      timeout=300)
                assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert (tmp_path / "runs" / "mine" / "summary_offline.csv").is_file()
    assert (tmp_path / "runs" / "mine-dask" / "summary_offline.csv").is_file()


@pytest.mark.slow
def test_the_tutorials_error_line_is_the_one_bftune_gives(tmp_path):
    expected = next(body for lang, _, body in blocks() if lang == "text" and "cannot import orders" in body)
    orders = next(body for _, title, body in blocks() if title == "orders.py")
    (tmp_path / "orders.py").write_text(orders, encoding="utf-8")
    done = subprocess.run(["bftune", "simulate", "--synthetic", "2000", "--procs", "128", "--policy",
                           "orders:sqrt_area"], cwd=tmp_path, env=environment(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.strip() == expected.strip()
