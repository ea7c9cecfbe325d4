"""A tune directory's stored weeks: every finished task kept at once, reused by a later run.

Layout of ``--out DIR``:

- ``runs/<id>.json``: one finished task (some candidates on some weeks of one
  half), written atomically by the coordinator as soon as it arrives: its rows
  (one per candidate and week: the metrics, and on the testing half every job's
  wait and user) and what each candidate cost.  A row is found again by what
  decides it - the data (:func:`data_identity`: the trace's bytes and how it was
  read), the seed, tau, the half, the candidate (its options and warm-up) and
  the week - so a re-run, even with another budget or other candidates,
  simulates only the weeks it has not stored;
- ``tune.json``: the settings, the cost model and the plan of the last run
  (a re-run with the same settings resumes that plan: the same decisions);
- the outputs (``recommendation.json``, ``report.html``, ...), rewritten at the end;
- ``.campaign.lock``: the campaign engine's directory lock (one process at a time).

The stored tasks, ``tune.json``, the lock and the leftovers are kept by the one
resumable store (:mod:`bftune.support.store`, with campaigns' runs and the index
collection's windows) in the layout :data:`TUNE`: a task's file is named by a
hash of the rows it holds, and tune keeps no failures (a lost task takes its
candidates out of the race).  A campaign's directory is refused: both keep
``runs/`` and write ``weeks.csv``.
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path

from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.runs.summary import jsonable
from bftune.experiments.tune.weeks import Source
from bftune.support.store import JsonForm, Layout, Store
from bftune.workloads.cleaning import identity_name

#: Version of the stored rows' meaning; bump it when a week's metrics change.
FORMAT = 1

#: tune's layout of the one resumable store: ``runs/<hash>.json`` (strict JSON on one line, no final newline),
#: ``tune.json`` (``write_json``: two spaces of indent).  Its errors are the campaign engine's, as its lock's.
TUNE = Layout(what="tune run", identity="tune.json",
              item_form=JsonForm(indent=None, newline=False, clean=jsonable),
              identity_form=JsonForm(indent=2, clean=jsonable), foreign=(("campaign.json", "campaign"),),
              error=CampaignError)


def open_dir(out_dir: str | Path) -> Store:
    """``--out``, created and checked before any work (one line if unusable), with its folders."""
    store = Store.open(out_dir, TUNE)
    store.refuse_foreign()
    store.make_folders()
    return store


def data_identity(source: Source) -> str:
    """What the weeks are made of: the trace's bytes (a synthetic source: its parameters) and how it is read."""
    if source.trace.startswith("synthetic:"):
        content = source.trace
    else:
        digest = hashlib.sha256()
        with open(source.path or source.trace, "rb") as fh:
            for block in iter(partial(fh.read, 1 << 20), b""):
                digest.update(block)
        content = digest.hexdigest()
    fields = [FORMAT, content, source.procs, source.walltime_from_runtime, source.lenient,
              identity_name(source.cleaning), source.timezone]
    if source.dump:  # only when given: the identities of stores made before these options hold
        fields.append([[key, list(value) if isinstance(value, tuple) else value] for key, value in source.dump])
    if source.holdout:  # likewise
        fields.append(["holdout", source.holdout])
    text = json.dumps(fields, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class WeekStore:
    """The stored rows of one data identity, seed and tau, by (half, candidate key, week)."""

    def __init__(self, out: Path, data: str, seed: int, tau: float) -> None:
        self.store = Store(out, TUNE)
        self.dir = self.store.items_dir
        self.data, self.seed, self.tau = data, seed, tau
        self.rows: dict[tuple[str, str, int], dict] = {}
        self.costs: list[dict] = []
        self.files = 0

    def load(self) -> int:
        """Read every stored task of this data, seed and tau; the number of rows found."""
        for _, record in self.store.records():  # a damaged file is skipped: the weeks it held are simulated again
            if (record.get("format"), record.get("data"), record.get("seed"), record.get("tau")) != \
                    (FORMAT, self.data, self.seed, self.tau):
                continue
            self._take(record)
        return len(self.rows)

    def _take(self, record: dict) -> None:
        split = record["split"]
        for row in record["rows"]:
            self.rows[(split, row["candidate"], row["week"])] = row
        self.costs.extend(record.get("costs", []))
        self.files += 1

    def has(self, split: str, key: str, week: int) -> bool:
        return (split, key, week) in self.rows

    def get(self, split: str, key: str, week: int) -> dict:
        return self.rows[(split, key, week)]

    def add(self, result: dict) -> None:
        """Store a finished task (atomically) and index its rows."""
        record = {"format": FORMAT, "data": self.data, "seed": self.seed, "tau": self.tau, **result}
        pairs = sorted((row["candidate"], row["week"]) for row in result["rows"])
        name = hashlib.sha256(json.dumps([self.data, self.seed, self.tau, result["split"], pairs]).encode())
        self.store.keep(name.hexdigest()[:20], record)
        self._take(record)
