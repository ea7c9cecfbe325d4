"""Study 004 (small/large runtime classification, Zrigui et al. 2022): campaigns and report.

Campaigns (``[campaign] kind = "classification"``, tau = 60 s, forest seed 1 except ``forest_seed_*``):

- ``main``: the ``study004`` preset (:mod:`bftune.experiments.presets`) on
  KTH-SP2, CTC-SP2 and SDSC-SP2, policies FCFS, WFP3, SPF, SAF, all five
  variants; ``main_large``: the same on HPC2N and SDSC-BLUE (200k+ jobs
  each) with base / rf / class-clairvoyant only.  Quick scale: KTH-SP2
  only, FCFS and SPF, base / rf / class-clairvoyant.
- ``abl_*`` (paper scale): the ablation, one documented difference at a time,
  with FCFS on KTH-SP2, CTC-SP2 and SDSC-SP2 (base / rf / class-clairvoyant):
  SPEC's defaults, SPEC's job set with live features, the study's job set
  with overruns killed at their walltime, the Batsim converter's job set with
  weekly features, the study's pipeline as its text describes it
  (``study004-text``), the preset with a 20 h threshold, the preset with the
  text's weekly divider (three of them also on SDSC-BLUE:
  ``ABLATION_EXTRA_TRACES``), and the preset with the safeguard checked at
  each week's end (every trace x policy).
- ``easypp*`` (paper scale): EASY++ over EASY-FCFS on Table 7's traces under
  three job sets, the check of the base that Table 7's first column allows.
- ``error_kinds`` (paper scale): rf with its false large, or its false small,
  classes corrected from the true runtimes, on Table 7's cells: what each
  kind of classifier error costs.
- ``forest_seed_2``, ``forest_seed_3`` (paper scale): base and rf on the three
  main traces x four policies with forest seeds 2 and 3, so that each miss
  carries its range over seeds (:mod:`.seeds004`).

The report: job sets, dividers and size classes (Tables 1-3), classifier
quality (Tables 5-6, in the reading of :mod:`.published004`), improvements
over EASY-FCFS (Table 7, with the three readings of the bsld of killed jobs),
what each kind of error costs, EASY++, improvements per trace and policy
(Section 6.1) with the class-clairvoyant check and the figures of Sections
6.4-6.5 and Figure 8, the forest's seed, the ablation, and what does not
reproduce and why.
Tables 1-3 come from the traces (:mod:`.jobsets004`), Table 7 with its two checks
(the kinds of error, EASY++) from :mod:`.table7004`, Section 6's claims from
:mod:`.claims004`; every part reads the stored runs through :mod:`.stored004`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bftune.experiments.reproduce import claims004 as claims
from bftune.experiments.reproduce import jobsets004 as jobsets
from bftune.experiments.reproduce import published004 as pub
from bftune.experiments.reproduce import seeds004 as seeds
from bftune.experiments.reproduce import stored004 as stored
from bftune.experiments.reproduce import table7004 as t7
from bftune.experiments.reproduce.markdown import diff, num, table
from bftune.experiments.reproduce.stored004 import POLICIES, TRACES
from bftune.experiments.reproduce.study import CampaignPlan, Study, toml_list, trace
from bftune.experiments.reproduce.table7004 import (EASY_PLUS_PLUS, ERROR_KINDS, ERROR_VARIANTS,
                                                    TABLE7_TOLERANCE)

ABLATION_TRACES = ("KTH-SP2", "CTC-SP2", "SDSC-SP2")
#: Ablations run on more traces: the text's weekly features, its decoupled pipeline and its weekly divider also on
#: SDSC-BLUE, the one trace whose Tables 5-6 gap is a classifier that errs *less* than the published one (each is a
#: documented difference that makes the classifier err more).
ABLATION_EXTRA_TRACES = {"abl_converter_weekly": ("SDSC-BLUE",), "abl_study004_text": ("SDSC-BLUE",),
                         "abl_divider_week": ("SDSC-BLUE",),
                         "abl_safeguard_weekly": ("HPC2N", "SDSC-BLUE")}
#: Ablations with every policy (the others: FCFS), and their variants: the safeguard's timing is tested on the
#: claim it bears on, "classification improves AVGbsld for every trace x policy" (base runs: the main campaigns').
ABLATION_POLICIES = {"abl_safeguard_weekly": POLICIES}
ABLATION_VARIANTS = {"abl_safeguard_weekly": ("base", "rf")}
MAIN_TRACES = ["KTH-SP2", "CTC-SP2", "SDSC-SP2"]  # every variant
LARGE_TRACES = ["HPC2N", "SDSC-BLUE"]  # 200k+ jobs each: base, rf and class-clairvoyant only (time)
ALL_VARIANTS = ("base", "rf", "rf-no-safeguard", "class-clairvoyant", "runtime-clairvoyant")
#: (campaign, what differs from the preset, [workload] lines, [classification] lines)
ABLATION = (
    ("abl_spec", "SPEC's defaults: SPEC's job set, weekly features (CAMPAIGNS.md)", "", 'preset = "spec"'),
    ("abl_spec_live", "SPEC's job set, live features", "", 'preset = "spec"\nfeatures = "live"'),
    ("abl_keep_overruns_live", "study's job set, overruns killed at their walltime, live features",
     'cleaning = "keep-overruns"', 'preset = "study004"'),
    ("abl_converter_weekly", "Batsim converter's job set, weekly features", "",
     'preset = "study004"\nfeatures = "weekly"'),
    ("abl_study004_text", "the study's text: converter's job set, decoupled weekly learning", "",
     'preset = "study004-text"'),
    ("abl_threshold_20h", "the preset with a 20 h waiting-time threshold (Section 5.1's mechanism)", "",
     'preset = "study004"\nthreshold = "20h"'),
    ("abl_divider_week", "the preset with the divider over the last week (the study's text) instead of every "
                         "job finished so far", "",
     'preset = "study004"\ndivider_window = "1w"'),
    ("abl_safeguard_weekly", "the preset with the safeguard checked at each week's end (the study's Algorithm 2) "
                             "instead of at start + divider", "",
     'preset = "study004"\nsafeguard_period = "1w"'),
)


def _config(name: str, traces, policies, variants, workload: str = "", classification: str = "",
            seed: int = 1) -> str:
    lines = ["[campaign]", 'kind = "classification"', f'name = "study004_{name}"', f"seed = {seed}", "tau = 60", ""]
    if workload:
        lines += ["[workload]", workload, ""]
    lines += ["[classification]", f"traces = {toml_list(trace(TRACES[t]) for t in traces)}",
              f"policies = {toml_list(policies)}", f"variants = {toml_list(variants)}"]
    if classification:
        lines.append(classification)
    return "\n".join(lines) + "\n"


def plan(scale: str) -> list[CampaignPlan]:
    if scale == "quick":
        return [CampaignPlan("main", _config("main", ["KTH-SP2"], ["FCFS", "SPF"],
                                             ["base", "rf", "class-clairvoyant"], "", 'preset = "study004"'))]
    policies = list(POLICIES)
    plans = [CampaignPlan("main", _config("main", MAIN_TRACES, policies, ALL_VARIANTS, "", 'preset = "study004"')),
             CampaignPlan("main_large", _config("main_large", LARGE_TRACES, policies,
                                                ["base", "rf", "class-clairvoyant"], "", 'preset = "study004"'))]
    for name, _, workload, classification in ABLATION:
        plans.append(CampaignPlan(name, _config(name, ablation_traces(name), ABLATION_POLICIES.get(name, ["FCFS"]),
                                                ABLATION_VARIANTS.get(name, ["base", "rf", "class-clairvoyant"]),
                                                workload, classification)))
    for name, _, workload, classification in EASY_PLUS_PLUS:
        plans.append(CampaignPlan(name, _config(name, list(pub.TABLE7_EASY_PLUS_PLUS), ["FCFS"], ["base", "easy++"],
                                                workload, classification)))
    plans.append(CampaignPlan(ERROR_KINDS, _config(ERROR_KINDS, list(pub.TABLE7), ["FCFS", "SPF"],
                                                   ["base", *ERROR_VARIANTS], "", 'preset = "study004"')))
    for seed in seeds.EXTRA_SEEDS:
        plans.append(CampaignPlan(seeds.campaign(seed), _config(seeds.campaign(seed), list(seeds.SEED_TRACES),
                                                                policies, ["base", "rf"], "",
                                                                'preset = "study004"', seed=seed)))
    return plans


def ablation_traces(name: str) -> tuple[str, ...]:
    """The traces of ablation campaign ``name``."""
    return ABLATION_TRACES + ABLATION_EXTRA_TRACES.get(name, ())


# --- the report ---------------------------------------------------------------------------------------


def report(out: Path, scale: str) -> str:
    main = stored.both(stored.runs, out)
    quality = stored.both(stored.quality, out)
    traces = [t for t in TRACES if main is not None and t in set(main["trace"])]
    parts = [_intro(scale, traces), _acceptance(out, scale, main, quality, traces), jobsets.section(),
             _table56(quality, traces), t7.table7(main, traces), t7.error_costs(out, main, quality),
             t7.easy_plus_plus(out, main), claims.per_policy(main, traces, stored.both(stored.classes, out)),
             seeds.section(seeds.load(out, main))]
    if scale == "paper":
        parts.append(_ablation(out))
    parts.append(_gaps(out))
    return "\n\n".join(part for part in parts if part)


def _intro(scale: str, traces: list[str]) -> str:
    return (f"Traces run: {', '.join(traces) or 'none yet'} (KIT-FH2 and MetaCentrum2 are not in "
            "`../shared/workloads`). Main campaign: preset `study004` (bftune.experiments.presets: the Batsim "
            "converter's job set, live lag/aggregate features, online learning, the divider over every job finished "
            "so far, tau = 60 s, no threshold), forest "
            "seed 1. Improvements are `(base - variant) / base` of the final cumulative bounded slowdown, the "
            "study's measure, with the base named in each table.")


#: Issue 11's acceptance: Tables 5-6 within this many points (Table 7: table7004.TABLE7_TOLERANCE).
QUALITY_TOLERANCE = 5.0
QUALITY_KEYS = (("accuracy", "accuracy"), ("precision", "precision"), ("recall", "recall"),
                ("false_small_share", "FS/all"), ("false_large_share", "FL/all"))
HIGHER_IS_BETTER = ("accuracy", "precision", "recall")


def _row(criterion: str, off: list[str], checked: int, why: str) -> list[str]:
    """One acceptance row: criterion, status, how many cells are within tolerance, the others, the evidence."""
    status = "not measured" if not checked else ("met" if not off else "**not met**")
    return [criterion, status, f"{checked - len(off)} of {checked}", "; ".join(off) or "-", why if off else "-"]


def _acceptance(out: Path, scale: str, main: pd.DataFrame | None, quality: pd.DataFrame | None,
                traces: list[str]) -> str:
    """Issue 11's acceptance criteria, each checked on what is stored, with the evidence for each miss."""
    rows = [_accept_quality(out, quality, traces), _accept_table7(out, main, traces),
            _accept_every_policy(out, main, traces), _accept_clairvoyant(main, traces)]
    subset = ("**Quick scale: only the cells run here are checked; the acceptance is judged at paper scale.** "
              if scale != "paper" else "")
    return ("## Acceptance (issue 11), checked on the stored runs\n\n" + subset +
            "Tables 5-6: accuracy, precision, recall, FS/all and FL/all against the standard reading (below). "
            "Table 7: `rf` over EASY-FCFS with FCFS and SPF. Every trace x policy: `rf` over the same base policy "
            "(Section 6.1). Class-clairvoyant: its cumulative bsld against `rf`'s, every trace x policy.\n\n"
            + table(["criterion", "status", "within", "out of tolerance (ours - theirs)", "what accounts for it"],
                    rows))


