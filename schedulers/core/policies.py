"""The policy registry: every queue order of docs/semantics/scheduling.md#easy as a tiny named unit.

A policy maps a waiting job (and the current time, for policies that use the
waiting time) to a number; lower goes first.  Ties are always broken by
submission time, then job id (``seq``), by the ordering code, never here.
Variants are built by composition rather than written out: ``Inverse(FCFS)``
is LCFS, ``Inverse(SPF)`` is LPF, and so on, so a formula exists only once.

Guards (docs/semantics/scheduling.md#easy):
- UNICEF divides by log2(q), which is 0 at q = 1: we use log2(max(q, 2)).
- F1-F4 take log10(r): we use log10(max(r, 1)), with r the submission time in
  the trace's own clock (seconds since the trace's start, as SWF stores it).
- p~ is the job's planning estimate (the walltime unless a predictor or the
  runtime-clairvoyant baseline replaces it); it is always > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol

from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.polynomial import LEARNED_PREFIX, IndexFunctionError, load_learned, shipped_policies

Score = Callable[[Job, float], float]


class Policy(Protocol):
    """Anything with a name that scores jobs; ``dynamic`` if the score changes with time."""

    # Read-only properties: frozen dataclasses (FormulaPolicy, Inverse...) satisfy them.
    @property
    def name(self) -> str: ...

    @property
    def dynamic(self) -> bool: ...

    def key(self, job: Job, now: float) -> float: ...


@dataclass(frozen=True)
class FormulaPolicy:
    """A policy given by a named score function (named so that it pickles)."""

    name: str
    formula: str
    score: Score
    dynamic: bool = False

    def key(self, job: Job, now: float) -> float:
        return self.score(job, now)


def key_function(policy: Policy) -> Score:
    """The cheapest callable giving ``policy.key(job, now)``: a formula policy's score function itself.

    Compiled, every call through a stored function or a protocol's method is a generic call; a sorted
    index that calls the score directly makes one per job added instead of two."""
    return policy.score if isinstance(policy, FormulaPolicy) else policy.key


def sort_score(policy: Policy) -> tuple[Score, bool]:
    """``(score, descending)``: sorting by ``score`` (descending if so) is sorting by ``policy.key``.

    An inverse sorts its base's score descending instead of calling a negation per job: a stable
    sort, descending included, keeps equal scores in their given order, so the ties still follow the
    order the jobs came in."""
    descending = False
    while isinstance(policy, Inverse):
        policy = policy.base
        descending = not descending
    return key_function(policy), descending


@dataclass(frozen=True)
class Inverse:
    """The reverse order of another policy (same tie-breaks): LCFS from FCFS."""

    base: Policy
    name: str

    @property
    def dynamic(self) -> bool:
        return self.base.dynamic

    @property
    def formula(self) -> str:
        f = getattr(self.base, "formula", self.base.name)
        return f"-({f})" if " " in f or "/" in f or "*" in f else f"-{f}"

    def key(self, job: Job, now: float) -> float:
        return -self.base.key(job, now)


# --- score functions -------------------------------------------------------
# Each is a plain module-level function so that policies pickle (Dask, multiprocessing).


def submit_time(job: Job, now: float) -> float:
    return job.submit


def estimate(job: Job, now: float) -> float:
    return job.estimate


def procs(job: Job, now: float) -> float:
    return float(job.procs)


def expansion(job: Job, now: float) -> float:
    """(wait + p~) / p~: the slowdown the job would have if started now."""
    return (now - job.submit + job.estimate) / job.estimate


def estimate_per_proc(job: Job, now: float) -> float:
    return job.estimate / job.procs


def area(job: Job, now: float) -> float:
    return job.estimate * job.procs


def wfp3(job: Job, now: float) -> float:
    return -((now - job.submit) / job.estimate) ** 3 * job.procs


def unicef(job: Job, now: float) -> float:
    return -(now - job.submit) / (math.log2(max(job.procs, 2)) * job.estimate)


def _log_r(job: Job) -> float:
    return math.log10(max(job.submit, 1.0))


def f1(job: Job, now: float) -> float:
    return math.log10(job.estimate) * job.procs + 870.0 * _log_r(job)


def f2(job: Job, now: float) -> float:
    return math.sqrt(job.estimate) * job.procs + 25600.0 * _log_r(job)


def f3(job: Job, now: float) -> float:
    return job.estimate * job.procs + 6.86e6 * _log_r(job)


def f4(job: Job, now: float) -> float:
    return job.estimate * math.sqrt(job.procs) + 5.3e5 * _log_r(job)


# --- the registry ----------------------------------------------------------

FCFS = FormulaPolicy("FCFS", "r", submit_time)
SPF = FormulaPolicy("SPF", "p~", estimate)
SQF = FormulaPolicy("SQF", "q", procs)
SEXP = FormulaPolicy("SEXP", "(wait+p~)/p~", expansion, dynamic=True)
SRF = FormulaPolicy("SRF", "p~/q", estimate_per_proc)
SAF = FormulaPolicy("SAF", "p~*q", area)

REGISTRY: dict[str, Policy] = {}


def register(policy: Policy) -> Policy:
    """Add a policy under its (case-insensitive) name; names are unique."""
    key = policy.name.upper()
    if key in REGISTRY:
        raise ValueError(f"policy {policy.name} is already registered")
    REGISTRY[key] = policy
    return policy


for _p in (
    FCFS,
    Inverse(FCFS, "LCFS"),
    SPF,
    Inverse(SPF, "LPF"),
    SQF,
    Inverse(SQF, "LQF"),
    Inverse(SEXP, "LEXP"),
    SEXP,
    Inverse(SRF, "LRF"),
    SRF,
    Inverse(SAF, "LAF"),
    SAF,
    FormulaPolicy("WFP3", "-(wait/p~)^3*q", wfp3, dynamic=True),
    FormulaPolicy("UNICEF", "-wait/(log2(max(q,2))*p~)", unicef, dynamic=True),
    FormulaPolicy("F1", "log10(p~)*q + 870*log10(max(r,1))", f1),
    FormulaPolicy("F2", "sqrt(p~)*q + 25600*log10(max(r,1))", f2),
    FormulaPolicy("F3", "p~*q + 6.86e6*log10(max(r,1))", f3),
    FormulaPolicy("F4", "p~*sqrt(q) + 5.3e5*log10(max(r,1))", f4),
):
    register(_p)

# Index functions learned by regression (docs/semantics/learning.md#learned-index-policies): the fits of a
# full-scale run, shipped as schedulers/core/fits/{Lin,Qdr,Cub,Qua}.json; any other fit is ``learned:FILE.json``.
for _fit in shipped_policies():
    register(_fit)

# The 12 policies of online selection's default candidate set (docs/semantics/learning.md#online-selection),
# in table order.
SELECTION_DEFAULT = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF")


class UnknownPolicyError(ValueError):
    """A policy name that is not in the registry; the message lists the known ones."""


def get_policy(name: str | Policy) -> Policy:
    """Look a policy up by name (case-insensitive); ``learned:FILE.json`` loads a fit; objects pass through."""
    if not isinstance(name, str):
        return name
    if name.strip().lower().startswith(LEARNED_PREFIX):
        try:
            return load_learned(LEARNED_PREFIX + name.strip()[len(LEARNED_PREFIX):])
        except IndexFunctionError as exc:
            raise UnknownPolicyError(str(exc)) from None
    try:
        return REGISTRY[name.strip().upper()]
    except KeyError:
        known = ", ".join(p.name for p in REGISTRY.values())
        raise UnknownPolicyError(f"unknown policy {name!r}; known policies: {known}") from None


def formula_of(policy: Policy) -> str:
    return getattr(policy, "formula", policy.name)
