"""Study 003's stored runs, read for its report: the campaigns under ``out/campaigns/<name>/``.

Every figure of the report comes through here: a campaign's tables (rebuilt
from its stored runs first, under its lock, as ``bftune campaign
--report-only`` does, so that ``--report-only`` sees every run stored since),
one run's summary row, and one run's per-job table
(:mod:`bftune.experiments.campaign.kinds.jobtables`).  Traces are named by
their short names (``CTC-SP2``) in the report's prose and by their labels in
the campaigns' tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.command import report_only
from bftune.experiments.campaign.kinds import jobtables
from bftune.experiments.campaign.report.common import read_table
from bftune.experiments.studies.s003.plan import TRACES


def short(label: str) -> str:
    """A trace's short name (``CTC-SP2``) from its label in the tables (``CTC-SP2-1996-3.1-cln``)."""
    return next((s for s, (file, _) in TRACES.items() if file.startswith(label)), label)


@dataclass
class Store:
    """The campaigns of one reproduction directory, each rebuilt once and read on demand."""

    out: Path
    _runs: dict[str, pd.DataFrame | None] = field(default_factory=dict)
    _jobs: dict[tuple[str, str], pd.DataFrame | None] = field(default_factory=dict)
    _rebuilt: set[str] = field(default_factory=set)

    def directory(self, name: str) -> Path:
        return self.out / "campaigns" / name

    def exists(self, name: str) -> bool:
        return (self.directory(name) / "campaign.json").exists()

    def rebuild(self, name: str) -> bool:
        """The campaign's tables and own report rebuilt from its runs, once per store (False: not run yet)."""
        if not self.exists(name):
            return False
        if name not in self._rebuilt:
            report_only(str(self.directory(name)))
            self._rebuilt.add(name)
        return True

    def table(self, name: str, table: str = "runs") -> pd.DataFrame | None:
        """A table of campaign ``name`` (rebuilt first), a ``short`` column beside ``trace``; None if absent."""
        key = f"{name}/{table}"
        if key not in self._runs:
            self.rebuild(name)
            df = read_table(self.directory(name), table) if self.exists(name) else None
            if df is not None and "status" in df.columns:
                df = df[df["status"] == "ok"]
            if df is not None:
                df = df.copy()
                df["short"] = df["trace"].map(short)
            self._runs[key] = df if df is not None and not df.empty else None
        return self._runs[key]

    def run(self, name: str, trace: str, strategy: str, error: float | None = None,
            seed: int | None = None) -> pd.Series | None:
        """One run of campaign ``name``: trace (short name), strategy, and for the virtual sweep error and seed."""
        df = self.table(name)
        if df is None:
            return None
        sel = df[(df["short"] == trace) & (df["strategy"] == strategy)]
        if error is None:
            sel = sel[sel["predictor"] != "virtual"]
        else:
            sel = sel[(sel["predictor"] == "virtual") & (sel["error"] == error) & (sel["seed"] == seed)]
        return sel.iloc[0] if len(sel) else None

    def value(self, name: str, trace: str, strategy: str, column: str, **virtual) -> float | None:
        row = self.run(name, trace, strategy, **virtual)
        if row is None or column not in row or pd.isna(row[column]):
            return None
        return float(row[column])

    def jobs(self, name: str, trace: str, strategy: str) -> pd.DataFrame | None:
        """The per-job table of campaign ``name``'s run of ``strategy`` on ``trace`` (main comparison)."""
        row = self.run(name, trace, strategy)
        if row is None:
            return None
        key = (name, str(row["run_id"]))
        if key not in self._jobs:
            self._jobs[key] = jobtables.read(self.directory(name), key[1])
        return self._jobs[key]

    def starts(self, name: str, trace: str, strategy: str) -> pd.DataFrame | None:
        """``starts.csv``'s rows of campaign ``name``'s run of ``strategy`` on ``trace``, by venture step."""
        row = self.run(name, trace, strategy)
        df = self.table(name, "starts")
        if row is None or df is None:
            return None
        sel = df[df["run_id"] == row["run_id"]]
        return sel.set_index("venture_step") if len(sel) else None

    def runs_stored(self, name: str) -> tuple[int, int]:
        """(runs stored, runs planned) of campaign ``name`` (0, 0 when not run yet)."""
        if not self.exists(name):
            return 0, 0
        meta = json.loads((self.directory(name) / "campaign.json").read_text())
        stored = sum((self.directory(name) / "runs" / f"{s['run_id']}.json").exists() for s in meta["specs"])
        return stored, len(meta["specs"])
