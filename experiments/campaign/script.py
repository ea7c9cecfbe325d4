"""A campaign started from a user's script, and the script's own plug-ins: what workers would run again.

Worker processes never import the script that started a campaign (``executors.py`` hides it from
spawn), so a script works with or without ``if __name__ == "__main__":``.  One thing still makes a
worker run the script: a run option naming a policy (a predictor, a selector, a hook) of the script
itself, ``./script.py:score`` or ``script:score``.  Each worker imports the script to find ``score``,
and an unguarded script then starts the campaign again in every worker.  :func:`check_script` ends the
script with one line saying so, before any run, and :func:`refuse_nested` is the net under it: a campaign started while a
run is running (a plug-in module that starts one when imported, on a Dask worker say) is refused.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterable, Iterator

from bftune.experiments.campaign.specs import CampaignError, RunSpec
from bftune.schedulers.core import plugins

GUARD = 'if __name__ == "__main__":'

#: Set while this process runs a campaign's run (``worker.execute_run``), in every kind of worker.
running_a_run = False


def refuse_nested() -> None:
    """A campaign may not start inside a run: the run imported a module that starts one when imported."""
    if running_a_run:
        raise CampaignError(f"a campaign started while a worker was importing a plug-in for its run: the module "
                            f"that defines the plug-in starts a campaign when imported; put that under `{GUARD}`")


def check_script(specs: Iterable[RunSpec]) -> None:
    """Refuse, in one line, runs whose workers would import the running script while it is unguarded."""
    script = _script()
    if script is None:
        return
    for spelling in _plugin_spellings(specs):
        if plugins.source_file(spelling) != script:
            continue
        line = unguarded_line(script)
        if line is not None:
            # The script's top level is running this campaign, unguarded: an exception would end the script
            # with a traceback through bftune's frames; this ends it with the one line that says what to do.
            name = spelling.rpartition(":")[2].strip()
            raise SystemExit(
                f"bftune: {spelling}: every worker imports {script.name} to find {name}, and {script.name} "
                f"starts this campaign again at line {line}; put the campaign under `{GUARD}` (or {name} in a "
                "module of its own)")
        return


def _script() -> Path | None:
    """The file of the running script (``python script.py`` or ``-m``), None in a notebook or a REPL."""
    name = getattr(sys.modules.get("__main__"), "__file__", None)
    return Path(name).resolve() if name else None


def _plugin_spellings(specs: Iterable[RunSpec]) -> Iterator[str]:
    """Every option value of the runs that is an import path (``MODULE:NAME``), once each."""
    seen: set[str] = set()
    for spec in specs:
        for value in spec.options.values():
            for text in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(text, str) and plugins.is_import_path(text) and text not in seen:
                    seen.add(text)
                    yield text


def unguarded_line(script: Path) -> int | None:
    """The line of ``script`` now running at its top level, when it is not under ``if __name__ == "__main__":``.

    None when it is under the guard (a worker importing the script then runs nothing of it), or when
    the script is not running its top level at all.
    """
    main = sys.modules.get("__main__")
    line = None
    frame = sys._getframe()
    while frame is not None:  # the outermost module-level frame of __main__: the statement running now
        if main is not None and frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            line = frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    if line is None:
        return None
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    guarded = any(isinstance(node, ast.If) and _is_main_test(node.test)
                  and node.lineno <= line <= (node.end_lineno or node.lineno) for node in tree.body)
    return None if guarded else line


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"``, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
