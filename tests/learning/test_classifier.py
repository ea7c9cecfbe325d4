"""Runtime classifier (docs/semantics/learning.md#classification, learning half): features, divider, labels,
retraining, metrics."""

from __future__ import annotations

import copy
import json
import math
import pickle
import zoneinfo
from datetime import datetime, timedelta
from importlib import resources

import numpy as np
import pytest
from bftune.learning.classifier import RuntimeClassifier, confusion_metrics
from bftune.learning.features import FEATURE_NAMES, Calendar

CAL = ("hour", "day_of_week", "day_of_month", "month", "week_of_year", "quarter")


def cal_features(clf: RuntimeClassifier, job_id: str) -> tuple:
    f = clf.job(job_id)["features"]
    return tuple(int(f[name]) for name in CAL)


# ---------------------------------------------------------------- calendar


def test_calendar_from_unix_start_time_and_timezone():
    # CEA-Curie's header: UnixStartTime 1296571124 = 2011-02-01 14:38:44 UTC,
    # a Tuesday; Paris is UTC+1 in winter -> 15:38; ISO week 5 (week 1 of 2011
    # starts Monday 3 January), quarter 1.
    clf = RuntimeClassifier(1296571124, "Europe/Paris", week=1e12)
    clf.classify("a", 1, 4, 3600, 0, 0)
    assert cal_features(clf, "a") == (15, 1, 1, 2, 5, 1)
    # 2011-07-01 12:00:00 UTC = 1309521600 (a Friday); Paris in summer is UTC+2.
    t = 1309521600 - 1296571124
    clf.classify("b", 1, 4, 3600, t, t)
    assert cal_features(clf, "b") == (14, 4, 1, 7, 26, 3)
    # 23:30 UTC on 2011-12-31 (Saturday) is already 2012-01-01 00:30 in Paris:
    # Sunday, ISO week 52 (of 2011), quarter 1.
    t = 1325374200 - 1296571124
    clf.classify("c", 1, 4, 3600, t, t)
    assert cal_features(clf, "c") == (0, 6, 1, 1, 52, 1)
    assert clf.report()["warnings"] == []


def test_calendar_fallbacks():
    # No start time: epoch 0 UTC = Thursday 1970-01-01 00:00, ISO week 1.
    clf = RuntimeClassifier(None, None, week=1e12)
    clf.classify("a", 1, 4, 3600, 0, 0)
    clf.classify("b", 1, 4, 3600, 86400 * 3 + 7200, 86400 * 3 + 7200)  # Sunday 02:00
    assert cal_features(clf, "a") == (0, 3, 1, 1, 1, 1)
    assert cal_features(clf, "b") == (2, 6, 4, 1, 1, 1)
    assert any("UnixStartTime" in w for w in clf.report()["warnings"])
    # Unknown timezone: UTC plus a warning, never a crash.
    clf = RuntimeClassifier(1296571124, "Mars/Olympus_Mons", week=1e12)
    clf.classify("a", 1, 4, 3600, 0, 0)
    assert cal_features(clf, "a")[0] == 14
    assert any("unknown timezone" in w for w in clf.report()["warnings"])
    assert clf.report()["config"]["timezone"] == "UTC"
    # Day boundary of the (user, day) category follows the local date.
    cal = Calendar(1296571124, "Europe/Paris")
    before = cal.fields(1296601200 - 1296571124 - 1)  # 2011-02-01 23:59:59 Paris
    after = cal.fields(1296601200 - 1296571124)  # 2011-02-02 00:00:00 Paris
    assert after[6] == before[6] + 1


@pytest.fixture
def no_system_zones():
    """A machine whose system time zone database is empty (or, like Ubuntu 24.04, lacks the legacy names)."""
    zoneinfo.reset_tzpath([])
    zoneinfo.ZoneInfo.clear_cache()
    yield
    zoneinfo.reset_tzpath()
    zoneinfo.ZoneInfo.clear_cache()


