"""What ``bftune tune`` writes in ``--out DIR`` (besides the stored weeks), and what it prints.

=========================  =====================================================================
``recommendation.json``    the configuration (option-table names), the objective, the expected gain
                           on the testing half and its interval, the risks, the data it was computed
                           on (trace, its hash, cleaning, halves, seeds), the budget and the command
``simulate_flags.txt``     the configuration's flags only (``bftune simulate $(cat simulate_flags.txt) --trace T``)
``pybatsim_options.json``  pybatsim's ``-o`` JSON
``campaign.toml``          a campaign that judges it again (``forms.py``)
``ranking.csv``            every candidate: rank, state, weeks, training and testing figures
``weeks.csv``              every stored week the run used: candidate, half, week, metrics, ratios
``report.html``            the self-contained report (``report.py``)
``slurm.conf.diff``        with the ``slurm`` family and ``--slurm-conf``: the site's slurm.conf changed to the best
                           Slurm setting (a unified diff, ``patch -p1``); without ``--slurm-conf``,
                           ``slurm.conf.fragment``: the lines to set (``slurmrace.py``)
=========================  =====================================================================

The seven files are one set (:func:`write_all`): made first, then written aside and renamed into place
together, while the tune directory is still locked, so a kill or a second tune leaves the previous set or
the new one, never a mix.  JSON follows the project's one rule (NaN is null, infinity ``"inf"``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from bftune import __version__
from bftune.experiments.runs.summary import jsonable
from bftune.experiments.tune import analysis, forms, slurmrace
from bftune.experiments.tune.budget import _fmt
from bftune.experiments.tune.candidates import normalised, sentence
from bftune.experiments.tune.engine import Race
from bftune.experiments.tune.stats import ALPHA, LEVEL, RECOMMENDATION_RESAMPLES
from bftune.experiments.tune.weeks import METRICS, OBJECTIVES, n_weeks, objective_name
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.slurmconf import conf_diff, fragment
from bftune.support.files import atomic_write_many

FILES = ("recommendation.json", "simulate_flags.txt", "pybatsim_options.json", "campaign.toml", "ranking.csv",
         "weeks.csv", "report.html")


def recommendation_record(race: Race, rows: list[dict], rec: dict) -> dict:
    s = race.settings
    slurm = slurmrace.comparison(race, rows)
    if slurm is not None:
        slurm["file"] = slurm_conf_name(race)
        slurm["text"] = slurm_conf_text(race, slurm)
    c = rec["candidate"]
    row = rec.get("row") or {}
    figures = {} if rec["keep_baseline"] else {
        "gain": row.get("test_gain"), "interval": list(row.get("test_interval", ())),
        "interval_method": f"paired percentile bootstrap over the testing weeks ({RECOMMENDATION_RESAMPLES:,} "
                           f"resamples of whole weeks, {LEVEL:.0%})",
        "confidence": LEVEL, "testing_weeks": race.test_weeks, "training_weeks": row.get("train_weeks"),
        "training_gain": row.get("train_gain"), "training_interval": list(row.get("train_interval", ())),
        "risk": {"max_wait_ratio": row.get("test_max_wait_ratio"),
                 "max_wait_ratio_interval": list(row.get("test_max_wait_interval", ())),
                 "worst_week_max_wait_ratio": row.get("test_worst_week_max_wait_ratio"), **rec.get("risk", {})}}
    data = dict(race.data)
    data.pop("read_s", None)
    data.pop("user_names", None)  # one per user of the log: the report uses them, the record names the worst
    return {
        "configuration": normalised(c.options), "label": c.label, "in_words": sentence(c), "family": c.family,
        "requires": c.requires,
        "keep_easy_fcfs": rec["keep_baseline"], "why": rec["why"],
        "replay": _replay_summary(data.get("replay")),
        "later_period": rec.get("validation"),
        "objective": s.objective, "objective_meaning": OBJECTIVES[s.objective],
        "gain_definition": f"1 - mean over weeks of {s.objective}(configuration) / {s.objective}({race.base_label}) "
                           "on the same resampled week",
        **figures,
        "baseline": {"label": race.base_label, "configuration": normalised(race.baselines[0].options)},
        "max_wait_increase_limit": s.max_wait_increase,
        "data": {**data, "seed": s.seed, "tau": s.tau, "resampling": "per-user weekly resampling of each half "
                 "(docs/semantics/workloads.md#resampling), seeds derive_seed(seed, 'offline', half): "
                 "the offline campaign's weeks"},
        "search": {"candidates": len(race.candidates), "families": list(dict.fromkeys(x.family for x in race.candidates)),
                   "policies": list(s.policies), "thresholds": list(s.thresholds), "finalists": len(race.finalists),
                   "racing_alpha": ALPHA},
        "budget": {"budget_s": s.budget_s, "estimate_s": race.plan.estimate_s, "weeks_per_half": race.plan.weeks,
                   "stages": race.plan.stages, "halving": race.halved, "finish_s": race.plan.finish_s,
                   "decisions": race.decisions, **race.timings},
        "forms": {"simulate": forms.simulate_command(s, c), "pybatsim": forms.pybatsim_command(c)},
        "command": forms.tune_command(s), "bftune_version": __version__,
        **({"slurm": slurm} if slurm is not None else {}),
    }


def slurm_conf_name(race: Race) -> str:
    """The slurm.conf output's name: a diff against the site's file, or a fragment when none was given."""
    return "slurm.conf.diff" if race.settings.site_text is not None else "slurm.conf.fragment"


def slurm_conf_text(race: Race, slurm: dict) -> str:
    """The best Slurm setting as slurm.conf: a unified diff of the site's file (lines of text before it, which
    ``patch`` skips), or the lines to set."""
    best = slurm["best_slurm"]
    config = SchedulerConfig.from_options(best["configuration"])
    low, high = best["interval"]
    about = [f"bftune tune ({race.data['name']}, objective {race.settings.objective}): the best Slurm setting, "
             f"{best['label']}",
             f"gain against {race.base_label}: {100 * best['gain']:+.1f} % [{100 * low:+.1f}, {100 * high:+.1f}] "
             f"({best['half']} half, {n_weeks(best['weeks'])}); report.html sets it beside the best EASY"]
    if race.settings.site_text is None:
        return fragment(config, header=about)
    diff = conf_diff(race.settings.site_text, config, race.settings.site_path or "slurm.conf",
                     header=["added by bftune tune"])
    text = "\n".join(f"# {line}" for line in about) + "\n"
    return text + (diff or "# no change: the site's slurm.conf already says the best Slurm setting\n")


def _replay_summary(fidelity: dict | None) -> dict:
    """The replay's verdict where a reader looks first, with a warning when the simulator is far from the log."""
    if fidelity is None:
        return {"verdict": "unknown", "meaning": "the log records no waits: how far the simulator reproduces the "
                                                 "machine is not known"}
    out = {"verdict": fidelity["verdict"], "line": fidelity["verdict_line"],
           "meaning": "EASY-FCFS simulated on the whole log, its waits set beside the logged ones "
                      "(docs/semantics/replay.md#verdict); the full comparison is under data.replay"}
    if fidelity["verdict"] == "far":
        out["warning"] = ("the simulator does not reproduce this machine's waits: the gain is between two "
                          "simulations and may not carry over to the machine")
    return out


