"""``report.html``: one self-contained page (inline style, plots as base64 PNG, no script, no network).

Sections: the recommendation and its risks; how to use it (every form); the
ranking (plot with intervals, then the table with why each candidate is where
it is); per-week distributions; wait CDFs; what the budget covered (stages,
estimated and elapsed time); what each family requires; the method and its
statistics; the data.  Every number comes from the stored weeks of this run.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math

from bftune.experiments.tune import forms, plots
from bftune.experiments.tune.budget import _fmt
from bftune.experiments.tune.candidates import REQUIRES, sentence
from bftune.experiments.tune.engine import Race
from bftune.experiments.tune.analysis import reason_text
from bftune.experiments.tune.stats import ALPHA, LEVEL, RANKING_RESAMPLES, RECOMMENDATION_RESAMPLES
from bftune.experiments.tune.weeks import n_weeks, objective_name

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:24px auto;
padding:0 16px;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:0}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:2em}
.sub{color:#666;margin-top:2px}.box{background:#f4f8fb;border:1px solid #cfe0ee;border-radius:8px;padding:12px 18px}
.big{font-size:1.35em;font-weight:600}.good{color:#1a7f37}.bad{color:#b42318}
table{border-collapse:collapse;font-size:.86em;width:100%}th,td{border-bottom:1px solid #e5e5e5;padding:4px 6px;
text-align:left;vertical-align:top}th{background:#fafafa}td.n{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f6f6;padding:10px;overflow-x:auto;font-size:.85em;border-radius:6px}
img{max-width:100%;border:1px solid #eee}.muted{color:#777;font-size:.9em}
"""


def _e(text) -> str:
    return html.escape(str(text))


def _pct(x, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:+.1f} %" if signed else f"{100 * x:.1f} %"


def _interval(pair) -> str:
    if not pair or any(v is None or math.isnan(v) for v in pair):
        return "-"
    return f"[{100 * pair[0]:+.1f}, {100 * pair[1]:+.1f}] %"


def _img(data: str | None, alt: str) -> str:
    if data is None:
        return ""
    return f'<p><img alt="{_e(alt)}" src="data:image/png;base64,{data}"></p>'


def html_report(race: Race, rows: list[dict], rec: dict, record: dict) -> str:
    s = race.settings
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>bftune tune: "
             f"{_e(race.data['name'])}</title><style>{STYLE}</style></head><body>",
             f"<h1>How to set EASY for {_e(race.data['name'])}</h1>",
             f"<p class=\"sub\">bftune tune, objective <b>{_e(s.objective)}</b>, "
             f"{len(race.candidates)} candidates, budget {_fmt(s.budget_s)}, "
             f"{_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}</p>",
             _replay(race), _checks(race), _recommendation(race, rec, record), _slurm(race, record),
             _forms(race, rec, record), _ranking(race, rows),
             _distributions(race, rows), _cdf(race, rec), _budget(race), _families(race), _method(race),
             _data(race), "</body></html>"]
    return "\n".join(parts)


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _checks(race: Race) -> str:
    """What the log holds and what the cleaning removed (``datacheck.py``), before anything else."""
    c = race.data.get("checks")
    if not c:
        return ""
    removed = "".join(f"<tr><td>{_e(rule)}</td><td>{count:,}</td></tr>" for rule, count in
                      sorted(c["removed"].items(), key=_most_first))
    cls = "bad" if c["work_share_kept"] < 0.75 else ""
    out = ["<h2 id=\"data-checks\">The log</h2><div class=\"box\">",
           f"<p class=\"{cls}\">{c['jobs']:,} jobs kept of {c['records']:,} records; they hold "
           f"<b>{c['work_share_kept']:.1%}</b> of the log's processor-time. {_e(c.get('baseline_label', 'EASY-FCFS'))} "
           "simulated on the whole log: "
           f"AvgWait {c['baseline_avg_wait_s'] / 3600:.2f} h, utilization {c['baseline_utilization']:.0%}.</p>"]
    if removed:
        out.append(f"<table><tr><th>removed by the cleaning</th><th>records</th></tr>{removed}</table>")
    if c.get("remedy"):
        out.append(f"<p>To keep more of the log: <code>{_e(c['remedy'])}</code>.</p>")
    out.append("</div>")
    return "\n".join(out)