def test_legacy_zone_names_of_the_archive_traces_do_not_depend_on_the_system(no_system_zones):
    """CTC-SP2 says US/Eastern, the SDSC traces US/Pacific: with no system database the calendar is still theirs
    (the tzdata package's): 1996-06-26 21:06 UTC is 17:06 EDT, a Wednesday."""
    for name in ("US/Eastern", "America/New_York"):
        cal = Calendar(835823160, name)
        assert (cal.tz_name, cal.warnings) == (name, [])
        assert cal.fields(0)[:4] == (17, 2, 26, 6)
    assert Calendar(893466664, "US/Pacific").fields(0)[:3] == (18, 4, 24)  # 1998-04-25 01:11 UTC: Friday 18:11 PDT


def test_the_calendar_reads_the_tzdata_package_before_the_system(tmp_path):
    """A system database that differs (here a US/Eastern that is UTC) does not change the calendar."""
    (tmp_path / "US").mkdir()
    (tmp_path / "US" / "Eastern").write_bytes(resources.files("tzdata").joinpath("zoneinfo", "UTC").read_bytes())
    zoneinfo.reset_tzpath([str(tmp_path)])
    zoneinfo.ZoneInfo.clear_cache()
    try:
        system = zoneinfo.ZoneInfo.no_cache("US/Eastern")
        assert datetime(1996, 6, 26, tzinfo=system).utcoffset() == timedelta(0)
        assert Calendar(835823160, "US/Eastern").fields(0)[0] == 17  # EDT, from the package
    finally:
        zoneinfo.reset_tzpath()
        zoneinfo.ZoneInfo.clear_cache()


def test_a_calendar_pickles_and_copies_as_the_same_calendar():
    cal = Calendar(835823160, "US/Eastern")
    for copied in (pickle.loads(pickle.dumps(cal)), copy.deepcopy(cal)):
        assert (copied.tz_name, copied.warnings, copied.fields(3600.5)) == (cal.tz_name, [], cal.fields(3600.5))


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/localtime", "US/../US/Eastern", "Mars/Olympus_Mons"])
def test_a_zone_name_that_is_no_iana_name_is_utc_with_a_warning(name):
    cal = Calendar(0, name)
    assert cal.tz_name == "UTC" and any("unknown timezone" in w for w in cal.warnings)


# ------------------------------------------------------- divider and labels


def test_divider_and_labels_by_hand():
    clf = RuntimeClassifier(0, "UTC", week=1e9, divider_window=50)
    assert clf.divider(0) is None
    clf.classify("A", 1, 1, 100, 0, 0)  # no divider yet: unlabelled
    clf.classify("B", 1, 1, 100, 0, 0)
    clf.finished("A", 10, 10)
    assert clf.divider(10) == 10
    clf.finished("B", 20, 20)
    assert clf.divider(25) == 15  # median(10, 20)
    clf.classify("C", 1, 1, 100, 25, 25)  # divider 15
    clf.classify("D", 1, 1, 100, 30, 30)  # divider 15
    clf.finished("C", 15, 40)  # 15 < 15 is false: large
    assert clf.divider(59) == 15  # window (9, 59]: A 10, B 20, C 15
    assert clf.divider(60) == 17.5  # (10, 60]: A (end 10) just left; B 20 and C 15
    clf.classify("E", 1, 1, 100, 61, 61)  # divider 17.5
    clf.finished("D", 14, 65)  # 14 < 15: small
    assert clf.divider(70) == 14.5  # (20, 70]: B (end 20) out; C 15, D 14
    clf.finished("E", 17, 80)  # 17 < 17.5: small
    assert clf.divider(200) is None  # everything aged out

    expect = {"A": (None, None), "B": (None, None), "C": (15, 0), "D": (15, 1), "E": (17.5, 1)}
    for jid, (divider, label) in expect.items():
        rec = clf.job(jid)
        assert (rec["divider"], rec["label"]) == (divider, label), jid
    counts = clf.report()["counts"]
    assert counts["unlabelled"] == 2 and counts["evaluated"] == 3 and counts["truly_small"] == 2
    # in the first week every job is predicted large: the truly small D and E are its false large jobs
    errors = clf.report()["errors"]
    assert errors["false_large"]["n"] == 2 and errors["false_large"]["runtime_quartiles"] == [14.75, 15.5, 16.25]
    assert errors["false_large"]["runtime_over_divider_quartiles"][1] == pytest.approx((14 / 15 + 17 / 17.5) / 2)
    assert errors["false_large"]["shorter_than_60s"] == 1.0
    assert errors["false_small"] == {"n": 0, "runtime_quartiles": None, "runtime_over_divider_quartiles": None,
                                     "shorter_than_60s": None}


