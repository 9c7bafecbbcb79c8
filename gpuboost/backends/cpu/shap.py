"""SHAP values of the compiled CPU backend: TreeSHAP compiled with Numba.

The compiled kernels (:func:`predict_contributions`, :func:`predict_interactions`;
CUDA version ``cuda/shap.cu``, the same arithmetic in the same order) evaluate the
exact TreeSHAP of every root-to-leaf path of the forest
(:mod:`gpuboost.core.shap_paths`) for blocks of :data:`ROW_BLOCK` rows (the innermost
loops run over the rows of a block), blocks spread over threads
(``njit(nogil=True)``: each thread writes its own rows, so results do not depend on
the number of threads). Per path the *path weights* are built by ``extend`` (reusing
the weights of the prefix the path shares with the previous one) and each element's
share by unwinding (Lundberg et al. 2020, Algorithm 2); a path of ``D`` distinct
features costs ``O(D^2)`` per row for contributions and ``O(D^3)`` for interactions
(docs/DESIGN.md, "SHAP").

Its reference is :func:`gpuboost.backends.numpy.shap.tree_shap_recursive`, XGBoost's
recursive ``TreeShap`` in plain Python (what the NumPy backend runs); the two agree to
rounding (the sums are taken in another order).

Definitions (as XGBoost's ``pred_contribs`` / ``pred_interactions``): contributions
``phi`` of shape (n_outputs, n_features + 1) per row, ``phi[k, :-1].sum() +
phi[k, -1]`` equal to the margin of output ``k``, the last column the expected
value (here without the base margin: the Booster adds it). Interactions of shape
(n_outputs, n_features + 1, n_features + 1): off the diagonal
``(phi_i | x_j on) - (phi_i | x_j off)`` halved, the diagonal the contribution minus
the row's off-diagonal entries, the bias row and column zero but for
``[-1, -1]`` = the expected value; each row sums to the contribution.
"""

import numpy as np

from ...core.categorical import BITS_PER_WORD
from ...core.shap_paths import build_shap_paths
from ...core.threads import thread_pool
from .jit import kernel

__all__ = [
    "predict_contributions",
    "predict_interactions",
]

#: Rows one thread processes per task.
ROWS_PER_TASK = 256
#: Rows the kernels process together (the innermost loops run over them: SIMD).
ROW_BLOCK = 32


# ---- the compiled kernels (a block of rows at a time) ---------------------------------
@kernel
def _reciprocals(n):
    """``inverse[k] = 1.0 / k`` for ``k = 1 .. n`` (``inverse[0]`` unused)."""
    inverse = np.empty(n + 1)
    inverse[0] = 0.0
    for k in range(1, n + 1):
        inverse[k] = 1.0 / k
    return inverse


@kernel
def _one_fraction(x, lower, upper, missing):
    """1.0 when ``x`` takes every edge of a path element, else 0.0."""
    if x != x:
        return 1.0 if missing != 0 else 0.0
    if x <= upper and (lower == -np.inf or x > lower):
        return 1.0
    return 0.0


