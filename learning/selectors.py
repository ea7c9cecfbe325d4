"""Online policy selection (docs/semantics/learning.md#online-selection): which policy to use next period.

A selector is told, at each period boundary, what was observed during the
period that just ended, and answers with the policy for the next one.  It
knows nothing about schedulers or simulation: the observation (the waits each
candidate policy would have had, or the real waits of the jobs that finished)
is computed by ``bftune.schedulers.hooks.selection`` and handed in.

All randomness comes from the numpy ``Generator`` passed in, drawn in a fixed
order, so a seed reproduces every choice on both backends.

A user's own selector is named by its import path (``mymod:make_selector``) or,
from an installed package, by an entry point of ``bftune.selectors``
(:mod:`bftune.schedulers.core.plugins`): a :class:`SelectorFactory`, the same
call as a registered kind's ``build``.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol, cast

from bftune.learning.registry import Registry
from bftune.schedulers.core import plugins

if TYPE_CHECKING:  # the generator is passed in; this module itself needs no numpy
    import numpy as np


@dataclass
class Observation:
    """What one finished period tells the selectors.

    ``simulated``: w(t; P_i) for each candidate (full/noisy feedback), or None
    when no selector asked for it.  ``real_wait`` and ``finished``: the summed
    waits and the number of jobs that finished during the period, under the
    policy that was in use (bandit feedback).
    """

    period: int
    used: str
    simulated: dict[str, float] | None
    real_wait: float
    finished: int


class Selector:
    """Base class: subclasses set ``name`` and implement ``choose``."""

    name = "selector"
    needs_simulation = False

    def __init__(self, candidates: list[str], decay: float = 1.0) -> None:
        if not candidates:
            raise ValueError("a selector needs at least one candidate policy")
        if not (0 < decay <= 1):
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        self.candidates = list(candidates)
        self.decay = decay

    def observe(self, obs: Observation, rng: np.random.Generator) -> None:
        """Take in the period that just ended (default: ignore it)."""

    def choose(self, period: int, rng: np.random.Generator) -> str:
        raise NotImplementedError

    def costs(self) -> dict[str, float] | None:
        """The per-policy costs the last choice was based on (for the log)."""
        return None


class FixedSelector(Selector):
    name = "fixed"

    def __init__(self, policy: str) -> None:
        super().__init__([policy])

    def choose(self, period: int, rng: np.random.Generator) -> str:
        return self.candidates[0]


class RandomSelector(Selector):
    name = "random"

    def choose(self, period: int, rng: np.random.Generator) -> str:
        return self.candidates[int(rng.integers(len(self.candidates)))]


class FeedbackSelector(Selector):
    """Full (simulation) feedback: C_i = sum_t decay^(T-1-t) w(t; P_i), pick argmin.

    With ``noise``, every w(t; P_i) is multiplied by an independent uniform
    factor in [1 - noise, 1 + noise] (noisy feedback: noise = 0.2).  Ties go to
    the earlier candidate in the list, so the first period (all costs 0) uses
    the first candidate.
    """

    needs_simulation = True

    def __init__(self, candidates: list[str], decay: float = 1.0, noise: float = 0.0) -> None:
        super().__init__(candidates, decay)
        if not (0 <= noise < 1):
            raise ValueError(f"noise must be in [0, 1), got {noise}")
        self.noise = noise
        self.name = "noisy" if noise else "full"
        self._cost = {p: 0.0 for p in self.candidates}

    def observe(self, obs: Observation, rng: np.random.Generator) -> None:
        if obs.simulated is None:
            raise ValueError("feedback selectors need simulated waits")
        for p in self.candidates:  # fixed order: reproducible draws
            w = obs.simulated[p]
            if self.noise:
                w *= float(rng.uniform(1.0 - self.noise, 1.0 + self.noise))
            self._cost[p] = self.decay * self._cost[p] + w

    def choose(self, period: int, rng: np.random.Generator) -> str:
        return min(self.candidates, key=self._cost.__getitem__)

    def costs(self) -> dict[str, float]:
        return dict(self._cost)


class EpsilonGreedySelector(Selector):
    """Bandit feedback: only the real waits of jobs finished under the policy in use.

    Cost_i = (sum over periods where i was used of decay^(T-1-t) w_eps(t)) /
    (number of jobs finished in those periods).  Untried policies first (in
    list order); then with probability epsilon a uniform pick, else argmin.
    A policy used only in periods where no job finished has cost 0 / 0: it
    counts as tried with cost 0 (nothing bad was seen), a documented choice.
    """

    name = "bandit"

    def __init__(self, candidates: list[str], decay: float = 1.0, epsilon: float = 0.1) -> None:
        super().__init__(candidates, decay)
        if not (0 <= epsilon <= 1):
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        self.epsilon = epsilon
        self._wait = {p: 0.0 for p in self.candidates}
        self._jobs = {p: 0 for p in self.candidates}
        self._tried: set[str] = set()

    def observe(self, obs: Observation, rng: np.random.Generator) -> None:
        for p in self.candidates:
            self._wait[p] *= self.decay
        self._wait[obs.used] += obs.real_wait
        self._jobs[obs.used] += obs.finished
        self._tried.add(obs.used)

    def _cost(self, p: str) -> float:
        return self._wait[p] / self._jobs[p] if self._jobs[p] else 0.0

    def choose(self, period: int, rng: np.random.Generator) -> str:
        for p in self.candidates:
            if p not in self._tried:
                return p
        explore = float(rng.random()) < self.epsilon
        if explore:
            return self.candidates[int(rng.integers(len(self.candidates)))]
        return min(self.candidates, key=self._cost)

    def costs(self) -> dict[str, float]:
        return {p: self._cost(p) for p in self.candidates}


class SelectorFactory(Protocol):
    """A user's selector (``selector = "mymod:make_selector"``): a fresh :class:`Selector` for one run.

    Called as a registered kind's ``build`` is, with every setting a selector may use: the candidate
    policies' names (the ``candidates`` option, in order), the fixed policy (``policy``), ``decay``,
    ``epsilon`` and ``noise``; it takes the ones it needs.  Subclass :class:`Selector`: ``choose`` answers
    a policy of ``candidates`` at each period, ``observe`` takes in the period that ended (its
    ``simulated`` waits only with ``needs_simulation = True``).
    """

    def __call__(self, candidates: list[str], policy: str, decay: float, epsilon: float, noise: float, /
                 ) -> Selector: ...


@dataclass(frozen=True)
class SelectorKind:
    """One selector as users name it (``--selector NAME``): how to build one, and what it does.

    Registered once (:func:`register_selector`), like a queue policy: the option table's choices, campaigns,
    the errors and the docs read :data:`SELECTOR_KINDS`.  ``build`` gets every setting a selector may use
    (candidates, the fixed policy, decay, epsilon, noise) and takes the ones it needs.
    """

    name: str
    build: Callable[[list[str], str, float, float, float], Selector]
    summary: str


#: Every selector, by name, in the order the help lists them.
SELECTOR_KINDS: Registry[SelectorKind] = Registry("selector")


def register_selector(kind: SelectorKind) -> SelectorKind:
    """Make a selector known by name everywhere selectors are named (a name is registered once)."""
    return SELECTOR_KINDS.add(kind.name, kind)


def _fixed(candidates: list[str], policy: str, decay: float, epsilon: float, noise: float) -> Selector:
    return FixedSelector(policy)


def _random(candidates: list[str], policy: str, decay: float, epsilon: float, noise: float) -> Selector:
    return RandomSelector(candidates, decay)


def _full(candidates: list[str], policy: str, decay: float, epsilon: float, noise: float) -> Selector:
    return FeedbackSelector(candidates, decay, 0.0)


def _noisy(candidates: list[str], policy: str, decay: float, epsilon: float, noise: float) -> Selector:
    return FeedbackSelector(candidates, decay, noise)


def _bandit(candidates: list[str], policy: str, decay: float, epsilon: float, noise: float) -> Selector:
    return EpsilonGreedySelector(candidates, decay, epsilon)


register_selector(SelectorKind("fixed", _fixed, "one policy throughout (the baseline)"))
register_selector(SelectorKind("random", _random, "a candidate drawn uniformly each period"))
register_selector(SelectorKind("full", _full, "the candidate whose replay of past periods waited least"))
register_selector(SelectorKind("noisy", _noisy, "full feedback with each replayed wait perturbed by noise"))
register_selector(SelectorKind("bandit", _bandit, "epsilon-greedy on the real waits of the policies used"))

#: The selectors' names, in registration order (the option's choices).
SELECTORS: tuple[str, ...] = tuple(SELECTOR_KINDS)


def make_selector(kind: str, candidates: list[str], policy: str, decay: float = 1.0, epsilon: float = 0.1,
                  noise: float = 0.2) -> Selector:
    """Build a selector by name (the CLI's ``--selector``), a user's by import path or entry point."""
    entry = SELECTOR_KINDS.get(kind)
    if entry is None:
        return _user_selector(kind)[1](list(candidates), policy, decay, epsilon, noise)
    return entry.build(candidates, policy, decay, epsilon, noise)


class SelectorError(ValueError):
    """An unknown selector or a user's that cannot be used; the message is one line."""


def parse_selector(text: str) -> str:
    """A selector's name: a registered one, or a user's (import path or entry point), checked once per process."""
    if not isinstance(text, str) or not text.strip():
        raise SelectorError(f"expected a selector ({' | '.join(SELECTOR_KINDS)}) or your own, {plugins.FORMS}; "
                            f"got {text!r}")
    return text.strip() if text.strip() in SELECTOR_KINDS else _user_selector(text.strip())[0]


#: What a user's selector is tried with when it is found (a wrong signature is then one line, before any run).
_SAMPLE = (["FCFS", "SPF"], "FCFS", 1.0, 0.1, 0.2)
#: The members the selection hook uses.
MEMBERS = ("name", "candidates", "needs_simulation", "choose", "observe", "costs")

#: Users' selectors found so far: spelling -> (its normal spelling, its factory).
_imported: dict[str, tuple[str, SelectorFactory]] = plugins.cache()


def _user_selector(text: str) -> tuple[str, SelectorFactory]:
    found = _imported.get(text)
    if found is not None:
        return found
    try:
        spelling, factory = plugins.find("selector", text, SELECTOR_KINDS, ", ".join(SELECTOR_KINDS), str)
    except plugins.PluginError as exc:
        raise SelectorError(str(exc)) from None
    if not callable(factory):
        raise SelectorError(f"{spelling}: {factory!r:.40} is not a selector factory: give a function "
                            "(candidates, policy, decay, epsilon, noise) -> a Selector")
    try:
        inspect.signature(factory).bind(*_SAMPLE)
    except TypeError:
        raise SelectorError(f"{spelling}: a selector factory is called as {getattr(factory, '__name__', 'it')}"
                            "(candidates, policy, decay, epsilon, noise); its signature does not allow it") from None
    except ValueError:
        pass  # no signature to read: making one says whether it fits
    try:
        sample = factory(list(_SAMPLE[0]), *_SAMPLE[1:])
    except Exception as exc:
        raise SelectorError(f"{spelling}: making one for candidates FCFS, SPF raised {plugins.one_line(exc)}"
                            ) from None
    missing = [m for m in MEMBERS if not hasattr(sample, m)]
    if missing:
        raise SelectorError(f"{spelling}: what it makes has no {', '.join(missing)}: subclass Selector "
                            "(bftune.learning.selectors)")
    found = _imported[text] = _imported[spelling] = (spelling, cast(SelectorFactory, factory))
    return found


def finite(x: float) -> float:
    return x if math.isfinite(x) else float("nan")
