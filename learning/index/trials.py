"""The trial simulator of docs/semantics/learning.md#learned-index-policies: (S, Q) windows, permutations of Q, scores.

A window is |S| + |Q| consecutive jobs of a trace (16 + 32 by default).  The
jobs form one list, S in arrival order then a permutation Q* of Q, and are
started **strictly in list order** on m processors, each as soon as it has
arrived, the previous job of the list has started and enough processors are
free (no backfilling).  A trial's outcome is AVGbsld over Q (tau = 10 s)
with the actual runtimes; ``score(j)`` = sum of AVGbsld over the trials
where j is first / sum over all trials.

The hot loop
------------
S's schedule does not depend on the permutation, so it is computed once
(:func:`warmup`); what Q inherits from it is the S jobs still running after
the last S start and that start itself (starts never go back in time).

Trials are then advanced **together**, one list position at a time, over
arrays with one row per trial.  A row keeps the ends of the jobs started so
far sorted ascending (``E``) and the running sum of their processors in that
order (``C``).  Because every later start is at or after every earlier one,
the processors in use at a time t >= the last start are those of the jobs
with end > t, so the next job (q processors) can start at the first sorted
end e_i with ``C_i >= T + q - m`` (T = all processors ever started), or at
once if ``T + q - m <= 0``; never before max(its arrival, the last start).
The new end is then inserted by a masked shift.  Each step costs a few
vectorised passes over a row of (jobs started so far + 1) entries, and only
those columns are touched, so a trial of |Q| = 32 costs about 32 x 25
element operations per pass instead of a Python loop.

The code uses only array-API operations of an array namespace ``xp`` (numpy
by default; cupy or torch through ``array_api_compat`` for the optional
accelerated path), so the same kernel runs on a GPU.  Permutations are always
drawn by numpy's generator on the CPU, so results are identical whatever
runs the kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bftune.learning.index import PROCS as DEFAULT_PROCS
from bftune.learning.index import QUEUE as DEFAULT_QUEUE  # noqa: F401 - re-exported (collect.Settings' defaults)
from bftune.learning.index import TAU as DEFAULT_TAU
from bftune.learning.index import WARMUP as DEFAULT_WARMUP  # noqa: F401 - re-exported (collect.Settings' defaults)

#: Trials simulated per array batch: the chunking never changes results (the
#: permutations are drawn batch by batch from one seeded stream in a fixed
#: batch size), it only bounds memory and keeps arrays in cache.
BATCH = 4096


class TrialError(ValueError):
    """Bad input to the trial simulator; the message names the option."""


@dataclass(frozen=True)
class Window:
    """One (S, Q) pair, times relative to the first arrival of Q (S arrives before it)."""

    index: int  # window number in the collection
    position: int  # index in the trace of the window's first job
    ids: tuple[int, ...]  # trace job ids, S then Q
    submit: np.ndarray  # r (relative), S then Q, float64
    runtime: np.ndarray  # p, actual runtimes, float64
    procs: np.ndarray  # q, int64
    warmup: int  # |S|

    @property
    def queue(self) -> int:
        return len(self.submit) - self.warmup


def check_sizes(warmup: int, queue: int, procs: int) -> None:
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise TrialError(f"--warmup: expected an integer >= 0, got {warmup!r}")
    if isinstance(queue, bool) or not isinstance(queue, int) or queue < 1:
        raise TrialError(f"--queue: expected an integer >= 1, got {queue!r}")
    if isinstance(procs, bool) or not isinstance(procs, int) or procs < 1:
        raise TrialError(f"--procs: expected a positive integer, got {procs!r}")


def window_positions(n_jobs: int, windows: int, warmup: int, queue: int, seed: int) -> list[int]:
    """Start positions of ``windows`` distinct random windows of ``warmup + queue`` consecutive jobs."""
    length = warmup + queue
    if isinstance(windows, bool) or not isinstance(windows, int) or windows < 1:
        raise TrialError(f"--windows: expected a positive integer, got {windows!r}")
    room = n_jobs - length + 1
    if room < 1:
        raise TrialError(f"--windows: a window of {warmup} + {queue} jobs is larger than the trace "
                         f"({n_jobs} jobs)")
    if windows > room:
        raise TrialError(f"--windows {windows}: the trace ({n_jobs} jobs) has room for only {room} distinct "
                         f"windows of {length} consecutive jobs")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5eed]))
    return sorted(int(x) for x in rng.choice(room, size=windows, replace=False))


def make_window(jobs, index: int, position: int, warmup: int, queue: int, procs: int) -> Window:
    """The window of ``jobs[position : position + warmup + queue]`` (JobRecord-like: submit, runtime, procs, id)."""
    sel = jobs[position:position + warmup + queue]
    big = max(sel, key=lambda j: j.procs)  # noqa: E731 - local
    if big.procs > procs:
        raise TrialError(f"--procs {procs}: smaller than job {big.id}'s size ({big.procs} processors)")
    submit = np.array([j.submit for j in sel], dtype=np.float64)
    submit -= submit[warmup]
    return Window(index=index, position=position, ids=tuple(int(j.id) for j in sel), submit=submit,
                  runtime=np.array([j.runtime for j in sel], dtype=np.float64),
                  procs=np.array([j.procs for j in sel], dtype=np.int64), warmup=warmup)


@dataclass(frozen=True)
class Warmup:
    """What Q inherits from S: S's starts, the ends and sizes of S jobs still running, the last start."""

    starts: np.ndarray  # start of every S job, in arrival order
    alive_end: np.ndarray  # sorted ascending
    alive_procs: np.ndarray  # in alive_end order
    last_start: float  # -inf without S


