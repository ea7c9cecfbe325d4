"""Package discovery for a repository whose root *is* the package ``bftune`` (metadata: pyproject.toml).

The owner wants ``schedulers/``, ``learning/``, ... at the top level, and
pybatsim installs a top-level ``schedulers`` package of its own, so the root
is mapped onto ``bftune`` (``bftune.schedulers`` can neither shadow nor be
shadowed).  ``[tool.setuptools.packages.find]`` cannot prefix the packages it
finds with ``bftune.``, hence this file: every folder under the root that
holds Python code or package data becomes ``bftune.<folder>`` automatically,
so a new module or study folder needs no edit here.  Tests, benchmarks and
the docs are not part of the installed package.
"""

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

OUTSIDE = ["tests", "tests.*", "benchmarks", "benchmarks.*", "docs", "docs.*", "build", "build.*", "dist",
           "dist.*", "site", "site.*"]

packages = ["bftune"] + [f"bftune.{name}" for name in find_namespace_packages(where=".", exclude=OUTSIDE)
                         if not name.startswith((".", "_")) and "egg-info" not in name and "__pycache__" not in name]

class BuildPy(build_py):
    """The root package's modules, but not this file, which sits in the root folder too."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == "bftune" and m[1] == "setup")]


setup(packages=packages, package_dir={"bftune": "."}, cmdclass={"build_py": BuildPy})
