"""Study 004's acceptance criteria, each checked on the stored runs, with the evidence for each miss."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bftune.experiments.reproduce.markdown import table
from bftune.experiments.studies.s004 import published as pub
from bftune.experiments.studies.s004 import readings, seeds
from bftune.experiments.studies.s004 import stored
from bftune.experiments.studies.s004 import table7 as t7
from bftune.experiments.studies.s004.plan import ablation_traces
from bftune.experiments.studies.s004.stored import POLICIES, TRACES
from bftune.experiments.studies.s004.table7 import TABLE7_TOLERANCE

#: Issue 11's acceptance: Tables 5-6 within this many points (Table 7: table7.TABLE7_TOLERANCE).
QUALITY_TOLERANCE = 5.0
QUALITY_KEYS = (("accuracy", "accuracy"), ("precision", "precision"), ("recall", "recall"),
                ("false_small_share", "FS/all"), ("false_large_share", "FL/all"))
HIGHER_IS_BETTER = ("accuracy", "precision", "recall")


def _row(criterion: str, off: list[str], checked: int, why: str, bias: str = "") -> list[str]:
    """One acceptance row: criterion, status, how many cells are within tolerance (and, ``bias``, on which side of
    the published values they lie), the others, the evidence."""
    status = "not measured" if not checked else ("met" if not off else "**not met**")
    return [criterion, status, f"{checked - len(off)} of {checked}{bias}", "; ".join(off) or "-",
            why if off else "-"]


def acceptance(out: Path, scale: str, main: pd.DataFrame | None, quality: pd.DataFrame | None,
                traces: list[str]) -> str:
    """Issue 11's acceptance criteria, each checked on what is stored, with the evidence for each miss."""
    rows = [_accept_quality(out, quality, traces), _accept_quality_other(quality, traces),
            _accept_table7(out, main, traces), _accept_every_policy(out, main, traces),
            _accept_ranges(out, main, traces), _accept_clairvoyant(main, traces)]
    subset = ("**Quick scale: only the cells run here are checked; the acceptance is judged at paper scale.** "
              if scale != "paper" else "")
    return ("## Acceptance criteria, checked on the stored runs\n\n" + subset +
            "Tables 5-6: accuracy, precision, recall, FS/all and FL/all under each of the two readings that make "
            "them agree (section \"Classifier quality\"). Table 7: `rf` over EASY-FCFS with FCFS and SPF. Every "
            "trace x policy, and Section 6.1's ranges: `rf` over the same base policy. Class-clairvoyant: its "
            "cumulative bsld against `rf`'s, every trace x policy.\n\n"
            + table(["criterion", "status", "within", "out of tolerance (ours - theirs)", "what accounts for it"],
                    rows))


def quality_off(quality: pd.DataFrame | None, traces: list[str], reading=pub.standard_table5,
                better: set[str] | None = None, worse: set[str] | None = None) -> tuple[list[str], int]:
    """Tables 5-6's cells out of tolerance under ``reading`` (``"trace label diff"``), and how many were checked;
    the traces where ours errs less (``better``) or more (``worse``) are added to those sets."""
    off: list[str] = []
    checked = 0
    for t in traces:
        ours = stored.class_metrics(quality, t)
        if ours is None:
            continue
        theirs = reading(t)
        for key, label in QUALITY_KEYS:
            checked += 1
            d = ours[key] - theirs[key]
            if abs(d) > QUALITY_TOLERANCE:
                off.append(f"{t} {label} {d:+.2f}")
                side = better if (d > 0) == (key in HIGHER_IS_BETTER) else worse
                if side is not None:
                    side.add(t)
    return off, checked


def _accept_quality_other(quality: pd.DataFrame | None, traces: list[str]) -> list[str]:
    """Tables 5-6 under reading B (Table 6's names swapped), with the cells whose side of the tolerance changes."""
    off_a, _ = quality_off(quality, traces)
    off_b, checked = quality_off(quality, traces, pub.other_reading)
    cells_a = {c.rsplit(" ", 1)[0] for c in off_a}
    cells_b = {c.rsplit(" ", 1)[0] for c in off_b}
    change = ([f"{c} in -> out" for c in sorted(cells_b - cells_a)]
              + [f"{c} out -> in" for c in sorted(cells_a - cells_b)])
    why = ("the reading, not the classifier: against reading A these cells change sides: "
           + ("; ".join(change) if change else "none"))
    return _row(f"Tables 5-6 within {QUALITY_TOLERANCE:.0f} points, reading B (Table 6's false large and false "
                "small swapped)", off_b, checked, why)


def _accept_quality(out: Path, quality: pd.DataFrame | None, traces: list[str]) -> list[str]:
    better: set[str] = set()
    worse: set[str] = set()
    off, checked = quality_off(quality, traces, better=better, worse=worse)
    fresh = feature_effect(out)
    why = []
    if better:
        why.append(f"{', '.join(sorted(better))}: our classifier errs less than the published one"
                   + "".join(_classifier_evidence(out, t) for t in sorted(better)))
    if worse:
        why.append(f"{', '.join(sorted(worse))}: ours errs more; "
                   + "".join(f"on {t} weekly instead of live features cost {fresh[t]:.1f} accuracy points "
                             "(ablation; the preset uses live ones); " for t in sorted(worse) if t in fresh)
                   + "no tested difference closes the rest")
    return _row(f"Tables 5-6 within {QUALITY_TOLERANCE:.0f} points, reading A (Table 5's precision and recall "
                "swapped)", off, checked, ". ".join(why))


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
               "no documented reading meets all five, each misses at least one")
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
    gaps: list[float] = []
    for t in traces:
        for policy, theirs in zip(("FCFS", "SPF"), pub.TABLE7.get(t, ())):
            ours = stored.improvement(main, t, policy, "rf")
            if ours is None:
                continue
            checked += 1
            gaps.append(ours - theirs)
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
    why += _readings_evidence(out, [(t, p) for t in traces for p in ("FCFS",) if t in pub.TABLE7])
    why = why.removeprefix("; ")
    return _row(f"Table 7 within {TABLE7_TOLERANCE:.0f} points", off, checked, why, bias=_bias(gaps))


