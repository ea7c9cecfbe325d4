"""A campaign directory: the lock, the run files, resume, and the tables rebuilt from the runs.

Layout of ``DIR`` (``--out``):

- ``campaign.json``: the config (text and normalised settings) and every run's spec;
- ``runs/<run_id>.json``: one finished run, written atomically by the
  coordinating process as soon as the run finishes.  ``run_id`` hashes
  everything that defines the run, so the same command run again skips every
  stored run (resume);
- ``failures/<run_id>.json``: a crashed run with its spec (configuration,
  seed) and traceback; a later successful attempt removes it;
- the tables (``runs.csv`` + the kind's, rows in spec order, no timings, so
  the same config gives byte-identical tables), the report (``report.md``,
  ``summary_*.csv``, ``plots/``) and last ``outputs.json``, the manifest:
  every table and report file with its sha256.  It is removed before the
  outputs are rewritten and written once they all are, so the outputs it
  lists are one consistent set; no manifest means a rebuild was cut short
  (the next invocation, even ``--report-only``, rebuilds them from ``runs/``);
- ``.campaign.lock``: held (``flock``) by the one process working in the
  directory; the kernel releases it when that process ends, however it ends.

The runs, failures, identity file (``campaign.json``), lock and leftovers are
kept by the one resumable store (:mod:`bftune.support.store`, with tune's weeks
and the index collection's windows) in the layout :data:`CAMPAIGN`; the tables,
report and manifest are the campaigns' own.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.kinds import get_kind
from bftune.experiments.campaign.specs import Campaign, CampaignError
from bftune.experiments.campaign.report.build import write_report
from bftune.experiments.runs.summary import jsonable, write_json
from bftune.support.files import atomic_write_text
from bftune.support.store import DirectoryLock as StoreLock
from bftune.support.store import JsonForm, Layout, Store

MANIFEST = "outputs.json"


# --- the directory and its lock -----------------------------------------------------------

#: Every file of a campaign directory is strict JSON, one space of indent, a final newline (``write_json``).
_JSON = JsonForm(indent=1, clean=jsonable)

#: The campaigns' layout of the one resumable store (``support/store.py``): ``runs/<run_id>.json``,
#: ``failures/<run_id>.json``, ``campaign.json``.  A tune's directory also keeps ``runs/`` and ``weeks.csv``.
CAMPAIGN = Layout(what="campaign", identity="campaign.json", item_form=_JSON, failure_form=_JSON,
                  identity_form=_JSON, foreign=(("tune.json", "tune run"),), error=CampaignError)


def open_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Create (if needed) and check a campaign directory before any work; one clear line if unusable."""
    store = Store.open(out_dir, CAMPAIGN)
    store.refuse_foreign()
    store.make_folders()
    return store.root


class DirectoryLock(StoreLock):
    """The lock of a campaign directory (``flock`` on ``DIR/.campaign.lock``, :mod:`bftune.support.store`).

    Also held by ``bftune reproduce`` on its directory.  Non-blocking: a second campaign on a locked
    directory stops at once with the holder named; the kernel drops it when the holding process ends (even
    by SIGKILL), so a crash leaves no stale lock.
    """

    def __init__(self, out: str | os.PathLike[str]) -> None:
        super().__init__(out, what=CAMPAIGN.what, error=CampaignError)


def remove_leftovers(out: Path) -> int:
    """Delete the temporaries of writes cut short by a crash (:func:`bftune.support.files.clean_leftovers`, per folder).

    Every file of a campaign is written through :mod:`bftune.support.files` (JSON, CSV, reports, plots), so
    its temporaries are ``.NAME.XXXXXXXX.tmp`` files that a living writer keeps locked.
    """
    return Store(out, CAMPAIGN).remove_leftovers()


# --- runs -----------------------------------------------------------------------------------


def write_meta(out: Path, campaign: Campaign) -> None:
    Store(out, CAMPAIGN).write_identity(campaign.meta())


def load_meta(out_dir: str | os.PathLike[str]) -> dict:
    """``campaign.json`` of a campaign directory."""
    meta = Store(out_dir, CAMPAIGN).read_identity()
    if meta is None:
        raise CampaignError(f"{out_dir}: not a campaign directory (no campaign.json)")
    return meta


def _is_run(path: Path, rec: dict) -> bool:
    """Whether a stored item is a run that succeeded, in its own file (atomic writes make anything else unlikely)."""
    return rec.get("status") == "ok" and rec.get("run_id") == path.stem


def _read_record(store: Store, path: Path) -> dict | None:
    """A stored run, or None if absent, unreadable or not a success."""
    rec = store.read(path)
    return rec if rec is not None and _is_run(path, rec) else None


