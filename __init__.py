"""bftune: tune EASY backfilling, in Batsim or in a fast local simulator.

The Python API (:mod:`bftune.api`) is this package's namespace::

    import bftune
    result = bftune.simulate(bftune.read_workload("KTH-SP2-1996-2.1-cln.swf.gz"), policy="SAF", threshold="40h")
    result.summary["avg_wait"], result.jobs.head()

The repository root is this package (see setup.py): ``bftune.schedulers``
holds the decision core and both drivers, ``bftune.workloads`` the trace
tooling, ``bftune.learning`` the learned components, ``bftune.platforms`` the
Batsim platform generator and ``bftune.experiments`` the CLI and campaigns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: The version, defined here only (pyproject.toml reads it).
__version__ = "0.2.0"

from bftune.support import compiled as _compiled  # noqa: E402  # after __version__, which the build reads statically

# Before anything imports the core: a build made by `bftune accelerate` for exactly these sources
# replaces its modules (see bftune.support.compiled); without one, nothing changes.
_compiled.install()

#: The public API, imported on first use: the command line imports this package at every start, and the
#: API needs pandas, which would cost every command (``bftune simulate`` included) its import time.
__all__ = ["CampaignError", "CampaignRun", "Comparison", "ConfigError", "OPTIONS", "Result", "SchedulerConfig",
           "Trace", "WorkloadError", "compare", "policies", "read_workload", "run_campaign", "simulate", "synthetic"]

if TYPE_CHECKING:
    # What type checkers read (py.typed ships with the package): every name of __all__ with its real type.
    # At run time nothing here is imported; ``__getattr__`` below imports the API on first use, and is
    # hidden from type checkers so that ``bftune.simulat`` is an error to them, not ``Any``.
    from bftune.api import (OPTIONS, CampaignError, CampaignRun, Comparison, ConfigError, Result, SchedulerConfig,
                            Trace, WorkloadError, compare, policies, read_workload, run_campaign, simulate, synthetic)
else:
    def __getattr__(name: str) -> object:
        if name in __all__:
            from bftune import api

            return getattr(api, name)
        raise AttributeError(f"module 'bftune' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