def test_an_infinite_divider_window_keeps_every_finished_job():
    """divider_window = inf: the median of every job finished so far (Table 2's one divider per trace)."""
    week, whole = (RuntimeClassifier(0, "UTC", week=1e9, divider_window=w) for w in (100, math.inf))
    for clf in (week, whole):
        done = [(1000, 10), (1000, 20), (1000, 30), (5, 200), (5, 210)]
        for i in range(len(done)):
            clf.classify(str(i), 1, 1, 2000, 0, 0)
        for i, (runtime, end) in enumerate(done):
            clf.finished(str(i), runtime, end)
        assert clf.divider(250) == (5.0 if clf is week else 1000.0)
        clf.classify("late", 1, 1, 2000, 250, 250)
        clf.finished("late", 500, 800)
    assert week.job("late")["label"] == 0  # 500 >= the last 100 s's 5: large
    assert whole.job("late")["label"] == 1  # 500 < the median of everything finished, 1000: small
    assert whole.report()["config"]["divider_window"] == math.inf


def test_divider_window_bounds():
    # (now - window, now]: a job ending exactly at now - window is out, at now is in.
    clf = RuntimeClassifier(0, "UTC", week=1e9, divider_window=100)
    clf.classify("A", 1, 1, 100, 0, 0)
    clf.classify("B", 1, 1, 100, 0, 0)
    clf.finished("A", 7, 50)
    assert clf.divider(149) == 7.0  # (49, 149]
    clf.finished("B", 9, 150)
    assert clf.divider(150) == 9.0  # (50, 150]: A, ending exactly at 150 - 100, is out


# ------------------------------------------------------------ no leakage


def _synthetic(n=400, seed=3, span=5000.0):
    rng = np.random.default_rng(seed)
    submits = np.sort(rng.uniform(0, span, n)).round()
    jobs = []
    for i, s in enumerate(submits):
        user = int(rng.integers(0, 4))
        procs = int(rng.choice([1, 2, 4, 8]))
        walltime = float(rng.choice([100, 300, 1000]))
        runtime = float(min(walltime, max(1, round(rng.exponential(walltime / (2 + user))))))
        jobs.append((f"j{i}", user, procs, walltime, float(s), runtime))
    return jobs


def _replay(clf, jobs, observe=None):
    """Run a workload through ``clf`` as the benchmark does (start at submission).

    Returns the event log: (kind, time, job) in call order.
    """
    import heapq

    ends, log = [], []
    for jid, user, procs, walltime, s, runtime in jobs:
        while ends and ends[0][0] <= s:
            end, _, fid, rt = heapq.heappop(ends)
            clf.finished(fid, rt, end)
            log.append(("finished", end, fid))
        clf.advance(s)
        clf.classify(jid, user, procs, walltime, s, s)
        log.append(("classify", s, jid))
        if observe:
            observe(clf, jid)
        heapq.heappush(ends, (s + runtime, len(log), jid, runtime))
    while ends:
        end, _, fid, rt = heapq.heappop(ends)
        clf.finished(fid, rt, end)
        log.append(("finished", end, fid))
    return log