def stored_run_ids(out_dir: str | os.PathLike[str]) -> set[str]:
    """Run ids with a readable stored result in ``out_dir/runs``."""
    return {path.stem for path, rec in Store(out_dir, CAMPAIGN).records() if _is_run(path, rec)}


def store_result(out: Path, record: dict) -> None:
    """Keep one finished run: ``runs/<id>.json`` if it succeeded (its failure file goes), else ``failures/``."""
    store = Store(out, CAMPAIGN)
    if record.get("status") == "ok":
        store.keep(record["run_id"], record)
    else:
        store.keep_failure(record["run_id"], record)


# --- tables, report, manifest -----------------------------------------------------------------


def consolidate(out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Rebuild the tidy tables of ``out_dir`` from its stored runs (rows in spec order)."""
    out = Path(out_dir)
    store = Store(out, CAMPAIGN)
    meta = load_meta(out)
    kind = get_kind(meta["kind"])
    labels = list(kind.labels)
    runs: list[dict] = []
    rows: dict[str, list[dict]] = {t.name: [] for t in kind.tables}
    for sd in meta["specs"]:
        rec = _read_record(store, store.item_path(sd["run_id"]))
        if rec is None:
            continue
        runs.append({"run_id": sd["run_id"], **{k: sd["labels"].get(k) for k in labels}, **kind.run_columns(sd),
                     **rec["summary"]})
        for table in kind.tables:
            key = {"run_id": sd["run_id"], **{k: sd["labels"].get(k) for k in table.key}}
            # .get: a run stored before its kind had this table contributes no rows (its other tables stand)
            rows[table.name].extend({**key, **row} for row in rec.get(table.field, ()))
    frames = {"runs": pd.DataFrame(runs) if runs else pd.DataFrame(columns=["run_id", *labels])}
    for table in kind.tables:
        df = pd.DataFrame(rows[table.name], columns=list(table.columns))
        if len(df):
            for column in table.integers:  # nullable: the classification's overall row has no week
                df[column] = df[column].astype("Int64")
        frames[table.name] = df
    written = {}
    for name, df in frames.items():
        written[name] = atomic_write_text(out / f"{name}.csv", df.to_csv(index=False))
    return written


def remove_outputs(out: Path, kind_name: object) -> None:
    """Remove what :func:`publish` wrote for a campaign of kind ``kind_name`` (tables, report, plots, manifest).

    For a directory reused by a campaign of another kind: its tables and report described the old
    campaign, and those the new kind does not write would stay beside the new ones.  Stored runs stay.
    """
    try:
        kind = get_kind(str(kind_name))
    except CampaignError:  # an unknown kind (a damaged campaign.json): its files cannot be named
        return
    names = ["runs.csv", *(f"{t.name}.csv" for t in kind.tables), "report.md", *kind.report_files, MANIFEST]
    for name in names:
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "plots", ignore_errors=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _table_names(meta: dict) -> list[str]:
    return ["runs.csv", *(f"{t.name}.csv" for t in get_kind(meta["kind"]).tables)]


def outputs_intact(out: Path, names: list[str]) -> bool:
    """Whether the manifest exists and every file of ``names`` matches it."""
    try:
        files = json.loads((out / MANIFEST).read_text())["files"]
        return all(name in files and _sha256(out / name) == files[name] for name in names)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def publish(out_dir: str | os.PathLike[str], *, tables: bool = True, report: bool = True) -> Path | None:
    """Rebuild the tables (from ``runs/``) and the report (from the tables), then the manifest, last.

    ``tables=False`` (``--report-only``) keeps the tables when the manifest
    vouches for them, and rebuilds them from ``runs/`` when it does not.
    Returns the report's path (None without a report).
    """
    out = Path(out_dir)
    meta = load_meta(out)
    kind = get_kind(meta["kind"])
    names = _table_names(meta)
    if not tables and (out / "runs").is_dir() and not outputs_intact(out, names):
        tables = True  # a rebuild was cut short (or the directory predates the manifest): redo the tables
    (out / MANIFEST).unlink(missing_ok=True)
    if tables:
        consolidate(out)
    files = list(names)
    path = None
    if report:
        path = write_report(out, meta, tables=[*names[1:], *kind.report_files], section=kind.report)
        files += [path.name, *(f for f in kind.report_files if (out / f).exists())]
        files += sorted(str(p.relative_to(out)) for p in (out / "plots").glob("*.png"))
    write_json(out / MANIFEST, {"format": 1, "kind": meta["kind"],
                                "files": {name: _sha256(out / name) for name in files}})
    return path