def _accept_quality(out: Path, quality: pd.DataFrame | None, traces: list[str]) -> list[str]:
    off: list[str] = []
    checked = 0
    better: set[str] = set()
    worse: set[str] = set()
    for t in traces:
        ours = stored.class_metrics(quality, t)
        if ours is None:
            continue
        theirs = pub.standard_table5(t)
        for key, label in QUALITY_KEYS:
            checked += 1
            d = ours[key] - theirs[key]
            if abs(d) > QUALITY_TOLERANCE:
                off.append(f"{t} {label} {d:+.2f}")
                (better if (d > 0) == (key in HIGHER_IS_BETTER) else worse).add(t)
    fresh = _feature_effect(out)
    why = []
    if better:
        why.append(f"{', '.join(sorted(better))}: our classifier errs less than the published one"
                   + "".join(_classifier_evidence(out, t) for t in sorted(better)))
    if worse:
        why.append(f"{', '.join(sorted(worse))}: ours errs more; "
                   + "".join(f"on {t} weekly instead of live features cost {fresh[t]:.1f} accuracy points "
                             "(ablation; the preset uses live ones); " for t in sorted(worse) if t in fresh)
                   + "no tested difference closes the rest")
    return _row(f"Tables 5-6 within {QUALITY_TOLERANCE:.0f} points", off, checked, ". ".join(why))