def _reference_rows(jobs, log, mode, week, window, unix_start, tz):
    """From-scratch features of each job from what had *finished* when it was classified.

    Independent of the classifier's incremental state: for job j, the jobs
    finished before its classify call (live) or with end before the last week
    boundary (weekly), ordered by finish, with labels from a brute-force
    divider.
    """
    spec = {jid: (user, procs, walltime, s, runtime) for jid, user, procs, walltime, s, runtime in jobs}
    cal = Calendar(unix_start, tz)
    origin = jobs[0][4]
    finished: list[tuple[float, str]] = []  # (end, jid) in call order
    divider_at: dict[str, float | None] = {}
    rows: dict[str, list[float]] = {}
    for kind, t, jid in log:
        if kind == "finished":
            finished.append((t, jid))
            continue
        user, procs, walltime, s, _ = spec[jid]
        recent = [spec[f][4] for end, f in finished if end > s - window]
        divider_at[jid] = float(np.median(recent)) if recent else None
        if mode == "live":
            known = [f for end, f in finished]
        else:
            last_boundary = origin + math.floor((s - origin) / week) * week
            known = [f for end, f in finished if end < last_boundary]
        labelled = [(f, spec[f][4] < divider_at[f]) for f in known if divider_at[f] is not None]
        h, dow, dom, month, wk, q, day = cal.fields(s)
        row = [walltime, procs, h, dow, dom, month, wk, q]
        for key, key_of in (
            ((user, procs), lambda f: (spec[f][0], spec[f][1])),
            ((user, walltime), lambda f: (spec[f][0], spec[f][2])),
            ((user, day), lambda f: (spec[f][0], cal.fields(spec[f][3])[6])),
        ):
            classes = [float(c) for f, c in labelled if key_of(f) == key]
            last = classes[::-1][:3]
            row += last + [-1.0] * (3 - len(last))
            row.append(sum(classes) / len(classes) if classes else -1.0)
        rows[jid] = row
    return rows, divider_at


@pytest.mark.parametrize("mode", ["live", "weekly"])
def test_features_use_only_jobs_finished_at_submission(mode):
    jobs = _synthetic()
    week, window = 900.0, 600.0
    at_submit = {}

    def observe(clf, jid):
        at_submit[jid] = clf.job(jid)["row"]

    clf = RuntimeClassifier(1296571124, "Europe/Paris", features=mode, week=week, divider_window=window,
                            n_estimators=10)
    log = _replay(clf, jobs, observe)
    ref, divider_at = _reference_rows(jobs, log, mode, week, window, 1296571124, "Europe/Paris")
    for jid, *_ in jobs:
        rec = clf.job(jid)
        np.testing.assert_array_equal(rec["row"], np.asarray(ref[jid], dtype=np.float32), err_msg=jid)
        # the stored row (the one training uses) is the one of submission time
        np.testing.assert_array_equal(rec["row"], at_submit[jid], err_msg=jid)
        assert rec["divider"] == divider_at[jid]
    # and the histories did carry information (the test is not vacuous)
    assert sum(1 for r in ref.values() if r[8] >= 0) > 100
    # each retraining used exactly the labelled jobs that had ended before its boundary
    origin = jobs[0][4]
    ends = {jid: s + runtime for jid, _, _, _, s, runtime in jobs}
    for w in clf.report()["weeks"][1:]:
        boundary = origin + w["week"] * week
        expect = sum(1 for jid in ends if ends[jid] < boundary and divider_at[jid] is not None)
        assert w["model"]["train_size"] == expect


