"""The notebook harness: references pair by source; what nbval never compares is dropped."""

import nbformat
import pytest

from tests.conftest import chapter_cell
from tests.nbharness import (
    attach_references,
    chapter_paths,
    clean_outputs,
    code_cells,
    sanitize,
    toc_files,
)


def notebook(*sources, outputs=None):
    nb = nbformat.v4.new_notebook()
    for i, src in enumerate(sources):
        cell = nbformat.v4.new_code_cell(src)
        if outputs is not None:
            cell.execution_count = i + 1
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=outputs[i])]
        nb.cells.append(cell)
    return nb


def test_references_pair_by_source(tmp_path):
    ref = tmp_path / "ref.ipynb"
    nbformat.write(notebook("a = 1", "print(a)", "print(2)", outputs=["", "1\n", "2\n"]), ref)
    nb = notebook("a = 1", "print(a + 1)", "print(2)")  # the middle cell was edited
    problems = attach_references(nb, ref)
    assert problems[0] is None and problems[2] is None
    assert "differs from every reference cell" in problems[1]
    cells = code_cells(nb)
    assert cells[2].outputs[0].text == "2\n" and cells[2].execution_count == 3
    assert cells[1].execution_count is None


def test_missing_reference_file_is_reported(tmp_path):
    problems = attach_references(notebook("x = 1"), tmp_path / "none.ipynb")
    assert len(problems) == 1 and problems[0].startswith("no reference file")


def test_unexecuted_reference_is_reported(tmp_path):
    ref = tmp_path / "ref.ipynb"
    nbformat.write(notebook("print(1)"), ref)
    assert "never executed" in attach_references(notebook("print(1)"), ref)[0]


def test_clean_outputs_drops_images_and_widget_views_and_sanitizes():
    out = nbformat.v4.new_output("execute_result", execution_count=4, data={
        "image/png": "iVBOR", "text/plain": "<Figure at 0x7f00deadbeef>",
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc"},
        "text/html": '<img src="data:image/png;base64,AAAA">'})
    (cleaned,) = clean_outputs([out], [(r"0x[0-9a-f]{6,16}", "0xADDRESS"),
                                       (r"base64,[A-Za-z0-9+/=]+", "base64,IMAGE")])
    assert set(cleaned.data) == {"text/plain", "text/html"}
    assert cleaned.data["text/plain"] == "<Figure at 0xADDRESS>"
    assert "base64,IMAGE" in cleaned.data["text/html"]
    assert cleaned.output_type == "display_data" and "execution_count" not in cleaned


def test_sanitize_file_masks_only_what_varies():
    assert sanitize("object at 0x7f3a2b1c9d40") == "object at 0xADDRESS"
    assert sanitize("p = 0.996 and 148.4") == "p = 0.996 and 148.4"


def test_every_toc_document_exists_and_chapters_are_collected():
    for path in toc_files():
        assert path.exists(), path
    names = {p.stem for p in chapter_paths()}
    assert {"expectation-variance", "dot-products"} <= names


def test_chapter_cell_runs_the_tagged_cell_in_a_namespace(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"
        "```{code-cell} ipython3\n:tags: [derive-double]\ndef double(x):\n    return 2 * x\n```"
        "\n\n```{code-cell} ipython3\n:tags: [use-double]\nprint(four := double(2))\n```\n")
    ns = chapter_cell(chapter, "use-double", chapter_cell(chapter, "derive-double"))
    assert ns["four"] == 4 and "np" in ns and "lib" in ns
    with pytest.raises(AssertionError, match="one cell tagged 'missing'"):
        chapter_cell(chapter, "missing")


def test_the_execution_cache_is_keyed_on_lib_too(tmp_path):
    """A chapter's cached execution is void once ``lib`` changes (``tools/execute.py``): the
    digest follows every file of ``lib`` and nothing Python writes beside them."""
    from lib.widgets.cache import environment_digest

    lib = tmp_path / "lib"
    (lib / "figures").mkdir(parents=True)
    (lib / "__init__.py").write_text("SCALE = 1\n")
    (lib / "figures" / "a.py").write_text("x = 1\n")
    before = environment_digest(lib)
    (lib / "__pycache__").mkdir()
    (lib / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert environment_digest(lib) == before
    (lib / "figures" / "a.py").write_text("x = 2\n")
    assert environment_digest(lib) != before
    (lib / "figures" / "a.py").write_text("x = 1\n")
    (lib / "figures" / "b.py").write_text("")
    assert environment_digest(lib) != before
