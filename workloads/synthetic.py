"""A synthetic workload for the demo and quick tests: the Lublin-Feitelson model.

Why a model and not a slice of a real trace: the demo and the tests must run
without the archive files, on any machine size, and at a load where queues
form so that backfilling choices matter.

The model is U. Lublin and D. G. Feitelson, "The workload on parallel
supercomputers: modeling the characteristics of rigid jobs", J. Parallel and
Distributed Computing 63(11), pp. 1105-1122, 2003, with the parameters of the
authors' reference implementation ``lublin99.c``.  Two variants:

- ``"typeless"`` (default): the "whole sample" parameters, one job
  population.  This is what the archive's ``lublin_256`` trace was made with
  (all its jobs have type 0), so our output can be checked against it.
- ``"typed"``: separate *batch* and *interactive* populations, each with its
  own parameters and arrival stream, merged by time.  Most jobs are then
  short interactive ones (median runtime about 20 s).

- **Size** (``calc_number_of_nodes``): serial with probability
  ``serial_prob``; otherwise ``log2(size)`` is drawn from a two-stage uniform
  (``U(ulow, umed)`` with probability ``uprob``, else ``U(umed, uhi)``); with
  probability ``pow2_prob`` (counted from the same uniform as the serial test)
  the exponent is rounded, giving a power of two; size = round(2^x).
- **Runtime** (``time_from_nodes``): ``log(runtime)`` is hyper-gamma: gamma
  (shape a1, scale b1) with probability p, else gamma(a2, b2), where
  ``p = pa * size + pb`` clipped to [0, 1] - bigger jobs run longer.  Draws
  with ``log(runtime) > 12`` (about 45 h) are redrawn; runtime =
  floor(exp(.)) seconds, so at least 1 s.
- **Arrivals** (``arrive``): ``log`` of the rush-hour inter-arrival time is
  gamma(aarr * arar, barr) (redrawn above 13); the day is cut in 48 half-hour
  buckets whose weights come from a gamma(anum, bnum) density over the
  buckets, shifted cyclically to start at bucket 11; an inter-arrival "costs"
  points proportionally to the bucket weights it crosses, which produces the
  daily cycle.  t = 0 is midnight.

Our adaptations, all explicit:

1. *Machine size.*  The published parameters are for 128 nodes (typeless
   ``uhi = 7``, ``umed = 4.5``; batch ``uhi = 7``, ``umed = 5``; interactive
   ``uhi = 5.5``, ``umed = 3``).  For ``procs = m`` we keep the same distances
   to log2(m), as the authors recommend (``umed = uhi - 2.5``): e.g. typeless
   ``uhi = log2 m``, ``umed = uhi - 2.5``; clamped so that
   ``ulow <= umed <= uhi``.  Power-of-two sizes are capped at
   the largest power of two <= m, other sizes at m.  The runtime
   correlation ``p = pa * size + pb`` uses the absolute size, as published
   (on big machines every job above ``pb / -pa`` nodes - 144 for the
   typeless variant - draws from the long-runtime gamma).  With m = 256 this
   reproduces the archive's ``lublin_256`` trace: same size classes to about
   1 %, and median runtimes per size class within its sampling noise.
2. *Load.*  The model fixes a rate, so its load depends on m.  We scale the
   arrival points of every stream by one factor, found by bisection, so that
   the offered load ``sum(runtime * procs) / (m * (last submit - first
   submit))`` equals ``load`` (default 0.8): queues form and backfilling
   matters.  Scaling the points, not the times, keeps the daily cycle.
3. *Users* (not in the model): user ids 1..``n_users`` (default 64) drawn
   independently per job with Zipf-like popularity ``P(u) ~ 1 / u``:
   user 1 submits about 21 % of the jobs for 64 users, the most inactive
   ones a fraction of a percent, as in real logs where a few users dominate.
   User ids carry no behavioural signal (no per-user runtime habits).
4. *Requested walltimes* (not in the model): a simplified version of
   D. Tsafrir, Y. Etsion and D. G. Feitelson, "Modeling user runtime
   estimates", JSSPP 2005, LNCS 3834: estimates are *modal*, users pick one of
   a few round values.  Here the runtime is inflated by a factor ``1 / a``
   with accuracy ``a ~ U[0.05, 1)`` and rounded up to the next of 5, 10, 15,
   30 min, 1, 2, 4, 8, 12, 18, 24, 36, 48 h; 48 h is the site limit, so an
   inflated value above it becomes 48 h (a runtime of 48 h or more - which the
   model never draws, its maximum is e^12 s, about 45 h - would get the next
   whole hour).  So walltime > runtime always - no job reaches its walltime (which
   Batsim would report as killed).
5. *Clock.*  Submit times are whole seconds shifted so that the first job is
   submitted at 0; ``unix_start_time`` is set to the shift (seconds after
   midnight of 1970-01-01 UTC), so calendar features computed as
   ``unix_start_time + submit`` still see the model's daily cycle.  The queue
   field (15) holds the job type, 1 batch and 0 interactive (typeless jobs
   count as interactive), as in ``lublin99.c``'s SWF output.

Deterministic: everything is drawn from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace

SECONDS_IN_DAY = 86_400
BUCKETS = 48  # half hours
SECONDS_IN_BUCKET = SECONDS_IN_DAY // BUCKETS
CYCLIC_DAY_START = 11
MAX_LOG_RUNTIME = 12.0  # lublin99.c TOO_MUCH_TIME
MAX_LOG_INTERARRIVAL = 13.0  # lublin99.c TOO_MUCH_ARRIVE_TIME
REFERENCE_NODES = 128  # the machine the published parameters describe

#: Requested-walltime values users pick from (seconds): 5, 10, 15, 30 min, 1 .. 48 h.
WALLTIME_VALUES: tuple[int, ...] = tuple(
    60 * v for v in (5, 10, 15, 30, 60, 120, 240, 480, 720, 1080, 1440, 2160, 2880)
)
MIN_ACCURACY = 0.05

BATCH, INTERACTIVE = 1, 0


@dataclass(frozen=True)
class JobTypeParameters:
    """Published Lublin-Feitelson parameters of one job type (lublin99.c names)."""

    serial_prob: float
    pow2_prob: float
    ulow: float
    umed: float  # for the 128-node reference machine
    uhi: float  # for the 128-node reference machine
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


BATCH_PARAMETERS = JobTypeParameters(
    serial_prob=0.2927, pow2_prob=0.6686, ulow=1.2, umed=5.0, uhi=7.0, uprob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519,
)  # fmt: skip
INTERACTIVE_PARAMETERS = JobTypeParameters(
    serial_prob=0.1541, pow2_prob=0.625, ulow=1.0, umed=3.0, uhi=5.5, uprob=0.705,
    a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
    aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797,
)  # fmt: skip
#: The "whole sample" parameters (lublin99.c with INCLUDE_JOBS_TYPE = 0): one
#: job type, reported as interactive (queue 0).  This is the variant behind the
#: archive's ``lublin_256`` trace.
TYPELESS_PARAMETERS = JobTypeParameters(
    serial_prob=0.244, pow2_prob=0.576, ulow=0.8, umed=4.5, uhi=7.0, uprob=0.86,
    a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
    aarr=10.2303, barr=0.4871, anum=8.1737, bnum=3.9631, arar=1.0225,
)  # fmt: skip

#: Model variants: the job-type streams each one merges, as (queue code, parameters).
VARIANTS: dict[str, tuple[tuple[int, JobTypeParameters], ...]] = {
    "typeless": ((INTERACTIVE, TYPELESS_PARAMETERS),),
    "typed": ((BATCH, BATCH_PARAMETERS), (INTERACTIVE, INTERACTIVE_PARAMETERS)),
}


def generate(
    n_jobs: int,
    procs: int,
    seed: int,
    *,
    load: float = 0.8,
    n_users: int = 64,
    variant: str = "typeless",
) -> Trace:
    """``n_jobs`` Lublin-Feitelson jobs for a ``procs``-processor machine at offered ``load``.

    Ids are 1..n in submission order, the first submission is at 0, the
    header has ``MaxProcs``; the same arguments always give the same trace.
    ``variant`` is ``"typeless"`` (one job population, as ``lublin_256``) or
    ``"typed"`` (batch and interactive streams, mostly short interactive jobs).
    """
    _check_arguments(n_jobs, procs, seed, load, n_users, variant)
    n, m = int(n_jobs), int(procs)
    rng = np.random.default_rng(seed)

    # Each job type gets a full stream of n candidate jobs; the merge keeps the
    # first n arrivals.  Draw order is fixed, so the result depends on the seed only.
    kinds, sizes, runtimes, points, weights = [], [], [], [], []
    for kind, params in VARIANTS[variant]:
        size = _sizes(rng, n, m, params)
        kinds.append(np.full(n, kind))
        sizes.append(size)
        runtimes.append(_runtimes(rng, size, params))
        log_gaps = _truncated_gamma(rng, n, params.aarr * params.arar, params.barr, MAX_LOG_INTERARRIVAL)
        points.append(np.cumsum(np.exp(log_gaps) / SECONDS_IN_BUCKET))
        weights.append(_bucket_weights(params.anum, params.bnum))
    kind_all = np.concatenate(kinds)
    work = np.concatenate([(s * r).astype(np.float64) for s, r in zip(sizes, runtimes)])

    def merged(scale: float) -> tuple[np.ndarray, np.ndarray]:
        times = np.concatenate([_points_to_seconds(p * scale, w) for p, w in zip(points, weights)])
        # ties go to the interactive job, as in lublin99.c (batch only if strictly earlier)
        order = np.lexsort((kind_all, times))[:n]
        return order, times[order]

    def load_at(scale: float) -> float:
        order, times = merged(scale)
        span = times[-1] - times[0]
        return math.inf if span <= 0 else float(work[order].sum() / (m * span))

    scale = _calibrate(load_at, load) if n >= 2 else 1.0
    order, times = merged(scale)

    size_sel = np.concatenate(sizes)[order]
    runtime_sel = np.concatenate(runtimes)[order]
    kind_sel = kind_all[order]
    arrival = np.floor(times).astype(np.int64)
    start = int(arrival[0])
    submits = arrival - start
    walltimes = _walltimes(rng, runtime_sel)
    users = _zipf_users(rng, n, n_users)

    jobs = [
        JobRecord(id=i + 1, submit=int(submits[i]), procs=int(size_sel[i]), runtime=int(runtime_sel[i]),
                  walltime=int(walltimes[i]), user=int(users[i]), queue=int(kind_sel[i]), status=1)
        for i in range(n)
    ]  # fmt: skip
    return _trace(jobs, m, start, f"n_jobs={n}, procs={m}, seed={seed}, load={load}, n_users={n_users}, "
                                  f"variant={variant!r}", f"lublin-{variant}-{n}j-{m}p-s{seed}")


def _check_arguments(n_jobs: int, procs: int, seed: int, load: float, n_users: int, variant: str) -> None:
    """Every argument of :func:`generate` within its limits, before any draw (one WorkloadError naming it)."""
    limits.jobs(n_jobs, "n_jobs")
    limits.procs(procs, "procs")
    limits.seed(seed, "seed")
    if not 0 < load <= 2:
        raise WorkloadError(f"load must be in (0, 2], not {load!r}")
    if n_users < 1:
        raise WorkloadError(f"n_users must be positive, not {n_users!r}")
    if variant not in VARIANTS:
        raise WorkloadError(f"unknown model variant {variant!r}; choose from {sorted(VARIANTS)}")


def _trace(jobs: list[JobRecord], m: int, start: int, arguments: str, name: str) -> Trace:
    """The generated jobs as a trace with an archive-like header that says how to make them again."""
    n = len(jobs)
    note = f"Lublin-Feitelson (2003) model, bftune synthetic.generate({arguments})"
    header = {
        "Version": "2.2",
        "Computer": "synthetic",
        "MaxJobs": str(n),
        "MaxRecords": str(n),
        "MaxProcs": str(m),
        "UnixStartTime": str(start),
        "TimeZoneString": "UTC",
        "Note": note,
    }
    return Trace(
        jobs=jobs,
        max_procs=m,
        name=name,
        header=header,
        unix_start_time=start,
        timezone="UTC",
        cleaning={},
        source="synthetic",
        header_lines=tuple(f"; {key}: {value}" for key, value in header.items()),
    )


def offered_load(trace: Trace) -> float:
    """``sum(runtime * procs) / (m * (last submit - first submit))``: the load ``generate`` targets."""
    span = trace.jobs[-1].submit - trace.jobs[0].submit
    work = sum(job.runtime * job.procs for job in trace.jobs)
    return math.inf if span <= 0 else work / (trace.max_procs * span)


# --------------------------------------------------------------------------
# the model's pieces, vectorised


def _size_range(m: int, params: JobTypeParameters) -> tuple[float, float, float]:
    """(ulow, umed, uhi) for an m-node machine: same distances to log2(m) as on 128 nodes."""
    uhi = math.log2(m) - (math.log2(REFERENCE_NODES) - params.uhi)
    umed = uhi - (params.uhi - params.umed)
    ulow = params.ulow
    uhi = max(uhi, ulow)
    umed = min(max(umed, ulow), uhi)
    return ulow, umed, uhi


def _sizes(rng: np.random.Generator, n: int, m: int, params: JobTypeParameters) -> np.ndarray:
    ulow, umed, uhi = _size_range(m, params)
    u = rng.random(n)
    first_stage = rng.random(n) <= params.uprob
    x = np.where(first_stage, rng.uniform(ulow, umed, n), rng.uniform(umed, uhi, n))
    pow2 = (u > params.serial_prob) & (u <= params.serial_prob + params.pow2_prob)
    x = np.where(pow2, np.minimum(np.floor(x + 0.5), math.floor(math.log2(m))), x)
    sizes = np.floor(np.power(2.0, x) + 0.5).astype(np.int64)
    sizes = np.where(u <= params.serial_prob, 1, sizes)
    return np.clip(sizes, 1, m)


def _runtimes(rng: np.random.Generator, sizes: np.ndarray, params: JobTypeParameters) -> np.ndarray:
    p = np.clip(params.pa * sizes + params.pb, 0.0, 1.0)
    first = rng.random(sizes.size) <= p
    log_rt = np.empty(sizes.size)
    log_rt[first] = _truncated_gamma(rng, int(first.sum()), params.a1, params.b1, MAX_LOG_RUNTIME)
    log_rt[~first] = _truncated_gamma(rng, int((~first).sum()), params.a2, params.b2, MAX_LOG_RUNTIME)
    return np.maximum(np.floor(np.exp(log_rt)), 1).astype(np.int64)


def _truncated_gamma(rng: np.random.Generator, n: int, shape: float, scale: float, limit: float) -> np.ndarray:
    """Gamma draws, each redrawn while above ``limit`` (the model's rejection loops)."""
    values = rng.gamma(shape, scale, n)
    bad = values > limit
    while bad.any():
        values[bad] = rng.gamma(shape, scale, int(bad.sum()))
        bad = values > limit
    return values


@lru_cache(maxsize=None)
def _bucket_weights(anum: float, bnum: float) -> np.ndarray:
    """Arrival weight of each half-hour bucket of the day, mean 1 (lublin99.c arrive_init)."""
    weights = np.zeros(BUCKETS)
    for i in range(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START):
        weights[(i - 1) % BUCKETS] = _gamma_cdf(i + 0.5, anum, bnum) - _gamma_cdf(i - 0.5, anum, bnum)
    weights /= weights.mean()
    weights.setflags(write=False)
    return weights


def _gamma_cdf(x: float, shape: float, scale: float) -> float:
    """Regularised lower incomplete gamma P(shape, x / scale), by its power series."""
    x = x / scale
    if x <= 0:
        return 0.0
    term = 1.0 / shape
    total = term
    k = shape
    for _ in range(10_000):
        k += 1.0
        term *= x / k
        total += term
        if term < total * 1e-15:
            break
    return min(1.0, total * math.exp(-x + shape * math.log(x) - math.lgamma(shape)))


def _points_to_seconds(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Invert the day's cumulative weight: the time at which ``points`` have been paid.

    Bucket b costs ``weights[b]`` points and lasts SECONDS_IN_BUCKET; inside a
    bucket time is linear in points.  This is the closed form of
    lublin99.c's calc_next_arrive loop (start at midnight, time 0).
    """
    bounds = np.concatenate(([0.0], np.cumsum(weights)))
    per_day = bounds[-1]
    days = np.floor(points / per_day)
    rest = points - days * per_day
    bucket = np.clip(np.searchsorted(bounds, rest, side="right") - 1, 0, BUCKETS - 1)
    within = (rest - bounds[bucket]) / weights[bucket]
    return days * SECONDS_IN_DAY + (bucket + within) * SECONDS_IN_BUCKET


def _calibrate(load_of, target: float) -> float:
    """Scale factor of the arrival points giving ``target`` offered load (bisection in log space)."""
    lo, hi = 1e-6, 1e6
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        if load_of(mid) > target:
            lo = mid  # too loaded: stretch arrivals more
        else:
            hi = mid
        if hi / lo < 1 + 1e-9:
            break
    return math.sqrt(lo * hi)


def _walltimes(rng: np.random.Generator, runtimes: np.ndarray) -> np.ndarray:
    accuracy = rng.uniform(MIN_ACCURACY, 1.0, runtimes.size)
    wanted = runtimes / accuracy
    values = np.asarray(WALLTIME_VALUES, dtype=np.float64)
    index = np.searchsorted(values, wanted, side="left")
    beyond = index >= values.size
    result = values[np.minimum(index, values.size - 1)]
    # beyond the largest value: that value (the site's limit) if the job fits
    # in it, else the next whole hour strictly above the runtime
    too_long = beyond & (runtimes >= values[-1])
    result = np.where(too_long, (np.floor(runtimes / 3600.0) + 1) * 3600.0, result)
    return result.astype(np.int64)


def _zipf_users(rng: np.random.Generator, n: int, n_users: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, n_users + 1)
    return rng.choice(np.arange(1, n_users + 1), size=n, p=weights / weights.sum())