def ranking_csv(rows: list[dict]) -> str:
    columns = ["rank", "label", "family", "state", "reason", "train_weeks", "train_gain", "train_gain_low",
               "train_gain_high", "train_max_wait_ratio", "eligible", "test_weeks", "test_gain", "test_gain_low",
               "test_gain_high", "test_max_wait_ratio", "options"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        train = row.get("train_interval", (None, None))
        test = row.get("test_interval", (None, None))
        values = {**row, "reason": analysis.reason_text(row), "train_gain_low": train[0], "train_gain_high": train[1],
                  "test_gain_low": test[0], "test_gain_high": test[1],
                  "options": json.dumps(normalised(row["options"]))}
        writer.writerow([_cell(values.get(k)) for k in columns])
    return buf.getvalue()


def _cell(value) -> str:
    value = jsonable(value)
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def weeks_csv(race: Race) -> str:
    """Every week the run used (candidates as far as they ran, the baselines), with the ratios it judged."""
    s = race.settings
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["half", "candidate", "family", "week", "jobs", *METRICS, f"ratio_{s.objective}",
                     "ratio_max_wait"])
    plan = [("train", c, race.train_weeks.get(c.key, 0)) for c in race.candidates]
    longest = max([w for _, _, w in plan], default=0)
    plan += [("train", b, longest) for b in race.baselines.values()]
    finalists = [race.by_key()[k] for k in race.finalists]
    tested = {c.warmup for c in finalists} | {0}
    plan += [("test", c, race.test_weeks) for c in finalists]
    plan += [("test", race.baselines[w], race.test_weeks) for w in sorted(tested)]
    for split, c, weeks in plan:
        if not weeks:
            continue
        r = race.ratios(split, c, weeks, s.objective)
        m = race.ratios(split, c, weeks, "max_wait")
        for w in range(weeks):
            row = race.store.get(split, c.key, w)
            writer.writerow([split, c.label, c.family, w, row["jobs"], *(_cell(row[k]) for k in METRICS),
                             _cell(float(r[w])), _cell(float(m[w]))])
    return buf.getvalue()