def _bias(gaps: list[float]) -> str:
    """Where the cells lie against the published values, not only how many are within tolerance."""
    if not gaps:
        return ""
    below, above = sum(g < 0 for g in gaps), sum(g > 0 for g in gaps)
    return (f"; {below} of {len(gaps)} below the published value, {above} above; mean "
            f"{sum(gaps) / len(gaps):+.1f} points ({min(gaps):+.1f} to {max(gaps):+.1f})")


def _readings_evidence(out: Path, cells: list[tuple[str, str]], gain_only: bool = False) -> str:
    """What the readings run on the misses (section "Readings on the cells that miss") did to these cells: which
    bring them within the published value (``gain_only``: make rf improve on its base)."""
    found = {cell: names for cell, names in readings.closing(out, gain_only).items() if cell in cells}
    if not found:
        return ""
    goal = ("to an improvement" if gain_only else
            "within its published value (Table 7 within 10 points for FCFS, else Section 6.1's range)")
    closed = {cell: names for cell, names in found.items() if names}
    if not closed:
        return (f"; none of the readings run on the misses (section \"Readings on the cells that miss\") brings "
                f"{', '.join(f'{t} {p}' for t, p in sorted(found))} {goal}")
    return ("; of the readings run on the misses (section \"Readings on the cells that miss\"), "
            + "; ".join(f"{', '.join(f'`{n}`' for n in names)} bring{'s' if len(names) == 1 else ''} {t} {p} {goal}"
                        for (t, p), names in sorted(closed.items()))
            + "".join(f"; none brings {t} {p} {goal}" for (t, p), names in sorted(found.items()) if not names))


def _accept_every_policy(out: Path, main: pd.DataFrame | None, traces: list[str]) -> list[str]:
    off, checked, rescued, always = [], 0, 0, 0
    weekly = weekly_safeguard(out)
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
        why += (f"; with the safeguard checked only at each week's end (`abl_safeguard_weekly`, a reading of "
                "\"occurs only at the end of every week\" that the study's other sentences on the kill contradict: "
                f"section \"What does not reproduce\"; {sum(k for _, k in weekly.values()):,} kills in all against "
                f"{main_kills(main, weekly):,} at the divider), rf improves {better} of the {len(weekly)} "
                "trace x policy measured")
    why += _readings_evidence(out, [(t, p) for t in traces for p in POLICIES], gain_only=True)
    return _row("rf improves AVGbsld for every trace x policy", off, checked, why)


def _accept_ranges(out: Path, main: pd.DataFrame | None, traces: list[str]) -> list[str]:
    """Section 6.1's ranges checked cell by cell (FCFS 33-79 %, SPF 3-32 %, SAF 10-51 %), not only their sign."""
    off, checked, below, above = [], 0, 0, 0
    missed: list[tuple[str, str]] = []
    for t in traces:
        for p, (low, high) in pub.SECTION61_RANGES.items():
            rf = stored.improvement(main, t, p, "rf", base_policy=p)
            if rf is None:
                continue
            checked += 1
            if not low <= rf <= high:
                off.append(f"{t} {p} {rf:.1f} % ({'below' if rf < low else 'above'} {low}-{high})")
                missed.append((t, p))
                below += rf < low
                above += rf > high
    ranges = ", ".join(f"{p} {lo}-{hi} %" for p, (lo, hi) in pub.SECTION61_RANGES.items())
    why = (f"{below} below the published range, {above} above it (the ranges are over the study's seven traces)"
           + _readings_evidence(out, [cell for cell in missed if (readings.published_cell(*cell) or ("",))[0]
                                      .startswith("Section 6.1")]))
    return _row(f"rf within Section 6.1's range per policy ({ranges})", off, checked, why)


def weekly_safeguard(out: Path) -> dict[tuple[str, str], tuple[float, int]]:
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


def main_kills(main: pd.DataFrame | None, cells) -> int:
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


def feature_effect(out: Path) -> dict[str, float]:
    """Accuracy points lost per ablation trace when the lag/aggregate features are frozen weekly (same job set)."""
    live, weekly = stored.both(stored.quality, out), stored.quality(out, "abl_converter_weekly")
    effect = {}
    for t in ablation_traces("abl_converter_weekly"):
        a, b = stored.class_metrics(live, t), stored.class_metrics(weekly, t)
        if a is not None and b is not None:
            effect[t] = a["accuracy"] - b["accuracy"]
    return effect



def within(quality: pd.DataFrame | None, t: str) -> int | None:
    """How many of Tables 5-6's five cells of trace ``t`` lie within tolerance (None: not measured)."""
    ours = stored.class_metrics(quality, t)
    if ours is None:
        return None
    theirs = pub.standard_table5(t)
    return sum(abs(ours[key] - theirs[key]) <= QUALITY_TOLERANCE for key, _ in QUALITY_KEYS)
