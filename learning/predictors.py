"""Runtime predictors (docs/semantics/scheduling.md#pv-easy): what a scheduler plans with instead of the walltime.

A predictor turns a job, at its submission, into a predicted runtime; the
walltime stays the kill time.  The scheduler-side hook
(``bftune.schedulers.hooks.prediction``) clamps a prediction to
[``MIN_PREDICTION``, walltime] and makes it the job's planning estimate
(``Job.estimate``), so EASY's reservations and backfilling and PV-EASY's
venture backfilling all use it, and policies that read p~ (SPF...) read it
too.  A running job past its prediction is expected to run to its walltime
(``MachineState.refresh_overdue``).

- ``walltime``: the user's request (no prediction; the default).
- ``last``: Last Model (Tsafrir et al.; docs/semantics/scheduling.md#pv-easy): the ratio p/p~ of
  the user's last finished run, times this job's p~; p~ when the user has no
  finished run yet or no known id.  Runs ended by a scheduler kill carry no
  runtime and teach nothing; a run killed at its walltime teaches ratio 1.
  "Last finished" means: ended strictly before the prediction's instant,
  the latest end, and among runs ending at that same instant the one of the
  highest job number.  Batsim delivers the events of one instant in no fixed
  order (completions and submissions may even come in separate messages),
  so this is what makes a prediction the same on both backends.
- ``avg2``: EASY++'s predictor (Tsafrir, Etsion and Feitelson, "Backfilling
  using system-generated predictions rather than user runtime estimates",
  IEEE TPDS 2007): the mean runtime of the user's last two finished runs
  (one if the user has one), capped at this job's p~; p~ without history.
  "Last" and "finished" as for ``last``.  EASY++ itself is ``--predictor avg2
  --backfill SPF`` (shortest predicted job backfilled first); a job that
  outlives its prediction is planned to its walltime, the simplest
  correction of an underestimate.
- ``exact``: the true runtime (clairvoyant upper bound).
- ``virtual:X``: a "virtual" predictor (docs/semantics/scheduling.md#pv-easy) p * (1 + U(-X, X)), 0 <= X < 1;
  its mean absolute relative error is about X/2.  U comes from a counter-based
  generator keyed by (seed, job number), not from a stream, so that a job's
  prediction does not depend on the order in which jobs are seen: both
  backends, and a rerun, get the same value.

Predictions are made once, at submission (a rerun is predicted again, with
what has been learnt since): waiting jobs keep their estimate, which the
queue's sorted indexes rely on.

A user's own predictor is named by its import path (``mymod:MyPredictor``) or,
from an installed package, by an entry point of ``bftune.predictors``
(:mod:`bftune.schedulers.core.plugins`): a :class:`PredictorFactory`, called
with the run's seed for a fresh :class:`Predictor` per run.
"""

from __future__ import annotations

import math
import inspect
from dataclasses import dataclass
from typing import Callable, Protocol, cast

from bftune.learning.registry import Registry
from bftune.schedulers.core import plugins

#: Smallest planning estimate: policies divide by p~, and a 0 s plan says nothing.
MIN_PREDICTION = 1.0

_MASK = (1 << 64) - 1


class PredictorError(ValueError):
    """An unknown predictor name or a malformed parameter; the message lists the choices."""


def splitmix64(x: int) -> int:
    """SplitMix64's finaliser: a well-mixed 64-bit hash of an integer (Steele et al., 2014)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def uniform(seed: int, n: int) -> float:
    """A uniform number in [0, 1) determined by (seed, n) alone."""
    return (splitmix64((seed * 0x100000001B3 + n) & _MASK) >> 11) * (1.0 / (1 << 53))


class Predictor(Protocol):
    """Predicts a job's runtime at submission; learns from finished runs."""

    # Read-only (a property or a plain attribute satisfies them): a virtual predictor's name is computed.
    @property
    def name(self) -> str: ...

    @property
    def clairvoyant(self) -> bool: ...  # needs the true runtime (the driver's oracle); others are given 0

    def predict(self, seq: int, user: int, walltime: float, runtime: float, now: float) -> float: ...

    def observe(self, seq: int, user: int, runtime: float, walltime: float, now: float) -> None: ...

    def report(self) -> dict: ...