#: The ablations that change only how the classifier learns (the text's readings), in the order the evidence gives
#: them: the text's weekly features, its decoupled weekly pipeline, its weekly divider.
CLASSIFIER_ABLATIONS = (("abl_converter_weekly", "the study's weekly features instead of live ones"),
                        ("abl_study004_text", "the text's decoupled weekly learning"),
                        ("abl_divider_week", "the text's divider over the last week"))


def _classifier_evidence(out: Path, t: str) -> str:
    """Where trace ``t``'s Tables 5-6 cells sit under each documented reading of the classifier that was run on it.

    A gap where ours errs *less* is closed by a documented difference only if one reading brings all five cells
    within tolerance; if each misses one, the published classifier sits between our readings and none accounts
    for it alone.
    """
    theirs = pub.standard_table5(t)
    parts, closes = [], []
    for campaign, what in CLASSIFIER_ABLATIONS:
        metrics = stored.class_metrics(stored.quality(out, campaign), t)
        if metrics is None:
            continue
        cells = ", ".join(f"{label} {metrics[key] - theirs[key]:+.1f}".replace("-0.0", "+0.0")
                          for key, label in QUALITY_KEYS)
        within = sum(abs(metrics[key] - theirs[key]) <= QUALITY_TOLERANCE for key, _ in QUALITY_KEYS)
        parts.append(f"with {what} (`{campaign}`) {t} reads {cells} ({within} of {len(QUALITY_KEYS)} within)")
        if within == len(QUALITY_KEYS):
            closes.append(f"`{campaign}`")
    if not parts:
        return ""
    verdict = (f"{' and '.join(closes)} account{'s' if len(closes) == 1 else ''} for the gap" if closes else
               "no documented reading meets all five: the published classifier lies between ours")
    return "; " + "; ".join(parts) + ": " + verdict


