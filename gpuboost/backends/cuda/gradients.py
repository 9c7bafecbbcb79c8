"""Gradients and hessians of built-in objectives on the CUDA backend (kernels in
``cuda/gradients.cu``).

The definitions, and the reference, are the objectives' ``gradients`` (their
``_gradients`` and the sample weights of ``gpuboost.objectives.base._apply_weight``). As
in the compiled CPU backend (:mod:`gpuboost.backends.cpu.gradients`), one kernel fuses an
objective's float64 arithmetic, its ``exp`` (``cuda/strict_math.cuh``, the bits of the
references' :func:`gpuboost.core.strict_math.exp` on every GPU) and the weights in the
reference's operation order. Squared error, logistic, exponential, Poisson, gamma and
Tweedie: one launch (the reference: 4 to some 100 array operations); softmax: the terms
kernel (``exp(raw - row max)``) and the fused kernel. The one-output kernels also reduce
the magnitudes of what they write to one maximum per block (``cuda/column_maxima.cuh``),
which :func:`gpuboost.backends.cuda.quantize.quantize_columns` takes instead of reading
the columns again. Other objectives (and subclasses) keep their array-module code
(:func:`gradients` returns None).
"""

import numpy as np

from ...core.dtypes import Y_DTYPE
from ...objectives.classification import (
    HESSIAN_FLOOR,
    MULTICLASS_HESSIAN_FACTOR,
    ExponentialLoss,
    LogisticLoss,
    SoftmaxClassLoss,
    SoftmaxLoss,
)
from ...objectives.regression import GammaLoss, PoissonLoss, SquaredError, TweedieLoss
from .launch import GRID_STRIDE_MAX_BLOCKS, ceil_div, grid_stride_blocks
from .quantize import maxima_blocks

__all__ = ["gradients", "KERNEL_OBJECTIVES", "GRADIENT_THREADS_PER_BLOCK"]

#: Kernel file (``cuda/gradients.cu``).
KERNEL_FILE = "gradients"
#: Threads per block of every kernel (gradients.cu: GRADIENT_THREADS_PER_BLOCK).
GRADIENT_THREADS_PER_BLOCK = 256
#: Most values of a softmax kernel's shared-memory tile (gradients.cu:
#: SOFTMAX_TILE_VALUES): a tile holds ``SOFTMAX_TILE_VALUES // n_classes`` rows; more
#: classes than this keep the objective's array code.
SOFTMAX_TILE_VALUES = 2048
#: The objective classes computed by kernels (exact classes, not subclasses).
KERNEL_OBJECTIVES = (
    SquaredError,
    LogisticLoss,
    ExponentialLoss,
    PoissonLoss,
    GammaLoss,
    TweedieLoss,
    SoftmaxLoss,
    SoftmaxClassLoss,
)


def gradients(xp, launcher, objective, y, raw, weight):
    """``objective.gradients(xp, y, raw, weight)`` by the kernels, bit for bit; None for
    an objective without kernels, or with several targets.

    Parameters
    ----------
    xp : module
    launcher : gpuboost.backends.cuda.launch.KernelLauncher
    objective : gpuboost.objectives.Objective
    y : xp array of shape (n_rows,), float64  # IN
    raw : xp array of shape (n_rows,) or (n_rows, n_classes), float64  # IN
        Two-dimensional for softmax (``objective.n_outputs() > 1``).
    weight : xp array of shape (n_rows,), float64, or None  # IN

    Returns
    -------
    (grad, hess, block_maxima), or None
        ``grad``, ``hess``: xp arrays of the shape of ``raw``, float64  # OUT
        ``block_maxima``: xp array of shape (n_blocks, 2), uint64, the magnitude bits of
        the columns reduced per block (``cuda/column_maxima.cuh``) for one output; None
        for softmax and for no rows.
    """
    kind = type(objective)
    softmax = kind in (SoftmaxLoss, SoftmaxClassLoss)
    if kind not in KERNEL_OBJECTIVES or (softmax and objective.n_outputs() > SOFTMAX_TILE_VALUES):
        return None
    if objective.n_targets > 1:  # several targets: the objective's own array code
        return None
    y = xp.ascontiguousarray(xp.asarray(y, dtype=Y_DTYPE))
    raw = xp.ascontiguousarray(xp.asarray(raw, dtype=Y_DTYPE))
    objective._check_raw_shape(y, raw)
    has_weight = np.int32(weight is not None)
    weight = y if weight is None else xp.ascontiguousarray(xp.asarray(weight, dtype=Y_DTYPE))
    grad = xp.empty_like(raw)
    hess = xp.empty_like(raw)
    n_rows = y.shape[0]
    if n_rows == 0:
        return grad, hess, None
    blocks = grid_stride_blocks(n_rows, GRADIENT_THREADS_PER_BLOCK)
    rows = np.int64(n_rows)

    def launch(kernel, args, n_blocks=blocks):
        launcher(KERNEL_FILE, kernel, n_blocks, GRADIENT_THREADS_PER_BLOCK, args)

    if softmax:  # shared-memory tiles of whole rows, one block per tile (grid-stride)
        n_classes = np.int32(raw.shape[1])
        tile_rows = SOFTMAX_TILE_VALUES // int(n_classes)
        tiles = min(ceil_div(n_rows, tile_rows), GRID_STRIDE_MAX_BLOCKS)
        tile_rows = np.int32(tile_rows)
        exp_shifted = xp.empty_like(raw)  # exp(raw - row max)
        launch("softmax_exp_terms", (raw, rows, n_classes, tile_rows, exp_shifted), tiles)
        launch(
            "softmax_gradients",
            (
                y,
                exp_shifted,
                weight,
                has_weight,
                rows,
                n_classes,
                tile_rows,
                np.float64(MULTICLASS_HESSIAN_FACTOR),
                np.float64(HESSIAN_FLOOR),
                grad,
                hess,
            ),
            tiles,
        )
        return grad, hess, None
    # One output: the kernels also write block maxima, on a grid the host reads cheaply.
    tracking_blocks = maxima_blocks(n_rows)
    block_maxima = xp.empty((tracking_blocks, 2), dtype=np.uint64)
    common = (y, raw, weight, has_weight, rows)
    outputs = (grad, hess, block_maxima)
    if kind is SquaredError:
        launch("squared_error_gradients", (*common, *outputs), tracking_blocks)
    elif kind is LogisticLoss:
        floor = np.float64(HESSIAN_FLOOR)
        launch("logistic_gradients", (*common, floor, *outputs), tracking_blocks)
    elif kind is ExponentialLoss:
        launch("exponential_gradients", (*common, *outputs), tracking_blocks)
    elif kind is PoissonLoss:
        step = np.float64(objective.max_delta_step)
        launch("poisson_gradients", (*common, step, *outputs), tracking_blocks)
    elif kind is GammaLoss:
        launch("gamma_gradients", (*common, *outputs), tracking_blocks)
    else:  # TweedieLoss
        rho = objective.tweedie_variance_power
        factors = (np.float64(1.0 - rho), np.float64(2.0 - rho))
        launch("tweedie_gradients", (*common, *factors, *outputs), tracking_blocks)
    return grad, hess, block_maxima
