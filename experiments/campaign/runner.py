"""The coordinator: run every spec not stored yet, store each result at once, then publish tables and report.

One process coordinates (this one); runs execute on an executor
(``executors.py``).  Only the coordinator writes in the campaign directory,
under its lock (``store.py``).  Interrupted (SIGINT, or SIGTERM through the
CLI), it stops the workers at once, keeps every stored run and re-raises:
the same command resumes.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TextIO

from bftune.experiments.campaign.executors import check_workers
from bftune.experiments.campaign.kinds import get_kind
from bftune.experiments.campaign.kinds.kind import SHARED_REPLAYS
from bftune.experiments.campaign.loop import Work, run_work
from bftune.experiments.campaign.script import check_script, refuse_nested
from bftune.experiments.campaign.specs import Campaign, CampaignError, RunSpec
from bftune.experiments.campaign.store import (DirectoryLock, load_meta, open_out_dir, publish, remove_leftovers,
                                               remove_outputs, store_result, stored_run_ids, write_meta)
from bftune.experiments.campaign.workloads import check_sources
from bftune.experiments.campaign.worker import execute_run, lost_run, spec_of
from bftune.support.write_errors import write_failure


@dataclass
class Outcome:
    total: int
    reused: int
    done: int
    failures: list[dict]
    out_dir: Path
    wall_s: float
    executor: str

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0


def run_campaign(campaign: Campaign, out_dir: str | os.PathLike[str], *, workers: int | None = None,
                 dask=None, specs: list[RunSpec] | None = None, progress: bool = True, stream: TextIO | None = None,
                 report: bool = True, share_replays: bool = True, scope: str = "") -> Outcome:
    """Run every spec not yet stored in ``out_dir``, store each at once, then write tables and report.

    ``specs`` restricts this invocation to some of the campaign's runs (the
    tables still cover the whole campaign, with what is stored).  The
    directory and ``workers`` are checked, and the directory locked, before
    any work.  ``share_replays=False`` hands no run its group's period replays
    (``_SharedReplays``; the results are the same: for measuring what it saves).
    ``scope`` names the part of the campaign ``specs`` is, for the progress line (``shards.py``).
    """
    stream = stream if stream is not None else sys.stderr
    refuse_nested()
    parallel = dask is not None or check_workers(workers) > 1
    out = open_out_dir(out_dir)
    with DirectoryLock(out):
        remove_leftovers(out)
        specs = list(campaign.specs if specs is None else specs)
        stored = stored_run_ids(out)
        todo = [s for s in specs if s.run_id not in stored]
        check_sources(todo)  # a bad trace: one line now, not a failure of every run
        if parallel:
            check_script(todo)  # workers that would run the script again: one line now, not a failure per run
        _note_previous(out, campaign, stream)
        write_meta(out, campaign)
        outcome = Outcome(total=len(specs), reused=len(specs) - len(todo), done=0, failures=[], out_dir=out,
                          wall_s=0.0, executor="")
        # A scheduler that takes every run at once (Dask) leaves nothing to share: runs would only wait.
        shared = _SharedReplays(todo, enabled=share_replays and dask is None)

        def header(executor: str) -> str:
            scoped = f" ({scope} of {len(campaign.specs)})" if scope else ""
            return (f"campaign {campaign.name} ({campaign.kind}): {len(specs)} runs{scoped}, {outcome.reused} "
                    f"already stored, {len(todo)} to run on {executor}")

        def store(record: dict) -> bool:
            shared.collect(record)
            _store(out, record, outcome)
            return record.get("status") == "ok"

        ran = run_work(Work(fn=execute_run, items=shared.items(), count=len(todo), total=len(specs), lost=_lost,
                            store=store, header=header, stored_in=f"{out}/runs"),
                       workers=workers, dask=dask, progress=progress, stream=stream)
        outcome.executor, outcome.wall_s = ran.executor, ran.wall_s
        try:
            publish(out, report=report)
        except OSError as exc:
            raise CampaignError(write_failure(exc, out, "every run is stored (the tables and the report are "
                                                        "rebuilt from them)")) from None
    return outcome


class _SharedReplays:
    """Period replays shared by the runs of a group (``CampaignKind.replay_group``), through the coordinator.

    ``completed`` pulls items one by one as workers free up; each item of a
    group carries a copy, taken as it is pulled, of what the group's finished
    runs have replayed (a copy: the executor may pickle it in a background
    thread while the coordinator goes on merging), and its run replays only the
    rest.  A run whose group has a run in flight is pulled later, after runs of
    other groups, so that it starts with that run's table; when only such runs
    are left, the first goes anyway (nothing ever waits for sharing).  Full and
    noisy feedback on one resampled trace replay mostly the same periods, so
    the second costs little more than a fixed policy.  Workers never write in
    the campaign directory; a run's results do not depend on what it was
    handed; a group's table is dropped once its runs are done.
    """

    def __init__(self, todo: list[RunSpec], enabled: bool = True) -> None:
        self.todo = todo
        self.enabled = enabled
        self.tables: dict[tuple, dict[str, float]] = {}
        self.left: dict[tuple, int] = {}
        self.flying: dict[tuple, int] = {}
        for spec in todo:
            group = self._group(spec)
            if group is not None:
                self.tables.setdefault(group, {})
                self.left[group] = self.left.get(group, 0) + 1
                self.flying[group] = 0

    def _group(self, spec: RunSpec) -> tuple | None:
        replay_group = get_kind(spec.kind).replay_group
        return None if replay_group is None or not self.enabled else replay_group(spec)

    def items(self) -> Iterator[dict]:
        """The runs' items in submission order, each made as ``completed`` pulls it."""
        pending = deque((spec, self._group(spec)) for spec in self.todo)
        while pending:
            ready = next((i for i, (_, g) in enumerate(pending) if g is None or not self.flying[g]), 0)
            spec, group = pending[ready]
            del pending[ready]
            item = spec.to_dict()
            if group is not None:
                item[SHARED_REPLAYS] = dict(self.tables[group])
                self.flying[group] += 1
            yield item

    def collect(self, record: dict) -> None:
        """Take a finished run's table out of its record (it is not stored) into its group's."""
        table = record.pop(SHARED_REPLAYS, None)
        group = self._group(RunSpec.from_dict(record["spec"]))
        if group is None or group not in self.left:
            return
        if table:
            self.tables[group].update(table)
        self.flying[group] -= 1
        self.left[group] -= 1
        if not self.left[group]:
            self.tables[group].clear()  # every run of the group is done