def _accept_table7(out: Path, main: pd.DataFrame | None, traces: list[str]) -> list[str]:
    off: list[str] = []
    checked = 0
    recovered: list[float] = []
    by_kind: list[tuple[float, float]] = []  # per cell out of tolerance: (false large corrected, false small corrected)
    beyond: list[float] = []
    beyond_traces: list[str] = []
    error_parts = t7.error_parts(out, main)
    by_seed = seeds.load(out, main)
    for t in traces:
        for policy, theirs in zip(("FCFS", "SPF"), pub.TABLE7.get(t, ())):
            ours = stored.improvement(main, t, policy, "rf")
            if ours is None:
                continue
            checked += 1
            if abs(ours - theirs) > TABLE7_TOLERANCE:
                spread = seeds.spread(by_seed, t, policy, "FCFS", minus=theirs)
                off.append(f"{t} {policy}-CI {ours - theirs:+.1f}" + (f" ({spread})" if spread else ""))
                cc = stored.improvement(main, t, policy, "class-clairvoyant")
                parts = error_parts.get((t, policy))
                if parts is not None:
                    by_kind.append((parts[2] - parts[0], parts[1] - parts[0]))
                if cc is not None:
                    recovered.append(cc - ours)
                    beyond.append(theirs - cc)
                    if theirs > cc and t not in beyond_traces:
                        beyond_traces.append(t)
    why = ""
    if recovered:
        rest = [b for b in beyond if b > 0]
        gains = t7.easy_plus_plus_gains(out)
        easypp = [f"{t} {g:.1f} % against the study's {pub.TABLE7_EASY_PLUS_PLUS[t]} % (Tsafrir et al.'s own: "
                  f"{pub.TABLE7_EASY_PLUS_PLUS_ORIGINAL[t]} %)" for t in beyond_traces
                  if t in gains and (g := gains[t][0]) is not None
                  and abs(g - pub.TABLE7_EASY_PLUS_PLUS[t]) > TABLE7_TOLERANCE]
        kinds = (f" (correcting only the false large classes: {stored.span(a for a, _ in by_kind)}; only the false small "
                 f"ones: {stored.span(b for _, b in by_kind)}; section \"What the classifier's errors cost\")"
                 if by_kind else "")
        why = (f"perfect classes (class-clairvoyant) recover {stored.span(recovered)} points of these{kinds}; "
               + (f"the remaining {stored.span(rest)} points of {len(rest)} of them lie beyond even perfect classes and "
                  "no classifier setting tested accounts for them"
                  + (f"; there EASY++, which has no classifier, gains {'; '.join(easypp)} over EASY-FCFS "
                     "(section \"EASY++ on the same base\"): the study's base (or its EASY++) is not ours there"
                     if easypp else "") if rest else
                  "they reach the published values: the classifier's errors and kills account for the gaps"))
    return _row(f"Table 7 within {TABLE7_TOLERANCE:.0f} points", off, checked, why)