def test_running_job_and_own_runtime_do_not_leak():
    """Y's features and prediction cannot depend on its own runtime, nor on X, still running at Y's submission."""

    def run(x_runtime, y_runtime, mode):
        clf = RuntimeClassifier(0, "UTC", features=mode, week=1000, divider_window=1e9, n_estimators=20)
        # week 0: user 7 alternates small (runtime 1) and large (runtime 100) jobs on 2 and 4 procs
        t = 0.0
        for i in range(40):
            procs = 2 if i % 2 else 4
            runtime = 1 if procs == 2 else 4
            clf.classify(f"h{i}", 7, procs, 200, t, t)
            clf.finished(f"h{i}", runtime, t + runtime)
            t += 10
        clf.advance(1000)  # boundary: a forest is trained
        clf.classify("X", 7, 2, 200, 1000, 1000)  # X runs...
        clf.classify("Y", 7, 2, 200, 1001, 1001)  # ...while Y is submitted, same categories
        rec_y = clf.job("Y")
        for end, jid, runtime in sorted([(1000 + x_runtime, "X", x_runtime), (1001 + y_runtime, "Y", y_runtime)]):
            clf.finished(jid, runtime, end)
        clf.advance(2000)  # retrain with X and Y labelled
        after = clf.job("Y")
        np.testing.assert_array_equal(after["row"], rec_y["row"])  # stored row never rewritten
        return rec_y["row"], rec_y["small"], rec_y["prob"], clf.job("X")["row"]

    for mode in ("live", "weekly"):
        base = run(1, 1, mode)
        for x_rt, y_rt in ((150, 1), (1, 150), (150, 150)):
            other = run(x_rt, y_rt, mode)
            np.testing.assert_array_equal(other[0], base[0])
            assert other[1:3] == base[1:3]
        # Y saw the history of its category (small 2-proc jobs) but not X
        f = dict(zip(FEATURE_NAMES, base[0].tolist()))
        assert f["up_last1"] == 1.0 and f["up_small_frac"] == 1.0
        np.testing.assert_array_equal(base[0][8:], base[3][8:])  # X and Y have the same history features


def test_weekly_mode_freezes_histories_at_the_boundary():
    def features_of_late_job(mode):
        clf = RuntimeClassifier(0, "UTC", features=mode, week=1000, divider_window=1e9, n_estimators=5)
        clf.classify("a", 1, 1, 100, 0, 0)
        clf.classify("b", 1, 1, 100, 10, 10)
        clf.finished("a", 1, 20)  # divider for later jobs: 1
        clf.finished("b", 50, 60)
        clf.classify("c", 1, 1, 100, 500, 500)  # labelled (divider = median(1, 50) = 25.5)
        clf.finished("c", 3, 503)  # small, before the boundary at 1000
        clf.classify("d", 1, 1, 100, 1100, 1100)
        clf.finished("d", 90, 1190)  # large, after the boundary
        clf.classify("e", 1, 1, 100, 1200, 1200)
        return clf.job("e")["features"]

    live, weekly = features_of_late_job("live"), features_of_late_job("weekly")
    assert (live["up_last1"], live["up_last2"], live["up_small_frac"]) == (0.0, 1.0, 0.5)
    assert (weekly["up_last1"], weekly["up_last2"], weekly["up_small_frac"]) == (1.0, -1.0, 1.0)


# --------------------------------------------------------------- retraining


def test_first_week_every_job_large():
    clf = RuntimeClassifier(0, "UTC", week=1000, divider_window=1e9, n_estimators=5)
    out = []
    for i in range(30):
        t = 30.0 * i
        clf.advance(t)
        out.append(clf.classify(f"j{i}", 1, 1 + i % 3, 100, t, t))
        clf.finished(f"j{i}", 1 + (i % 5) * 5, t + 1 + (i % 5) * 5)
    assert out == [(False, 0.0)] * 30
    report = clf.report()
    assert report["weeks"][0]["model"]["kind"] == "none"
    assert report["weeks"][0]["predicted_small"] == 0
    # the first boundary trains a forest from week 0's labelled jobs
    clf.advance(1000)
    _, prob = clf.classify("next", 1, 1, 100, 1000, 1000)
    assert 0.0 <= prob <= 1.0
    assert clf.report()["weeks"][1]["model"]["kind"] == "forest"


