"""The README's generated parts stay in step with the code."""

from pathlib import Path

from gpuboost.objectives import OBJECTIVES
from gpuboost.params import parameter_table_markdown

README = Path(__file__).resolve().parents[1] / "README.md"


def test_parameter_table_is_current():
    # Regenerate with: python -m gpuboost.params (paste under "## Parameters").
    assert parameter_table_markdown() in README.read_text()


def test_every_objective_is_listed():
    text = README.read_text()
    for name in OBJECTIVES:
        assert f"`{name}`" in text, name


def test_readme_states_the_ci_test_commands():
    """Both tiers' commands, each on a line of its own, as .ci/run checks and runs them."""
    text = README.read_text()
    ci_script = (README.parent / ".ci" / "run").read_text()
    for command in ("python -m pytest -q", "python -m pytest -q -m slow"):
        assert f"\n{command}\n" in text, command
        assert f"({command})" in ci_script, command


def test_readme_documents_the_user_facing_features():
    text = README.read_text()
    for heading in (
        "### Input data",
        "### Missing values",
        "### Feature names",
        "### Training: evaluation sets, early stopping, callbacks",
        "### Cross-validation: `gpuboost.cv`",
        "### Class imbalance",
        "### Prediction",
        "### Feature importance",
        "### Model files",
        "## Reporting a bug",
    ):
        assert f"\n{heading}\n" in text, heading
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
    bug_report = text.split("## Reporting a bug", 1)[1].split("\n## ", 1)[0]
    assert "`gpuboost doctor`" in bug_report
