"""Tests of gpuboost.core.gain: the gain and leaf-value formulas and SplitParams."""

import numpy as np

from gpuboost.core.gain import SplitParams, leaf_score, leaf_weight, split_gain, threshold_l1
from gpuboost.params import DEFAULT_MIN_DATA_IN_LEAF, DEFAULT_SPLIT_PENALTY, validate_params


def test_threshold_l1():
    values = np.array([-3.0, -0.5, 0.0, 0.25, 2.0])
    np.testing.assert_array_equal(threshold_l1(values, 0.0), values)
    np.testing.assert_array_equal(threshold_l1(values, 1.0), [-2.0, 0.0, 0.0, 0.0, 1.0])


def test_leaf_weight_and_score_by_hand():
    params = SplitParams(reg_lambda=1.0)
    assert leaf_weight(4.0, 3.0, params) == -1.0
    assert leaf_score(4.0, 3.0, params) == 4.0
    assert leaf_weight(-6.0, 1.0, SplitParams(reg_lambda=2.0)) == 2.0
    assert leaf_score(-6.0, 1.0, SplitParams(reg_lambda=2.0)) == 12.0


def test_alpha_soft_thresholds_the_gradient_sum():
    params = SplitParams(reg_lambda=1.0, reg_alpha=1.0)
    assert leaf_weight(4.0, 3.0, params) == -0.75  # -(4 - 1) / (3 + 1)
    assert leaf_score(4.0, 3.0, params) == 2.25  # 3**2 / 4
    assert leaf_weight(-5.0, 3.0, params) == 1.0  # -(-5 + 1) / 4
    assert leaf_weight(0.5, 3.0, params) == 0.0  # |G| <= alpha
    assert leaf_score(-0.5, 3.0, params) == 0.0


def test_max_delta_step_clips_the_weight_and_scores_the_clipped_weight():
    params = SplitParams(reg_lambda=1.0, max_delta_step=0.5)
    assert leaf_weight(4.0, 3.0, params) == -0.5  # -1 clipped
    assert leaf_score(4.0, 3.0, params) == 3.0  # -(2*4*(-0.5) + 4*0.25)
    assert leaf_weight(-8.0, 3.0, params) == 0.5
    # Unclipped weights score as without max_delta_step.
    assert leaf_weight(1.0, 3.0, params) == -0.25
    assert leaf_score(1.0, 3.0, params) == leaf_score(1.0, 3.0, SplitParams(reg_lambda=1.0))
    # Alpha and clipping together: T = 3, w = -0.75 -> -0.5.
    both_params = SplitParams(reg_lambda=1.0, reg_alpha=1.0, max_delta_step=0.5)
    assert leaf_weight(4.0, 3.0, both_params) == -0.5
    assert leaf_score(4.0, 3.0, both_params) == -(2 * 3.0 * -0.5 + 4.0 * 0.25)


def test_non_positive_denominator_gives_zero():
    params = SplitParams(reg_lambda=0.0)
    assert leaf_weight(3.0, 0.0, params) == 0.0
    assert leaf_score(3.0, 0.0, params) == 0.0
    assert leaf_score(3.0, 0.0, SplitParams(reg_lambda=0.0, max_delta_step=1.0)) == 0.0


def test_formulas_are_elementwise():
    params = SplitParams(reg_lambda=1.0, reg_alpha=0.5, max_delta_step=0.8)
    g = np.array([-4.0, 0.2, 3.0, 10.0])
    h = np.array([1.0, 2.0, 0.0, 7.0])
    weights = leaf_weight(g, h, params)
    scores = leaf_score(g, h, params)
    for i in range(len(g)):
        assert weights[i] == leaf_weight(g[i], h[i], params)
        assert scores[i] == leaf_score(g[i], h[i], params)


def test_split_gain_by_hand():
    params = SplitParams(reg_lambda=1.0)
    # S(-4, 3) = 4, S(6, 1) = 18, S(2, 4) = 0.8
    assert split_gain(-4.0, 3.0, 6.0, 1.0, 2.0, 4.0, params) == (4.0 + 18.0) - 0.8


def test_split_params_from_validated_params():
    params = validate_params(
        {
            "lambda": 2,
            "alpha": 0.5,
            "max_delta_step": 0.7,
            "min_child_weight": 3,
            "min_data_in_leaf": 4,
            "gamma": 0.1,
            "split_penalty": 3,
        }
    )
    split_params = SplitParams.from_params(params)
    assert split_params == SplitParams(2.0, 0.5, 0.7, 3.0, 4, 0.1, split_penalty=3.0)
    given = validate_params({"cat_penalty_factor": 1})
    assert SplitParams.from_params(given).cat_penalty_factor == 1
    # training's defaults for squared error: the split penalty, leaves of any size
    assert SplitParams.from_params(validate_params({})) == SplitParams(
        split_penalty=DEFAULT_SPLIT_PENALTY
    )
    assert SplitParams.from_params(validate_params({"objective": "reg:absoluteerror"})) == (
        SplitParams(min_data_in_leaf=DEFAULT_MIN_DATA_IN_LEAF)
    )
    assert SplitParams().min_data_in_leaf == 1


def test_the_penalty_is_folded_into_gamma():
    """``gamma + split_penalty * dispersion`` in float64, the penalty then 0; no penalty:
    the same object."""
    params = SplitParams(gamma=0.25, split_penalty=2.0, cat_penalty_factor=1.0)
    penalized = params.penalized(1.5)
    whole = 0.25 + 2.0 * 1.5
    assert penalized == SplitParams(gamma=whole, cat_penalty_factor=1.0, many_vs_many_gamma=whole)
    assert penalized.many_vs_many() == SplitParams(gamma=whole, cat_penalty_factor=1.0)
    plain = SplitParams(gamma=0.25)
    assert plain.penalized(1.5) is plain
    assert plain.many_vs_many() is plain


def test_many_vs_many_splits_pay_their_fraction_of_the_penalty():
    """``cat_penalty_factor``: the many-vs-many splits' gamma is ``gamma + (factor *
    split_penalty) * dispersion``, the numeric and one-vs-rest splits' the whole penalty's."""
    params = SplitParams(gamma=0.25, split_penalty=2.0, cat_penalty_factor=0.3)
    penalized = params.penalized(1.5)
    assert penalized.gamma == 0.25 + 2.0 * 1.5
    assert penalized.many_vs_many().gamma == 0.25 + (0.3 * 2.0) * 1.5
    assert penalized.many_vs_many().many_vs_many_gamma is None
    free = SplitParams(gamma=0.25, split_penalty=2.0, cat_penalty_factor=0.0).penalized(1.5)
    assert free.many_vs_many().gamma == 0.25
    assert SplitParams.from_params(validate_params({"cat_penalty_factor": 0.5})) == SplitParams(
        split_penalty=DEFAULT_SPLIT_PENALTY, cat_penalty_factor=0.5
    )