def test_single_class_and_empty_weeks_warn():
    clf = RuntimeClassifier(0, "UTC", week=1000, divider_window=1e9, n_estimators=5)
    # week 0: identical runtimes -> every labelled job is large (runtime == divider)
    for i in range(5):
        t = 100.0 * i
        clf.classify(f"a{i}", 1, 1, 100, t, t)
        clf.finished(f"a{i}", 50, t + 50)
    # week 1 and 2: nothing at all; week 3: one job
    clf.advance(3000)
    small, prob = clf.classify("b", 1, 1, 100, 3500, 3500)
    assert (small, prob) == (False, 0.0)  # constant "large" model
    report = clf.report()
    weeks = report["weeks"]
    assert [w["model"]["kind"] for w in weeks] == ["none", "constant", "constant", "constant"]
    assert "single-class training set" in weeks[1]["model"]["reason"]
    assert weeks[2]["model"]["kept_from"] == 1 and weeks[3]["model"]["kept_from"] == 1
    text = "\n".join(report["warnings"])
    assert "week 1: single-class training set" in text
    assert "week 1: no job finished" in text and "week 2: no job finished" in text
    assert "week 1: no job submitted" in text and "week 2: no job submitted" in text
    assert "week 2: no new labelled finished job" in text
    assert "single-class week" in text  # week 0's evaluated jobs are all large
    assert weeks[1]["metrics"]["n"] == 0 and weeks[1]["metrics"]["accuracy"] is None

    # all small: the constant model says small with probability 1
    clf = RuntimeClassifier(0, "UTC", week=1000, divider_window=1e9, n_estimators=5)
    clf.classify("big", 1, 1, 1000, 0, 0)
    clf.finished("big", 900, 900)  # unlabelled (no divider at its submission), sets divider 900
    for i in range(3):
        clf.classify(f"s{i}", 1, 1, 100, 901 + i, 901 + i)
    for i in range(3):
        clf.finished(f"s{i}", 10, 920 + i)
    clf.advance(1000)
    assert clf.classify("n", 1, 1, 100, 1000, 1000) == (True, 1.0)


def test_no_labelled_job_keeps_every_job_large():
    clf = RuntimeClassifier(0, "UTC", week=100, divider_window=1e9)
    clf.classify("a", 1, 1, 100, 0, 0)  # no divider: unlabelled; it never finishes in week 0
    clf.advance(250)
    assert clf.classify("b", 1, 1, 100, 250, 250) == (False, 0.0)
    report = clf.report()
    assert [w["model"]["kind"] for w in report["weeks"]] == ["none", "none", "none"]
    assert any("no labelled finished job to train on" in w for w in report["warnings"])


def test_no_user_no_walltime_trace():
    jobs = [(jid, -1, procs, -1.0, s, rt) for jid, _, procs, _, s, rt in _synthetic(n=200)]
    clf = RuntimeClassifier(None, None, week=1000, divider_window=800, n_estimators=10)
    _replay(clf, jobs)
    report = clf.report()
    json.dumps(report, allow_nan=False)
    text = "\n".join(report["warnings"])
    assert "no user ids" in text and "no walltimes" in text
    assert report["counts"]["evaluated"] > 150
    assert any(w["model"]["kind"] == "forest" for w in report["weeks"])
    f = clf.job("j150")["features"]
    assert f["walltime"] == -1.0
    assert f["up_small_frac"] >= 0  # the (sentinel user, procs) category has a history


def test_deterministic_given_seed():
    jobs = _synthetic(n=300, seed=11)

    def run(seed):
        clf = RuntimeClassifier(1296571124, "Europe/Paris", features="live", seed=seed, week=800,
                                divider_window=700, n_estimators=15)
        out = []
        _replay(clf, jobs, lambda c, jid: out.append((c.job(jid)["small"], c.job(jid)["prob"])))
        report = clf.report()
        for w in report["weeks"]:
            w["model"]["retrain_seconds"] = None
        report["retrain_seconds"] = None
        return out, report

    a, b = run(5), run(5)
    assert a == b
    assert any(p not in (0.0, 1.0) for _, p in a[0])
    assert run(6)[0] != a[0]  # another seed, another forest


