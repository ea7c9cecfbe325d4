"""What ``bftune tune`` compares: candidate configurations, by family, each with what it requires.

A candidate is a set of scheduler options by their option-table names
(:data:`bftune.schedulers.options.OPTIONS`: the same names as pybatsim's
``-o`` and campaign TOML), validated by :class:`SchedulerConfig`, plus the
number of *warm-up* weeks simulated before each judged week (a learned
component needs history; 0 for the rest).  Families (``--candidates``):

- ``pairs`` (the default: offline tuning's search space): EASY with primary order
  Pr and backfilling order Pb from the policy registry (``--policies``,
  default FCFS LCFS SPF LPF SQF LQF LEXP) under each waiting-time threshold
  (``--thresholds``, default 20h): 7 x 7 x 1 = 49 candidates.
- ``selectors``: online policy selection (docs/semantics/learning.md#online-selection) every day among the 12
  default candidate policies, with a 40 h threshold: full feedback, noisy feedback,
  the epsilon-greedy bandit.
- ``pv-easy``: PV-EASY with Last Model predictions, and EASY planning with
  them (EASY-Last).
- ``classifier``: small jobs first with the online random forest (docs/semantics/learning.md#classification),
  with FCFS, SPF, SAF and WFP3 queues.
- ``slurm``: Slurm's multifactor priority and backfill, a grid over the weights, PriorityMaxAge,
  PriorityFavorSmall and the bf_* parameters on top of the site's slurm.conf (``slurmfamily.py``).

The baseline is EASY-FCFS-FCFS without threshold (docs/semantics/scheduling.md#easy), against which
every week is judged; with ``--slurm-conf``, the site's current setting (its slurm.conf) instead.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import format_duration, parse_duration
from bftune.schedulers.core.policies import SELECTION_DEFAULT, get_policy
from bftune.schedulers.options import OPTIONS, ConfigError
from bftune.experiments.tune import slurmfamily

#: The seven classic queue orders raced by default: arrival both ways, processing time, requested processors and
#: expansion factor (LEXP: the largest first), each way where both make sense.
PAIR_POLICIES = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP")
DEFAULT_THRESHOLDS = ("20h",)
BASELINE_OPTIONS = {"policy": "FCFS", "backfill_policy": "FCFS", "threshold": "inf"}
#: Warm-up weeks of a classifier candidate: the forest retrains at each week's end, so it has been trained
#: twice before the judged week starts.
CLASSIFIER_WARMUP = 2

#: What each family needs to run on a real machine, said plainly in the report and on the terminal.
REQUIRES = {
    "baseline": "nothing: EASY backfilling in submission order, what most sites run.",
    "pairs": "a scheduler that sorts its waiting queue by the primary order and its backfilling candidates by "
             "the backfilling order, and moves jobs waiting longer than the threshold to the head (bftune's "
             "scheduler under Batsim does all three; in Slurm the primary order maps to job priorities, but its "
             "backfilling walks the queue in priority order, so a different backfilling order needs bftune's "
             "scheduler or a patched backfill).",
    "selectors": "bftune's scheduler (pybatsim or the local simulator): it switches the policy of both queues "
                 "every day; full and noisy feedback re-simulate each past day under each of the 12 policies "
                 "inside the scheduler (about 12 times the scheduling work), the bandit needs only the waits "
                 "of finished jobs. Judged on week-long simulations here, a selector has at most 6 days of "
                 "history each time (online selection is usually judged on traces of years).",
    "pv-easy": "kills and requeues running jobs of the shadow load (PV-EASY) - jobs must be restartable from "
               "scratch, and Batsim needs dynamic jobs - and plans with Last Model predictions (the runtime "
               "ratio of the user's last finished job), which the scheduler must keep per user.",
    "classifier": "kills small-queue jobs that run past the divider and requeues them as large (jobs must be "
                  "restartable; Batsim needs dynamic jobs); trains a random forest (scikit-learn) on finished "
                  f"jobs every week. Each judged week is simulated after {CLASSIFIER_WARMUP} warm-up weeks of the "
                  "same resampled trace so that the forest has data: about 3 times the weeks, and the forest's "
                  "training, per judged week (the most expensive family by far).",
    "slurm": "Slurm itself (priority/multifactor and sched/backfill): the slurm.conf lines written beside this "
             "recommendation (slurm.conf.diff or slurm.conf.fragment), then `scontrol reconfigure`. bftune models "
             "Slurm's priority and backfill as docs/semantics/scheduling.md#slurm states, with its simplifications.",
    "site": "nothing: the site's current setting, read from its slurm.conf.",
}
FAMILIES = ("pairs", "selectors", "pv-easy", "classifier", "slurm")
#: The baseline's label when the site's slurm.conf is the baseline.
SITE_LABEL = "site's slurm.conf"


#: Families whose runs draw random numbers (a selector's exploration, the forest): their stored weeks hold
#: for the seed they ran with, which their key therefore names.
SEEDED = ("selectors", "classifier")


@dataclass(frozen=True)
class Candidate:
    """One configuration to judge: its options (option-table names), family, label and warm-up weeks."""

    label: str
    family: str
    options: dict = field(hash=False, compare=False)
    warmup: int = 0

    @cached_property
    def key(self) -> str:
        """What its simulated weeks are stored under: a hash of its options (normalised) and warm-up."""
        parts: list = [normalised(self.options), self.warmup]
        if self.family in SEEDED:  # the seed in the key even at its default: the default once was 0, now 1
            parts.append(SchedulerConfig.from_options(self.options)["seed"])
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def requires(self) -> str:
        if self.family == "baseline" and self.options.get("scheduler") == "slurm":
            return REQUIRES["site"]
        return REQUIRES[self.family]

    def config(self) -> SchedulerConfig:
        return SchedulerConfig.from_options(self.options)


#: Queue orders in words (the others: their formula, ``bftune policies``).
ORDER_WORDS = {
    "FCFS": "in submission order", "LCFS": "latest submitted first",
    "SPF": "shortest requested time first", "LPF": "longest requested time first",
    "SQF": "fewest requested processors first", "LQF": "most requested processors first",
    "LEXP": "largest expansion factor first ((wait + requested time) / requested time)",
    "SEXP": "smallest expansion factor first", "SAF": "smallest area first (requested time x processors)",
    "LAF": "largest area first (requested time x processors)",
    "SRF": "smallest ratio of requested time to processors first",
    "LRF": "largest ratio of requested time to processors first",
    "WFP3": "WFP3 first (long waits grow fast, weighted by processors)",
    "UNICEF": "UNICEF first (short and small jobs that waited long)",
}


#: Families other than queue-order pairs, in words.
FAMILY_WORDS = {
    "selectors": "EASY backfilling whose queue order is chosen again every day, among 12 orders, by an online "
                 "selector ({label}).",
    "pv-easy": "EASY backfilling planned with runtime predictions (the last runtime of the user's jobs) "
               "({label}); PV-EASY also kills and requeues jobs that would delay the first waiting one.",
    "classifier": "Small jobs first: an online random forest predicts whether each job is small, and those "
                  "go ahead of the others ({label}).",
}


def sentence(c: Candidate) -> str:
    """The candidate in words, beside its label (``EASY-SQF-SPF 20h`` is not self-explaining)."""
    if c.family in FAMILY_WORDS:
        return FAMILY_WORDS[c.family].format(label=c.label)
    if c.family in ("slurm", "site") or c.options.get("scheduler") == "slurm":
        return slurmfamily.sentence(c.options)
    options = normalised(c.options)
    primary = options.get("policy", "FCFS")
    backfill = options.get("backfill_policy", primary)
    threshold = options.get("threshold", "inf")
    text = f"EASY backfilling; the queue {ORDER_WORDS.get(primary, primary)}"
    text += (", and backfilling tries the waiting jobs in the same order" if backfill == primary else
             f", and backfilling tries the waiting jobs {ORDER_WORDS.get(backfill, backfill)}")
    if threshold not in ("inf", "none"):
        text += f"; a job waiting longer than {threshold} goes to the head of the queue"
    return text + "."


def complexity(c: Candidate) -> tuple[int, str]:
    """How much a candidate changes from EASY-FCFS, for choosing among candidates the numbers cannot tell apart.

    Parts, each one more thing a site must set up and explain: a primary order other than FCFS (1), a
    backfilling order other than the primary one (2: Slurm's backfill walks the queue in priority order, so
    it needs bftune's scheduler or a patched Slurm), a waiting-time threshold (1); a learned or online
    family (selectors, the classifier, PV-EASY) counts 5; a Slurm setting 1 (slurm.conf lines, no other
    scheduler). Ties go to the label, so the choice is stable.
    """
    if c.family == "slurm":
        return 1, c.label
    if c.family not in ("pairs", "baseline"):
        return 5, c.label
    options = normalised(c.options)
    primary = options.get("policy", "FCFS")
    backfill = options.get("backfill_policy", primary)
    parts = (primary != "FCFS") + 2 * (backfill != primary) + (options.get("threshold", "inf") not in ("inf", "none"))
    return parts, c.label


def normalised(options: dict) -> dict:
    """``options`` with every default dropped and every value as a user writes it (``72000`` -> ``20h``)."""
    values = SchedulerConfig.from_options(options).to_dict()
    values.pop("algorithm")
    return {name: value for name, value in values.items() if value != OPTIONS[name].shown(OPTIONS[name].default)}


def baseline(warmup: int = 0, site: dict | None = None) -> Candidate:
    """EASY-FCFS-FCFS, no threshold, or the ``site``'s own setting (its slurm.conf): every week's reference (with
    ``warmup`` weeks for a family that needs them)."""
    name = SITE_LABEL if site else "EASY-FCFS-FCFS"
    return Candidate(name + (f" (+{warmup} warm-up weeks)" if warmup else ""), "baseline",
                     dict(site) if site else dict(BASELINE_OPTIONS), warmup)


def parse_policies(text: str) -> tuple[str, ...]:
    """``--policies``: comma-separated registry names (``bftune policies``)."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise ConfigError("--policies: give at least one policy (see `bftune policies`)")
    try:
        out = tuple(dict.fromkeys(get_policy(p).name for p in names))
    except ValueError as exc:
        raise ConfigError(f"--policies: {exc}") from None
    return out


def parse_thresholds(text: str) -> tuple[str, ...]:
    """``--thresholds``: comma-separated durations (``20h``, ``2d``, ``none``)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        seconds = parse_duration(part, "--thresholds")
        out.append("none" if seconds == float("inf") else format_duration(seconds))
    if not out:
        raise ConfigError("--thresholds: give at least one threshold (20h, 40h, none...)")
    return tuple(dict.fromkeys(out))


def parse_families(text: str) -> tuple[str, ...]:
    """``--candidates``: comma-separated families (``pairs``, ``selectors``, ``pv-easy``, ``classifier``, ``all``)."""
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    out: list[str] = []
    for name in names:
        if name == "all":
            out.extend(FAMILIES)
        elif name in FAMILIES:
            out.append(name)
        else:
            raise ConfigError(f"--candidates: {name!r} is not a family of candidates; choose among "
                              f"{', '.join(FAMILIES)} or all")
    if not out:
        raise ConfigError(f"--candidates: give at least one family ({', '.join(FAMILIES)})")
    return tuple(dict.fromkeys(out))


def pair_label(primary: str, backfill: str, threshold: str) -> str:
    return f"EASY-{primary}-{backfill} {threshold}"


def build(families: tuple[str, ...], policies: tuple[str, ...] = PAIR_POLICIES,
          thresholds: tuple[str, ...] = DEFAULT_THRESHOLDS, site: dict | None = None) -> list[Candidate]:
    """Every candidate of the families, in a fixed order (ties in the ranking keep it); ``site``: the options
    of the site's slurm.conf, which the ``slurm`` family starts from."""
    out: list[Candidate] = []
    if "pairs" in families:
        for th in thresholds:
            for pr in policies:
                for pb in policies:
                    out.append(Candidate(pair_label(pr, pb, th), "pairs",
                                         {"policy": pr, "backfill_policy": pb, "threshold": th}))
    if "selectors" in families:
        for selector in ("full", "noisy", "bandit"):
            out.append(Candidate(f"selector {selector} (1d, 40h)", "selectors",
                                 {"selector": selector, "period": "1d", "threshold": "40h",
                                  "candidates": list(SELECTION_DEFAULT)}))
    if "pv-easy" in families:
        out.append(Candidate("PV-EASY (Last Model)", "pv-easy", {"scheduler": "pv-easy", "predictor": "last"}))
        out.append(Candidate("EASY-Last (FCFS, Last Model)", "pv-easy", {"predictor": "last"}))
    if "classifier" in families:
        for policy in ("FCFS", "SPF", "SAF", "WFP3"):
            out.append(Candidate(f"small first, rf ({policy})", "classifier",
                                 {"classifier": "rf", "policy": policy}, CLASSIFIER_WARMUP))
    if "slurm" in families:
        out += [Candidate(label, "slurm", options) for label, options in slurmfamily.grid(site)]
    for candidate in out:  # a typo in this table is a bug: every candidate must make a configuration
        candidate.config()
    unique: dict[str, Candidate] = {}
    for candidate in out:  # a policy listed twice under two spellings: one candidate, its first label
        unique.setdefault(candidate.key, candidate)
    return list(unique.values())


def baselines(candidates: list[Candidate], site: dict | None = None) -> dict[int, Candidate]:
    """The baseline for every warm-up the candidates use (warm-up -> baseline)."""
    return {w: baseline(w, site) for w in sorted({0} | {c.warmup for c in candidates})}
