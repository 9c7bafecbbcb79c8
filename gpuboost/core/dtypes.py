"""dtype contracts and fixed constants, in one place (see docs/DESIGN.md)."""

import numpy as np

#: Binned feature matrix, shape (n_rows, n_features), C order.
X_BINNED_DTYPE = np.uint8
#: Raw features, labels, weights, margins, gradients before quantization.
X_DTYPE = np.float64
Y_DTYPE = np.float64
#: Fixed-point quantized gradients and hessians, one value per row.
GRAD_QUANT_DTYPE = np.int32
#: Largest magnitude of a quantized gradient / hessian. Sums of n rows stay
#: below ``n * 2**30``, exact in int64 for up to 2**33 rows.
GRAD_QUANT_MAX = 2**30
#: Histogram sums: array (n_nodes, n_features, n_bins, HIST_FIELDS).
HIST_DTYPE = np.int64
HIST_FIELDS = 3
HIST_GRAD, HIST_HESS, HIST_COUNT = 0, 1, 2
#: Row ids in the row partition.
SAMPLE_INDEX_DTYPE = np.int32
#: Node ids and feature ids in trees.
NODE_DTYPE = np.int32
#: Largest number of value bins; the missing bin sits at index ``max_bin``.
MAX_BIN_LIMIT = 255
#: Largest number of rows a Dataset may hold (sample indices are int32).
MAX_ROWS = 2**31 - 1