def _accept_every_policy(out: Path, main: pd.DataFrame | None, traces: list[str]) -> list[str]:
    off, checked, rescued, always = [], 0, 0, 0
    weekly = _weekly_safeguard(out)
    by_seed = seeds.load(out, main)
    for t in traces:
        for p in POLICIES:
            rf = stored.improvement(main, t, p, "rf", base_policy=p)
            if rf is None:
                continue
            checked += 1
            if rf <= 0:
                ns = stored.improvement(main, t, p, "rf-no-safeguard", base_policy=p)
                wk = weekly.get((t, p))
                notes = [note for note in (seeds.spread(by_seed, t, p, p),
                                           "" if ns is None else f"no safeguard {ns:+.1f} %",
                                           "" if wk is None else f"weekly check {wk[0]:+.1f} %") if note]
                off.append(f"{t} {p} {rf:+.1f} %" + (f" ({'; '.join(notes)})" if notes else ""))
                rescued += ns is not None and ns > 0
                seeded = seeds.improvements(by_seed, t, p, p)
                always += len(seeded) > 1 and max(seeded) <= 0
    why = f"the safeguard's kills: without them {rescued} of {len(off)} improve (rf-no-safeguard)"
    flips = seeds.sign_flips(by_seed)
    if always or flips:
        changing = (f"{', '.join(flips)} change{'s' if len(flips) == 1 else ''} sign with it" if flips else
                    "no cell changes sign with it")
        why += (f"; {always} of them lose{'s' if always == 1 else ''} under every forest seed tried, and "
                f"{changing} (section \"The forest's seed\")")
    if weekly:
        better = sum(v > 0 for v, _ in weekly.values())
        why += (f"; with the safeguard checked at each week's end, as the study's Algorithm 2 says "
                f"(`abl_safeguard_weekly`: {sum(k for _, k in weekly.values()):,} kills in all against "
                f"{_main_kills(main, weekly):,} at the divider), rf improves {better} of the {len(weekly)} "
                "trace x policy measured")
    return _row("rf improves AVGbsld for every trace x policy", off, checked, why)


def _weekly_safeguard(out: Path) -> dict[tuple[str, str], tuple[float, int]]:
    """(trace, policy) -> (rf's improvement over the same base policy in %, safeguard kills), weekly check."""
    runs = stored.runs(out, "abl_safeguard_weekly")
    got = {}
    for t in TRACES:
        for p in POLICIES:
            v = stored.improvement(runs, t, p, "rf", base_policy=p)
            kills = stored.value(runs, t, p, "rf", "safeguard_kills")
            if v is not None and kills is not None:
                got[t, p] = (v, int(kills))
    return got


def _main_kills(main: pd.DataFrame | None, cells) -> int:
    """The safeguard kills of the main campaigns' rf runs in ``cells`` (trace, policy)."""
    return sum(int(stored.value(main, t, p, "rf", "safeguard_kills") or 0) for t, p in cells)


def _accept_clairvoyant(main: pd.DataFrame | None, traces: list[str]) -> list[str]:
    off, checked = [], 0
    for t in traces:
        for p in POLICIES:
            rf, cc = stored.value(main, t, p, "rf", "sum_bsld"), stored.value(main, t, p, "class-clairvoyant", "sum_bsld")
            if rf is None or cc is None:
                continue
            checked += 1
            if cc > rf:
                off.append(f"{t} {p}")
    return _row("class-clairvoyant at least as good as rf", off, checked, "")


def _feature_effect(out: Path) -> dict[str, float]:
    """Accuracy points lost per ablation trace when the lag/aggregate features are frozen weekly (same job set)."""
    live, weekly = stored.both(stored.quality, out), stored.quality(out, "abl_converter_weekly")
    effect = {}
    for t in ablation_traces("abl_converter_weekly"):
        a, b = stored.class_metrics(live, t), stored.class_metrics(weekly, t)
        if a is not None and b is not None:
            effect[t] = a["accuracy"] - b["accuracy"]
    return effect


