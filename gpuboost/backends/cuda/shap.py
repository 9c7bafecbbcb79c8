"""SHAP primitive of the CUDA backend (kernels in ``cuda/shap.cu``).

The forest is cut into its root-to-leaf paths on the host
(:func:`gpuboost.core.shap_paths.build_shap_paths`, the table both backends read) and
copied to the device; one thread per row walks every path in order and adds its
shares to the row's own outputs (no atomics: the same bits on every run). NumPy
version: :mod:`gpuboost.backends.cpu.shap` (the same arithmetic in the same order).
"""

import numpy as np

from ...core.dtypes import X_DTYPE
from ...core.profiling import nvtx_range
from ...core.shap_paths import build_shap_paths
from .launch import grid_stride_blocks, require_array

__all__ = [
    "predict_contributions",
    "predict_interactions",
    "SHAP_THREADS_PER_BLOCK",
    "SHAP_MAX_PATH_LENGTH",
]

#: Kernel file (``cuda/shap.cu``).
KERNEL_FILE = "shap"
#: Threads per block (shap.cu: kShapThreadsPerBlock, the kernels' launch bounds).
SHAP_THREADS_PER_BLOCK = 128
#: Most distinct features on one path, plus one (shap.cu: kShapMaxPathLength).
SHAP_MAX_PATH_LENGTH = 33


def _device_paths(xp, trees, tree_outputs, n_outputs):
    paths = build_shap_paths(trees, tree_outputs, n_outputs)
    if paths.max_length + 1 > SHAP_MAX_PATH_LENGTH:
        raise ValueError(
            f"A tree has a root-to-leaf path on {paths.max_length} distinct features; the "
            f"CUDA SHAP kernels take at most {SHAP_MAX_PATH_LENGTH - 1}. Compute the SHAP "
            f"values of this model with device='cpu'."
        )
    arrays = (
        xp.array(paths.path_offsets),
        xp.array(paths.path_value),
        xp.array(paths.path_output),
        np.int64(paths.n_paths),
        xp.array(paths.element_feature),
        xp.array(paths.element_zero_fraction),
        xp.array(paths.element_lower),
        xp.array(paths.element_upper),
        xp.array(paths.element_missing),
        xp.array(paths.element_category_offsets),
        xp.array(paths.element_category_bits),
    )
    return paths, arrays


def _contributions(xp, launcher, X, trees, tree_outputs, n_outputs):
    require_array(xp, X, X_DTYPE, "X (from prepare_features)", ndim=2)
    n_rows, n_features = X.shape
    paths, arrays = _device_paths(xp, trees, tree_outputs, n_outputs)
    out = xp.zeros((n_rows, n_outputs, n_features + 1), dtype=np.float64)
    out[:, :, n_features] = xp.array(paths.expected_value)
    if paths.n_paths and n_rows:
        launcher(
            KERNEL_FILE,
            "shap_contributions",
            grid_stride_blocks(n_rows, SHAP_THREADS_PER_BLOCK),
            SHAP_THREADS_PER_BLOCK,
            (X, np.int64(n_rows), np.int32(n_features), *arrays, np.int32(n_outputs), out),
        )
    return out, arrays


def predict_contributions(xp, launcher, X, trees, tree_outputs, n_outputs):
    """SHAP values of every row, without the base margin.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X : xp array of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
    n_outputs : int

    Returns
    -------
    contributions : xp array of shape (n_rows, n_outputs, n_features + 1), float64  # OUT
        The last column is the sum of the trees' expected values per output.

    Raises
    ------
    ValueError
        A path splits on more than ``SHAP_MAX_PATH_LENGTH - 1`` distinct features.
    """
    with nvtx_range("shap_contributions"):
        return _contributions(xp, launcher, X, trees, tree_outputs, n_outputs)[0]


def predict_interactions(xp, launcher, X, trees, tree_outputs, n_outputs):
    """SHAP interaction values of every row, without the base margin.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    X : xp array of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
    n_outputs : int

    Returns
    -------
    interactions : xp array of shape (n_rows, n_outputs, n_features + 1, n_features + 1)  # OUT
        float64; summing over the last axis gives :func:`predict_contributions`.
    """
    with nvtx_range("shap_interactions"):
        contributions, arrays = _contributions(xp, launcher, X, trees, tree_outputs, n_outputs)
        n_rows, n_features = X.shape
        out = xp.zeros((n_rows, n_outputs, n_features + 1, n_features + 1), dtype=np.float64)
        if n_rows:
            launcher(
                KERNEL_FILE,
                "shap_interactions",
                grid_stride_blocks(n_rows, SHAP_THREADS_PER_BLOCK),
                SHAP_THREADS_PER_BLOCK,
                (
                    X,
                    np.int64(n_rows),
                    np.int32(n_features),
                    *arrays,
                    np.int32(n_outputs),
                    contributions,
                    out,
                ),
            )
        return out