def _corr(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _replay(race: Race) -> str:
    """First: does the simulator reproduce this machine at all (docs/semantics/replay.md)?"""
    r = race.data.get("replay")
    out = ["<h2 id=\"replay\">Does the simulator reproduce this machine?</h2>"]
    if r is None:
        out.append("<p>The log records no waits (SWF field 3, or Start - Submit of a Slurm dump): how far the "
                   "simulator reproduces the machine is not known.</p>")
        return "\n".join(out)
    cls = {"close": "good", "far": "bad"}.get(r["verdict"], "")
    out.append(f"<div class=\"box\"><p class=\"{cls}\"><b>{_e(r['verdict'])}</b>: {_e(r['verdict_line'])}.</p>")
    label = (race.data.get("checks") or {}).get("baseline_label", "EASY-FCFS")
    out.append(f"<table><tr><th>{_e(label)} on the whole log</th><th>logged</th><th>simulated</th></tr>")
    for key, label in (("avg_wait", "AvgWait"), ("median_wait", "median wait"), ("p90_wait", "90th percentile"),
                       ("max_wait", "MaxWait")):
        out.append(f"<tr><td>{label}</td><td>{r['logged'][key] / 3600:.2f} h</td>"
                   f"<td>{r['simulated'][key] / 3600:.2f} h</td></tr>")
    out.append(f"<tr><td>utilization</td><td>{r['logged']['utilization']:.1%}</td>"
               f"<td>{r['simulated']['utilization']:.1%}</td></tr></table>")
    out.append(f"<p>Per-job rank correlation {_corr(r['rank_correlation'])}; weekly AvgWait correlation "
               f"{_corr(r['weekly_correlation'])}; {r['within_10_min']:.0%} of the jobs within 10 minutes and "
               f"{r['within_2x']:.0%} within a factor 2 of their logged wait; {r['jobs']:,} jobs compared"
               f"; the cleaning dropped {r['dropped_by_cleaning']:,} records the machine may also have run.</p>")
    if r["verdict"] == "far":
        out.append("<p class=\"bad\">The gains below are between two simulations of a machine that waits "
                   "otherwise than this one: they may not carry over (bftune replay shows the comparison week by "
                   "week).</p>")
    out.append("</div>")
    return "\n".join(out)


def _later(rec: dict, objective: str) -> str:
    """The later-period interval and the held-out gain (``validation.py``), first: what the coming weeks may bring."""
    later = rec.get("validation")
    if later is None:
        return "<p>No part of the log was held out (<code>--holdout 0</code>): nothing says how a later period goes.</p>"
    lo, hi = later["later_period_interval"]
    who = rec["row"]["label"] if rec.get("row") else "the best candidate"
    cls = "good" if lo > 0 and later["held_out_gain"] > 0 else "bad"
    return (f"<p class=\"{cls}\">For a later period of {n_weeks(later['later_weeks'])}, {_e(who)} may gain "
            f"<b>{_interval((lo, hi))}</b> in {_e(objective_name(objective))} ({later['level']:.0%}: the log's real weeks, each "
            f"simulated as it happened, drawn as periods, widened by how far later periods drifted on the archive "
            f"traces; weeks just like the past ones would bring "
            f"{_interval(later['like_the_past_by_weeks'][str(later['later_weeks'])])}). On the log's last "
            f"{later['holdout']:.0%}, which the search never saw, it gained <b>{_pct(later['held_out_gain'])}</b>"
            f"{_outside(later) if later['inside'] is False else ''}.</p>")


def _outside(later: dict) -> str:
    return (f" (outside {_interval(later['held_out_interval'])}, the interval the {n_weeks(later['searched_weeks'])} "
            "before it state for its length)")


def _recommendation(race: Race, rec: dict, record: dict) -> str:
    s = race.settings
    c = rec["candidate"]
    out = ["<h2>Recommendation</h2><div class=\"box\">", f"<p class=\"big\">{_e(c.label)}</p>",
           f"<p><i>{_e(sentence(c))}</i></p>", f"<p>{_e(rec['why'])}.</p>", _later(rec, s.objective)]
    if rec["keep_baseline"]:
        out.append("</div>")
        return "\n".join(out)
    lo, hi = record["interval"]
    risk = record["risk"]
    cls = "good" if lo > 0 else "bad" if hi < 0 else ""
    out.append(f"<p>Expected gain in {_e(objective_name(s.objective))} on the testing half: <span class=\"big {cls}\">"
               f"{_pct(record['gain'])}</span>, {LEVEL:.0%} interval {_interval((lo, hi))} "
               f"(paired bootstrap over {race.test_weeks} resampled testing weeks; on the training half "
               f"{_pct(record['training_gain'])} over {n_weeks(record['training_weeks'])}).</p>")
    out.append(f"<table><tr><th>risk against {_e(race.base_label)} (testing half)</th><th>value</th></tr>")
    rows = [("mean MaxWait ratio (per week)", f"{risk['max_wait_ratio']:.2f} {_interval_raw(risk['max_wait_ratio_interval'])}"),
            ("worst week's MaxWait ratio", f"{risk['worst_week_max_wait_ratio']:.2f}"),
            ("largest wait of all testing weeks", f"{risk['largest_wait_s'] / 3600:.1f} h ({_e(race.base_label)} "
                                                  f"{risk['baseline_largest_wait_s'] / 3600:.1f} h)"),
            ("99th percentile of waits, testing weeks", f"{risk['p99_wait_s'] / 3600:.1f} h ({_e(race.base_label)} "
                                                        f"{risk['baseline_p99_wait_s'] / 3600:.1f} h)"),
            (f"weeks whose MaxWait is above {_e(race.base_label)}'s", f"{risk['weeks_max_wait_above_baseline']} of {risk['weeks']}")]
    if "jobs_waiting_1h_longer" in risk:
        worst = risk.get("worst_user")
        rows += [(f"jobs waiting at least 1 h longer than under {_e(race.base_label)} (same job, same week)",
                  f"{_pct(risk['jobs_waiting_1h_longer'], False)} (1 h shorter: "
                  f"{_pct(risk['jobs_waiting_1h_shorter'], False)})"),
                 ("users (10 jobs or more) whose mean wait grows by more than 10 % and 10 min",
                  f"{risk['users_worse_off']} of {risk['users_judged']}"),
                 ("worst such user", "none" if not worst else
                  f"{worst.get('name') or 'user ' + str(worst['user'])} ({worst['jobs']} jobs): mean wait "
                  f"x{worst['mean_wait_ratio']:.2f}, "
                  f"+{worst['mean_wait_increase_s'] / 3600:.1f} h")]
        rows += [(f"mean wait of jobs of {size['class']} ({size['jobs']:,} jobs)",
                  f"{size['mean_wait_s'] / 3600:.2f} h ({_e(race.base_label)} {size['baseline_mean_wait_s'] / 3600:.2f} h)")
                 for size in risk.get("by_size", [])]
    out += [f"<tr><td>{_e(a)}</td><td>{_e(b)}</td></tr>" for a, b in rows]
    out.append("</table>")
    out.append(_longest(risk.get("largest_waits", []), race.base_label))
    out.append(f"<p><b>It requires</b>: {_e(c.requires)}</p></div>")
    return "\n".join(out)


def _slurm(race: Race, record: dict) -> str:
    """The site's setting, the best Slurm setting and the best EASY side by side; the gap; what Slurm cannot
    express of the best EASY; the slurm.conf lines (``slurmfamily.py``)."""
    slurm = record.get("slurm")
    if slurm is None:
        return ""
    columns = [("the site's current setting", slurm["site"]), ("the best Slurm setting", slurm["best_slurm"])]
    if "best_easy" in slurm:
        columns.append(("the best EASY", slurm["best_easy"]))

    def half(entry: dict) -> str:
        return f"{entry['half']} half, {n_weeks(entry['weeks'])}" if "half" in entry else "the baseline"

    out = ["<h2 id=\"slurm\">Slurm: your setting, the best Slurm setting, the best EASY</h2><div class=\"box\">",
           f"<p>Gains in {_e(objective_name(race.settings.objective))} against {_e(race.base_label)}, with their {LEVEL:.0%} "
           "intervals: on the testing half when both are finalists, else on the training weeks both ran.</p>",
           "<table><tr><th></th>" + "".join(f"<th>{_e(name)}</th>" for name, _ in columns) + "</tr>",
           "<tr><td>setting</td>" + "".join(f"<td>{_e(entry['label'])}</td>" for _, entry in columns) + "</tr>",
           "<tr><td>in words</td>" + "".join(f"<td>{_e(entry.get('in_words') or sentence(race.by_key()[_key(race, entry)]))}</td>"
                                             for _, entry in columns) + "</tr>",
           "<tr><td>gain</td>" + "".join(f"<td class=n>{_pct(entry['gain'])}</td>" for _, entry in columns) + "</tr>",
           "<tr><td>interval</td>" + "".join(f"<td>{_interval(entry['interval'])}</td>" for _, entry in columns)
           + "</tr>",
           "<tr><td>judged on</td>" + "".join(f"<td>{_e(half(entry))}</td>" for _, entry in columns) + "</tr>",
           "</table>"]
    if "gap" in slurm:
        gap = slurm["gap"]
        out.append(f"<p>Gap between the best EASY and the best Slurm setting: <b>{100 * gap['gap']:+.1f} points</b> "
                   f"{_interval(gap['interval'])} (paired bootstrap over the {gap['weeks']} {gap['half']} weeks "
                   "both ran; positive: EASY does better).</p>")
        missing = slurm["best_easy"]["not_expressible"]
        if missing:
            out.append(f"<p>What Slurm cannot express of the best EASY ({_e(slurm['best_easy']['label'])}):</p><ul>"
                       + "".join(f"<li>{_e(line)}</li>" for line in missing) + "</ul>")
        else:
            out.append("<p>Slurm can express everything the best EASY sets.</p>")
    out.append(f"<p>The slurm.conf lines to change (<code>{_e(slurm['file'])}</code>, beside this report):</p>"
               f"<pre>{_e(slurm['text'])}</pre></div>")
    return "\n".join(out)


def _key(race: Race, entry: dict) -> str:
    """The key of the candidate a comparison entry names (by its label)."""
    return next(c.key for c in race.by_key().values() if c.label == entry["label"])


def _longest(jobs: list[dict], base_label: str) -> str:
    """The longest waits under the recommendation, with who waited and what the baseline gave the same job."""
    if not jobs:
        return ""
    cells = "".join(f"<tr><td class=n>{j['week'] + 1}</td><td>{_e(j.get('name') or j['user'])}</td>"
                    f"<td class=n>{j['procs']}</td><td class=n>{j['wait_s'] / 3600:.1f} h</td>"
                    f"<td class=n>{j['baseline_wait_s'] / 3600:.1f} h</td></tr>" for j in jobs)
    return ("<p>The longest waits of the testing weeks under the recommendation:</p><table><tr><th class=n>week</th>"
            f"<th>user</th><th class=n>processors</th><th class=n>wait</th><th class=n>under {_e(base_label)}</th></tr>"
            f"{cells}</table>")


def _interval_raw(pair) -> str:
    if not pair or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in pair):
        return ""
    return f"[{pair[0]:.2f}, {pair[1]:.2f}]"


