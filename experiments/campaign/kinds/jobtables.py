"""Per-job tables kept inside a run's record: one row per job, for analyses that compare runs job by job.

Why inside the record (``runs/<run_id>.json``, field :data:`FIELD`) and not
in a table of the campaign: a whole-trace run has tens or hundreds of
thousands of jobs, so a campaign-wide ``jobs.csv`` rebuilt at every publish
would be the size of every run's out_jobs.csv together.  Kept in the record,
the table travels with its run (resume, ``--shard`` copies of ``runs/*.json``)
and is read only by who needs it.  It is CSV, gzip-compressed and base64-encoded
(JSON holds text): about 1 MB for the 77,222 jobs of CTC-SP2.

Numbers are written exactly (``repr`` of the float; integral values without
``.0``), so figures computed from the table are those of the run.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from bftune.experiments.campaign.specs import CampaignError

#: The record's field holding the table.
FIELD = "job_table"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:  # NaN
            return ""
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def encode(columns: Sequence[str], rows: Iterable[Sequence]) -> str:
    """The table (a header, then one line per row; None and NaN as empty cells) as the record's text."""
    lines = [",".join(columns)]
    lines += [",".join(map(_cell, row)) for row in rows]
    data = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=6, mtime=0)
    return base64.b64encode(data).decode("ascii")


def decode(text: str) -> pd.DataFrame:
    """The table a record holds (:func:`encode`'s inverse)."""
    return pd.read_csv(io.BytesIO(gzip.decompress(base64.b64decode(text))))


def read(campaign_dir: str | Path, run_id: str) -> pd.DataFrame | None:
    """Run ``run_id``'s per-job table in a campaign directory; None if the run is not stored or kept none."""
    path = Path(campaign_dir) / "runs" / f"{run_id}.json"
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CampaignError(f"{path}: unreadable ({exc})") from None
    text = record.get(FIELD) if isinstance(record, dict) and record.get("status") == "ok" else None
    return None if text is None else decode(text)
