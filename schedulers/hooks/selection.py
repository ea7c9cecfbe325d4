"""Switching policies online at period boundaries (docs/semantics/learning.md#online-selection), as a core hook.

Periods have length Delta and start at the first submission the scheduler
sees (the same instant on both backends).  At each boundary B the hook closes
the period [B - Delta, B), hands the selector its observation, and installs
the chosen policy, under the configured threshold, for both EASY queues.

What counts as known at a boundary B (both backends, by construction):
- a job's actual runtime is known iff its run ended strictly before B;
  otherwise its walltime stands in for it, as for a live system
  (docs/semantics/learning.md#online-selection);
- bandit feedback charges the period with the jobs whose final run ended in
  [B - Delta, B).
Counting an end at exactly B as "not yet known" makes the result independent
of whether Batsim delivers the boundary's requested call before or with the
completions of that same instant.

The hook asks for a wake-up at every boundary while jobs are waiting or
running, so a pass happens at B with the new policy on both backends; when the
machine is idle it asks for nothing (so simulations end), and the boundaries
crossed meanwhile are processed, in order, at the next pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bftune.learning.selectors import SELECTORS, Observation, Selector, SelectorError, make_selector, \
    parse_selector
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.policies import SELECTION_DEFAULT
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues, Replay
from bftune.schedulers.option import (EASY, ConfigError, Option, Requirement, duration, is_set, number, optional,
                                      policy_list, rule)
from bftune.workloads.model import WEEK, JobRecord


@dataclass(slots=True)
class _Seen:
    """What the hook remembers of a job (first run's identity, final run's times)."""

    seq: int
    submit: float
    procs: int
    walltime: float
    start: float = -1.0
    end: float = math.inf  # end of the final (not killed) run
    policy: str = ""  # policy in force when the job finished (bandit charging)


class PolicySelection(Hook):
    """Choose the EASY policy per period with a ``Selector``; log every choice."""

    def __init__(self, selector: Selector, period: float, threshold: float, replay: Replay | None = None,
                 seed: int = 0) -> None:
        if not (period > 0 and math.isfinite(period)):
            raise ValueError(f"period must be a positive duration, got {period}")
        if selector.needs_simulation and replay is None:
            raise ValueError(f"the {selector.name} selector needs a replay of past periods")
        self.selector = selector
        self.period = period
        self.threshold = threshold
        self.replay = replay
        # numpy here, not at the top: the configuration imports this module on every run, and a run
        # without a selector should not pay numpy's import (60 ms and 20 MiB: learning.learners).
        from numpy.random import default_rng

        self.rng = default_rng(seed)
        self.origin: float | None = None
        self.index = -1  # current period
        self.current = ""
        self.next_boundary = math.inf
        self.jobs: dict[str, _Seen] = {}  # by first run id
        self.log: list[dict] = []
        self._wake_requested = -math.inf

    # --- bookkeeping -------------------------------------------------------------

    def on_submit(self, core: Core, job: Job, now: float) -> None:
        if self.origin is None:
            self.origin = now
            self.next_boundary = now + self.period
            self._install(core, 0, None)
        if job.attempt == 0:
            self.jobs[job.id] = _Seen(job.seq, job.submit, job.procs, job.walltime)

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        if state is EndState.COMPLETED_KILLED:
            return
        seen = self.jobs.get(job.first_id)
        if seen is not None:
            seen.start = job.start
            seen.end = now
            seen.policy = self.current

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        while now >= self.next_boundary:
            boundary = self.next_boundary
            obs = self._observe(core, self.index, boundary)
            self.selector.observe(obs, self.rng)
            self.next_boundary = boundary + self.period
            self._install(core, self.index + 1, obs)

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        if (core.queue.jobs or core.machine.running) and self.next_boundary > self._wake_requested:
            decisions.wakeups.append(self.next_boundary)
            self._wake_requested = self.next_boundary

    # --- periods -------------------------------------------------------------------

    def _install(self, core: Core, index: int, obs: Observation | None) -> None:
        policy = self.selector.choose(index, self.rng)
        self.index = index
        self.current = policy
        core.use_order(Order.of(policy, self.threshold))
        assert self.origin is not None, "periods start at the first submission"
        entry: dict[str, Any] = {"period": index, "start": self.origin + index * self.period, "policy": policy}
        costs = self.selector.costs()
        if costs is not None:
            entry["costs"] = costs
        if obs is not None:
            entry["previous"] = {"jobs_finished": obs.finished, "real_wait": obs.real_wait}
            if obs.simulated is not None:
                entry["previous"]["simulated_waits"] = obs.simulated
        self.log.append(entry)

    def _observe(self, core: Core, index: int, boundary: float) -> Observation:
        start = boundary - self.period
        finished = [s for s in self.jobs.values() if start <= s.end < boundary]
        real_wait = float(sum(s.start - s.submit for s in finished))
        simulated = None
        if self.selector.needs_simulation:
            submitted = [s for s in self.jobs.values() if start <= s.submit < boundary]
            records = [
                JobRecord(id=s.seq, submit=s.submit - start, procs=s.procs,
                          runtime=(s.end - s.start) if s.end < boundary else s.walltime, walltime=s.walltime)
                for s in submitted
            ]
            replay = self.replay
            assert replay is not None, "checked by __init__"
            simulated = {p: replay(records, core.m, p) for p in self.selector.candidates}
        self._forget(start)
        return Observation(period=index, used=self.current, simulated=simulated, real_wait=real_wait,
                           finished=len(finished))

    def _forget(self, period_start: float) -> None:
        """Drop jobs no future period can need: finished, and submitted before this period."""
        old = [k for k, s in self.jobs.items() if s.end < period_start and s.submit < period_start]
        for k in old:
            del self.jobs[k]

    def report(self) -> dict:
        return {"periods": self.log, "selector": self.selector.name}


# --- the hook's options and how it builds itself -----------------------------------------------

#: The shortest selection period.  A period is judged by the jobs that ran in it, so one far
#: shorter than a typical job (the archive traces' median runtimes are tens of minutes) measures
#: nothing, and every period is logged: a one-second period on a year-long trace would mean 31
#: million log entries (several GB).  Periods of a day and a week are the usual choices.
MIN_PERIOD = 3600.0

SELECTOR = Requirement("selector", is_set, "--selector")


def selector_name(value: Any, where: str) -> str:
    """A registered selector's name, or a user's by import path or entry point (docs/guides/plugins.md)."""
    try:
        return parse_selector(value)
    except SelectorError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    if values["selector"] is None:
        return None
    selector = make_selector(values["selector"], values["candidates"], values["policy"], values["decay"],
                             values["epsilon"], values["noise"])
    replay = None
    if selector.needs_simulation:
        if context.replay is None:
            raise ValueError(f"the {selector.name} selector needs period replays, which this run was not given")
        replay = context.replay(values["threshold"], values["reservation"])
    return PolicySelection(selector, values["period"], values["threshold"], replay, values["seed"])


def check(values: OptionValues) -> None:
    if values["selector"] is not None and values["backfill_policy"] is not None:
        raise rule("backfill_policy", "a selector sets both queues' policy; drop backfill_policy")


def label(values: OptionValues) -> str | None:
    """A selector names the algorithm: the policies it chooses from, its period and threshold."""
    selector = values["selector"]
    if selector is None:
        return None
    policy = values["policy"] if selector == "fixed" else "|".join(values["candidates"])
    theta = "" if values["threshold"] == math.inf else f", {format_duration(values['threshold'])}"
    return f"EASY({selector}[{policy}] per {format_duration(values['period'])}{theta})"


HOOK = HookSpec(
    name="selection",
    options=(
        Option("selector", optional(selector_name), None,
               "switch the policy of both queues at every period boundary; a built-in selector or your own, "
               "MODULE:NAME",
               "online policy selection", cli="--selector", metavar="SELECTOR", choices=tuple(SELECTORS),
               requires=(EASY,), plugins="selector"),
        Option("period", duration(infinite=False, positive=True, minimum=MIN_PERIOD,
                                  why=": a period far shorter than a job measures nothing"),
               float(WEEK), "period Delta (1d, 1w, ...; at least 1h)",
               "online policy selection", cli="--period", metavar="DURATION", requires=(SELECTOR,), duration=True),
        Option("candidates", policy_list, list(SELECTION_DEFAULT),
               "comma-separated candidate policies", "online policy selection", cli="--candidates",
               metavar="P1,P2,...", requires=(SELECTOR,)),
        Option("decay", number(0, 1, low_open=True), 1.0, "decay lambda of past periods' costs, in (0, 1]",
               "online policy selection", cli="--decay", metavar="X", requires=(SELECTOR,)),
        Option("epsilon", number(0, 1), 0.1, "bandit exploration probability, in [0, 1]",
               "online policy selection", cli="--epsilon", metavar="X", requires=(SELECTOR,)),
        Option("noise", number(0, 1, high_open=True), 0.2,
               "noisy feedback: factors uniform in [1-x, 1+x], x in [0, 1)",
               "online policy selection", cli="--noise", metavar="X", requires=(SELECTOR,)),
    ),
    build=build, check=check, label=label)
