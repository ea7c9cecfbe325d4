"""Whether bftune runs from its repository or from an installed wheel, and how its user runs it then.

Messages and reports name commands the reader can type again.  In a checkout that is ``uv run bftune
...`` (the project's environment: docs/developer/packaging.md), with the development data beside the
repository; from a wheel it is ``bftune ...`` on PATH, and there is neither a ``pyproject.toml`` to ``uv
sync`` nor that data.  A checkout is told by the files the wheel leaves out: the package
root's ``pyproject.toml`` and ``setup.py`` (pyproject.toml's ``exclude-package-data``; setup.py's
``BuildPy``), so an editable install of a checkout counts as a checkout, as it should.
"""

from __future__ import annotations

from pathlib import Path

#: The package's root folder: the repository root in a checkout, ``site-packages/bftune`` when installed.
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def in_checkout(root: Path = PACKAGE_ROOT) -> bool:
    """Whether the package at ``root`` is a repository checkout (else an installed wheel)."""
    return (root / "pyproject.toml").is_file() and (root / "setup.py").is_file()


def command(arguments: str, root: Path = PACKAGE_ROOT) -> str:
    """``bftune ARGUMENTS`` as the user of this installation types it: through ``uv run`` in a checkout."""
    return f"uv run bftune {arguments}" if in_checkout(root) else f"bftune {arguments}"