def _table56(quality: pd.DataFrame | None, traces: list[str]) -> str:
    rows = []
    for t in traces:
        ours = stored.class_metrics(quality, t)
        theirs = pub.standard_table5(t)
        cells = [t]
        for key in ("accuracy", "precision", "recall", "false_small_share", "false_large_share"):
            o = None if ours is None else ours[key]
            cells += [num(o), num(theirs[key]), diff(o, theirs[key])]
        rows.append(cells)
    header = ["trace"] + [f"{what} {who}" for what in ("accuracy", "precision", "recall", "FS/all", "FL/all")
                          for who in ("ours", "theirs", "diff")]
    return ("## Classifier quality (Tables 5 and 6)\n\n"
            "Ours: the `rf` run with FCFS of the main campaign (the classifier learns from its own schedule; the "
            "other policies differ by less than a point), in %, small = positive. Theirs: Table 5 with its "
            "precision and recall columns swapped, Table 6's rates as shares of all jobs - the only reading in "
            "which the two tables agree (see `experiments/reproduce/published004.py`).\n\n"
            + table(header, rows))


def _ablation(out: Path) -> str:
    main, mq = stored.both(stored.runs, out), stored.both(stored.quality, out)
    settings = [("main", "preset study004 (the main campaigns)", main, mq)]
    # The preset's row covers every trace some ablation runs (each once: two ablations add SDSC-BLUE).
    every = tuple(dict.fromkeys(ABLATION_TRACES + tuple(t for extra in ABLATION_EXTRA_TRACES.values()
                                                        for t in extra)))
    settings += [(name, what, stored.runs(out, name), stored.quality(out, name)) for name, what, _, _ in ABLATION]
    rows = []
    for name, what, runs, quality in settings:
        for t in (every if name == "main" else ablation_traces(name)):
            acc = stored.class_metrics(quality, t)
            rows.append([what if t == ABLATION_TRACES[0] else "", t, num(None if acc is None else acc["accuracy"]),
                         num(stored.value(runs, t, "FCFS", "base", "avg_bsld"), 2),
                         num(stored.improvement(runs, t, "FCFS", "rf")),
                         num(stored.improvement(runs, t, "FCFS", "class-clairvoyant")),
                         pub.TABLE5[t][0], pub.TABLE7.get(t, ("-",))[0]])
    return ("## Ablation: one documented difference at a time (FCFS)\n\n"
            "Each row changes one thing against the preset (or is SPEC's default). Improvements are over plain "
            "EASY-FCFS on the same job set. The published accuracy and FCFS-CI improvement are repeated on the "
            "right.\n\n"
            + table(["setting", "trace", "accuracy (%)", "base AVGbsld", "rf (%)", "class-clairvoyant (%)",
                     "published accuracy", "published FCFS-CI"], rows))


def _within(quality: pd.DataFrame | None, t: str) -> int | None:
    """How many of Tables 5-6's five cells of trace ``t`` lie within tolerance (None: not measured)."""
    ours = stored.class_metrics(quality, t)
    if ours is None:
        return None
    theirs = pub.standard_table5(t)
    return sum(abs(ours[key] - theirs[key]) <= QUALITY_TOLERANCE for key, _ in QUALITY_KEYS)


def _small_jobs_example(out: Path, trace_: str = "KTH-SP2", policy: str = "SAF") -> str:
    """The reference-small jobs' AVGbsld under base, rf and rf-no-safeguard (``classes.csv`` of the main campaign)."""
    path = out / "campaigns" / "main" / "classes.csv"
    if not path.exists():
        return "the main campaign's `classes.csv` shows it per reference class"
    df = pd.read_csv(path)
    df["trace"] = df["trace"].map(stored.short)
    sel = df[(df["trace"] == trace_) & (df["policy"] == policy) & (df["class"] == "small")]
    values = {v: float(sel[sel["variant"] == v]["avg_bsld"].iloc[0]) for v in ("base", "rf", "rf-no-safeguard")
              if (sel["variant"] == v).any()}
    if len(values) < 3:
        return "the main campaign's `classes.csv` shows it per reference class"
    return (f"{trace_} {policy}, reference-small AVGbsld: base {values['base']:.1f}, rf {values['rf']:.1f}, "
            f"rf-no-safeguard {values['rf-no-safeguard']:.1f}; `classes.csv` of the main campaign")


