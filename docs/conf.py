"""Sphinx configuration of gpuboost's documentation site (issue 34).

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Sources: Markdown pages (MyST) for the guide, ``api.rst`` for the reference (autosummary
pages from the numpydoc docstrings), ``examples/`` for the gallery (sphinx-gallery runs
every example and keeps its figures). At the start of the build the parameter,
objective and metric tables are generated from the code (``_generated/``) and every
``python`` block of the guide runs (``_ext/run_guide_blocks.py``).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

import gpuboost  # noqa: E402
from gpuboost.metrics import valid_metric_names  # noqa: E402
from gpuboost.objectives import OBJECTIVES  # noqa: E402
from gpuboost.params import parameter_table_markdown  # noqa: E402

project = "gpuboost"
author = "the gpuboost developers"
copyright = "2026, the gpuboost developers"
release = gpuboost.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx_gallery.gen_gallery",
    "run_guide_blocks",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "examples/README.txt", "**/README.md"]
templates_path = ["_templates"]

# MyST: GitHub-style heading anchors so that the guide's links to sections resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# API reference: one page per public name, written at build time from the docstrings.
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_validation_checks = set()

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = f"gpuboost {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []


def _write_generated_tables(app):
    """The tables the parameters page includes, generated from the code."""
    out = DOCS / "_generated"
    out.mkdir(exist_ok=True)
    (out / "parameter_table.md").write_text(parameter_table_markdown() + "\n")
    (out / "objectives.md").write_text(", ".join(f"`{n}`" for n in OBJECTIVES) + "\n")
    (out / "metrics.md").write_text(", ".join(f"`{n}`" for n in valid_metric_names()) + "\n")


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out what the estimators inherit from scikit-learn (``set_fit_request``,
    ``get_params``, ...): scikit-learn documents it, and its docstrings link into
    scikit-learn's own site."""
    module = getattr(obj, "__module__", None) or ""
    qualname = getattr(obj, "__qualname__", "") or ""
    if module.startswith("sklearn.") or qualname.startswith("RequestMethod"):
        return True
    return None


def setup(app):
    """Generate the tables before the sources are read; filter inherited members."""
    app.connect("builder-inited", _write_generated_tables, priority=100)
    app.connect("autodoc-skip-member", _skip_foreign_members)
