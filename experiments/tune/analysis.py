"""From a finished race to what the outputs say: the ranking, the recommendation, its gain, interval and risks.

Every figure here is computed from the stored weeks (``store.py``) by
``bftune tune`` itself; re-running the same command recomputes them from the
same rows.

- **Ranking**: finalists first (by their mean training ratio), then the other
  survivors, then the candidates dropped at later stages before those dropped
  earlier (each group by its mean training ratio on the weeks it ran).
- **Recommendation**: the best finalist on the *training* half (the testing
  half judges it, it never chooses), if its training gain is positive; else
  EASY-FCFS-FCFS itself ("keep your current setting").  Among the finalists
  whose training gain lies inside the best's interval (the numbers cannot
  tell them apart), the simplest is taken (``candidates.complexity``).  Its
  expected gain is the mean gain on the testing weeks, with a paired
  bootstrap interval (``stats.py``); an interval that includes zero keeps
  the current setting too.
- **Risk** against EASY-FCFS-FCFS on the testing weeks: the MaxWait ratio
  (mean, interval, worst week) and the largest wait of all; fairness: the share
  of jobs that wait at least an hour longer (same job, same week, both
  schedules), and per user (users with at least 10 jobs) the mean wait ratio:
  how many users wait more than 10 % and 10 minutes longer on average, and the
  worst one.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from bftune.experiments.campaign.specs import derive_seed
from bftune.experiments.tune.candidates import Candidate, complexity
from bftune.experiments.tune.engine import Race, eligible
from bftune.experiments.tune.stats import LEVEL, RECOMMENDATION_RESAMPLES, bootstrap_ci, nanmean
from bftune.experiments.tune.validation import validate
from bftune.experiments.tune.weeks import n_weeks

HOUR = 3600.0
#: A user is judged for fairness with at least this many jobs in the testing weeks.
USER_MIN_JOBS = 10
#: A user is worse off when its mean wait grows by more than this share and this many seconds.
USER_WORSE = (0.10, 600.0)


def _base(race: Race) -> str:
    """The baseline's label (EASY-FCFS-FCFS, or the site's slurm.conf): what every ratio is against."""
    return race.baselines[0].label


def gain_of(mean_ratio: float) -> float:
    return 1.0 - mean_ratio


def _interval(values: np.ndarray, seed: int, resamples: int) -> tuple[float, float]:
    low, high = bootstrap_ci(values, seed, resamples)
    return gain_of(high), gain_of(low)  # a lower ratio is a higher gain


def ranking(race: Race) -> list[dict]:
    """One row per candidate (module docstring), best first."""
    s = race.settings
    rows = []
    for index, c in enumerate(race.candidates):
        weeks = race.train_weeks.get(c.key, 0)
        status = race.status.get(c.key, {"state": "not run"})
        row = {"label": c.label, "family": c.family, "key": c.key, "options": c.options, "warmup": c.warmup,
               "state": status["state"], "train_weeks": weeks, "status": status, "order": index}
        if weeks:
            r = race.ratios("train", c, weeks, s.objective)
            m = race.ratios("train", c, weeks, "max_wait")
            row.update(train_ratio=nanmean(r), train_gain=gain_of(nanmean(r)),
                       train_interval=_interval(r, derive_seed(s.seed, "tune-ci", c.key), 2_000),
                       train_max_wait_ratio=nanmean(m), eligible=eligible(race, c.key))
        if c.key in race.finalists:
            row["finalist"] = True
            row.update(test_figures(race, c))
        rows.append(row)

    def order(row: dict) -> tuple:
        state = row["state"]
        group = 0 if row.get("finalist") else 1 if state == "survived" else 2 if state == "dropped" else 3
        stage = -row["status"].get("stage", 0)
        mean = row.get("train_ratio", math.inf)
        return group, stage, math.inf if math.isnan(mean) else mean, row["order"]

    rows.sort(key=order)
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def test_figures(race: Race, c: Candidate) -> dict:
    """A finalist's testing-half figures: gain and its interval, MaxWait ratio and its interval, worst week."""
    s = race.settings
    n = race.test_weeks
    r = race.ratios("test", c, n, s.objective)
    m = race.ratios("test", c, n, "max_wait")
    seed = derive_seed(s.seed, "tune-test-ci", c.key)
    low, high = bootstrap_ci(m, seed, RECOMMENDATION_RESAMPLES)
    finite = m[~np.isnan(m)]
    return {"test_weeks": n, "test_ratio": nanmean(r), "test_gain": gain_of(nanmean(r)),
            "test_interval": _interval(r, seed, RECOMMENDATION_RESAMPLES),
            "test_max_wait_ratio": nanmean(m), "test_max_wait_interval": (low, high),
            "test_worst_week_max_wait_ratio": float(finite.max()) if len(finite) else math.nan}


