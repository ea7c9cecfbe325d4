"""The studies ``bftune reproduce`` knows, by number (modules imported only when a study runs)."""

from __future__ import annotations

#: study number -> (module under bftune.experiments.reproduce, or a full dotted module path, or None while none
#: exists; title)
STUDIES: dict[str, tuple[str | None, str]] = {
    "000": ("study000", "Tuning EASY-Backfilling queues (offline EASY-Pr-Pb tuning with a threshold)"),
    "001": ("study001", "Online tuning of EASY-Backfilling using queue reordering policies"),
    "002": ("study002", "On limits of machine learning techniques in the learning of scheduling policies"),
    "003": ("bftune.experiments.studies.s003", "PV-EASY: shadow-load preemption and venture backfilling"),
    "004": ("study004", "Improving batch schedulers using online job runtime classification"),
}
SCALES = ("quick", "paper")
