"""A toy hook, as a contributor would write one: the hook, its option, its spec (see test_registry.py)."""

from __future__ import annotations

from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues
from bftune.schedulers.option import Option, boolean


class StartCounter(Hook):
    """Counts the runs the core starts and the machine size it was built for."""

    def __init__(self, m: int) -> None:
        self.m = m
        self.starts = 0

    def on_start(self, core: Core, job: Job, now: float) -> None:
        self.starts += 1

    def report(self) -> dict:
        return {"toy": {"starts": self.starts, "m": self.m}}


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    return StartCounter(context.m) if values["count_starts"] else None


def suffix(values: OptionValues) -> str:
    return " counting starts" if values["count_starts"] else ""


HOOK = HookSpec(
    name="toy",
    options=(Option("count_starts", boolean, False, "count the runs started", "scheduler", cli="--count-starts",
                    cli_value=True),),
    build=build, suffix=suffix)