def recommend(race: Race, rows: list[dict]) -> dict:
    """The recommendation (module docstring) with its test figures, risks and why it was chosen."""
    finalists = [row for row in rows if row.get("finalist")]
    base = race.baselines[0]
    if not finalists:
        limit = race.settings.max_wait_increase
        why = ("no candidate met the MaxWait limit" if limit is not None else "no candidate finished the race")
        return {"candidate": base, "keep_baseline": True, "why": f"{why}: keep {_base(race)}", "row": None}
    best = finalists[0]
    c = race.by_key()[best["key"]]
    if not best["train_gain"] > 0:
        return {"candidate": base, "keep_baseline": True, "row": best,
                "why": f"no candidate beat {_base(race)} on the training half (the best, {c.label}, gained "
                       f"{100 * best['train_gain']:.1f} %): keep your current setting ({_base(race)})"}
    chosen, why = _simplest_of_the_best(race, finalists)
    c = race.by_key()[chosen["key"]]
    later = validate(race, c)
    low, high = chosen["test_interval"]
    if not low > 0:  # the testing half cannot tell it from EASY-FCFS: no change is supported
        return {"candidate": base, "keep_baseline": True, "row": chosen, "validation": later,
                "why": f"the best candidate, {c.label}, gained {100 * chosen['test_gain']:+.1f} % on the testing "
                       f"half, but its {LEVEL_TEXT} interval [{100 * low:+.1f}, {100 * high:+.1f}] % includes "
                       f"zero: keep your current setting ({_base(race)})"}
    if later is not None:
        late_low, late_high = later["later_period_interval"]
        if not late_low > 0 or not later["held_out_gain"] > 0:
            because = (f"its interval for a later period of {n_weeks(later['later_weeks'])}, "
                       f"[{100 * late_low:+.1f}, {100 * late_high:+.1f}] %, includes zero" if not late_low > 0 else
                       f"on the log's last {later['holdout']:.0%}, kept out of the search, it gained "
                       f"{100 * later['held_out_gain']:+.1f} %")
            return {"candidate": base, "keep_baseline": True, "row": chosen, "validation": later,
                    "why": f"the best candidate, {c.label}, gained {100 * chosen['test_gain']:+.1f} % on the "
                           f"testing half, but {because}: keep your current setting ({_base(race)})"}
    risk = {**max_wait_risk(race, c), **fairness(race, c)}
    return {"candidate": c, "keep_baseline": False, "row": chosen, "risk": risk, "why": why, "validation": later}


#: The level of the intervals, in words.
LEVEL_TEXT = f"{LEVEL:.0%}"


