"""The coordinator of ``bftune tune``: pilot, plan, racing stages on the training half, finalists on the testing half.

1. **Data**: the trace is read (SWF, Slurm dump or synthetic: the campaign
   engine's reader), split at its temporal midpoint; each half must hold a
   whole week (resampling draws whole weeks).
2. **Pilot**: the baseline and one candidate per family simulated on the first
   training weeks, timed: the cost model (``budget.py``); its rows are kept.
3. **Plan**: how many weeks per half, and whether the budget halves the
   candidates (``budget.py``).  A re-run with the same settings takes the
   stored cost model and plan, so it makes the same decisions.
4. **Training half**, stage by stage: every candidate still in the race and
   the baseline on the stage's weeks (stored weeks are not simulated again),
   then the racing test (``stats.py``), then the survivors the budget allows.
5. **Testing half**: the ``--finalists`` best survivors that meet the MaxWait
   limit and the baseline on N weeks, every job's wait kept.

Simulations run on the campaign engine's one loop (``campaign/loop.py``: inline,
local processes or Dask, one session for the whole command); every finished
task is stored at once (``store.py``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, TextIO

import numpy as np

from bftune.experiments.campaign.loop import Session, Work, run_work
from bftune.experiments.campaign.workloads import base_trace, source_key, source_trace
from bftune.support.progress import Progress
from bftune.support.store import Store
from bftune.experiments.tune import budget as bud, planning, slurmfamily, slurmrace
from bftune.experiments.tune.candidates import Candidate, baselines, build
from bftune.experiments.tune.datacheck import WARN_WORK_SHARE, DataRefused, check_data, replay_of, whole_log_baseline
from bftune.experiments.tune.stats import nanmean, race, ratio
from bftune.experiments.tune.store import TUNE, WeekStore, data_identity, open_dir
from bftune.experiments.tune.weeks import Source, n_weeks, pool, run_task, spec_of, task_source
from bftune.workloads.cleaning import identity_name
from bftune.workloads.model import WEEK
from bftune.workloads.slurm import user_names
from bftune.workloads.resample import whole_weeks

#: A half with fewer whole weeks than this gives resampled weeks of little variety (said in the outputs).
FEW_WEEKS = 4
#: The pilot's testing-week cost per job over its training one is trusted within these bounds (one week each).
TEST_SCALE_BOUNDS = (0.5, 2.0)
#: Seconds a fresh worker process spends importing bftune and numpy before its first task.
IMPORT_S = 1.5


class TuneError(ValueError):
    """Bad input or an impossible request (one line, exit status 2)."""


@dataclass
class Settings:
    """Everything a tune run is asked (the command line, checked)."""

    source: Source
    name: str
    objective: str
    max_wait_increase: float | None  # 0.1 = 10 %; None: no limit
    budget_s: float
    families: tuple[str, ...]
    policies: tuple[str, ...]
    thresholds: tuple[str, ...]
    max_weeks: int
    finalists: int
    seed: int
    tau: float
    out: Path
    workers: int | None = None
    dask: str | None = None
    progress: bool = True
    # --slurm-conf (docs/guides/slurm.md): the site's setting, the baseline instead of EASY-FCFS; its file's path
    # and text (the diff of the outputs) and the CPUs of its NodeName lines (0: none declared)
    site: dict | None = None
    site_path: str | None = None
    site_text: str | None = None
    site_cpus: int = 0
    # --later-weeks: the later period the recommendation is judged for (None: the held-out part's length); it
    # decides after the race, so it is not part of the identity (a stored race is judged for another length)
    later_weeks: int | None = None

    def identity(self) -> dict:
        """What decides the plan and the results (not where they go, nor how many processes run them)."""
        source = asdict(self.source)
        source["cleaning"] = identity_name(self.source.cleaning)  # a renamed cleaning keeps the stored plan
        for key in ("dump", "holdout"):  # added later: absent when not used, so stored plans stay valid
            if not source[key]:
                del source[key]
        site = {"site": self.site} if self.site else {}  # added later: absent without --slurm-conf
        return {"source": source, **site, "objective": self.objective,
                "max_wait_increase": self.max_wait_increase, "budget_s": self.budget_s, "families": self.families,
                "policies": self.policies, "thresholds": self.thresholds, "max_weeks": self.max_weeks,
                "finalists": self.finalists, "seed": self.seed, "tau": self.tau}


@dataclass
class Race:
    """What the run did: the candidates, the plan, each stage, who left when and why, the finalists."""

    settings: Settings
    data: dict
    candidates: list[Candidate]
    baselines: dict[int, Candidate]
    model: bud.CostModel
    plan: bud.Plan
    store: WeekStore
    stages: list[dict] = field(default_factory=list)
    status: dict[str, dict] = field(default_factory=dict)  # candidate key -> how it left the race (or not)
    train_weeks: dict[str, int] = field(default_factory=dict)
    finalists: list[str] = field(default_factory=list)
    test_weeks: int = 0
    timings: dict = field(default_factory=dict)
    resumed: bool = False
    calibrated: bool = False  # the cost model re-measured on the first stage's tasks (planning.calibrate)
    decisions: list[dict] = field(default_factory=list)  # each stage boundary's decision (planning.py)

    @property
    def base_label(self) -> str:
        """The baseline's name in the outputs' sentences (EASY-FCFS-FCFS, or the site's slurm.conf)."""
        return self.baselines[0].label

    @property
    def halved(self) -> bool:
        """Whether the budget dropped a candidate (a halving the plan meant to do but the racing test made
        needless is not one: the outputs say what happened)."""
        return any(stage["dropped_by_budget"] for stage in self.stages)

    def by_key(self) -> dict[str, Candidate]:
        return {c.key: c for c in [*self.candidates, *self.baselines.values()]}

    def values(self, split: str, candidate: Candidate, weeks: int, metric: str) -> np.ndarray:
        return np.array([self.store.get(split, candidate.key, w)[metric] for w in range(weeks)], dtype=float)

    def ratios(self, split: str, candidate: Candidate, weeks: int, metric: str) -> np.ndarray:
        base = self.baselines[candidate.warmup]
        return ratio(self.values(split, candidate, weeks, metric), self.values(split, base, weeks, metric))


def describe_data(settings: Settings) -> dict:
    """Read the trace once here (bad input fails now, before any work) and say what the halves hold."""
    spec = spec_of(settings.source, "train", 1, settings.seed)
    halves = {}
    t0 = time.perf_counter()
    for split in ("train", "test"):
        half = source_trace(spec_of(settings.source, split, 1, settings.seed))
        weeks = whole_weeks(half)
        if weeks < 1:
            raise TuneError(f"{settings.source.trace}: the {split} half spans less than one whole week of submissions; "
                            "tune resamples whole weeks of each half: give a trace of at least two weeks")
        first = min(j.submit for j in half.jobs)
        in_weeks = sum(1 for j in half.jobs if j.submit - first < weeks * WEEK)
        halves[split] = {"jobs": len(half.jobs), "whole_weeks": weeks, "jobs_per_week": in_weeks / weeks,
                         "first_submit": first, "last_submit": max(j.submit for j in half.jobs)}
    read_s = time.perf_counter() - t0
    whole = dataclasses.replace(spec, holdout=0.0, run_id="x")  # the whole log, validation period included
    base = base_trace(*source_key(whole))
    notes = [f"the {split} half holds only {h['whole_weeks']} whole week(s): its resampled weeks mix too few "
             "weeks to vary much, and the intervals understate the uncertainty (give a longer trace)"
             for split, h in halves.items() if h["whole_weeks"] < FEW_WEEKS]
    if settings.source.procs is None and any("largest allocation" in line for line in base.header_lines):
        notes.insert(0, f"machine size {base.max_procs} processors, the largest allocation in the Slurm dump "
                        "(give --procs M for the machine's real size)")
    tres = int(base.header.get("TRESJobs", "0") or 0)
    notes += slurmfamily.cpu_notes(settings.site_cpus, base.max_procs)
    if tres:
        notes.append(f"{tres} jobs of the dump asked for GPUs or other TRES: bftune schedules processors only, "
                     "so what waits for a GPU is not modelled")
    t0 = time.perf_counter()
    fidelity = replay_of(base, settings.tau, settings.site)
    try:
        checks = check_data(whole, base, whole_log_baseline(base, settings.tau, fidelity, settings.site),
                            settings.source.trace.startswith("synthetic:"))
    except DataRefused as exc:
        raise TuneError(str(exc)) from None
    read_s += time.perf_counter() - t0  # a fixed cost of the run, as reading is
    if checks["work_share_kept"] < WARN_WORK_SHARE:
        notes.insert(0, f"the cleaning removed {1 - checks['work_share_kept']:.0%} of the log's processor-time: "
                        "the recommendation is for what is left"
                        + (f" (to keep more: {checks['remedy']})" if checks["remedy"] else ""))
    if fidelity is not None and fidelity["verdict"] == "far":
        notes.insert(0, f"replay: {fidelity['verdict_line']}; the gains below are between simulations of a "
                        "machine that waits otherwise than this one (docs/semantics/replay.md)")
    return {"name": settings.name, "trace": settings.source.trace, "jobs": len(base.jobs), "procs": base.max_procs,
            "cleaning": dict(base.cleaning), "unix_start_time": base.unix_start_time, "timezone": base.timezone,
            "halves": halves, "notes": notes, "read_s": read_s, "replay": fidelity, "checks": checks,
            "user_names": user_names(base)}


def pilot(settings: Settings, candidates: list[Candidate], bases: dict[int, Candidate], store: WeekStore,
          data: dict, workers: int) -> bud.CostModel:
    """Time the baseline and one candidate of each family on the first training weeks (their rows are kept)."""
    first = min(bud.FIRST_STAGE, settings.max_weeks)
    t0 = time.perf_counter()
    for split in ("train", "test"):
        pool(settings.source, split, first, settings.seed)
    resample_s = (time.perf_counter() - t0) / first
    reps: dict[str, Candidate] = {"baseline": bases[0]}
    for c in candidates:
        reps.setdefault(c.family, c)
    seconds: dict[str, float] = {}
    for family, c in reps.items():
        # Two weeks, the second timed: the first pays the family's imports (scikit-learn...) and caches.
        weeks = [min(c.warmup + k, first - 1) for k in (0, 1)] if c.warmup else [0, min(1, first - 1)]
        store.add(run_task(_task(settings, "train", first, weeks[:1], [c])))
        start = time.perf_counter()
        result = run_task(_task(settings, "train", first, weeks[1:], [c]))
        elapsed = time.perf_counter() - start
        store.add(result)
        jobs = sum(cost["jobs"] for cost in result["costs"])
        seconds[family] = elapsed / max(jobs, 1)
    # the baseline on two testing weeks: a testing week may cost more per job than a training one
    start = time.perf_counter()
    result = run_task(_task(settings, "test", first, [0, min(1, first - 1)], [bases[0]]))
    test_per_job = (time.perf_counter() - start) / max(sum(cost["jobs"] for cost in result["costs"]), 1)
    store.add(result)
    test_scale = min(max(test_per_job / seconds["baseline"], TEST_SCALE_BOUNDS[0]), TEST_SCALE_BOUNDS[1])
    return bud.CostModel(seconds_per_job=seconds, test_scale=test_scale,
                         jobs_per_week={s: h["jobs_per_week"] for s, h in data["halves"].items()},
                         workers=workers, read_s=data["read_s"] + (IMPORT_S if workers > 1 else 0.0),
                         resample_s_per_week=resample_s)


def _task(settings: Settings, split: str, pool_weeks: int, weeks: list[int], candidates: list[Candidate]) -> dict:
    return {"source": task_source(settings.source), "split": split, "pool": pool_weeks, "seed": settings.seed,
            "tau": settings.tau, "weeks": weeks, "keep_jobs": split == "test",
            "candidates": [{"key": c.key, "family": c.family, "options": c.options, "warmup": c.warmup}
                           for c in candidates]}


def tasks_for(settings: Settings, model: bud.CostModel, split: str, pool_weeks: int,
              needs: list[tuple[Candidate, list[int]]]) -> list[dict]:
    """Tasks for ``needs`` (each candidate's missing weeks): blocks of weeks, candidates grouped per block.

    A task is sized to about ``total / (4 x workers)`` worker-seconds, within ``budget.TASK_TARGET_S``, so
    that the workers stay busy to the end and each task's overhead stays small.
    """
    if not needs:
        return []
    cost = {c.key: model.week(c.family, c.warmup, split) for c, _ in needs}
    total = sum(cost[c.key] * len(weeks) for c, weeks in needs)
    low, high = bud.TASK_TARGET_S
    target = min(high, max(low, total / (4 * model.workers)))
    groups: dict[tuple[int, ...], list[Candidate]] = {}
    for c, weeks in needs:
        per = max(1, int(target / max(cost[c.key], 1e-9)))
        for i in range(0, len(weeks), per):
            groups.setdefault(tuple(weeks[i:i + per]), []).append(c)
    tasks = []
    for block, members in groups.items():
        batch: list[Candidate] = []
        work = 0.0
        for c in members:
            batch.append(c)
            work += cost[c.key] * len(block)
            if work >= target:
                tasks.append(_task(settings, split, pool_weeks, list(block), batch))
                batch, work = [], 0.0
        if batch:
            tasks.append(_task(settings, split, pool_weeks, list(block), batch))
    return tasks


class _Runner:
    """The executors, the store and the progress line, for the whole run (workers stay up between stages: one
    :class:`~bftune.experiments.campaign.loop.Session` of the campaigns' loop)."""

    def __init__(self, settings: Settings, store: WeekStore, model: bud.CostModel, plan: bud.Plan,
                 stream: TextIO) -> None:
        self.settings, self.store, self.model, self.plan = settings, store, model, plan
        self.bar = Progress(1, stream=stream, enabled=settings.progress, label="tune")
        self.session = Session(settings.workers, settings.dask, self.bar)
        self.stream = stream
        self.counted: set[tuple[str, str, int]] = set()  # the rows this run has used (taken or simulated)
        self.reused = 0
        self.simulated = 0
        self.failed: dict[str, str] = {}
        self.costs: list[dict] = []  # what this run's tasks cost, by candidate
        self.work_s = 0.0

    @property
    def done(self) -> int:
        return len(self.counted)

    def expect(self, total: int) -> None:
        self.bar.total = max(total, self.done)

    def run(self, split: str, candidates: list[Candidate], weeks: int, detail: str) -> None:
        """Every candidate on weeks 0..weeks-1 of ``split``: the stored ones taken, the others simulated."""
        needs = []
        for c in candidates:
            missing = []
            for w in range(weeks):
                row = (split, c.key, w)
                if row in self.counted:
                    continue
                if self.store.has(*row):
                    self.counted.add(row)
                    self.reused += 1
                else:
                    missing.append(w)
            if missing:
                needs.append((c, missing))
        self.bar.set(len(self.counted), detail, force=True)
        tasks = tasks_for(self.settings, self.model, split, self.plan.weeks, needs)
        if not tasks:
            return

        def lost(task: dict, exc: BaseException) -> dict:
            return {"split": split, "failed": task, "error": f"{type(exc).__name__}: {exc}"}

        def store(result: dict) -> bool:
            if "failed" in result:  # the task's worker died or was lost: its candidates are out
                task = result["failed"]
                for c in task["candidates"]:
                    self.failed[c["key"]] = result["error"]
                    self.counted.update((split, c["key"], w) for w in task["weeks"])
            else:
                self.store.add(result)
                self.counted.update((split, row["candidate"], row["week"]) for row in result["rows"])
                self.simulated += len(result["rows"])
                self.costs.extend(result["costs"])
                self.work_s += sum(cost["seconds"] for cost in result["costs"])
            self.bar.set(len(self.counted), detail)
            return "failed" not in result

        run_work(Work(fn=run_task, items=tasks, count=len(tasks), total=len(tasks), lost=lost, store=store,
                      header=str, stored_in=str(self.store.dir), noun="tasks", label="tune"),
                 stream=self.stream, session=self.session)

    def close(self, finished: bool) -> None:
        self.session.close(finished)


def run(settings: Settings, stream: TextIO | None = None, publish: Callable[[Race], None] | None = None) -> Race:
    """The whole tune run (module docstring); the :class:`Race` the outputs are made from.

    ``publish`` writes the outputs while the directory is still locked, so that a second tune started
    meanwhile cannot take the directory between the race and its outputs, nor write its own beside them.
    """
    stream = stream if stream is not None else sys.stderr
    wall0, cpu0 = time.perf_counter(), time.process_time()
    data = describe_data(settings)
    candidates = build(settings.families, settings.policies, settings.thresholds, settings.site)
    bases = baselines(candidates, settings.site)
    data_id = data_identity(settings.source)
    directory = open_dir(settings.out)
    out = directory.root
    with directory.lock():
        directory.remove_leftovers()
        store = WeekStore(out, data_id, settings.seed, settings.tau)
        stored = store.load()
        workers = _workers(settings)
        model, plan, previous = _plan(settings, candidates, bases, store, data, workers, out, wall0)
        race_ = Race(settings, data, candidates, bases, model, plan, store, resumed=previous is not None,
                     calibrated=bool(previous and previous.get("calibrated")),
                     decisions=list(previous.get("decisions", [])) if previous else [], timings={"started": wall0})
        if previous is None:
            planning.save(race_)
        race_.data["identity"] = data_id
        race_.data["stored_rows_found"] = stored
        _announce(race_, stream)
        runner = _Runner(settings, store, model, plan, stream)
        finished = False
        try:
            _train(race_, runner)
            _test(race_, runner)
            finished = True
        except KeyboardInterrupt:
            runner.close(False)
            stream.write(f"interrupted: every simulated week is stored in {out}/runs; run the same command again "
                         "to resume\n")
            raise
        finally:
            if finished:
                runner.close(True)
        race_.timings = {"wall_s": time.perf_counter() - wall0, "coordinator_cpu_s": time.process_time() - cpu0,
                         "worker_s": runner.work_s, "worker_cpu_s": sum(c.get("cpu_s", 0.0) for c in runner.costs),
                         "weeks_simulated": runner.simulated,
                         "weeks_reused": runner.reused, "estimate_s": race_.plan.estimate_s}
        for key, error in runner.failed.items():
            race_.status[key] = {"state": "failed", "reason": error}
        if publish is not None:
            publish(race_)
    return race_


def _workers(settings: Settings) -> int:
    if settings.dask is not None:
        return max(1, _dask_threads(settings.dask))
    from bftune.experiments.campaign.executors import check_workers

    return check_workers(settings.workers)


def _dask_threads(address: str) -> int:
    """The worker threads of a Dask cluster (the cost model's P)."""
    from bftune.experiments.campaign.executors import dask_address, dask_client

    with dask_client(dask_address(address)) as client:  # one line if unreachable, as for campaigns
        workers = client.scheduler_info().get("workers", {})
    return sum(w.get("nthreads", 1) for w in workers.values()) or 1


def _plan(settings: Settings, candidates: list[Candidate], bases: dict[int, Candidate], store: WeekStore,
          data: dict, workers: int, out: Path, started: float) -> tuple[bud.CostModel, bud.Plan, dict | None]:
    """The stored cost model and plan when the settings are the same (a resume: the stored record is returned
    too, with its decisions), else a pilot and a new plan (None)."""
    identity = json.loads(json.dumps(settings.identity()))
    try:
        previous = Store(out, TUNE).read_identity()
    except ValueError:  # unreadable: a pilot and a new plan, written over it
        previous = None
    if previous is not None:
        try:
            if previous.get("identity") == identity and previous.get("data") == data_identity(settings.source):
                model = bud.CostModel(**previous["cost_model"])
                model.workers = workers
                return model, bud.Plan(**previous["plan"]), previous
        except (OSError, ValueError, TypeError, KeyError):
            pass
    model = pilot(settings, candidates, bases, store, data, workers)
    try:
        plan = planning.make_plan(settings, model, candidates, bases, data, setup_s=time.perf_counter() - started)
    except bud.BudgetError as exc:
        raise TuneError(str(exc)) from None
    return model, plan, None


def _announce(race_: Race, stream: TextIO) -> None:
    s, plan = race_.settings, race_.plan
    families = ", ".join(dict.fromkeys(c.family for c in race_.candidates))
    how = ("every candidate may run every week (only the racing test drops candidates, unless the machine turns "
           "slower than measured: the rest is re-planned after each stage)" if not plan.halving else
           "the budget halves the candidates after each stage (successive halving) beside the racing test, "
           "unless the rest fits every survivor")
    stream.write(f"tune {race_.data['name']}: {len(race_.candidates)} candidates ({families}) against {race_.base_label}, "
                 f"objective {s.objective}; budget {bud._fmt(s.budget_s)} on {race_.model.workers} worker(s): "
                 f"{plan.weeks} resampled weeks per half in stages {', '.join(map(str, plan.stages))}; {how}; "
                 f"estimated {bud._fmt(plan.estimate_s)}"
                 f"{' (resuming the stored plan)' if race_.resumed else ''}\n")
    stream.write(race_.data["checks"]["line"] + "\n")
    for note in race_.data["notes"]:
        stream.write(f"note: {note}\n")


def _train(race_: Race, runner: _Runner) -> None:
    s = race_.settings
    alive = list(race_.candidates)
    previous = 0
    spent_work = 0.0
    stage_walls = [0.0, 0.0]  # the stages after the first: wall seconds taken, and estimated
    base_list = list(race_.baselines.values())
    runner.expect(_planned_total(race_, len(alive)))
    i = 0
    while i < len(race_.plan.stages):
        n = race_.plan.stages[i]
        detail = f"training stage {i + 1}/{len(race_.plan.stages)}: {len(alive)} candidates x {n_weeks(n)}"
        stage_start = time.perf_counter()
        runner.run("train", [*base_list, *alive], n, detail)
        if i == 0:
            planning.calibrate(race_, runner.costs or race_.store.costs)
            runner.plan = race_.plan
        plan = race_.plan
        stage_work = (sum(race_.model.week(c.family, c.warmup, "train") for c in alive) +
                      plan.baseline_train) * (n - previous)
        spent_work += stage_work
        alive = [c for c in alive if c.key not in runner.failed]
        _stop_if_lost(race_, runner, bool(alive))
        for c in alive:
            race_.train_weeks[c.key] = n
        objective = {c.key: race_.ratios("train", c, n, s.objective) for c in alive}
        max_wait = {c.key: race_.ratios("train", c, n, "max_wait") for c in alive}
        leader, dropped = race(objective, max_wait, s.max_wait_increase)
        spared = slurmrace.spared(s.families, alive, objective, race_.candidates)
        slurmrace.spare_from_test(spared, dropped)
        record = {"stage": i + 1, "weeks": n, "candidates": len(alive), "leader": leader,
                  "dropped_by_test": len(dropped), "dropped_by_budget": 0}
        for key, verdict in dropped.items():
            race_.status[key] = {"state": "dropped", "stage": i + 1, "weeks": n, "reason": verdict.reason,
                                 "p": verdict.p, "level": verdict.level, "leader": verdict.leader}
        alive = [c for c in alive if c.key not in dropped]
        means = {c.key: nanmean(objective[c.key]) for c in alive}

        def by_mean(c: Candidate) -> tuple[float, int]:
            return _inf_nan(means[c.key]), race_.candidates.index(c)

        alive.sort(key=by_mean)
        if i + 1 < len(plan.stages):
            if i == 0:
                # no pace yet: the model was just calibrated on this stage's own worker-seconds (a pace measured
                # on them is 1 by construction), and the stage's wall time holds the workers' preparation
                pace_now = 1.0
            else:  # the stages after the first: wall time, idle workers at their end and the tests included
                stage_walls[0] += time.perf_counter() - stage_start
                stage_walls[1] += race_.model.wall(stage_work, 0, 1) - race_.model.read_s
                pace_now = bud.pace(stage_walls[0], stage_walls[1])
            decision = planning.stage_decision(
                race_, i, n, [race_.model.week(c.family, c.warmup, "train") for c in alive], pace_now)
            keep, weeks = decision["keep"], decision["weeks"]
            record["pace"] = decision.get("pace")
            keep = slurmrace.spare_from_budget(spared, alive, keep)
            plan.weeks, plan.stages = weeks, bud.stages_for(weeks)
            plan.halving = plan.halving or keep < len(alive)
            for rank, c in enumerate(alive[keep:], start=keep + 1):
                race_.status[c.key] = {"state": "dropped", "stage": i + 1, "weeks": n, "reason": "budget",
                                       "rank": rank, "of": len(alive)}
            record["dropped_by_budget"] = len(alive) - keep
            alive = alive[:keep]
        record["estimated_s"] = plan.setup_s + race_.model.wall(spent_work, plan.weeks, i + 1)
        record["elapsed_s"] = time.perf_counter() - race_.timings.get("started", time.perf_counter())
        race_.stages.append(record)
        previous = n
        i += 1
        runner.expect(runner.done + _planned_rest(race_, len(alive), i))
    for c in alive:
        race_.status[c.key] = {"state": "survived", "weeks": race_.plan.stages[-1]}


def _inf_nan(x: float) -> float:
    return math.inf if math.isnan(x) else x


def _planned_total(race_: Race, alive: int) -> int:
    return _planned_rest(race_, alive, 0)


def _planned_rest(race_: Race, alive: int, stage: int) -> int:
    plan = race_.plan
    bases = len(race_.baselines)
    total, previous = 0, plan.stages[stage - 1] if stage else 0
    for i, n in enumerate(plan.stages[stage:], start=stage):
        m = bud.halving(alive, plan.finalists, i - stage) if plan.halving else alive
        total += (m + bases) * (n - previous)
        previous = n
    return total + (min(plan.finalists, max(alive, 1)) + bases) * plan.weeks


def eligible(race_: Race, key: str) -> bool:
    """Whether a candidate meets the MaxWait limit on the training weeks it ran (always, without a limit)."""
    limit = race_.settings.max_wait_increase
    if limit is None:
        return True
    c = race_.by_key()[key]
    return nanmean(race_.ratios("train", c, race_.train_weeks[key], "max_wait")) <= 1 + limit


def _stop_if_lost(race_: Race, runner: _Runner, any_left: bool) -> None:
    """One line when a stage cannot be judged: a baseline's runs or every candidate's were lost.

    That is a lost cluster (a Dask scheduler killed, every worker gone), not a bad candidate: without the
    baseline there is no ratio, and with no candidate left there is nothing to rank.  The weeks simulated so
    far are stored, so the same command resumes from them.
    """
    lost_bases = [c.key for c in race_.baselines.values() if c.key in runner.failed]
    if not lost_bases and any_left:
        return
    first = next(iter(runner.failed.values()), "")
    what = "the baseline's runs" if lost_bases else "the runs of every candidate"
    raise TuneError(f"{what} were lost ({first.splitlines()[0][:300] if first else 'no reason given'}); the weeks "
                    f"simulated so far are stored in {runner.store.dir}: run the same command again to resume")


def _test(race_: Race, runner: _Runner) -> None:
    """The finalists (best survivors by mean training ratio, within the MaxWait limit) on the testing half."""
    s = race_.settings
    survivors = [c for c in race_.candidates if race_.status.get(c.key, {}).get("state") == "survived"]
    n = race_.plan.stages[-1]

    def mean_ratio(c: Candidate) -> tuple[float, int]:
        return _inf_nan(nanmean(race_.ratios("train", c, n, s.objective))), race_.candidates.index(c)

    ranked = sorted((c for c in survivors if eligible(race_, c.key)), key=mean_ratio)
    finalists = slurmrace.with_best_of_each_side(s.families, ranked, ranked[:race_.plan.finalists])
    race_.finalists = [c.key for c in finalists]
    race_.test_weeks = race_.plan.weeks
    bases = sorted({c.warmup for c in finalists} | {0})
    runner.expect(runner.done + (len(finalists) + len(bases)) * race_.test_weeks)
    runner.run("test", [race_.baselines[w] for w in bases] + finalists, race_.test_weeks,
               f"testing half: {len(finalists)} finalists x {n_weeks(race_.test_weeks)}")
    _stop_if_lost(race_, runner, any(key not in runner.failed for key in race_.finalists) or not finalists)
    for key in list(race_.finalists):
        if key in runner.failed:
            race_.finalists.remove(key)
