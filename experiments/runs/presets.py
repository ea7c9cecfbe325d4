"""Named presets: a set of choices (workload cleaning, scheduler options, tau) under one name.

A preset only sets *defaults*: anything given explicitly (``--cleaning``,
``--features``, a campaign key) wins.  ``bftune simulate --preset NAME`` and
``[classification] preset = "NAME"`` in a campaign use them.

The product defines one preset, ``default``: the default cleaning, weekly
features, online learning, tau = 60 s (``spec`` is its former name, still
accepted).  Other presets are data, a ``presets.toml`` of one table per preset
(:func:`read_presets`), handed in from above with :func:`add_presets`: the
command line adds the published studies' presets (each study folder may hold
one), so this layer knows no study.  Every preset is checked when read: an
unknown cleaning, option or value fails at start-up, not mid-campaign.

Run identities: a campaign run stores the name of its preset
(:attr:`Preset.stored_name`).  The default preset keeps the name runs stored
before it was renamed (``spec``), so those runs stay valid.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from bftune.schedulers.options import OPTIONS
from bftune.workloads.swf import CLEANINGS
from bftune.workloads.cleaning import check_cleaning

#: The file of a study folder that holds its presets.
PRESETS_FILE = "presets.toml"


@dataclass(frozen=True)
class Preset:
    """A set of defaults: how the traces are cleaned, scheduler options, tau."""

    name: str
    cleaning: str
    options: dict = field(default_factory=dict)  # option-table names -> values
    tau: float = 60.0
    summary: str = ""
    why: str = ""  # the evidence behind the choices (the presets.toml that defines it says it)
    stored: str = ""  # the name stored in run identities, when it differs from ``name`` (a renamed preset)

    def __post_init__(self) -> None:
        # a preset is checked when defined: a typo would otherwise surface mid-campaign
        try:
            object.__setattr__(self, "cleaning", check_cleaning(self.cleaning))  # a former name gives today's
        except ValueError:
            raise ValueError(f"preset {self.name}: unknown cleaning {self.cleaning!r}") from None
        for key, value in self.options.items():
            if key not in OPTIONS:
                raise ValueError(f"preset {self.name}: unknown option {key!r}")
            OPTIONS[key].parse(value, f"preset {self.name}: {key}")

    @property
    def stored_name(self) -> str:
        """The name a campaign run stores: unchanged by a rename, so stored runs keep their identity."""
        return self.stored or self.name


DEFAULT = Preset("default", CLEANINGS[0], {"features": "weekly", "learning": "online"},
                 summary="the default cleaning, weekly features, online learning, tau 60 s", stored="spec")

#: Former names still accepted.
ALIASES = {"spec": DEFAULT.name}


def read_presets(path: Path) -> list[Preset]:
    """The presets of one ``presets.toml``: one table per preset (cleaning, tau, summary, why, options)."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    presets = []
    for name, table in data.items():
        unknown = set(table) - {"cleaning", "tau", "summary", "why", "options"}
        if unknown:
            raise ValueError(f"{path}: preset {name}: unknown key {sorted(unknown)[0]!r}")
        presets.append(Preset(name, table["cleaning"], dict(table.get("options", {})), float(table.get("tau", 60.0)),
                              table.get("summary", ""), table.get("why", "")))
    return presets


#: Every preset known to this process: the product's, then those added (:func:`add_presets`).
PRESETS: dict[str, Preset] = {DEFAULT.name: DEFAULT}


def add_presets(presets: Iterable[Preset]) -> None:
    """Make ``presets`` known by name (the command line adds those of the published studies' folders).

    Adding the same preset again is harmless (the command line's parser may be built more than once);
    another preset under a known name is an error, as is a former name.
    """
    for preset in presets:
        known = PRESETS.get(preset.name)
        if known == preset:
            continue
        if known is not None or preset.name in ALIASES:
            raise ValueError(f"preset {preset.name} is defined twice")
        PRESETS[preset.name] = preset


def get_preset(name: str) -> Preset:
    """The preset called ``name`` (or a former name), or ValueError listing them."""
    try:
        return PRESETS[ALIASES.get(name, name)]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)} (a study's presets are "
                         "known once added: bftune.experiments.runs.presets.add_presets)") from None