def _simplest_of_the_best(race: Race, finalists: list[dict]) -> tuple[dict, str]:
    """Among the finalists the training half cannot tell from the best (a mean gain inside the best's interval),
    the simplest (:func:`~bftune.experiments.tune.candidates.complexity`), and the sentence saying so."""
    best = finalists[0]
    floor = best["train_interval"][0]
    tied = [row for row in finalists if row["train_gain"] >= floor]
    by_key = race.by_key()

    def simplest_first(row: dict) -> tuple:
        return complexity(by_key[row["key"]]), row["rank"]

    chosen = min(tied, key=simplest_first)
    limit = " within the MaxWait limit" if race.settings.max_wait_increase is not None else ""
    if chosen is best:
        return best, (f"the lowest mean {race.settings.objective} ratio to {_base(race)} on the training half "
                      f"among the finalists{limit}")
    return chosen, (f"the simplest of the {len(tied)} finalists{limit} whose training gain lies inside the best's "
                    f"interval ({by_key[best['key']].label}: {100 * best['train_gain']:+.1f} %, interval from "
                    f"{100 * floor:+.1f} %): fewest changes from EASY-FCFS, and a backfilling order other than the "
                    "queue's counts double (Slurm cannot run it unpatched)")


def _jobs(race: Race, c: Candidate) -> tuple[list[list], list[list]]:
    rows = [race.store.get("test", c.key, w) for w in range(race.test_weeks)]
    return [r["waits"] for r in rows], [r["users"] for r in rows]


def max_wait_risk(race: Race, c: Candidate) -> dict:
    """The largest wait of all testing weeks, the recommendation's and the baseline's (seconds)."""
    base = race.baselines[c.warmup]
    ours = race.values("test", c, race.test_weeks, "max_wait")
    theirs = race.values("test", base, race.test_weeks, "max_wait")
    worse = np.sum(ours > theirs)
    ours_all, theirs_all = waits(race, c), waits(race, base)
    return {"largest_wait_s": float(np.nanmax(ours)), "baseline_largest_wait_s": float(np.nanmax(theirs)),
            "weeks_max_wait_above_baseline": int(worse), "weeks": race.test_weeks,
            "p99_wait_s": _p99(ours_all), "baseline_p99_wait_s": _p99(theirs_all)}


def _p99(values: np.ndarray) -> float:
    """The 99th percentile of waits (the tail a mean hides), NaN without any."""
    return float(np.quantile(values, 0.99)) if len(values) else math.nan


def fairness(race: Race, c: Candidate) -> dict:
    """Job by job and user by user against the baseline on the same testing weeks (module docstring)."""
    base = race.baselines[c.warmup]
    ours, users = _jobs(race, c)
    theirs, _ = _jobs(race, base)
    a = np.array([w for week in ours for w in week], dtype=float)
    b = np.array([w for week in theirs for w in week], dtype=float)
    u = np.array([x for week in users for x in week])
    if len(a) != len(b) or not len(a):
        return {}
    per_user: dict[int, list[float]] = defaultdict(_sums)
    for user, x, y in zip(u.tolist(), a.tolist(), b.tolist()):
        acc = per_user[user]
        acc[0] += x
        acc[1] += y
        acc[2] += 1
    judged = {user: acc for user, acc in per_user.items() if acc[2] >= USER_MIN_JOBS}
    share, seconds = USER_WORSE
    worse = []
    for user, (x, y, n) in judged.items():
        mx, my = x / n, y / n
        if mx > my * (1 + share) and mx - my > seconds:
            worse.append((mx / my if my > 0 else math.inf, mx - my, user, n))
    worst = max(worse, default=None, key=_by_increase)
    sizes = by_size(race, c, a, b)
    longest = largest_waits(race, c, b)
    return {"jobs": int(len(a)), "jobs_waiting_1h_longer": float(np.mean(a >= b + HOUR)),
            "jobs_waiting_1h_shorter": float(np.mean(a <= b - HOUR)),
            "jobs_waiting_longer": float(np.mean(a > b)), "users_judged": len(judged),
            "users_worse_off": len(worse),
            "worst_user": None if worst is None else _worst_user(race, worst),
            "mean_wait_s": float(a.mean()), "baseline_mean_wait_s": float(b.mean()),
            **({"by_size": sizes} if sizes else {}), **({"largest_waits": longest} if longest else {})}


#: How many of the longest waits the report lists.
LONGEST = 10


