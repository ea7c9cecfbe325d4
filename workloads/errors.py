"""Errors raised while reading, cleaning or converting workloads.

One exception type, so that the CLI can turn any bad-input problem into a
clean message instead of a traceback, while callers that treat bad input as a
programming error still get a ``ValueError``.
"""

from __future__ import annotations


class WorkloadError(ValueError):
    """A workload file or workload request cannot be turned into a usable Trace.

    The message always says where (file and line when there is one) and what
    (field, rule or value), because the person reading it has a 300k-line
    trace in front of them and needs to find the culprit.

    Parameters
    ----------
    message : str
        The line a user reads.

    Examples
    --------
    >>> from bftune.workloads.read import read_workload
    >>> read_workload("missing.swf")
    Traceback (most recent call last):
    ...
    bftune.workloads.errors.WorkloadError: missing.swf: no such file
    """

    def __init__(self, message: str) -> None:  # one message, as the docs say (and type checkers see)
        super().__init__(message)