def list_starts(submit, runtime, procs, m: int, order=None) -> list[float]:
    """Start times of jobs started strictly in list order (scalar version, for S)."""
    order = range(len(submit)) if order is None else order
    running: list[tuple[float, int]] = []
    last = -math.inf
    starts = []
    for j in order:
        t = max(last, float(submit[j]))
        running = sorted(x for x in running if x[0] > t)
        used = sum(q for _, q in running)
        i = 0
        while used + int(procs[j]) > m:  # wait for the next end
            t = max(t, running[i][0])
            used -= running[i][1]
            i += 1
        running = running[i:]
        running.append((t + float(runtime[j]), int(procs[j])))
        starts.append(t)
        last = t
    return starts


def warmup(window: Window, m: int) -> Warmup:
    s = window.warmup
    starts = np.array(list_starts(window.submit[:s], window.runtime[:s], window.procs[:s], m), dtype=np.float64)
    last = float(starts[-1]) if s else -math.inf
    ends = starts + window.runtime[:s]
    alive = ends > last
    order = np.argsort(ends[alive], kind="stable")
    return Warmup(starts, ends[alive][order], window.procs[:s][alive][order], last)


def _first_true(xp, mask):
    """Index of the first True of each row (rows are known to hold one)."""
    if getattr(xp, "__name__", "").split(".")[-1] in ("numpy", "cupy"):
        return xp.argmax(mask, axis=1)  # argmax of a bool row stops at its first True
    return xp.argmax(xp.astype(mask, xp.int8), axis=1)  # the standard's argmax wants numbers


def run_trials(window: Window, perms, m: int, tau: float = DEFAULT_TAU, xp=np, starts_out: bool = False,
               state: Warmup | None = None):
    """AVGbsld over Q of every trial (a row of ``perms``: an order of Q's indices 0..|Q|-1).

    Returns the per-trial AVGbsld array (in ``xp``), and with ``starts_out``
    also the (trials x |Q|) start times in list order.
    """
    state = state if state is not None else warmup(window, m)
    s, n = window.warmup, window.queue
    k_trials = perms.shape[0]
    f64 = xp.float64
    r_q = xp.asarray(window.submit[s:], dtype=f64)
    p_q = xp.asarray(window.runtime[s:], dtype=f64)
    q_q = xp.asarray(window.procs[s:].astype(np.float64), dtype=f64)
    inv_den = xp.asarray(1.0 / np.maximum(window.runtime[s:], tau), dtype=f64)
    a = len(state.alive_end)
    width = a + n + 1  # one sentinel column in front, then a + n data columns
    e_init = np.full(width, np.inf)
    e_init[0] = -np.inf  # the shifted view's first column: never the maximum
    e_init[1:a + 1] = state.alive_end
    c_init = np.zeros(width)
    c_init[1:a + 1] = np.cumsum(state.alive_procs)
    # two buffers each, written alternately (step k reads buffer k % 2, writes the other)
    ends = [xp.asarray(np.tile(e_init, (k_trials, 1)), dtype=f64) for _ in range(2)]
    cums = [xp.asarray(np.tile(c_init, (k_trials, 1)), dtype=f64) for _ in range(2)]
    total = xp.full((k_trials,), float(state.alive_procs.sum()), dtype=f64)  # T (processors ever started)
    last = xp.full((k_trials,), state.last_start, dtype=f64)
    bsld = xp.zeros((k_trials,), dtype=f64)
    cols = xp.arange(width, dtype=xp.int64)
    starts = []
    for k in range(n):
        w = a + k  # valid entries before this insertion; the view has w + 1 (one +inf)
        cur_e, cur_c = ends[k % 2], cums[k % 2]
        new_e, new_c = ends[1 - k % 2], cums[1 - k % 2]
        e_data, e_shift = cur_e[:, 1:w + 2], cur_e[:, 0:w + 1]
        c_data, c_shift = cur_c[:, 1:w + 2], cur_c[:, 0:w + 1]
        j = perms[:, k]
        r_j, p_j, q_j = xp.take(r_q, j), xp.take(p_q, j), xp.take(q_q, j)
        t0 = xp.maximum(r_j, last)
        need = total + q_j - m  # processors that must be released first
        idx = _first_true(xp, c_data >= need[:, None])
        e_at = xp.take_along_axis(e_data, idx[:, None], axis=1)[:, 0]
        start = xp.where(need > 0, xp.maximum(t0, e_at), t0)
        end = start + p_j
        pos = _first_true(xp, e_data > end[:, None])  # the +inf column guarantees one
        before = cols[None, :w + 1] < pos[:, None]
        new_e[:, 1:w + 2] = xp.where(before, e_data, xp.maximum(e_shift, end[:, None]))
        new_c[:, 1:w + 2] = xp.where(before, c_data, c_shift + q_j[:, None])
        total = total + q_j
        last = start
        bsld = bsld + xp.maximum((start - r_j + p_j) * xp.take(inv_den, j), 1.0)
        if starts_out:
            starts.append(start)
    avg = bsld / n
    if starts_out:
        return avg, xp.stack(starts, axis=1)
    return avg


