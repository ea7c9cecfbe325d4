"""A registry of named units (runtime predictors, online selectors): what a name means, registered once.

Queue policies have had one from the start (``schedulers/core/policies.py``); predictors and selectors are
registered the same way, so the option table's choices, the error messages and the docs' tables all read
one mapping, in the order the units were registered (the order the help lists them).  Registering a name
twice is an error: a second meaning for a name would silently change every run that uses it.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class Registry(dict[str, T]):
    """``name -> unit``, in registration order; :meth:`add` refuses a name already taken."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def add(self, name: str, unit: T) -> T:
        if name in self:
            raise ValueError(f"{self.what} {name} is registered twice")
        self[name] = unit
        return unit