@kernel
def _category_fraction(x, bits, begin, n_words, missing):
    """1.0 when ``x`` takes every edge of a categorical path element (its set: the
    ``n_words`` words of ``bits`` from ``begin``), else 0.0; a value that is not a code
    of the set's range (NaN fails ``x >= 0``) takes them when ``missing``."""
    if x >= 0 and x < n_words * BITS_PER_WORD and np.floor(x) == x:
        code = np.int64(x)
        return np.float64((bits[begin + code // BITS_PER_WORD] >> (code % BITS_PER_WORD)) & 1)
    return 1.0 if missing != 0 else 0.0


@kernel
def _extend(levels, length, ones, zero_fraction, inverse, n_block):
    """Lundberg's ExtendPath for a block of rows: the path weights
    ``levels[length, :length + 1, r]`` from ``levels[length - 1, :length, r]`` and the
    element at index ``length`` (zero fraction ``zero_fraction``, the rows' one
    fractions ``ones[length, r]``, 0 or 1)."""
    if length == 0:
        for r in range(n_block):
            levels[0, 0, r] = 1.0
        return
    scale = inverse[length + 1]
    for r in range(n_block):
        levels[length, length, r] = 0.0
    for i in range(length - 1, -1, -1):
        grow = (i + 1) * scale
        shrink = zero_fraction * ((length - i) * scale)
        for r in range(n_block):
            weight = levels[length - 1, i, r]
            levels[length, i + 1, r] += ones[length, r] * weight * grow
            levels[length, i, r] = weight * shrink


@kernel
def _element_shares(levels, depth, zeros, ones, inverse, nexts, shares, cold, n_block):
    """``shares[k, r]``: element ``k``'s (k = 1 .. ``depth``) SHAP value per unit of
    leaf value for row ``r``: ``UnwoundPathSum * (one - zero)`` of the path weights
    ``levels[depth]``. An element the row takes runs the unwinding recurrence on its
    zero fraction; for one it does not, ``UnwoundPathSum = cold / zero`` with ``cold``
    the same for all such elements, so its share is ``-cold``. ``nexts``, ``cold``:
    work arrays."""
    for r in range(n_block):
        cold[r] = 0.0
    for i in range(depth - 1, -1, -1):
        factor = (depth + 1) * inverse[depth - i]
        for r in range(n_block):
            cold[r] += levels[depth, i, r] * factor
    for k in range(1, depth + 1):
        for r in range(n_block):
            nexts[k, r] = levels[depth, depth, r]
            shares[k, r] = 0.0
    scale = inverse[depth + 1]
    for i in range(depth - 1, -1, -1):
        grow = (depth + 1) * inverse[i + 1]
        shrink = (depth - i) * scale
        for k in range(1, depth + 1):
            zero_shrink = zeros[k] * shrink
            for r in range(n_block):
                tmp = nexts[k, r] * grow
                shares[k, r] += tmp
                nexts[k, r] = levels[depth, i, r] - tmp * zero_shrink
    for k in range(1, depth + 1):
        hot = 1.0 - zeros[k]
        for r in range(n_block):
            shares[k, r] = shares[k, r] * hot if ones[k, r] != 0.0 else -cold[r]


@kernel
def _block_one_fractions(X, row, n_block, feature, lower, upper, missing, ones, index):
    """``ones[index, r]``: the one fraction of a numeric element for rows ``row + r``."""
    for r in range(n_block):
        ones[index, r] = _one_fraction(X[row + r, feature], lower, upper, missing)


@kernel
def _block_category_fractions(X, row, n_block, feature, bits, begin, n_words, missing, ones, index):
    """``ones[index, r]``: the one fraction of a categorical element for rows ``row + r``.

    The kernels pick this or :func:`_block_one_fractions` per element themselves (two
    loads and a branch): behind one more function that takes the element arrays, or
    with the branch inside one function, the numeric path measured 6-20 % slower."""
    for r in range(n_block):
        ones[index, r] = _category_fraction(X[row + r, feature], bits, begin, n_words, missing)


@kernel
def _contributions_rows(
    X,
    row_begin,
    row_end,
    path_offsets,
    path_value,
    path_output,
    path_shared,
    element_feature,
    element_zero,
    element_lower,
    element_upper,
    element_missing,
    category_offsets,
    category_bits,
    max_length,
    out,
):
    n_paths = len(path_value)
    inverse = _reciprocals(max_length + 2)
    size = max_length + 1
    # levels[l, :l + 1, r]: the path weights after extending with elements 1 .. l; a
    # path reuses the levels of the prefix it shares with the previous path (the same
    # bits as extending again, which cuda/shap.cu does).
    levels = np.empty((size, size, ROW_BLOCK))
    zeros = np.empty(size)
    ones = np.empty((size, ROW_BLOCK))
    nexts = np.empty((size, ROW_BLOCK))
    shares = np.empty((size, ROW_BLOCK))
    cold = np.empty(ROW_BLOCK)
    for row in range(row_begin, row_end, ROW_BLOCK):
        n_block = min(ROW_BLOCK, row_end - row)
        _extend(levels, 0, ones, 1.0, inverse, n_block)
        for p in range(n_paths):
            first = path_offsets[p]
            depth = path_offsets[p + 1] - first
            for e in range(path_shared[p], depth):
                element = first + e
                zeros[e + 1] = element_zero[element]
                begin = category_offsets[element]
                n_words = category_offsets[element + 1] - begin
                if n_words > 0:  # a categorical element: by its set
                    _block_category_fractions(
                        X,
                        row,
                        n_block,
                        element_feature[element],
                        category_bits,
                        begin,
                        n_words,
                        element_missing[element],
                        ones,
                        e + 1,
                    )
                else:
                    _block_one_fractions(
                        X,
                        row,
                        n_block,
                        element_feature[element],
                        element_lower[element],
                        element_upper[element],
                        element_missing[element],
                        ones,
                        e + 1,
                    )
                _extend(levels, e + 1, ones, element_zero[element], inverse, n_block)
            _element_shares(levels, depth, zeros, ones, inverse, nexts, shares, cold, n_block)
            value = path_value[p]
            output = path_output[p]
            for k in range(1, depth + 1):
                feature = element_feature[first + k - 1]
                for r in range(n_block):
                    out[row + r, output, feature] += shares[k, r] * value


@kernel
def _interactions_rows(
    X,
    row_begin,
    row_end,
    path_offsets,
    path_value,
    path_output,
    element_feature,
    element_zero,
    element_lower,
    element_upper,
    element_missing,
    category_offsets,
    category_bits,
    max_length,
    contributions,
    out,
):
    n_paths = len(path_value)
    n_features = X.shape[1]
    inverse = _reciprocals(max_length + 2)
    size = max_length + 1
    all_ones = np.empty((size, ROW_BLOCK))
    levels = np.empty((size, size, ROW_BLOCK))
    zeros = np.empty(size)
    ones = np.empty((size, ROW_BLOCK))
    nexts = np.empty((size, ROW_BLOCK))
    shares = np.empty((size, ROW_BLOCK))
    cold = np.empty(ROW_BLOCK)
    for row in range(row_begin, row_end, ROW_BLOCK):
        n_block = min(ROW_BLOCK, row_end - row)
        for p in range(n_paths):
            first = path_offsets[p]
            depth = path_offsets[p + 1] - first
            for e in range(depth):
                element = first + e
                begin = category_offsets[element]
                n_words = category_offsets[element + 1] - begin
                if n_words > 0:  # a categorical element: by its set
                    _block_category_fractions(
                        X,
                        row,
                        n_block,
                        element_feature[element],
                        category_bits,
                        begin,
                        n_words,
                        element_missing[element],
                        all_ones,
                        e + 1,
                    )
                else:
                    _block_one_fractions(
                        X,
                        row,
                        n_block,
                        element_feature[element],
                        element_lower[element],
                        element_upper[element],
                        element_missing[element],
                        all_ones,
                        e + 1,
                    )
            value = path_value[p]
            output = path_output[p]
            for j in range(1, depth + 1):  # condition on element j: the path without it
                _extend(levels, 0, ones, 1.0, inverse, n_block)
                length = 0
                for e in range(1, depth + 1):
                    if e != j:
                        length += 1
                        zeros[length] = element_zero[first + e - 1]
                        for r in range(n_block):
                            ones[length, r] = all_ones[e, r]
                        _extend(levels, length, ones, zeros[length], inverse, n_block)
                _element_shares(
                    levels, depth - 1, zeros, ones, inverse, nexts, shares, cold, n_block
                )
                feature_j = element_feature[first + j - 1]
                zero_j = element_zero[first + j - 1]
                length = 0
                for e in range(1, depth + 1):
                    if e != j:
                        length += 1
                        feature_i = element_feature[first + e - 1]
                        for r in range(n_block):
                            half = (all_ones[j, r] - zero_j) * 0.5
                            out[row + r, output, feature_j, feature_i] += (
                                shares[length, r] * value * half
                            )
        for r in range(n_block):
            for k in range(out.shape[1]):
                for j in range(n_features):
                    diagonal = contributions[row + r, k, j]
                    for i in range(n_features):
                        if i != j:
                            diagonal -= out[row + r, k, j, i]
                    out[row + r, k, j, j] = diagonal
                out[row + r, k, n_features, n_features] = contributions[row + r, k, n_features]


def _path_arguments(paths, shared):
    """The kernels' path arguments (``shared``: with ``path_shared``, which only the
    contributions kernel reads)."""
    return (
        paths.path_offsets,
        paths.path_value,
        paths.path_output,
        *((paths.path_shared,) if shared else ()),
        paths.element_feature,
        paths.element_zero_fraction,
        paths.element_lower,
        paths.element_upper,
        paths.element_missing,
        paths.element_category_offsets,
        paths.element_category_bits,
        np.int64(paths.max_length),
    )


def _over_row_chunks(function, n_rows, n_threads):
    tasks = [(b, min(b + ROWS_PER_TASK, n_rows)) for b in range(0, n_rows, ROWS_PER_TASK)]
    pool = thread_pool(min(n_threads, len(tasks)))
    if pool is None:
        for begin, end in tasks:
            function(begin, end)
    else:
        for future in [pool.submit(function, begin, end) for begin, end in tasks]:
            future.result()


def predict_contributions(X, trees, tree_outputs, n_outputs, n_threads=1):
    """SHAP values (feature contributions) of every row, without the base margin.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
    n_outputs : int
    n_threads : int

    Returns
    -------
    contributions : ndarray of shape (n_rows, n_outputs, n_features + 1), float64  # OUT
        The last column is the sum of the trees' expected values per output.
    """
    return _contributions(X, build_shap_paths(trees, tree_outputs, n_outputs), n_threads)


def _contributions(X, paths, n_threads):
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, paths.n_outputs, n_features + 1), dtype=np.float64)
    out[:, :, n_features] = paths.expected_value
    if paths.n_paths and n_rows:
        arguments = _path_arguments(paths, shared=True)
        _over_row_chunks(
            lambda begin, end: _contributions_rows(X, begin, end, *arguments, out),
            n_rows,
            n_threads,
        )
    return out


def predict_interactions(X, trees, tree_outputs, n_outputs, n_threads=1):
    """SHAP interaction values of every row, without the base margin.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64, C order  # IN
    trees : sequence of Tree
    tree_outputs : sequence of int, shape (n_trees,)
    n_outputs : int
    n_threads : int

    Returns
    -------
    interactions : ndarray of shape (n_rows, n_outputs, n_features + 1, n_features + 1)  # OUT
        float64; ``interactions.sum(axis=-1)`` is :func:`predict_contributions`.
    """
    paths = build_shap_paths(trees, tree_outputs, n_outputs)
    contributions = _contributions(X, paths, n_threads)
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, n_outputs, n_features + 1, n_features + 1), dtype=np.float64)
    if n_rows:
        arguments = _path_arguments(paths, shared=False)
        _over_row_chunks(
            lambda begin, end: _interactions_rows(X, begin, end, *arguments, contributions, out),
            n_rows,
            n_threads,
        )
    return out
