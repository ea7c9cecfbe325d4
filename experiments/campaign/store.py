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
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
import shutil
import socket
from pathlib import Path
from typing import TextIO

import pandas as pd

from bftune.experiments.campaign.kinds import get_kind
from bftune.experiments.campaign.specs import Campaign, CampaignError
from bftune.experiments.campaign.report.build import write_report
from bftune.experiments.runs.summary import write_json
from bftune.support.files import atomic_write_text, clean_leftovers

LOCK = ".campaign.lock"
MANIFEST = "outputs.json"


# --- the directory and its lock -----------------------------------------------------------


def open_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Create (if needed) and check a campaign directory before any work; one clear line if unusable."""
    if str(out_dir).strip() == "":
        raise CampaignError("--out: empty path; give the campaign directory")
    out = Path(out_dir)
    try:
        for d in (out, out / "runs", out / "failures"):
            d.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CampaignError(f"{out}: not a directory (a file is in the way); give a directory for --out") from None
    except OSError as exc:
        raise CampaignError(f"{out}: cannot use it as the campaign directory: "
                            f"{exc.strerror or exc}{f' ({exc.filename})' if exc.filename else ''}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise CampaignError(f"{out}: cannot write in it (permission denied)")
    return out


class DirectoryLock:
    """An exclusive lock on a campaign directory, or learn-index's (``flock`` on ``DIR/.campaign.lock``).

    The lock is non-blocking: a second campaign on a locked directory stops at
    once with the holder named.  The kernel drops it when the holding process
    ends (even by SIGKILL), so a crash leaves no stale lock; worker processes
    are spawned and do not inherit it.  (Advisory locks on network file
    systems depend on the server.)
    """

    def __init__(self, out: Path, what: str = "campaign") -> None:
        self.path = out / LOCK
        self.what = what  # what holds such a directory, for the message (``bftune learn-index``: a collection)
        self._fh: TextIO | None = None

    def __enter__(self) -> DirectoryLock:
        try:
            fh = open(self.path, "a+")
        except OSError as exc:
            raise CampaignError(f"{self.path}: cannot create the lock file ({exc.strerror})") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise CampaignError(f"{self.path.parent}: in use by another {self.what} ({holder}); wait for it to end "
                                "or choose another --out") from None
        fh.seek(0)
        fh.truncate()
        now = _dt.datetime.now().isoformat(timespec="seconds")
        fh.write(f"pid {os.getpid()} on {socket.gethostname()} since {now}\n")
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc) -> None:
        if self._fh is not None:
            self._fh.close()  # closing the descriptor releases the lock
            self._fh = None


def remove_leftovers(out: Path) -> int:
    """Delete the temporaries of writes cut short by a crash (:func:`bftune.support.files.clean_leftovers`, per folder).

    Every file of a campaign is written through :mod:`bftune.support.files` (JSON, CSV, reports, plots), so
    its temporaries are ``.NAME.XXXXXXXX.tmp`` files that a living writer keeps locked.
    """
    return sum(len(clean_leftovers(d)) for d in (out, out / "runs", out / "failures", out / "plots") if d.is_dir())


# --- runs -----------------------------------------------------------------------------------


def write_meta(out: Path, campaign: Campaign) -> None:
    write_json(out / "campaign.json", campaign.meta(), indent=1)


def load_meta(out_dir: str | os.PathLike[str]) -> dict:
    """``campaign.json`` of a campaign directory."""
    path = Path(out_dir) / "campaign.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{out_dir}: not a campaign directory (no campaign.json)") from None
    except NotADirectoryError:
        raise CampaignError(f"{out_dir}: not a campaign directory") from None
    except (ValueError, OSError) as exc:
        raise CampaignError(f"{path}: unreadable ({exc})") from None


def _read_record(path: Path) -> dict | None:
    """A stored run, or None if absent, unreadable or not a success (atomic writes make that unlikely)."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("status") == "ok" and rec.get("run_id") == path.stem else None


def stored_run_ids(out_dir: str | os.PathLike[str]) -> set[str]:
    """Run ids with a readable stored result in ``out_dir/runs``."""
    return {p.stem for p in (Path(out_dir) / "runs").glob("*.json") if _read_record(p) is not None}


def store_result(out: Path, record: dict) -> None:
    """Keep one finished run: ``runs/<id>.json`` if it succeeded (its failure file goes), else ``failures/``."""
    run_id = record["run_id"]
    if record.get("status") == "ok":
        write_json(out / "runs" / f"{run_id}.json", record, indent=1)
        (out / "failures" / f"{run_id}.json").unlink(missing_ok=True)
    else:
        write_json(out / "failures" / f"{run_id}.json", record, indent=1)


# --- tables, report, manifest -----------------------------------------------------------------


def consolidate(out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Rebuild the tidy tables of ``out_dir`` from its stored runs (rows in spec order)."""
    out = Path(out_dir)
    meta = load_meta(out)
    kind = get_kind(meta["kind"])
    labels = list(kind.labels)
    runs: list[dict] = []
    rows: dict[str, list[dict]] = {t.name: [] for t in kind.tables}
    for sd in meta["specs"]:
        rec = _read_record(out / "runs" / f"{sd['run_id']}.json")
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
