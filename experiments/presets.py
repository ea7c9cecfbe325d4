"""Named presets: a study's choices (workload cleaning, scheduler options, tau) under one name.

A preset only sets *defaults*: anything given explicitly (``--cleaning``,
``--features``, a campaign key) wins.  ``bftune simulate --preset NAME`` and
``[classification] preset = "NAME"`` in a campaign use them; ``bftune
reproduce`` runs each study with its preset.  The evidence behind each
choice is in ``experiments/REPRODUCTION.md`` (study 004: the ablation
tables).

=================  ======================================================================
``spec``           SPEC's defaults: cleaning of SPEC section 1, weekly features, online
                   learning, tau = 60 s (the classifier study's tau).
``study004``       what reproduces study 004's published tables: the job set of Batsim's
                   own SWF converter (``cleaning = batsim-converter``: every record that
                   ran, walltime max(request, 2 x runtime); the study's Table 2 dividers
                   are that job set's medians), lag/aggregate features from the jobs
                   finished by each submission (``features = live``: with the weekly
                   features its text describes, accuracy is 3 to 8 points lower on
                   KTH-SP2, CTC-SP2 and SDSC-SP2, paper-scale ablation), the divider over
                   every job finished so far (``divider_window = inf``: Table 2 gives one
                   divider per trace, and with it Tables 5-6 come within 5 points on the
                   three ablation traces, where the text's previous week leaves SDSC-SP2's
                   precision and recall 6-8 points short), tau = 60 s.
``study004-text``  study 004 as its text describes its pipeline: the same job set, and
                   the classifier learning from the trace, week by week, with features
                   frozen at each weekly retraining (``learning = decoupled``).
=================  ======================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bftune.schedulers.options import OPTIONS
from bftune.workloads.swf import CLEANINGS


@dataclass(frozen=True)
class Preset:
    """A study's defaults: how its traces were cleaned, its scheduler options, its tau."""

    name: str
    cleaning: str
    options: dict = field(default_factory=dict)  # option-table names -> values
    tau: float = 60.0
    summary: str = ""

    def __post_init__(self) -> None:
        # a preset is checked when defined: a typo would otherwise surface mid-campaign
        if self.cleaning not in CLEANINGS:
            raise ValueError(f"preset {self.name}: unknown cleaning {self.cleaning!r}")
        for key, value in self.options.items():
            OPTIONS[key].parse(value, f"preset {self.name}: {key}")


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("spec", "spec", {"features": "weekly", "learning": "online"},
           summary="SPEC's defaults (cleaning of section 1, weekly features, online learning), tau 60 s"),
    Preset("study004", "batsim-converter", {"features": "live", "learning": "online", "divider_window": "inf"},
           summary="study 004 as measured: Batsim converter's job set, live features, the divider over every "
                   "finished job, tau 60 s"),
    Preset("study004-text", "batsim-converter", {"features": "weekly", "learning": "decoupled"},
           summary="study 004 as written: Batsim converter's job set, decoupled weekly learning, tau 60 s"),
)}


def get_preset(name: str) -> Preset:
    """The preset called ``name``, or ValueError listing them."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}") from None