def _forms(race: Race, rec: dict, record: dict) -> str:
    c = rec["candidate"]
    return "\n".join([
        "<h2>Use it</h2>",
        "<p>The same configuration, by the option table's names, in every form bftune accepts "
        "(also written beside this report: <code>simulate_flags.txt</code>, <code>pybatsim_options.json</code>, "
        "<code>campaign.toml</code>, <code>recommendation.json</code>).</p>",
        "<p>Local simulator:</p>", f"<pre>{_e(forms.simulate_command(race.settings, c))}</pre>",
        "<p>Inside Batsim (pybatsim's <code>-o</code>):</p>", f"<pre>{_e(forms.pybatsim_command(c))}</pre>",
        "<p>A campaign that judges it again (<code>bftune campaign campaign.toml --out DIR</code>):</p>",
        f"<pre>{_e(forms.campaign_toml(race.settings, c, max(race.test_weeks, 1)))}</pre>",
        "<p><code>recommendation.json</code> (machine readable):</p>",
        f"<pre>{_e(json.dumps({k: record[k] for k in ('configuration', 'objective', 'gain', 'interval') if k in record}, indent=1))}</pre>"])


def _ranking(race: Race, rows: list[dict]) -> str:
    out = ["<h2>Ranking</h2>",
           "<p>Training gain (mean over the weeks each candidate ran: candidates dropped early ran fewer weeks, so "
           "compare them with the leader of their stage, as the racing test did), with its "
           f"{LEVEL:.0%} bootstrap interval ({RANKING_RESAMPLES:,} resamples); the finalists' testing gain in red.</p>",
           _img(plots.ranking_plot(race, rows), "ranking"),
           "<table><tr><th>#</th><th>candidate</th><th>family</th><th class=n>training gain</th><th>interval</th>"
           "<th class=n>weeks</th><th class=n>MaxWait ratio</th><th class=n>testing gain</th><th>interval</th>"
           "<th>why here</th></tr>"]
    by_key = race.by_key()
    for row in rows:
        words = _e(sentence(by_key[row["key"]]))
        out.append(
            f"<tr><td class=n>{row['rank']}</td><td title=\"{words}\">{_e(row['label'])}</td><td>{_e(row['family'])}</td>"
            f"<td class=n>{_pct(row.get('train_gain'))}</td><td>{_interval(row.get('train_interval'))}</td>"
            f"<td class=n>{row['train_weeks']}</td><td class=n>{_num(row.get('train_max_wait_ratio'))}</td>"
            f"<td class=n>{_pct(row.get('test_gain'))}</td><td>{_interval(row.get('test_interval'))}</td>"
            f"<td class=muted>{_e(reason_text(row))}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _num(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _distributions(race: Race, rows: list[dict]) -> str:
    return "\n".join(["<h2>Per-week distributions</h2>",
                      f"<p>One value per resampled week: the candidate's objective divided by {_e(race.base_label)}'s on the "
                      "same week (below 1 is better). Boxes: quartiles; whiskers: 1.5 IQR; triangles: the mean the "
                      "ranking uses.</p>", _img(plots.distributions_plot(race, rows), "per-week ratios")])


def _cdf(race: Race, rec: dict) -> str:
    image = plots.cdf_plot(race, rec)
    if image is None:
        return f"<h2>Waiting times</h2><p>No recommendation other than {_e(race.base_label)}: nothing to compare.</p>"
    return "\n".join(["<h2>Waiting times</h2>", "<p>Every job of the testing weeks, under the recommendation and "
                      f"under {_e(race.base_label)} (the same jobs): the distribution, and on the right its tail (the share "
                      "of jobs waiting longer than each time, on log scales), where a recommendation that shortens "
                      "the mean may lengthen the longest waits.</p>", _img(image, "wait CDF and tail")])


def _budget(race: Race) -> str:
    plan, t = race.plan, race.timings
    out = ["<h2>What the budget covered</h2>",
           f"<p>Budget {_fmt(race.settings.budget_s)} on {race.model.workers} worker(s): up to {plan.weeks} resampled "
           f"weeks per half, in stages of {', '.join(map(str, plan.stages))} training weeks"
           f"{' with successive halving' if race.halved else ' (every candidate could run every week)'}; "
           f"{len(race.finalists)} finalists on {race.test_weeks} testing weeks. "
           f"{t.get('weeks_simulated', 0):,} candidate-weeks simulated, {t.get('weeks_reused', 0):,} taken from earlier "
           f"runs, in {t.get('wall_s', 0):.0f} s of wall time (estimated {plan.estimate_s:.0f} s; "
           f"{t.get('worker_s', 0):.0f} worker-seconds; {plan.finish_s:.0f} s kept aside for the validation and "
           "the outputs). At each stage's end the rest was re-planned on the time really elapsed and the pace "
           "(wall seconds per second the cost model estimated)."
           f"{' ' + ' '.join(plan.notes) if plan.notes else ''}</p>",
           _img(plots.budget_plot(race), "budget"),
           "<table><tr><th class=n>stage</th><th class=n>weeks</th><th class=n>candidates</th>"
           "<th class=n>dropped by the test</th><th class=n>dropped by the budget</th><th>leader</th>"
           "<th class=n>estimated s</th><th class=n>elapsed s</th><th class=n>pace</th></tr>"]
    labels = {c.key: c.label for c in race.candidates}
    for st in race.stages:
        out.append(f"<tr><td class=n>{st['stage']}</td><td class=n>{st['weeks']}</td><td class=n>{st['candidates']}</td>"
                   f"<td class=n>{st['dropped_by_test']}</td><td class=n>{st['dropped_by_budget']}</td>"
                   f"<td>{_e(labels.get(st['leader'], st['leader']))}</td><td class=n>{st.get('estimated_s', 0):.0f}</td>"
                   f"<td class=n>{st.get('elapsed_s', 0):.0f}</td><td class=n>{_pace(st.get('pace'))}</td></tr>")
    out.append("</table>")
    model = race.model
    out.append("<p class=muted>Cost model (wall seconds per simulated job, one worker): "
               + ", ".join(f"{_e(f)} {v * 1e6:.1f} µs" for f, v in model.seconds_per_job.items())
               + f"; jobs per resampled week: training {model.jobs_per_week['train']:.0f}, testing "
               f"{model.jobs_per_week['test']:.0f}{'; re-measured on the first stage' if race.calibrated else ''}.</p>")
    return "\n".join(out)


def _pace(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _families(race: Race) -> str:
    present = list(dict.fromkeys(c.family for c in race.candidates))
    out = ["<h2>What each family of candidates requires</h2><table><tr><th>family</th><th>candidates</th>"
           "<th>requires</th></tr>"]
    for family in ["baseline", *present]:
        n = sum(1 for c in race.candidates if c.family == family) if family != "baseline" else 1
        out.append(f"<tr><td>{_e(family)}</td><td class=n>{n}</td><td>{_e(REQUIRES[family])}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _method(race: Race) -> str:
    s = race.settings
    limit = ("no MaxWait limit (the thresholds bound the waits)" if s.max_wait_increase is None else
             f"candidates whose mean MaxWait ratio exceeds {1 + s.max_wait_increase:.2f} are not recommended")
    return "\n".join([
        "<h2>Method</h2><ul>",
        "<li>The trace is split at its temporal midpoint; each half is resampled per user "
        "and week (every user's jobs of a randomly drawn week, for every new week); each resampled week is simulated "
        f"alone, from an empty machine, under each candidate and under {_e(race.base_label)}.</li>",
        f"<li>A candidate's score is the mean over weeks of {_e(s.objective)}(candidate) / {_e(s.objective)}({_e(race.base_label)}"
        ") on the same week; gain = 1 - that mean. The training half chooses, the testing half judges.</li>",
        f"<li>Racing: after each stage, a one-sided paired t-test on the weekly differences from the stage's leader "
        f"drops a candidate at level {ALPHA} / (k - 1) (Bonferroni over the k - 1 comparisons). Paired, because every "
        "candidate ran the same weeks; on the mean, because the ranking is by the mean ratio. When the budget cannot "
        "take every survivor to the end, the best by mean go on (successive halving).</li>",
        f"<li>Intervals: percentile bootstrap of the mean weekly ratio, whole weeks resampled with replacement "
        f"({RECOMMENDATION_RESAMPLES:,} resamples for the recommendation); the ratio pairs each week with the "
        "baseline's same week, so it is a paired bootstrap.</li>",
        f"<li>{_e(limit)}.</li></ul>"])


def _data(race: Race) -> str:
    d = race.data
    cleaning = ", ".join(f"{k} {v:,}" for k, v in d["cleaning"].items() if v) or "nothing dropped"
    halves = "; ".join(f"{k}: {h['jobs']:,} jobs, {h['whole_weeks']} whole weeks ({h['jobs_per_week']:.0f} jobs a week)"
                       for k, h in d["halves"].items())
    return "\n".join([
        "<h2>Data</h2>", f"<p>{_e(d['trace'])}: {d['jobs']:,} jobs on {d['procs']:,} processors after cleaning "
        f"({_e(cleaning)}); clock {_e(d.get('timezone') or 'UTC')}. Halves: {_e(halves)}. Seed {race.settings.seed}, "
        f"tau {race.settings.tau:g} s; data identity {_e(d.get('identity', ''))}.</p>",
        *(f"<p class=bad>Note: {_e(note)}.</p>" for note in d.get("notes", ())),
        f"<p class=muted>Made by <code>{_e(forms.tune_command(race.settings))}</code>; the same command resumes "
        "or repeats it from the stored weeks.</p>"])
