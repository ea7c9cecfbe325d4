"""Named presets: a set of choices (workload cleaning, scheduler options, tau) under one name.

A preset only sets *defaults*: anything given explicitly (``--cleaning``,
``--features``, a campaign key) wins.  ``bftune simulate --preset NAME`` and
``[classification] preset = "NAME"`` in a campaign use them.

The product defines one preset, ``spec``: SPEC's defaults (the cleaning of
SPEC section 1, weekly features, online learning, tau = 60 s).  A study
defines its own as data, in ``presets.toml`` of its folder
(``experiments/studies/sNNN/``), each with a one-line ``summary`` (the
``--help`` text) and a ``why`` (the evidence behind each choice); they are
found through the study registry (:mod:`bftune.experiments.studies`), so
adding one takes no code.  Every preset is checked when read: an unknown
cleaning, option or value fails at start-up, not mid-campaign.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from bftune.experiments.studies import STUDIES
from bftune.schedulers.options import OPTIONS
from bftune.workloads.swf import CLEANINGS

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
    why: str = ""  # the evidence behind the choices (a study's presets.toml says it)

    def __post_init__(self) -> None:
        # a preset is checked when defined: a typo would otherwise surface mid-campaign
        if self.cleaning not in CLEANINGS:
            raise ValueError(f"preset {self.name}: unknown cleaning {self.cleaning!r}")
        for key, value in self.options.items():
            if key not in OPTIONS:
                raise ValueError(f"preset {self.name}: unknown option {key!r}")
            OPTIONS[key].parse(value, f"preset {self.name}: {key}")


SPEC = Preset("spec", "spec", {"features": "weekly", "learning": "online"},
              summary="SPEC's defaults (cleaning of section 1, weekly features, online learning), tau 60 s")


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


def _all_presets() -> dict[str, Preset]:
    """``spec``, then every registered study's presets, in the registry's order; a name defined twice is an error."""
    presets = {SPEC.name: SPEC}
    for entry in STUDIES.values():
        path = entry.path / PRESETS_FILE
        if not path.is_file():
            continue
        for preset in read_presets(path):
            if preset.name in presets:
                raise ValueError(f"{path}: preset {preset.name} is defined twice")
            presets[preset.name] = preset
    return presets


PRESETS: dict[str, Preset] = _all_presets()


def get_preset(name: str) -> Preset:
    """The preset called ``name``, or ValueError listing them."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}") from None
