"""The hooks a configuration may build, in the order a core calls them.

Order matters: predictions come first, so that every later hook sees a job's
planning estimate; the classifier comes last, so that its kills are decided
after the others'.  Adding a hook: write its module (the :class:`Hook` and
its :class:`~bftune.schedulers.hooks.declaration.HookSpec`, with its options) and
add its ``HOOK`` here; the option table, the CLI, pybatsim's ``-o``, campaign
files, the Python API and the docs pick it up from this tuple.
"""

from __future__ import annotations

from bftune.schedulers.hooks import classified, fairness, killing, prediction, selection
from bftune.schedulers.hooks.declaration import HookSpec

HOOKS: tuple[HookSpec, ...] = (
    prediction.HOOK,
    killing.HOOK,
    selection.HOOK,
    fairness.HOOK,
    classified.HOOK,
)
