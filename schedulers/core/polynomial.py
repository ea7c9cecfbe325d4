"""Index functions learned by regression (docs/semantics/learning.md#learned-index-policies): polynomials in (p, q, r).

A learned index function is a formula, so it lives in the core as a policy
kind: ``f(p, q, r) = sum_k theta_k * p^a_k * q^b_k * r^c_k``, lowest first.
The fitting code (``bftune.learning.index``) writes it as plain JSON and the
core reads it back here; the core never imports the learning code.

Variables online (the fit saw them in the trial simulator):
- ``p``: the job's planning estimate p~ (``Job.estimate``: the requested
  walltime unless a predictor or a clairvoyant baseline replaces it), in
  place of the actual runtime p of the training rows, as docs/semantics/learning.md#learned-index-policies says;
- ``q``: requested processors;
- ``r``: the job's submission time **in the workload's own clock** (seconds
  since the workload's time 0, what Batsim calls ``submission_time`` and SWF
  stores), exactly the r of F1-F4.  Training measured r from the first
  arrival of the window's queue Q; online there is no such window, and any
  common origin gives the *same order* for a function linear in r (Lin),
  since shifting r by the same amount for every waiting job shifts every key
  by the same amount.  Only the higher degrees (Qdr, Cub, Qua) depend on the
  origin, and then through their r^2..r^4 terms, which dominate on long
  workloads: that is part of why they are unstable.
  The trace clock keeps the key a property of the job alone (a static
  policy: sorted once, identical in both backends, no queue context).

JSON format (``bftune learn-index`` writes it; only ``coefficients`` is required)::

    {"format": "bftune-index-function/1", "name": "Lin",
     "features": ["1", "p", "q", "r"],              # optional; must match the coefficients
     "coefficients": {"1": 0.0324, "p": 1.15e-07, "q": 2.61e-05, "r": -1.57e-07},
     "fit": {...}}                                  # anything: provenance, MAE, VIF

A feature is ``1`` or a product of ``p``, ``q``, ``r`` with optional integer
exponents: ``p``, ``q^2``, ``p*q``, ``p^2*q^2``.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from bftune.schedulers import core as _core_package
from bftune.schedulers.core.jobs import Job

FORMAT = "bftune-index-function/1"
VARIABLES = ("p", "q", "r")
MAX_EXPONENT = 8

#: The four families (docs/semantics/learning.md#learned-index-policies): each adds a degree to the previous one.
FAMILY_TERMS: dict[str, tuple[str, ...]] = {
    "Lin": ("1", "p", "q", "r"),
    "Qdr": ("p^2", "q^2", "r^2", "p*q"),
    "Cub": ("p^3", "q^3", "r^3", "p^2*q", "p*q^2"),
    "Qua": ("p^4", "q^4", "r^4", "p^3*q", "p^2*q^2", "p*q^3"),
}
FAMILIES = tuple(FAMILY_TERMS)


def family_features(family: str) -> tuple[str, ...]:
    """All features of a family: its own terms and those of every smaller family."""
    if family not in FAMILY_TERMS:
        raise ValueError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    out: list[str] = []
    for name in FAMILIES:
        out.extend(FAMILY_TERMS[name])
        if name == family:
            return tuple(out)
    raise AssertionError("unreachable")


Exponents = tuple[int, int, int]
_FACTOR = re.compile(r"^([pqr])(?:\^(\d+))?$")


class IndexFunctionError(ValueError):
    """A learned index function that cannot be used; the message names the file and the field."""


def parse_feature(text: str) -> Exponents:
    """``"p^2*q"`` -> (2, 1, 0); ``"1"`` -> (0, 0, 0).  ValueError on anything else."""
    s = text.replace(" ", "")
    if s == "1":
        return (0, 0, 0)
    exps = [0, 0, 0]
    for factor in s.split("*"):
        m = _FACTOR.match(factor)
        if m is None:
            raise ValueError(f"{text!r} is not a feature (write 1, p, q, r, products such as p*q and powers "
                             f"such as p^2)")
        k = int(m.group(2) or 1)
        if not 1 <= k <= MAX_EXPONENT:
            raise ValueError(f"{text!r}: exponents go from 1 to {MAX_EXPONENT}")
        exps[VARIABLES.index(m.group(1))] += k
    return (exps[0], exps[1], exps[2])


def feature_name(exps: Exponents) -> str:
    """The canonical spelling: variables in p, q, r order, ``^k`` for k > 1, ``1`` for the constant."""
    parts = [v if k == 1 else f"{v}^{k}" for v, k in zip(VARIABLES, exps) if k]
    return "*".join(parts) or "1"


def monomial(exps: Exponents, p: float, q: float, r: float) -> float:
    a, b, c = exps
    return (p ** a if a else 1.0) * (q ** b if b else 1.0) * (r ** c if c else 1.0)


@dataclass(frozen=True)
class PolynomialPolicy:
    """An index policy ``f(p~, q, r)``, lowest first (a frozen dataclass: it pickles for workers)."""

    name: str
    terms: tuple[tuple[Exponents, float], ...]  # (exponents, coefficient), in the file's order
    dynamic: bool = False

    @property
    def formula(self) -> str:
        parts = []
        for exps, coef in self.terms:
            feat = feature_name(exps)
            parts.append(f"{coef:+.3g}" if feat == "1" else f"{coef:+.3g}*{feat}")
        text = " ".join(parts).lstrip("+")
        return f"{text}  (p = p~, r = submission time)"

    @property
    def coefficients(self) -> dict[str, float]:
        return {feature_name(exps): coef for exps, coef in self.terms}

    def value(self, p: float, q: float, r: float) -> float:
        return math.fsum(coef * monomial(exps, p, q, r) for exps, coef in self.terms)

    def key(self, job: Job, now: float) -> float:
        return self.value(job.estimate, float(job.procs), job.submit)


def policy_from_dict(data: object, name: str, where: str) -> PolynomialPolicy:
    """Validate a parsed JSON index function; errors name ``where`` (the file) and the field."""
    if not isinstance(data, dict):
        raise IndexFunctionError(f"{where}: expected a JSON object with \"coefficients\", got {type(data).__name__}")
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise IndexFunctionError(f"{where}: format: expected {FORMAT!r}, got {fmt!r}")
    coefs = data.get("coefficients")
    if coefs is None:
        raise IndexFunctionError(f"{where}: coefficients: missing (an object feature -> number)")
    if not isinstance(coefs, dict) or not coefs:
        raise IndexFunctionError(f"{where}: coefficients: expected a non-empty object feature -> number")
    terms: list[tuple[Exponents, float]] = []
    seen: dict[Exponents, str] = {}
    for feat, value in coefs.items():
        try:
            exps = parse_feature(str(feat))
        except ValueError as exc:
            raise IndexFunctionError(f"{where}: coefficients.{feat}: unknown feature: {exc}") from None
        if exps in seen:
            raise IndexFunctionError(f"{where}: coefficients.{feat}: the same feature as {seen[exps]!r}")
        seen[exps] = str(feat)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise IndexFunctionError(f"{where}: coefficients.{feat}: expected a number, got {value!r:.40}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float's range (10^309...)
            raise IndexFunctionError(f"{where}: coefficients.{feat}: an integer of {len(str(value))} digits is "
                                     "too large for a coefficient") from None
        if not math.isfinite(number):
            raise IndexFunctionError(f"{where}: coefficients.{feat}: not a finite number ({value!r})")
        terms.append((exps, number))
    features = data.get("features")
    if features is not None:
        if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
            raise IndexFunctionError(f"{where}: features: expected a list of feature names")
        for feat in features:
            try:
                exps = parse_feature(feat)
            except ValueError as exc:
                raise IndexFunctionError(f"{where}: features: unknown feature: {exc}") from None
            if exps not in seen:
                raise IndexFunctionError(f"{where}: coefficients.{feat}: missing (listed in features)")
        listed = {parse_feature(f) for f in features}
        extra = [seen[e] for e in seen if e not in listed]
        if extra:
            raise IndexFunctionError(f"{where}: coefficients.{extra[0]}: not listed in features")
    return PolynomialPolicy(name, tuple(terms))


LEARNED_PREFIX = "learned:"


def load_learned(spec: str) -> PolynomialPolicy:
    """The policy ``learned:FILE.json`` (the name keeps the spelling given, so configs round-trip)."""
    path_text = spec[len(LEARNED_PREFIX):].strip()
    if not path_text:
        raise IndexFunctionError(f"{spec!r}: give the fit's JSON file: learned:FILE.json")
    path = Path(path_text).expanduser()
    text = _read_fit(path, spec)
    try:
        data = json.loads(text)
    except ValueError as exc:  # invalid JSON or UTF-8, an integer of more than 4,300 digits
        raise IndexFunctionError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise IndexFunctionError(f"{path}: not valid JSON: nested too deeply for a fit") from None
    return policy_from_dict(data, f"{LEARNED_PREFIX}{path_text}", str(path))


#: A fit file holds a few hundred bytes; a larger file is refused before more than this is in memory.
MAX_FIT_BYTES = 1024 * 1024


def _read_fit(path: Path, spec: str) -> bytes:
    """The bytes of a fit file: a regular file (not /dev/zero, not a FIFO: opened without blocking and checked
    before reading) of at most :data:`MAX_FIT_BYTES` (``json.loads`` then decodes them, and says where text
    that is not UTF-8 goes wrong).  The core imports no other layer, so this is ``bftune.support.inputs.read_small``
    again, in a few lines."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise IndexFunctionError(f"{spec}: no such file {path}") from None
    except OSError as exc:
        raise IndexFunctionError(f"{spec}: cannot read {path} ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # checked before fdopen, which refuses a directory (OSError)
        os.close(fd)
        raise IndexFunctionError(f"{spec}: {path} is not a regular file (a device, a FIFO, a directory); "
                                 "give the fit's JSON file")
    with os.fdopen(fd, "rb") as f:  # an I/O error while reading is an OSError, which the CLI names in one line
        data = f.read(MAX_FIT_BYTES + 1)
    if len(data) > MAX_FIT_BYTES:
        raise IndexFunctionError(f"{spec}: {path} holds more than 1 MiB; a fit is a few hundred bytes of JSON")
    return data


# The package folder, not this module's __file__: compiled (bftune accelerate), this module is a
# shared library in a cache directory while the fits stay with the sources.
SHIPPED_DIR = Path(_core_package.__path__[0]) / "fits"


def shipped_policies() -> list[PolynomialPolicy]:
    """The fits of the full-size collection shipped with bftune (``fits/<Family>.json``), as named policies."""
    out = []
    for family in FAMILIES:
        path = SHIPPED_DIR / f"{family}.json"
        if path.exists():
            out.append(policy_from_dict(json.loads(path.read_text(encoding="utf-8")), family, str(path)))
    return out
