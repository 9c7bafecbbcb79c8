"""The README (the front page) and the documentation site's sources stay in step with the
code (issue 34). The site itself builds in CI (``.ci/run``: warnings are errors, the
gallery's examples and the guide's code blocks run)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
GUIDE = sorted((DOCS / "guide").glob("*.md")) + [DOCS / "getting_started.md"]

#: The README is a front page (issue 34: at most about 150 lines).
README_MAX_LINES = 150

_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _guide_text():
    return "\n".join(page.read_text() for page in GUIDE)


def test_readme_is_a_front_page():
    assert len(README.read_text().splitlines()) <= README_MAX_LINES


def test_readme_states_the_ci_test_commands():
    """Both tiers' commands, each on a line of its own, as .ci/run checks and runs them;
    and the documentation's build command, as .ci/run runs it."""
    text = README.read_text()
    ci_script = (ROOT / ".ci" / "run").read_text()
    for command in ("python -m pytest -q", "python -m pytest -q -m slow"):
        assert f"\n{command}\n" in text, command
        assert f"({command})" in ci_script, command
    docs_command = "python -m sphinx -W --keep-going -b html docs docs/_build/html"
    assert docs_command in text
    assert f"({docs_command})" in ci_script
    assert "gpuboost demo" in text


#: The Markdown sources: the README and docs/ without the build's output.
PAGES = [README] + [
    page
    for page in sorted(DOCS.rglob("*.md"))
    if not {"_build", "_generated", "generated", "auto_examples"} & set(page.parts)
]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = [
        target
        for target in _LINK.findall(page.read_text())
        if "://" not in target
        and not target.startswith("mailto:")
        and not (page.parent / target).exists()
    ]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_parameters_page_includes_the_generated_tables():
    """The parameter, objective and metric lists are generated from the code when the site
    builds (docs/conf.py); the page includes each."""
    page = (DOCS / "parameters.md").read_text()
    conf = (DOCS / "conf.py").read_text()
    for table in ("parameter_table.md", "objectives.md", "metrics.md"):
        assert f"_generated/{table}" in page
        assert f'"{table}"' in conf


def test_guide_documents_the_user_facing_features():
    text = _guide_text()
    for heading in (
        "# Input data",
        "## Missing values",
        "## Feature names",
        "## Evaluation sets, early stopping, callbacks",
        "## Cross-validation: `gpuboost.cv`",
        "## Class imbalance",
        "## Prediction",
        "## Feature importance",
        "## Model files",
        "# Reporting a bug",
    ):
        assert f"\n{heading}\n" in f"\n{text}", heading
    for term in (
        "polars",
        "pyarrow",
        "pred_leaf=True",
        "iteration_range=",
        "output_margin=True",
        "'relative_influence'",
        "evals_result",
        "callbacks=",
        "scale_pos_weight",
        "is_unbalance",
        "class_weight",
        "gpuboost doctor",
        "GPUBOOST_SELFCHECK",
        "--no-header",
        "maximize=True",
    ):
        assert term in text, term
    assert "`gpuboost doctor`" in (DOCS / "guide" / "bugs.md").read_text()