# ------------------------------------------------------------------ metrics


def test_confusion_metrics_by_hand():
    m = confusion_metrics(tp=3, fp=1, tn=4, fn=2)
    assert m["n"] == 10
    assert m["accuracy"] == pytest.approx(0.7)
    assert m["precision"] == pytest.approx(0.75)
    assert m["recall"] == pytest.approx(0.6)
    assert m["false_small_rate"] == pytest.approx(0.2)  # FP / (FP + TN): large jobs called small
    assert m["false_large_rate"] == pytest.approx(0.4)  # FN / (FN + TP): small jobs called large
    empty = confusion_metrics(0, 0, 0, 0)
    assert empty["accuracy"] is None and empty["precision"] is None and empty["recall"] is None
    assert confusion_metrics(0, 0, 5, 0)["precision"] is None


def test_report_metrics_match_stored_predictions():
    jobs = _synthetic(n=400, seed=5)
    clf = RuntimeClassifier(0, "UTC", week=700, divider_window=600, n_estimators=15)
    _replay(clf, jobs)
    report = clf.report()
    json.dumps(report, allow_nan=False)
    cells = {}
    for jid, *_ in jobs:
        rec = clf.job(jid)
        if rec["label"] is None:
            continue
        key = ("t" if rec["small"] == bool(rec["label"]) else "f") + ("p" if rec["small"] else "n")
        cells.setdefault(rec["week"], {}).setdefault(key, 0)
        cells[rec["week"]][key] += 1
    total = {k: sum(c.get(k, 0) for c in cells.values()) for k in ("tp", "fp", "tn", "fn")}
    assert report["overall"] == confusion_metrics(**total)
    for w in report["weeks"]:
        c = cells.get(w["week"], {})
        assert w["metrics"] == confusion_metrics(c.get("tp", 0), c.get("fp", 0), c.get("tn", 0), c.get("fn", 0))
    forests = [w for w in report["weeks"] if w["model"]["kind"] == "forest"]
    assert forests and all(sum(w["importances"].values()) == pytest.approx(1.0) for w in forests)
    assert set(forests[0]["importances"]) == set(FEATURE_NAMES)
    assert report["overall"]["tp"] > 0 and report["overall"]["tn"] > 0


def test_api_misuse_raises():
    clf = RuntimeClassifier(0, "UTC", week=1000)
    clf.classify("a", 1, 1, 100, 10, 10)
    with pytest.raises(ValueError, match="twice"):
        clf.classify("a", 1, 1, 100, 10, 10)
    with pytest.raises(ValueError, match="never classified"):
        clf.finished("zz", 1, 20)
    clf.finished("a#2", 5, 20)  # a rerun's id names its origin
    assert clf.job("a")["finished"]
    with pytest.raises(ValueError, match="twice"):
        clf.finished("a", 5, 21)
    with pytest.raises(ValueError, match="backwards"):
        clf.advance(5)
    with pytest.raises(ValueError):
        RuntimeClassifier(0, "UTC", features="daily")


def test_report_before_any_job_and_with_garbage_input():
    clf = RuntimeClassifier(None, None)
    clf.advance(5)
    report = clf.report()
    json.dumps(report, allow_nan=False)
    assert report["counts"]["classified"] == 0 and report["weeks"] == []
    clf = RuntimeClassifier(0, "UTC")
    assert clf.classify("a", None, 0, float("nan"), 3, 3) == (False, 0.0)
    assert clf.classify("b", -5, -1, float("inf"), 4, 4) == (False, 0.0)
    f = clf.job("b")["features"]
    assert (f["walltime"], f["procs"]) == (-1.0, -1.0)
    text = "\n".join(clf.report()["warnings"])
    assert "no user ids" in text and "no walltimes" in text and "no processor counts" in text
