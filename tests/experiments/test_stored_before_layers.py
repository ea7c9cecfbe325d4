"""Directories stored before ``experiments/`` was split into layers stay valid: resumed, nothing runs again.

``fixtures/pre_layers/`` holds four campaigns, a tune and a learn-index collection made by the code of
commit 72d9f13 (its README says how).  Each is copied and resumed by the same command with today's code:
no stored item is simulated again (the command says it, and every stored file keeps its bytes and its
modification time), and the tables rebuilt from the stored items equal the stored tables byte for byte
(the plots, the report's prose and timings are not compared).  Today's store also writes the very bytes
the code before wrote: re-encoding every stored file in its layout gives it back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bftune.experiments.campaign.paths import CONFIG_DIR
from bftune.experiments.campaign.store import CAMPAIGN
from bftune.experiments.cli.main import main
from bftune.experiments.tune.store import TUNE
from bftune.learning.index.collect import COLLECTION
from bftune.support.store import Layout

PRE = Path(__file__).parent / "fixtures" / "pre_layers"
CAMPAIGNS = ["offline", "online", "pv_easy", "index"]
# --holdout 0: the stored tune searched the whole log, as every tune did before the validation period
TUNE_ARGS = ["tune", "--synthetic", "3000", "--procs", "64", "--budget", "30s", "--weeks", "4", "--workers", "1",
             "--no-progress", "--holdout", "0"]
LEARN_ARGS = ["learn-index", "--source", "synthetic", "--windows", "4", "--trials", "200", "--synthetic-jobs",
              "3000", "--workers", "1", "--no-progress"]
LAYOUTS = {**{name: CAMPAIGN for name in CAMPAIGNS}, "tune": TUNE, "learn": COLLECTION}


def _resume_copy(name: str, tmp_path: Path) -> tuple[Path, dict[Path, tuple[int, bytes]]]:
    """A copy of a stored directory (modification times kept) and its stored items: path -> (mtime, bytes)."""
    out = tmp_path / name
    shutil.copytree(PRE / name, out)
    items = out / LAYOUTS[name].items
    stored = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(items.glob("*.json"))}
    assert stored, f"{items}: the fixture holds no stored item"
    return out, stored


def _assert_untouched(stored: dict[Path, tuple[int, bytes]]) -> None:
    """Every stored item is still there, neither rewritten nor touched (a re-run would have rewritten it)."""
    for path, (mtime, data) in stored.items():
        assert path.stat().st_mtime_ns == mtime and path.read_bytes() == data, path
    assert len(list(next(iter(stored)).parent.glob("*.json"))) == len(stored)  # nothing new stored


def _assert_same_tables(name: str, out: Path, patterns: tuple[str, ...] = ("*.csv",)) -> None:
    tables = sorted(p for pattern in patterns for p in (PRE / name).glob(pattern))
    assert tables
    for table in tables:
        rebuilt = out / table.relative_to(PRE / name)
        assert rebuilt.read_bytes() == table.read_bytes(), f"{name}: {table.name} differs"


@pytest.mark.slow
@pytest.mark.parametrize("name", CAMPAIGNS)
def test_a_stored_campaign_is_resumed_without_running_a_run(name, tmp_path, capsys):
    out, stored = _resume_copy(name, tmp_path)
    (out / "outputs.json").unlink(missing_ok=True)  # the fixture keeps no manifest: the tables are rebuilt anyway
    for table in out.glob("*.csv"):
        table.unlink()  # so that the tables compared below are those rebuilt now, from the stored runs
    config = CONFIG_DIR / f"tiny_synthetic_{name}.toml"
    assert main(["campaign", str(config), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    n = len(stored)
    assert f": 0 runs done, {n} reused, 0 failed, of {n}," in capsys.readouterr().out
    _assert_untouched(stored)
    _assert_same_tables(name, out)


@pytest.mark.slow
def test_a_stored_tune_is_resumed_without_simulating_a_week(tmp_path, capsys):
    out, stored = _resume_copy("tune", tmp_path)
    before = json.loads((out / "recommendation.json").read_text())
    for table in ("ranking.csv", "weeks.csv", "recommendation.json"):
        (out / table).unlink()
    assert main([*TUNE_ARGS, "--out", str(out)]) == 0
    assert "(resuming the stored plan)" in capsys.readouterr().err
    after = json.loads((out / "recommendation.json").read_text())
    assert after["budget"]["weeks_simulated"] == 0
    assert after["budget"]["weeks_reused"] == before["budget"]["weeks_simulated"] + before["budget"]["weeks_reused"]
    for key in ("configuration", "gain", "interval", "label"):
        assert after[key] == before[key], key
    assert {k: after["risk"][k] for k in before["risk"]} == before["risk"]  # the same figures; later ones added
    _assert_untouched(stored)
    assert (out / "tune.json").read_bytes() == (PRE / "tune" / "tune.json").read_bytes()  # the same plan, kept
    _assert_same_tables("tune", out)


@pytest.mark.slow
def test_a_stored_collection_is_resumed_without_scoring_a_window(tmp_path, capsys):
    out, stored = _resume_copy("learn", tmp_path)
    shutil.rmtree(out / "fits")
    for table in out.glob("*.csv"):
        table.unlink()
    assert main([*LEARN_ARGS, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    n = len(stored)
    assert "learn-index: 0 windows run (0 trials" in printed and f", {n} reused, 0 failed, of {n}" in printed
    _assert_untouched(stored)
    assert (out / "collection.json").read_bytes() == (PRE / "learn" / "collection.json").read_bytes()
    _assert_same_tables("learn", out, ("*.csv",))
    for fit in sorted((PRE / "learn" / "fits").glob("*.json")):
        before, after = json.loads(fit.read_text()), json.loads((out / "fits" / fit.name).read_text())
        # the method's words cite the rules' page since 2026-11-28 (before: a file outside the repository);
        # every number of the fit is the same
        assert before["fit"].pop("method").startswith("weighted least squares, weights p*q on the residuals (")
        assert after["fit"].pop("method") == "weighted least squares, weights p*q on the residuals " \
            "(docs/semantics/learning.md#learned-index-policies)"
        assert after == before, fit.name


def _stored_files(name: str, layout: Layout) -> list[Path]:
    return [PRE / name / layout.identity, *sorted((PRE / name / layout.items).glob("*.json"))]


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_the_store_writes_the_bytes_the_code_before_wrote(name):
    """Each stored file, read and written again in its layout, is the file: the layouts are the old formats."""
    layout = LAYOUTS[name]
    files = _stored_files(name, layout)
    assert len(files) > 1
    for path in files:
        form = layout.identity_form if path.name == layout.identity else layout.item_form
        assert form.text(json.loads(path.read_bytes())).encode() == path.read_bytes(), path
    for path in files[1:]:  # and an item's key names its file as before
        key = int(path.stem) if layout is COLLECTION else path.stem
        assert layout.file.format(key) == path.name
