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

A user's own policy is named by its import path (``mymod:score``, ``./orders.py:score``) or, from an
installed package, by an entry point of the group ``bftune.policies`` (:mod:`.plugins`): a
:class:`ScoreFunction` of a :class:`JobView` and the time, or a :class:`Policy` object.  Its name is
that spelling, so the name is what every process (campaign workers, Dask workers) resolves again.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Callable, Protocol, cast

from bftune.schedulers.core import plugins
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.polynomial import LEARNED_PREFIX, IndexFunctionError, load_learned, shipped_policies

Score = Callable[[Job, float], float]


class JobView(Protocol):
    """What a score function may read of a waiting job (times in seconds, in the trace's clock).

    The core's :class:`~bftune.schedulers.core.jobs.Job` has these and more; a score function reads
    only these, so that what it sees is what a real scheduler knows at submission.  Never change them.

    - ``submit``: r, the submission time (of the first run, for a rerun after a kill);
    - ``procs``: q, the processors requested;
    - ``walltime``: the requested walltime, the kill time;
    - ``estimate``: p~, the duration the scheduler plans with (the walltime, or a predictor's value), > 0;
    - ``user``: the user's number (-1 when the workload has none);
    - ``seq``: the job's number in the workload (the last tie-break);
    - ``qclass``: the queue class a classifier gave the job (0 without one).
    """

    @property
    def submit(self) -> float: ...

    @property
    def procs(self) -> int: ...

    @property
    def walltime(self) -> float: ...

    @property
    def estimate(self) -> float: ...

    @property
    def user(self) -> int: ...

    @property
    def seq(self) -> int: ...

    @property
    def qclass(self) -> int: ...


class ScoreFunction(Protocol):
    """A queue order as a function: ``score(job, now)``, lowest first.

    ``now`` is the time of the scheduling pass.  Ties are broken by submission time, then job number,
    never by the function.  A function is re-scored at every pass (its score may use the waiting time
    ``now - job.submit``); a score that does not depend on ``now`` is faster as a
    :class:`FormulaPolicy` with ``dynamic=False``, which the queue keeps sorted.
    """

    def __call__(self, job: JobView, now: float, /) -> float: ...


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
    """Look a policy up by name (case-insensitive); ``learned:FILE.json`` loads a fit; objects pass through.

    A name that is not built in is a user's policy: an import path (``mymod:score``), else an installed
    entry point of ``bftune.policies``.
    """
    if not isinstance(name, str):
        return name
    text = name.strip()
    if text.lower().startswith(LEARNED_PREFIX):
        try:
            return load_learned(LEARNED_PREFIX + text[len(LEARNED_PREFIX):])
        except IndexFunctionError as exc:
            raise UnknownPolicyError(str(exc)) from None
    policy = REGISTRY.get(text.upper())
    if policy is None:
        policy = _imported.get(text)
    if policy is None:
        policy = _import_policy(text)
    return policy


#: The users' policies found so far, by spelling (each is imported and checked once per process).
_imported: dict[str, Policy] = plugins.cache()

#: The job a user's policy is tried on when it is found: a wrong signature or a score that is no number
#: is then one line naming the policy, before any run, rather than a traceback in a worker.
_SAMPLE = Job("sample", 1, submit=3600.0, procs=4, walltime=7200.0, user=1, estimate=3600.0)
_SAMPLE_NOW = 7200.0


def _import_policy(text: str) -> Policy:
    """A user's policy by import path or entry point, named by its spelling; checked on a sample job."""
    try:
        if plugins.is_import_path(text):
            spelling, found = text, plugins.load(text)
        else:
            entry = plugins.from_entry_point("policy", text, REGISTRY, str.upper)
            if entry is None:
                raise UnknownPolicyError(f"unknown policy {text!r}; known policies: {_known()}")
            spelling, found = entry
    except plugins.PluginError as exc:
        raise UnknownPolicyError(str(exc)) from None
    policy = _as_policy(spelling, found)
    _check_score(spelling, policy)
    _imported[text] = _imported[spelling] = policy
    return policy


def _known() -> str:
    installed = plugins.installed("policy", REGISTRY, str.upper)
    names = ", ".join([p.name for p in REGISTRY.values()] + installed)
    return f"{names}; or your own: {plugins.FORMS} (docs: guides/plugins.md)"


def _as_policy(spelling: str, found: object) -> Policy:
    """A policy object renamed to its spelling, or a score function made a (dynamic) formula policy."""
    if callable(getattr(found, "key", None)) and hasattr(found, "dynamic"):
        policy = cast(Policy, found)
        if dataclasses.is_dataclass(found) and not isinstance(found, type) and \
                any(f.name == "name" for f in dataclasses.fields(found)):
            return cast(Policy, dataclasses.replace(found, name=spelling))
        return Renamed(policy, spelling)
    if not callable(found) or isinstance(found, type):
        raise UnknownPolicyError(f"{spelling}: {_a(found)} is neither a score function score(job, now) -> float "
                                 "nor a policy (an object with name, dynamic and key(job, now))")
    try:
        inspect.signature(found).bind(_SAMPLE, _SAMPLE_NOW)
    except TypeError:
        raise UnknownPolicyError(f"{spelling}: a score function takes (job, now); "
                                 f"{getattr(found, '__name__', spelling)}{_signature(found)} does not") from None
    except ValueError:  # no signature to read (a builtin): the sample call says whether it fits
        pass
    return FormulaPolicy(spelling, spelling, found, dynamic=bool(getattr(found, "dynamic", True)))


def _check_score(spelling: str, policy: Policy) -> None:
    try:
        value = policy.key(_SAMPLE, _SAMPLE_NOW)
    except Exception as exc:
        raise UnknownPolicyError(f"{spelling}: scoring a sample job raised {plugins.one_line(exc)}") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UnknownPolicyError(f"{spelling}: a score must be a number; it returned {_a(value)} for a sample job")
    if math.isnan(value):
        raise UnknownPolicyError(f"{spelling}: a score must be a number; it returned nan for a sample job")


def _signature(found: object) -> str:
    try:
        return str(inspect.signature(found))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def _a(value: object) -> str:
    return f"{value!r:.40} (of type {type(value).__name__})"


@dataclass(frozen=True)
class Renamed:
    """A user's policy object under its spelling (the name every process finds it by again)."""

    base: Policy
    name: str

    @property
    def dynamic(self) -> bool:
        return self.base.dynamic

    @property
    def formula(self) -> str:
        return formula_of(self.base)

    def key(self, job: Job, now: float) -> float:
        return self.base.key(job, now)


def formula_of(policy: Policy) -> str:
    return getattr(policy, "formula", policy.name)