def permutations(rng: np.random.Generator, trials: int, n: int) -> np.ndarray:
    """``trials`` uniform random orders of 0..n-1, one per row."""
    base = np.broadcast_to(np.arange(n, dtype=np.int64), (trials, n))
    return rng.permuted(base, axis=1)


def to_numpy(x) -> np.ndarray:
    """A host numpy copy of an array of any namespace (numpy, cupy, torch)."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get"):  # cupy
        return x.get()
    if hasattr(x, "cpu"):  # torch
        return x.cpu().numpy()
    return np.from_dlpack(x)


@dataclass
class WindowScores:
    """The outcome of one window: per Q job, how often it came first and the AVGbsld it summed."""

    window: Window
    trials: int
    first_count: np.ndarray  # trials where Q job i was first
    first_sum: np.ndarray  # sum of AVGbsld over those trials
    total: float  # sum of AVGbsld over all trials
    mean_avg_bsld: float
    min_avg_bsld: float
    max_avg_bsld: float

    @property
    def scores(self) -> np.ndarray:
        return self.first_sum / self.total


def accumulate(perm_first: np.ndarray, avg: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(perm_first, minlength=n).astype(np.int64)
    sums = np.bincount(perm_first, weights=avg, minlength=n)
    return counts, sums


def window_scores(window: Window, trials: int, m: int = DEFAULT_PROCS, tau: float = DEFAULT_TAU, seed: int = 0,
                  xp=np, batch: int = BATCH, perms: np.ndarray | None = None) -> WindowScores:
    """Simulate ``trials`` random permutations of ``window``'s Q (or the given ``perms``) and score Q's jobs."""
    n = window.queue
    if perms is None:
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            raise TrialError(f"--trials: expected a positive integer, got {trials!r}")
        rng = np.random.default_rng(np.random.SeedSequence([seed, window.index, window.position]))
        batches = [min(batch, trials - i) for i in range(0, trials, batch)]
        sources = (permutations(rng, size, n) for size in batches)
    else:
        trials = len(perms)
        if trials < 1:
            raise TrialError("--trials: expected at least one trial")
        sources = (perms[i:i + batch] for i in range(0, trials, batch))
    state = warmup(window, m)
    counts = np.zeros(n, dtype=np.int64)
    sums = np.zeros(n)
    total, lo, hi = 0.0, math.inf, -math.inf
    for chunk in sources:
        avg = to_numpy(run_trials(window, xp.asarray(chunk), m, tau, xp=xp, state=state))
        c, s_ = accumulate(chunk[:, 0], avg, n)
        counts += c
        sums += s_
        total += float(avg.sum())
        lo, hi = min(lo, float(avg.min())), max(hi, float(avg.max()))
    return WindowScores(window, trials, counts, sums, total, total / trials, lo, hi)