class PredictorFactory(Protocol):
    """A user's predictor (``predictor = "mymod:MyPredictor"``): called with the run's seed, returns a fresh
    :class:`Predictor` (a class whose ``__init__`` takes the seed is one).  Every run gets its own."""

    def __call__(self, seed: int, /) -> Predictor: ...


class WalltimePredictor:
    name = "walltime"
    clairvoyant = False

    def predict(self, seq: int, user: int, walltime: float, runtime: float, now: float) -> float:
        return walltime

    def observe(self, seq: int, user: int, runtime: float, walltime: float, now: float) -> None:
        pass

    def report(self) -> dict:
        return {}


class ExactPredictor(WalltimePredictor):
    """The true runtime: learns nothing, reports nothing, as the walltime."""

    name = "exact"
    clairvoyant = True

    def predict(self, seq: int, user: int, walltime: float, runtime: float, now: float) -> float:
        return runtime


@dataclass
class VirtualPredictor:
    """p * (1 + U(-x, x)), U keyed by (seed, job number)."""

    x: float
    seed: int = 0
    clairvoyant = True

    @property
    def name(self) -> str:
        return f"virtual:{self.x:g}"

    def predict(self, seq: int, user: int, walltime: float, runtime: float, now: float) -> float:
        u = uniform(self.seed, seq)
        return runtime * (1.0 + self.x * (2.0 * u - 1.0))

    def observe(self, seq: int, user: int, runtime: float, walltime: float, now: float) -> None:
        pass

    def report(self) -> dict:
        return {"x": self.x, "seed": self.seed}


class _LastFinished:
    """One user's latest finished runs, as a prediction made at ``now`` may see them (the module docstring's
    "last finished": ended strictly before ``now``, the latest end first, ties at one instant by the highest
    job number), each with the value a predictor keeps of it.

    Events come in time order, so only the runs of the latest instant can end "now" and be invisible: all of
    them are kept (one instant may end many runs), with the ``depth`` latest of the earlier instants.
    """

    __slots__ = ("depth", "instant", "at_instant", "before")

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.instant = -math.inf
        self.at_instant: list[tuple[int, float]] = []  # (job number, value) of the runs ended at ``instant``
        self.before: list[tuple[float, int, float]] = []  # the latest (end, job number, value) before it

    def add(self, now: float, seq: int, value: float) -> None:
        if now > self.instant:
            self.before = self._merged()
            self.instant, self.at_instant = now, []
        self.at_instant.append((seq, value))

    def latest(self, now: float) -> list[float]:
        """The values of the ``depth`` latest runs that ended before ``now``, latest last."""
        runs = self._merged() if self.instant < now else self.before
        return [value for _, _, value in runs]

    def _merged(self) -> list[tuple[float, int, float]]:
        ended = [(self.instant, seq, value) for seq, value in self.at_instant]
        return sorted(self.before + ended)[-self.depth:]