#: The outputs of a tune run, one set: written together (:func:`write_all`).
OUTPUTS = ("recommendation.json", "simulate_flags.txt", "pybatsim_options.json", "campaign.toml", "ranking.csv",
           "weeks.csv", "report.html")


def write_all(race: Race) -> tuple[list[dict], dict, dict]:
    """Every output file, as one set; returns the ranking, the recommendation and its record.

    Every file's content is made first, then all are written aside and renamed into place back to back
    (:func:`bftune.support.files.atomic_write_many`): a kill or a full disk while they are made or written
    leaves the previous set whole, so a recommendation never sits beside another run's report.
    """
    from bftune.experiments.tune.report import html_report  # matplotlib: imported when the report is made

    out = Path(race.settings.out)
    rows = analysis.ranking(race)
    rec = analysis.recommend(race, rows)
    record = recommendation_record(race, rows, rec)
    c = rec["candidate"]
    texts = {
        "recommendation.json": json_text(record),
        "simulate_flags.txt": forms.flags_text(race.settings, c) + "\n",
        "pybatsim_options.json": json_text(forms.pybatsim_options(c)),
        "campaign.toml": forms.campaign_toml(race.settings, c, max(race.test_weeks, 1)),
        "ranking.csv": ranking_csv(rows),
        "weeks.csv": weeks_csv(race),
        "report.html": html_report(race, rows, rec, record),
    }
    names = list(OUTPUTS)
    if "slurm" in record:
        names.append(record["slurm"]["file"])
        texts[record["slurm"]["file"]] = record["slurm"]["text"]
    atomic_write_many({out / name: texts[name].encode() for name in names})
    for stale in SLURM_OUTPUTS:  # another run's slurm.conf output would sit beside this set as if it were its
        if stale not in names:
            (out / stale).unlink(missing_ok=True)
    return rows, rec, record


#: The slurm.conf outputs, one of which a run with the ``slurm`` family writes (:func:`slurm_conf_name`).
SLURM_OUTPUTS = ("slurm.conf.diff", "slurm.conf.fragment")


def json_text(data) -> str:
    """What :func:`bftune.experiments.runs.summary.write_json` writes: strict JSON, indented, a final newline."""
    return json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n"