def _divider_effect(out: Path) -> str:
    """What the divider's window changes: the main campaign (every finished job) against ``abl_divider_week``."""
    main, week = stored.both(stored.runs, out), stored.runs(out, "abl_divider_week")
    mq, wq = stored.both(stored.quality, out), stored.quality(out, "abl_divider_week")
    changes = []
    for t in ablation_traces("abl_divider_week"):
        pairs = [(stored.improvement(week, t, "FCFS", v), stored.improvement(main, t, "FCFS", v))
                 for v in ("rf", "class-clairvoyant")]
        cells = (_within(wq, t), _within(mq, t))
        if all(a is not None and b is not None for a, b in (*pairs, cells)):
            (rf_w, rf_a), (cc_w, cc_a) = pairs
            changes.append(f"{t}: Tables 5-6 cells within {QUALITY_TOLERANCE:.0f} points {cells[0]} -> {cells[1]} "
                           f"of 5, rf {rf_w:.1f} -> {rf_a:.1f} %, class-clairvoyant {cc_w:.1f} -> {cc_a:.1f} % "
                           f"(published FCFS-CI {pub.TABLE7[t][0]} %)")
    head = ("The study's text computes the divider from the previous week; its Table 2 gives one divider per "
            "trace (that job set's median runtime). The preset takes the divider over every job finished so far "
            "(`divider_window = \"inf\"`), the causal reading of one divider per trace; ")
    if not changes:
        return head + "`abl_divider_week` (the text's week) is not stored at this scale."
    return head + ("from the text's week (`abl_divider_week`) to it, FCFS: " + "; ".join(changes) + ".")