class _UserHistory:
    """A predictor from each user's last finished runs; p~ without a user id or without history (counted)."""

    name = ""
    depth = 1

    def __init__(self) -> None:
        self._users: dict[int, _LastFinished] = {}
        self.no_user = 0  # predictions made for jobs without a user id (walltime used)
        self.no_history = 0  # predictions made for users with no finished run yet (walltime used)
        self.predicted = 0  # predictions from history

    def value(self, runtime: float, walltime: float) -> float:
        """What to keep of a finished run."""
        raise NotImplementedError

    def from_history(self, values: list[float], walltime: float) -> float:
        """The prediction from the kept values (at least one)."""
        raise NotImplementedError

    def predict(self, seq: int, user: int, walltime: float, runtime: float, now: float) -> float:
        if user < 0:
            self.no_user += 1
            return walltime
        history = self._users.get(user)
        values = history.latest(now) if history is not None else []
        if not values:
            self.no_history += 1
            return walltime
        self.predicted += 1
        return self.from_history(values, walltime)

    def observe(self, seq: int, user: int, runtime: float, walltime: float, now: float) -> None:
        if user < 0 or walltime <= 0:
            return
        history = self._users.get(user)
        if history is None:
            history = self._users[user] = _LastFinished(self.depth)
        history.add(now, seq, self.value(runtime, walltime))

    def report(self) -> dict:
        out: dict[str, int | str] = {"from_history": self.predicted, "no_history": self.no_history,
                                     "no_user_id": self.no_user}
        if self.no_user and not self.predicted and not self.no_history:
            out["note"] = f"the workload has no user ids: {self.name} fell back to walltimes for every job"
        elif self.no_user:
            out["note"] = f"{self.no_user} predictions for jobs without a user id used the walltime"
        return out


class LastModel(_UserHistory):
    """The user's last finished run's p/p~, times this job's p~ (p~ without history)."""

    name = "last"
    clairvoyant = False

    def value(self, runtime: float, walltime: float) -> float:
        return runtime / walltime

    def from_history(self, values: list[float], walltime: float) -> float:
        return walltime * values[-1]


class AverageOfTwo(_UserHistory):
    """The mean runtime of the user's last two finished runs, at most p~ (p~ without history): EASY++'s."""

    name = "avg2"
    clairvoyant = False
    depth = 2

    def value(self, runtime: float, walltime: float) -> float:
        return runtime

    def from_history(self, values: list[float], walltime: float) -> float:
        return min(walltime, sum(values) / len(values))


@dataclass(frozen=True)
class PredictorKind:
    """One predictor as users name it (``--predictor NAME``, ``-o``, TOML): how to build one, and what it predicts.

    Registered once (:func:`register_predictor`), like a queue policy: the option table's choices, the error
    messages, ``bftune options`` and the docs read :data:`PREDICTOR_KINDS`.  ``parameter`` names the one value
    a predictor takes after a colon (``virtual:X``), empty when it takes none; ``check`` turns that value's
    text into its normal spelling or raises :class:`PredictorError`.
    """

    name: str
    build: Callable[[str, int], Predictor]  # (the parameter's normal spelling, the seed) -> a fresh predictor
    summary: str
    parameter: str = ""
    check: Callable[[str, str], str] | None = None  # (the parameter's text, the whole spelling) -> normal form

    @property
    def spelling(self) -> str:
        """How users write it: the name, and ``:X`` when it takes a parameter."""
        return f"{self.name}:{self.parameter}" if self.parameter else self.name


#: Every predictor, by name, in the order the help lists them.
PREDICTOR_KINDS: Registry[PredictorKind] = Registry("predictor")


def register_predictor(kind: PredictorKind) -> PredictorKind:
    """Make a predictor known by name everywhere predictors are named (a name is registered once)."""
    return PREDICTOR_KINDS.add(kind.name, kind)


def _walltime(parameter: str, seed: int) -> Predictor:
    return WalltimePredictor()


def _last(parameter: str, seed: int) -> Predictor:
    return LastModel()


def _avg2(parameter: str, seed: int) -> Predictor:
    return AverageOfTwo()


def _exact(parameter: str, seed: int) -> Predictor:
    return ExactPredictor()


def _virtual(parameter: str, seed: int) -> Predictor:
    return VirtualPredictor(float(parameter), seed)


def _virtual_error(parameter: str, text: str) -> str:
    """``X`` of ``virtual:X``: the maximum relative error, in [0, 1)."""
    try:
        x = float(parameter)
    except ValueError:
        raise PredictorError(f"virtual:X needs a number X in [0, 1), got {text!r}") from None
    if not 0.0 <= x < 1.0:
        raise PredictorError(f"virtual:X needs X in [0, 1) (the maximum relative error), got {text!r}")
    return f"{x:g}"


