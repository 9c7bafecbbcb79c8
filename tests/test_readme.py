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


def test_readme_states_the_ci_test_command():
    assert "\npython -m pytest -q\n" in README.read_text()