def largest_waits(race: Race, c: Candidate, theirs: np.ndarray) -> list[dict]:
    """The :data:`LONGEST` longest waits of the testing jobs under ``c``: week, user (named where the log names
    users), processors, and the same job's wait under EASY-FCFS (empty when the stored weeks predate sizes)."""
    rows = [race.store.get("test", c.key, w) for w in range(race.test_weeks)]
    if not rows or any("procs" not in r for r in rows):
        return []
    jobs = [(wait, week, user, procs) for week, r in enumerate(rows)
            for wait, user, procs in zip(r["waits"], r["users"], r["procs"])]
    if len(jobs) != len(theirs):
        return []
    names = race.data.get("user_names", {})
    order = np.argsort([-job[0] for job in jobs], kind="stable")[:LONGEST].tolist()
    return [{"wait_s": float(jobs[i][0]), "baseline_wait_s": float(theirs[i]), "week": jobs[i][1],
             "user": jobs[i][2], **({"name": names[jobs[i][2]]} if jobs[i][2] in names else {}),
             "procs": jobs[i][3]} for i in order]


#: Job sizes as shares of the machine: the classes of "who loses" (upper bounds; the last takes the rest).
SIZE_CLASSES = ((0.01, "up to 1 % of the machine"), (0.10, "1-10 %"), (0.50, "10-50 %"), (1.0, "over half"))


def by_size(race: Race, c: Candidate, ours: np.ndarray, theirs: np.ndarray) -> list[dict]:
    """Mean waits by job size class, ours and EASY-FCFS's, on the same testing jobs (empty when the stored
    weeks predate sizes)."""
    rows = [race.store.get("test", c.key, w) for w in range(race.test_weeks)]
    if not rows or any("procs" not in r for r in rows):
        return []
    procs = np.array([p for r in rows for p in r["procs"]], dtype=float) / race.data["procs"]
    if len(procs) != len(ours):
        return []
    out, low = [], 0.0
    for high, label in SIZE_CLASSES:
        mask = (procs > low) & (procs <= high)
        low = high
        if mask.any():
            out.append({"class": label, "jobs": int(mask.sum()), "mean_wait_s": float(ours[mask].mean()),
                        "baseline_mean_wait_s": float(theirs[mask].mean())})
    return out


def _worst_user(race: Race, worst: tuple) -> dict:
    """The worst-off user: its number, jobs and wait figures, and its name where the log has one (a Slurm dump)."""
    out = {"user": worst[2], "jobs": worst[3], "mean_wait_ratio": worst[0], "mean_wait_increase_s": worst[1]}
    name = race.data.get("user_names", {}).get(worst[2])
    if name is not None:
        out["name"] = name
    return out


def _sums() -> list[float]:
    """A user's summed waits (ours, the baseline's) and job count."""
    return [0.0, 0.0, 0]


def _by_increase(item: tuple) -> float:
    return item[1]


def waits(race: Race, c: Candidate) -> np.ndarray:
    """Every job's wait over the testing weeks (for the CDF)."""
    ours, _ = _jobs(race, c)
    return np.array([w for week in ours for w in week], dtype=float)


def reason_text(row: dict) -> str:
    """Why a candidate is where it is, in words (the racing statistics written down)."""
    st = row["status"]
    if row.get("finalist"):
        return "finalist: judged on the testing half"
    state = st.get("state")
    if state == "survived":
        return f"survived {n_weeks(st.get('weeks'))}; not among the finalists" + (
            "" if row.get("eligible", True) else " (over the MaxWait limit)")
    if state == "failed":
        return f"failed: {st.get('reason')}"
    if state != "dropped":
        return state or ""
    where = f"at stage {st['stage']} ({n_weeks(st['weeks'])})"
    if st["reason"] == "budget":
        return f"dropped by the budget {where}: ranked {st['rank']} of {st['of']} by mean ratio (successive halving)"
    what = "worse than the leader" if st["reason"] == "worse" else "MaxWait ratio above the limit"
    return f"dropped {where}: {what} (one-sided paired t-test p = {st['p']:.2g} < {st['level']:.2g})"