register_predictor(PredictorKind("walltime", _walltime, "the user's request p~ (no prediction; the default)"))
register_predictor(PredictorKind("last", _last, "Last Model: the user's last finished p/p~, times this job's p~"))
register_predictor(PredictorKind("avg2", _avg2, "EASY++'s: the mean of the user's last two runtimes, at most p~"))
register_predictor(PredictorKind("exact", _exact, "the true runtime (clairvoyant bound)"))
register_predictor(PredictorKind("virtual", _virtual, "p x (1 + U(-X, X)), seeded per job: a predictor of known error",
                                 parameter="X", check=_virtual_error))

#: Predictor names as users write them (``virtual`` takes its X after a colon).
PREDICTORS: tuple[str, ...] = tuple(kind.spelling for kind in PREDICTOR_KINDS.values())


def parse_predictor(text: str) -> str:
    """Normalise a predictor spelling (``Last``, ``virtual:0.20``, ``mymod:MyPredictor``) or raise PredictorError."""
    choices = " | ".join(kind.spelling for kind in PREDICTOR_KINDS.values())
    if not isinstance(text, str) or not text.strip():
        raise PredictorError(f"expected a predictor ({choices}), got {text!r}")
    name, sep, arg = text.strip().lower().partition(":")
    kind = PREDICTOR_KINDS.get(name)
    if kind is None:
        return _user_predictor(text.strip(), choices)[0]
    if kind.check is None:
        if sep:
            raise PredictorError(f"predictor {name} takes no parameter, got {text!r}")
        return name
    return f"{name}:{kind.check(arg, text)}"


def make_predictor(spec: str, seed: int = 0) -> Predictor:
    """A fresh predictor from a (normalised or not) spelling."""
    spelling = parse_predictor(spec)
    name, _, parameter = spelling.partition(":")
    kind = PREDICTOR_KINDS.get(name)
    if kind is None:
        return _user_predictor(spelling, "")[1](seed)
    return kind.build(parameter, seed)


#: The members a predictor has (:class:`Predictor`): a user's is checked for them when it is found.
MEMBERS = ("name", "clairvoyant", "predict", "observe", "report")

#: Users' predictors found so far: spelling -> (its normal spelling, its factory).
_imported: dict[str, tuple[str, PredictorFactory]] = plugins.cache()


def _user_predictor(text: str, choices: str) -> tuple[str, PredictorFactory]:
    """A user's predictor by import path or entry point, checked by making one (seed 0) once per process."""
    found = _imported.get(text)
    if found is not None:
        return found
    try:
        spelling, factory = plugins.find("predictor", text, PREDICTOR_KINDS, choices)
    except plugins.PluginError as exc:
        raise PredictorError(str(exc)) from None
    if not callable(factory):
        raise PredictorError(f"{spelling}: {factory!r:.40} is not a predictor factory: give a class or a function "
                             "called with the run's seed that returns a predictor")
    try:
        inspect.signature(factory).bind(0)
    except TypeError:
        raise PredictorError(f"{spelling}: a predictor factory is called with the run's seed, as "
                             f"{getattr(factory, '__name__', 'it')}(seed); its signature does not allow it") from None
    except ValueError:
        pass  # no signature to read: making one says whether it fits
    try:
        sample = factory(0)
    except Exception as exc:
        raise PredictorError(f"{spelling}: making one (seed 0) raised {plugins.one_line(exc)}") from None
    missing = [m for m in MEMBERS if not hasattr(sample, m)]
    if missing:
        raise PredictorError(f"{spelling}: what it makes has no {', '.join(missing)} (a predictor has "
                             f"{', '.join(MEMBERS)}: see Predictor in bftune.learning.predictors)")
    found = _imported[text] = _imported[spelling] = (spelling, cast(PredictorFactory, factory))
    return found