def _lost(item: dict, exc: BaseException) -> dict:
    """The failure record of a run lost with its worker."""
    return lost_run(spec_of(item), exc)


def _store(out: Path, record: dict, outcome: Outcome) -> None:
    try:
        store_result(out, record)
    except OSError as exc:
        raise CampaignError(write_failure(exc, out, f"the {outcome.reused + outcome.done} runs stored before "
                                                    "are kept")) from None
    if record.get("status") == "ok":
        outcome.done += 1
    else:
        outcome.failures.append(record)


def _note_previous(out: Path, campaign: Campaign, stream: TextIO) -> None:
    """Say so when ``out`` held another campaign: its runs stay, the tables will not cover them."""
    if not (out / "campaign.json").exists():
        return
    try:
        previous = load_meta(out)
    except CampaignError:
        previous = {}
    if (previous.get("name"), previous.get("kind")) != (campaign.name, campaign.kind):
        stream.write(f"note: {out} held campaign {previous.get('name')!r} ({previous.get('kind')}); its stored "
                     f"runs stay in runs/ but the tables will cover {campaign.name!r} only\n")
    if previous.get("kind") not in (None, campaign.kind):  # none of its tables may stay beside the new kind's
        remove_outputs(out, previous.get("kind"))


def format_failures(failures: list[dict]) -> str:
    lines = [f"{len(failures)} run(s) failed (details and tracebacks in failures/<run_id>.json):"]
    for f in failures:
        spec = RunSpec.from_dict(f["spec"])
        lines.append(f"  - {spec.describe()}\n    error: {f.get('error')}")
    return "\n".join(lines)