def summary_text(race: Race, rows: list[dict], rec: dict, record: dict) -> str:
    """What the command prints: the recommendation, its gain and risks, the top of the ranking, the files."""
    s = race.settings
    c = rec["candidate"]
    lines = [f"recommendation: {c.label}  ({rec['why']})", f"  in words: {sentence(c)}"]
    if not rec["keep_baseline"]:
        lo, hi = record["interval"]
        risk = record["risk"]
        lines.append(f"  expected {s.objective} gain on the testing half: {100 * record['gain']:.1f} % "
                     f"[{100 * lo:.1f}, {100 * hi:.1f}] ({LEVEL:.0%} paired bootstrap over {n_weeks(race.test_weeks)})")
        lines.append(f"  MaxWait vs {race.base_label}: mean ratio {risk['max_wait_ratio']:.2f}, largest wait "
                     f"{risk.get('largest_wait_s', float('nan')) / 3600:.1f} h ({race.base_label} "
                     f"{risk.get('baseline_largest_wait_s', float('nan')) / 3600:.1f} h), 99th percentile "
                     f"{risk.get('p99_wait_s', float('nan')) / 3600:.1f} h "
                     f"({race.base_label} {risk.get('baseline_p99_wait_s', float('nan')) / 3600:.1f} h)")
        if "jobs_waiting_1h_longer" in risk:
            lines.append(f"  fairness: {100 * risk['jobs_waiting_1h_longer']:.1f} % of jobs wait 1 h longer "
                         f"({100 * risk['jobs_waiting_1h_shorter']:.1f} % 1 h shorter); "
                         f"{risk['users_worse_off']} of {risk['users_judged']} users wait longer on average")
    later = rec.get("validation")
    if later is not None:
        lo, hi = later["later_period_interval"]
        lines.append(f"  a later period of {n_weeks(later['later_weeks'])}: {objective_name(s.objective)} gain in "
                     f"[{100 * lo:+.1f}, {100 * hi:+.1f}] % ({later['level']:.0%}, real weeks widened by the archive traces' drift); "
                     f"on the held-out last {later['holdout']:.0%} of the log: {100 * later['held_out_gain']:+.1f} %"
                     + ("" if rec["keep_baseline"] else f" (candidate {rec['row']['label']})"))
    lines.append(f"  requires: {c.requires}")
    lines.append(f"  bftune simulate: {record['forms']['simulate']}")
    lines.append(f"  pybatsim -o:     {json.dumps(record['configuration'])}")
    lines.append("ranking (training half; finalists also on the testing half):")
    for row in rows[:8]:
        test = f", test {100 * row['test_gain']:+.1f} %" if row.get("finalist") else ""
        train = f"{100 * row['train_gain']:+.1f} %" if "train_gain" in row else "-"
        lines.append(f"  {row['rank']:>3}. {row['label']:<34} train {train} over {n_weeks(row['train_weeks'])}{test}")
    lines += slurm_lines(record)
    t = race.timings
    lines.append(f"budget {_fmt(s.budget_s)}: {t.get('weeks_simulated', 0)} candidate-weeks simulated, "
                 f"{t.get('weeks_reused', 0)} reused, in {t.get('wall_s', 0):.0f} s (estimated "
                 f"{race.plan.estimate_s:.0f} s)")
    files = [*FILES, record["slurm"]["file"]] if "slurm" in record else FILES
    lines.append(f"wrote {', '.join(files)} in {s.out}")
    return "\n".join(lines)


def slurm_lines(record: dict) -> list[str]:
    """The site's setting, the best Slurm setting and the best EASY side by side, and the gap (the terminal's)."""
    slurm = record.get("slurm")
    if slurm is None:
        return []

    def said(entry: dict) -> str:
        low, high = entry["interval"]
        where = f" ({entry['half']}, {n_weeks(entry['weeks'])})" if "half" in entry else ""
        return f"{entry['label']}: {100 * entry['gain']:+.1f} % [{100 * low:+.1f}, {100 * high:+.1f}]{where}"

    lines = ["Slurm (gain against the baseline, 95 % interval):", f"  site's current setting  {said(slurm['site'])}",
             f"  best Slurm setting      {said(slurm['best_slurm'])}"]
    if "best_easy" in slurm:
        gap = slurm["gap"]
        lines.append(f"  best EASY               {said(slurm['best_easy'])}")
        lines.append(f"  gap best EASY - best Slurm: {100 * gap['gap']:+.1f} points "
                     f"[{100 * gap['interval'][0]:+.1f}, {100 * gap['interval'][1]:+.1f}] ({gap['half']} half, "
                     f"{n_weeks(gap['weeks'])})")
    lines.append(f"  slurm.conf lines: {slurm['file']}")
    return lines
