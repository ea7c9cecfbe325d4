"""The classifier's learning modes by name, resolved to their classes only when a run uses one.

The option table (``--learning``) and the configuration need the names of
the modes on every run, the classes only on runs with a classifier.  The
classes' modules import numpy, which costs ``bftune simulate`` 60 ms and
20 MiB of its 90 MiB on CTC-SP2 (``python -X importtime``; ``ru_maxrss``),
so this module holds the names and imports a class when it is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bftune.learning.classifier import RuntimeClassifier

#: Where the classifier's training data come from (the ``learning`` option): the schedule, or the trace.
LEARNING_MODES = ("online", "decoupled")


def learner(mode: str) -> type[RuntimeClassifier]:
    """The classifier class of a learning mode (``online``: learns from the schedule; ``decoupled``:
    learns from the workload log, week by week, :mod:`bftune.learning.decoupled`)."""
    if mode == "decoupled":
        from bftune.learning.decoupled import DecoupledClassifier
        return DecoupledClassifier
    if mode == "online":
        from bftune.learning.classifier import RuntimeClassifier
        return RuntimeClassifier
    raise ValueError(f"learning must be one of {', '.join(LEARNING_MODES)}, not {mode!r}")
