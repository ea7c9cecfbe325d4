"""bftune: tune EASY backfilling, in Batsim or in a fast local simulator.

The repository root is this package (see pyproject.toml): ``bftune.schedulers``
holds the decision core and both drivers, ``bftune.workloads`` the trace
tooling, ``bftune.learning`` the learned components, ``bftune.platforms`` the
Batsim platform generator and ``bftune.experiments`` the CLI and campaigns.
"""

__version__ = "0.1.0"

from bftune import compiled as _compiled

# Before anything imports the core: a build made by `bftune accelerate` for exactly these sources
# replaces its modules (see bftune.compiled); without one, nothing changes.
_compiled.install()
