"""Accuracy bar: gpuboost against REFERENCE.md's peer median on LightGBM's examples.

One test per data set (binary, regression, multiclass), trained with exactly the
reference settings (tests/_reference_data.py: 100 rounds, learning rate 0.1, max
depth 6, 255 value bins + missing, L2 1, min child hessian 1). The test metric
must be at least as good as the median of XGBoost, LightGBM and scikit-learn
HGB as listed in /work/shared/REFERENCE.md:
binary logloss <= 0.51109 and auc >= 0.82592; regression rmse <= 0.41488;
multiclass mlogloss <= 1.31705.

Skipped when the data folder (``<repo>/../shared/data/lightgbm-examples``, or
``$GPUBOOST_REFERENCE_DATA``) is absent.
"""

# The shared helper sits next to this file; import it whatever pytest's import mode.
import _reference_data as ref
import pytest
from _tiers import SLOW

import gpuboost


def _train_and_evaluate(task):
    if not ref.data_available(task):
        pytest.skip(f"reference data not found in {ref.data_dir()}")
    X_train, y_train, X_test, y_test = ref.load_task(task)
    dtrain = gpuboost.Dataset(X_train, label=y_train)
    booster = gpuboost.train(
        ref.gpuboost_params(task, device="cpu"), dtrain, ref.N_ROUNDS, verbose_eval=False
    )
    assert booster.num_boosted_rounds() == ref.N_ROUNDS
    return ref.evaluate(task, y_test, booster.predict(X_test))


def _assert_bar(task, metrics):
    for metric, bar in ref.REFERENCE_MEDIAN[task].items():
        direction = ">=" if ref.HIGHER_IS_BETTER[metric] else "<="
        assert ref.is_at_least_as_good(metric, metrics[metric], bar), (
            f"{task}: test {metric} {metrics[metric]:.5f} misses the peer median bar "
            f"({direction} {bar}); all metrics: {metrics}"
        )


def test_binary_matches_peer_median():
    metrics = _train_and_evaluate("binary")
    _assert_bar("binary", metrics)  # logloss <= 0.51109, auc >= 0.82592


def test_regression_matches_peer_median():
    metrics = _train_and_evaluate("regression")
    _assert_bar("regression", metrics)  # rmse <= 0.41488


@SLOW  # fast siblings: the binary and regression bars (the same helper)
def test_multiclass_matches_peer_median():
    metrics = _train_and_evaluate("multiclass")
    _assert_bar("multiclass", metrics)  # mlogloss <= 1.31705


def test_bar_matches_reference_table():
    """The bar is the median of REFERENCE.md's three peer figures."""
    for task, bars in ref.REFERENCE_MEDIAN.items():
        for metric, bar in bars.items():
            assert ref.peer_median(ref.REFERENCE_FIGURES[task], metric) == bar