def _gaps(out: Path) -> str:
    fresh = _feature_effect(out).values()
    weekly = stored.quality(out, "abl_converter_weekly")
    below = [pub.standard_table5(t)["accuracy"] - m["accuracy"] for t in ablation_traces("abl_converter_weekly")
             if (m := stored.class_metrics(weekly, t)) is not None]
    features = (f"accuracy is {stored.span(fresh)} points lower than with the classes of the jobs finished by each "
                f"submission (SPEC's `live` option) on the same job set, and {stored.span(below)} points below Table 5 "
                "(`abl_converter_weekly` against the main campaign)" if fresh else
                "accuracy stays below Table 5 (the paper-scale ablation measures by how much)")
    main = stored.both(stored.runs, out)
    spec = stored.runs(out, "abl_spec")
    ratios = [f"{t} x{b / a:.2f}" for t in ABLATION_TRACES
              if (a := stored.value(spec, t, "FCFS", "base", "avg_bsld"))
              and (b := stored.value(main, t, "FCFS", "base", "avg_bsld"))]
    load = (f"multiplies EASY-FCFS's AVGbsld against SPEC's job set by {', '.join(ratios)}" if ratios else
            "changes EASY-FCFS's AVGbsld against SPEC's job set (the paper-scale ablation measures by how much)")
    beyond = [f"{t} {policy}-CI ({cc:.1f} % against {theirs} %)" for t in TRACES
              for policy, theirs in zip(("FCFS", "SPF"), pub.TABLE7.get(t, ()))
              if (cc := stored.improvement(main, t, policy, "class-clairvoyant")) is not None and cc < theirs]
    remaining = (f"even class-clairvoyant stays below the published learned improvement on {', '.join(beyond)}"
                 if beyond else "class-clairvoyant reaches every published learned improvement")
    gains = t7.easy_plus_plus_gains(out)
    easypp = [f"{t} {g:.1f} % against {theirs} %" for t, theirs in pub.TABLE7_EASY_PLUS_PLUS.items()
              if (g := gains[t][0]) is not None]
    base = ("no documented difference we could test closes the rest" if not easypp else
            "no classifier setting we could test closes the rest. EASY++, which has no classifier, checks the "
            f"base instead: over EASY-FCFS on the study's job set it gains {'; '.join(easypp)} (section \"EASY++ "
            "on the same base\", with two other job sets). Where ours and the study's differ by tens of points, "
            "the study's EASY-FCFS (or its EASY++) is not ours, and Table 7's improvements there are relative to a "
            "base we do not reproduce")
    parts = list(t7.error_parts(out, main).values())
    large = sum(no_fl - rf > no_fs - rf for rf, no_fs, no_fl, _ in parts)
    kinds = (f" (in {large} of Table 7's {len(parts)} cells mostly its false large classes, small jobs sent to the "
             "large queue, rather than the kills: section \"What the classifier's errors cost\")"
             if parts and 2 * large > len(parts) else "")
    divider = _divider_effect(out)
    small = _small_jobs_example(out)
    weekly = _weekly_safeguard(out)
    timing = ("nor the safeguard's timing at the kill (the study's Algorithm 2's check at the next pass against "
              "the current divider: `experiments/REPRODUCTION.md`, scheduling details) changes this")
    if weekly:
        cells = ", ".join(f"{t} {p} {v:+.1f} % ({k} kills)" for (t, p), (v, k) in sorted(weekly.items())
                          if (t, p) in {("CTC-SP2", "SAF"), ("KTH-SP2", "SAF")} or v <= 0)
        timing += (f". Checking the small jobs only at each week's end, as the text of Algorithm 2 says "
                   f"(`abl_safeguard_weekly`), leaves {sum(k for _, k in weekly.values()):,} kills where the "
                   f"divider made {_main_kills(main, weekly):,}: rf then improves "
                   f"{sum(v > 0 for v, _ in weekly.values())} of the {len(weekly)} trace x policy measured ("
                   f"{cells}) - close to no safeguard at all, so the safeguard still does not *help* as Section "
                   "6.4 reports")
    return f"""## What does not reproduce, and why

- **Job set.** SPEC's cleaning (the filter of studies 000 and 001) drops the jobs that ran past their request;
  study 004 kept every record that ran (its dividers are that job set's medians). In Batsim its workloads come
  from Batsim's converter, which gives such jobs (and every job whose request is below twice its runtime) a
  walltime of twice the runtime: 27-49 % of the jobs get a walltime close to their runtime. That makes EASY
  and every walltime-based policy better informed and the classifier's walltime feature more telling, and it
  {load}: the overruns join the load while the raised walltimes inform EASY. The preset uses that job set;
  `abl_keep_overruns_live` keeps the same jobs with their own requests.
- **Features.** With lag and aggregate features frozen at the weekly retraining - what the study's text says
  it did - {features}. The published accuracy needs that freshness; the preset uses it,
  `abl_converter_weekly` and `abl_study004_text` show the alternative.
- **Tables 5-6 as printed** are not consistent with each other; the comparison uses the only reading that is
  (module `published004`).
- **The safeguard.** Where `rf` does not improve a policy, `rf-no-safeguard` and class-clairvoyant mostly
  do: the cost is the safeguard. Killing the false small jobs at the divider and restarting them makes the
  *small* jobs' AVGbsld worse than letting them run ({small}), more so with policies that already
  favour short or small jobs. The study reports the safeguard helping in almost every scenario (Section
  6.4, Figure 9). Neither reading of killed jobs' bsld that Batsim's output allows (the Table 7 columns)
  {timing}. What made its kills cheaper is not in the paper, and its scheduler code
  (gitlab.inria.fr/szrigui/job_classification) could not be fetched.
- **Remaining gap in Table 7.** The learned classifier's errors and kills cost the difference between `rf`
  and class-clairvoyant{kinds}; {remaining}: {base}.
- **Divider.** {divider}
- **Threshold.** Section 5.1 mentions a waiting-time threshold without a value; 20 h lowers every improvement
  (`abl_threshold_20h`), so the preset keeps SPEC's default (none).
- **Not compared:** Gaussier et al.'s column of Table 7 (their own method) and its bracketed values (their
  own evaluation; EASY++'s bracketed values are compared in "EASY++ on the same base"), Figures 4-8 (shapes
  only), KIT-FH2 and MetaCentrum2 (no shared trace)."""


STUDY = Study(
    number="004", title="Improving the performance of batch schedulers using online job runtime classification",
    seed_file="004_444fe9ecbecc8f85.txt", plan=plan, report=report,
    durations={"quick": "KTH-SP2, FCFS and SPF: about 30 s on 2 cores",
               "paper": "3 traces x 4 policies x 5 variants, 2 large traces x 4 policies x 3 variants, 8 "
                        "ablation campaigns (FCFS on 3 traces, three also on SDSC-BLUE; the safeguard's timing on "
                        "every trace x policy), EASY++ with FCFS on 4 traces x 3 job sets, the two kinds of classifier "
                        "error on Table 7's 4 traces x 2 policies, the forest's seeds 2 and 3 on the 3 main traces x 4 "
                        "policies: 292 runs, 239 of them distinct (the ablations share base runs by id), about 4,700 "
                        "CPU-seconds on the project machine (2026-11-24, "
                        "compiled core; the stored runs' cpu_s, each distinct run once): about 40 min on 2 idle "
                        "cores"})
