"""docs/tutorial.ipynb, "bftune in ten minutes", runs as a reader runs it: every cell in order, in a fresh kernel.

The notebook is executed with nbclient in a kernel of this environment's Python (a ``python3`` kernel spec
written for ``sys.executable`` and put first on JUPYTER_PATH: a user-wide ``python3`` kernel of another
environment, without bftune, is not used), from an empty temporary directory, with no network and no data
of ``../shared``.  No cell may raise or print on standard error, and the outputs the text talks about must
be there: both schedulers in the summary table, the pictures, the reader's policy, the campaign's table.
The notebook is kept in git without outputs; the site executes it when it is built (docs/developer/docs.md).
"""

from __future__ import annotations

import re
import time

import pytest
from locations import REPO

nbformat = pytest.importorskip("nbformat")

NOTEBOOK = REPO / "docs" / "tutorial.ipynb"
#: Seconds the whole notebook may take (a few on a laptop; the tutorial promises every cell is quick).
BUDGET = 120
#: matplotlib's backend in a notebook, which draws figures into the cells.  A kernel picks it unless
#: MPLBACKEND says otherwise, as a CI's MPLBACKEND=Agg would: the kernel spec sets it.
INLINE = "module://matplotlib_inline.backend_inline"


def code_cells(nb) -> dict[str, object]:
    return {cell.id: cell for cell in nb.cells if cell.cell_type == "code"}


def text_of(cell) -> str:
    """What a cell shows as text: its streams, and the plain-text and HTML forms of its results."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif "data" in output:
            parts += [output.data.get("text/plain", ""), output.data.get("text/html", "")]
    return "\n".join(parts)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from ipykernel.kernelspec import write_kernel_spec
    from nbclient import NotebookClient

    jupyter = tmp_path_factory.mktemp("jupyter")
    # this Python (the test's environment, with bftune); the kernel's own log (a warning at every start
    # that its local sockets are not encrypted) kept to errors
    write_kernel_spec(jupyter / "kernels" / "python3", extra_arguments=["--IPKernelApp.log_level=ERROR"],
                      overrides={"env": {"MPLBACKEND": INLINE}})
    work = tmp_path_factory.mktemp("reader")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(jupyter))
        patch.setenv("BFTUNE_DATA", str(tmp_path_factory.mktemp("no-data")))  # no archive trace to read
        started = time.monotonic()
        NotebookClient(nb, kernel_name="python3", timeout=BUDGET, resources={"metadata": {"path": str(work)}}).execute()
        took = time.monotonic() - started
    assert took < BUDGET, f"the tutorial took {took:.0f} s"
    return nb, work


def test_the_notebook_is_kept_without_outputs_and_names_this_kernel():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3" and nb.metadata.kernelspec.language == "python"
    for cell in code_cells(nb).values():  # Jupyter: Edit > Clear Outputs of All Cells (docs/developer/docs.md)
        assert cell.outputs == [] and cell.execution_count is None, f"cell {cell.id} has outputs: clear them"
        assert "execution" not in cell.metadata, f"cell {cell.id} keeps the times of a run: clear them"
    assert nb.cells[0].source.startswith("# bftune in ten minutes")
    for cell in code_cells(nb).values():  # no network, no data of ../shared, no archive trace
        for word in ("http", "../shared", "read_workload", "archive:"):
            assert word not in cell.source, f"cell {cell.id}: {word}"


def test_the_notebooks_links_lead_to_pages_of_the_site():
    """Its Markdown links to pages by their files (Jupyter and GitHub follow them; the site's build rewrites them)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    links = [target for cell in nb.cells if cell.cell_type == "markdown"
             for target in re.findall(r"\]\(([^)\s]+)\)", cell.source)]
    assert len(links) >= 6
    for target in links:
        path = target.partition("#")[0]
        assert not target.startswith(("http:", "https:")), f"{target}: the tutorial links to pages of the site"
        assert (NOTEBOOK.parent / path).is_file(), f"{target}: no such file under docs/"


@pytest.mark.slow
def test_every_cell_runs_and_shows_what_the_text_says(executed):
    nb, work = executed
    cells = code_cells(nb)
    for cell in cells.values():
        for output in cell.outputs:
            assert output.output_type != "error", f"cell {cell.id} raised {output.get('ename')}"
            assert not (output.output_type == "stream" and output.name == "stderr"), \
                f"cell {cell.id} printed on stderr: {output.text[-2000:]}"
    assert "3,000 jobs" in text_of(cells["workload"]) and "m=64" in text_of(cells["workload"])
    assert "walltime" in text_of(cells["frame"])
    summary = text_of(cells["compare"])
    assert "EASY(FCFS)" in summary and "EASY(SAF+threshold(40h))" in summary and "AvgWait (h)" in summary
    for picture in ("gantt", "waits"):
        assert any("image/png" in output.get("data", {}) for output in cells[picture].outputs), picture
    assert "Writing mypolicy.py" in text_of(cells["writefile"])
    assert "EASY(./mypolicy.py:score+threshold(40h))" in text_of(cells["mine"])
    assert "18 runs, 0 failed" in text_of(cells["campaign"])
    table = text_of(cells["table"])
    for config in ("EASY-FCFS-FCFS none", "EASY-SAF-SAF 20h", "EASY-./mypolicy.py:score-FCFS none"):
        assert config in table, config
    # the reader's folder is left as it was: what the tutorial writes went to its scratch folder, now removed
    assert list(work.iterdir()) == []


def test_the_tutorial_is_linked_from_where_a_new_user_starts():
    for page in (REPO / "README.md", REPO / "docs" / "getting-started.md"):
        assert "tutorial.ipynb" in page.read_text(), page
    assert "tutorial.ipynb" in (REPO / "mkdocs.yml").read_text()
