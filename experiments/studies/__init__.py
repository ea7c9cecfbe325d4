"""The published studies bftune reproduces: the registry, one line per study.

Each study is a plug-in folder here (``s000/`` ... ``s004/``) whose
``__init__.py`` defines ``STUDY`` (:class:`bftune.experiments.reproduce.study.Study`):
its plan (the campaign configs it generates), its published figures as one
data file (``published.toml``), its presets (``presets.toml``, optional),
its report text and modules, its ablations (campaigns of its plan), fixtures
for its tests and its ``REPRODUCTION.md`` (the latest paper-scale report).

Adding a study = one folder and one line below.  The registry is read by
every ``bftune`` command (the parser lists the studies, and the command line
adds their presets, :func:`study_presets`), so it imports no study: a study's
modules are imported only when ``bftune reproduce`` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bftune.experiments.runs.presets import PRESETS_FILE, Preset, read_presets

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Entry:
    """One registered study: its folder (under this package, or an absolute path) and its title.

    ``module`` overrides where ``STUDY`` is imported from, for a study not (yet) in a folder of its own.
    """

    folder: str
    title: str
    module: str | None = None

    @property
    def path(self) -> Path:
        """The study's folder (its data files: ``published.toml``, ``presets.toml``)."""
        return HERE / self.folder

    @property
    def package(self) -> str | None:
        """The module defining ``STUDY``, or None for a folder outside this package (loaded from its path)."""
        if self.module is not None:
            return self.module
        return None if Path(self.folder).is_absolute() else f"{__name__}.{self.folder}"


#: study number -> its folder and title, one line per study.
STUDIES: dict[str, Entry] = {
    "000": Entry("s000", "Tuning EASY-Backfilling queues (offline EASY-Pr-Pb tuning with a threshold)"),
    "001": Entry("s001", "Online tuning of EASY-Backfilling using queue reordering policies"),
    "002": Entry("s002", "On limits of machine learning techniques in the learning of scheduling policies"),
    "003": Entry("s003", "PV-EASY: shadow-load preemption and venture backfilling"),
    "004": Entry("s004", "Improving batch schedulers using online job runtime classification"),
}
SCALES = ("quick", "paper")


def study_presets() -> list[Preset]:
    """Every registered study's presets (its folder's ``presets.toml``), in the registry's order.

    The product knows no study: the command line hands these to
    :func:`bftune.experiments.runs.presets.add_presets`, and a notebook may do the same.
    """
    presets: list[Preset] = []
    for entry in STUDIES.values():
        path = entry.path / PRESETS_FILE
        if path.is_file():
            presets.extend(read_presets(path))
    return presets
