"""Index policies learned by regression (docs/semantics/learning.md#learned-index-policies).

``trials`` simulates (S, Q) windows and scores Q's jobs; ``collect`` runs the
windows of a whole collection with checkpoints; ``regression`` fits the four
polynomial families by weighted least squares (with MAE and VIF); ``report``
writes the tables and plots.  A fit is saved as plain JSON and used by the
core as the policy ``learned:FILE.json`` (``bftune.schedulers.core.polynomial``).
"""

# Defaults (docs/semantics/learning.md#learned-index-policies), here so that the command line can show them
# without importing numpy.
WARMUP = 16  # |S|
QUEUE = 32  # |Q|
PROCS = 256  # m
TAU = 10.0  # bounded-slowdown constant, seconds
SYNTHETIC_JOBS = 100_000  # size of the synthetic trace windows are cut from
