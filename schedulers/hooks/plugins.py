"""The user's own hooks (option ``hooks``): a :class:`Hook` of theirs, named by import path or entry point.

``hooks = ["mymod:Monitor"]`` (``--hooks mymod:Monitor,other:Hook``): each is a :class:`HookFactory`
(a :class:`Hook` subclass whose ``__init__`` takes no argument is one), found as a policy is
(:mod:`bftune.schedulers.core.plugins`; installed packages: entry points of ``bftune.hooks``), and
each run gets fresh hooks.  They run after every built-in hook, in the order given, and see what a
built-in hook sees: the core (its queue, machine and time) and each job at submission, start and end;
a hook may set a waiting job's ``estimate`` at submission, kill (set ``may_kill`` and
``kill_reason`` on the instance) and ask for wake-ups in ``after_pass``.  What ``report()`` returns
joins ``summary.json``.

The registry builds one hook per spec, so the user's hooks are run as one (:class:`UserHooks`).
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, cast

from bftune.schedulers.core import plugins
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.hooks.declaration import BuildContext, HookSpec, OptionValues
from bftune.schedulers.option import ConfigError, Option


class HookFactory(Protocol):
    """A user's hook (``hooks = ["mymod:Monitor"]``): called with no argument, returns a fresh :class:`Hook`."""

    def __call__(self) -> Hook: ...


class UserHooks(Hook):
    """The user's hooks, in the order given, as the one hook the registry builds for this spec."""

    def __init__(self, hooks: list[Hook]) -> None:
        self.hooks = hooks
        killers = [h for h in hooks if h.may_kill]
        self.may_kill = bool(killers)
        self.kill_reason = ", ".join(h.kill_reason or type(h).__name__ for h in killers)

    def on_submit(self, core: Core, job: Job, now: float) -> None:
        for hook in self.hooks:
            hook.on_submit(core, job, now)

    def on_start(self, core: Core, job: Job, now: float) -> None:
        for hook in self.hooks:
            hook.on_start(core, job, now)

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        for hook in self.hooks:
            hook.on_end(core, job, now, state)

    def before_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        for hook in self.hooks:
            hook.before_pass(core, now, decisions)

    def after_pass(self, core: Core, now: float, decisions: Decisions) -> None:
        for hook in self.hooks:
            hook.after_pass(core, now, decisions)

    def report(self) -> dict:
        out: dict = {}
        for hook in self.hooks:
            out.update(hook.report())
        return out


#: Users' hooks found so far: spelling -> (its normal spelling, its factory).
_imported: dict[str, tuple[str, HookFactory]] = plugins.cache()


def find_hook(text: str) -> tuple[str, HookFactory]:
    """A user's hook by import path or entry point: its normal spelling and its factory, checked once per process.

    Raises :class:`~bftune.schedulers.core.plugins.PluginError` (one line) when it is none.
    """
    found = _imported.get(text)
    if found is not None:
        return found
    if plugins.is_import_path(text):
        spelling, factory = text, plugins.load(text)
    else:
        entry = plugins.from_entry_point("hook", text, ())
        if entry is None:
            installed = plugins.installed("hook", ())
            known = f"installed: {', '.join(installed)}; " if installed else ""
            raise plugins.PluginError(f"unknown hook {text!r}; {known}give your own as {plugins.FORMS} "
                                      "(docs: guides/plugins.md)")
        spelling, factory = entry
    if not callable(factory):
        raise plugins.PluginError(f"{spelling}: {factory!r:.40} is not a hook: give a Hook subclass (or a "
                                  "function of no argument that returns a Hook)")
    try:
        inspect.signature(factory).bind()
    except TypeError:
        raise plugins.PluginError(f"{spelling}: a hook is made with no argument, as "
                                  f"{getattr(factory, '__name__', 'it')}(); its signature does not allow it") from None
    except ValueError:
        pass  # no signature to read: making one says whether it fits
    try:
        sample = factory()
    except Exception as exc:
        raise plugins.PluginError(f"{spelling}: making one raised {plugins.one_line(exc)}") from None
    if not isinstance(sample, Hook):
        raise plugins.PluginError(f"{spelling}: it made {type(sample).__name__}, not a Hook: subclass "
                                  "bftune.schedulers.core.engine.Hook")
    found = _imported[text] = _imported[spelling] = (spelling, cast(HookFactory, factory))
    return found


def hook_list(value: Any, where: str) -> list[str]:
    """``hooks``: a list (or comma-separated text) of the user's hooks, each checked; [] means none."""
    if isinstance(value, str):
        value = [v for v in (x.strip() for x in value.split(",")) if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: expected a list of hooks ({plugins.FORMS}), got {value!r}")
    try:
        names = [find_hook(v.strip())[0] for v in value]
    except plugins.PluginError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: a hook is listed twice")
    return names


def build(values: OptionValues, context: BuildContext) -> Hook | None:
    names = values["hooks"]
    if not names:
        return None
    return UserHooks([find_hook(name)[1]() for name in names])


def suffix(values: OptionValues) -> str:
    return f" hooks={','.join(values['hooks'])}" if values["hooks"] else ""


HOOK = HookSpec(
    name="plugins",
    options=(
        Option("hooks", hook_list, [],
               "your own hooks, run after the built-in ones in the order given: MODULE:NAME or FILE.py:NAME of a "
               "Hook subclass, comma-separated (docs/guides/plugins.md)",
               "your own hooks", cli="--hooks", metavar="MOD:NAME,...", plugins="hook"),
    ),
    build=build, suffix=suffix)
