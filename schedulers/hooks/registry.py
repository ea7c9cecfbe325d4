"""The hooks a configuration may build, in the order a core calls them.

Order matters: predictions come first, so that every later hook sees a job's
planning estimate; the classifier comes after the other built-in hooks, so
that its kills are decided after theirs; the user's own hooks (option
``hooks``, :mod:`bftune.schedulers.hooks.plugins`) come last.  Adding a hook:
write its module (the :class:`Hook` and its
:class:`~bftune.schedulers.hooks.declaration.HookSpec`, with its options) and
add its ``HOOK`` here; the option table, the CLI, pybatsim's ``-o``, campaign
files, the Python API and the docs pick it up from this tuple.
"""

from __future__ import annotations

from bftune.schedulers.hooks import classified, fairness, killing, plugins, prediction, selection
from bftune.schedulers.hooks.declaration import HookSpec

HOOKS: tuple[HookSpec, ...] = (
    prediction.HOOK,
    killing.HOOK,
    selection.HOOK,
    fairness.HOOK,
    classified.HOOK,
    plugins.HOOK,  # the user's own hooks (option ``hooks``), after every built-in one
)
