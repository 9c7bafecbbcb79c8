"""Exclusive feature bundling (EFB): histograms over bundles of mutually exclusive features.

In sparse data (one-hot encodings, bag-of-words counts) most features sit at
their *default bin* (the bin of the value 0.0) in most rows, and many features
are never away from it in the same row. Such mutually exclusive features can
share one binned column: the histogram is then built over ``n_bundles`` columns
instead of ``n_features``, which is where the time of a histogram goes (one
scatter per row and column). The split scan still sees one histogram per feature.

Layout of a bundle column (uint8, ``MAX_BUNDLE_BINS`` values at most):

* value ``ALL_DEFAULT_VALUE`` (0): every member feature is at its default bin;
* member ``f`` owns the values ``offset[f] .. offset[f] + n_slots[f] - 1``: its
  value bins other than the default bin, in increasing bin order, then its missing
  bin if the training data have missing values of ``f``
  (``n_slots[f] = n_value_bins[f] - 1 + has_missing[f]``).

Bundles are found greedily, as LightGBM does: features in decreasing order of
their number of non-default rows join the first bundle (in creation order)
whose width stays within ``MAX_BUNDLE_BINS`` and whose conflicts (rows where two
members are away from their default bin) stay within
``max_conflict_rate * n_rows``; a feature that fits nowhere opens a new bundle.
With ``max_conflict_rate = 0`` (the default) no row has two non-default members,
so every per-feature histogram is recovered exactly and the model is the same as
without bundling, bit for bit. :func:`find_bundles` is the definition (and the NumPy
reference); with the compiled CPU kernels the same search runs compiled
(:mod:`gpuboost.backends.cpu.bundling`, on every feature's rows as one CSR table), with
the same bundles.

Expanding a batch of bundle histograms to per-feature histograms is one scatter
(every non-default bin of a feature is one bundle cell) plus the default bin,
reconstructed as ``node total - sum of the feature's other bins`` (prefix sums over
the bundle cells) in exact int64 arithmetic; it uses only ``xp`` operations, so it
runs on the device with CuPy.
With conflicts (``max_conflict_rate > 0``) a conflicting row counts for the
member encoded last and as default for the others; the row partition then uses
the per-feature bins *decoded* from the bundles, so histograms and partition
agree (the trees are approximate, as LightGBM's).

Memory: the bundled matrix (``n_bundles`` bytes per row) is all that training on
bundles reads. The row partition and the binned prediction of the training rows
decode the few features they need from it (:meth:`BundleMap.decode_features`: the
split features of a level, the features of a tree), so for a Dataset built from a
sparse matrix the per-feature binned matrix (``n_features`` bytes per row) is never
built (:meth:`BundleMap.encode_sparse` bundles the stored entries directly).
"""

import numpy as np

from ..backends.cpu.bundling import encode_sparse as encode_sparse_compiled
from ..backends.cpu.bundling import find_bundles as find_bundles_compiled
from ..backends.cpu.bundling import non_default_cells as non_default_cells_compiled
from ..backends.cpu.jit import compiled_kernels_reason
from ..core.bin_edges import flat_edges
from ..core.dtypes import HIST_DTYPE, HIST_FIELDS, X_BINNED_DTYPE
from ..core.segments import offsets
from ..errors import value_repr

__all__ = [
    "BundleMap",
    "bundle_features",
    "default_bins",
    "scan_width",
    "find_bundles",
    "MAX_BUNDLE_BINS",
    "ALL_DEFAULT_VALUE",
    "MAX_BUNDLES_SEARCHED",
    "SAMPLE_ROWS",
    "SHAREABLE_MAX_FRACTION",
]

#: Values of a bundle column: it is stored as ``X_BINNED_DTYPE`` (uint8).
MAX_BUNDLE_BINS = int(np.iinfo(X_BINNED_DTYPE).max) + 1
#: Bundle value of a row whose members are all at their default bin.
ALL_DEFAULT_VALUE = 0
#: Most bundles whose rows are compared with one feature's rows while bundling
#: (bundles that cannot fit by width or by row counts are skipped without a
#: comparison and do not count). Bounds the greedy search at
#: ``n_features * MAX_BUNDLES_SEARCHED`` comparisons; a feature that finds no
#: bundle within it opens a new one.
MAX_BUNDLES_SEARCHED = 64
#: Rows of the sample that screens the features of dense input (every
#: ``n_rows // SAMPLE_ROWS``-th row, so the screening is deterministic).
SAMPLE_ROWS = 10_000
#: A dense-input feature away from its default bin in more than this fraction of
#: the sampled rows gets a bundle of its own (two such features could never share
#: one without conflicts; bundling them with sparser ones saves little).
SHAREABLE_MAX_FRACTION = 0.5
#: Rows scanned at a time for missing values in dense input (bounds the temporary).
MISSING_SCAN_ROWS = 1 << 16
#: Rows of the bundled matrix read at a time by :meth:`BundleMap.non_default_cells`
#: (bounds its temporaries).
CELL_SCAN_ROWS = 1 << 16


# --------------------------------------------------------------------------- #
# Non-default rows of each feature
# --------------------------------------------------------------------------- #


def scan_width(n_value_bins, missing_bin):
    """The narrowest per-feature histogram width holding every feature's value bins and a
    missing bin after them (:attr:`BundleMap.scan_bins`).

    Parameters
    ----------
    n_value_bins : ndarray of shape (n_features,), int
    missing_bin : int

    Returns
    -------
    int
    """
    widest = int(np.max(n_value_bins)) if len(n_value_bins) else 1
    return min(max(widest, 2) + 1, int(missing_bin) + 1)


def default_bins(bin_mapper):
    """Per feature, the bin of the value 0.0 (a feature's *default bin*).

    Parameters
    ----------
    bin_mapper : BinMapper
        Fitted.

    Returns
    -------
    default_bins : ndarray of shape (n_features,), int32
    """
    # searchsorted(edges, 0.0, side="left") of every feature at once: its edges below 0.0.
    edges, starts = flat_edges(bin_mapper.bin_edges_)
    below = np.zeros(len(edges) + 1, dtype=np.int64)
    np.cumsum(edges < 0.0, out=below[1:])
    return (below[starts[1:]] - below[starts[:-1]]).astype(np.int32)


def _non_default(values, edges, default_bin):
    """Whether each raw value falls outside bin ``default_bin`` (NaN: always outside).

    Bin ``b`` holds ``edges[b-1] < x <= edges[b]`` (docs/DESIGN.md, "Binning").
    """
    inside = ~np.isnan(values)
    if default_bin > 0:
        inside &= values > edges[default_bin - 1]
    if default_bin < len(edges):
        inside &= values <= edges[default_bin]
    return ~inside


class _NonDefaultRows:
    """Counts and row sets of the non-default entries of every feature.

    From a CSC matrix only the stored entries are looked at (absent entries are
    0.0, in the default bin by definition): every count is exact, in O(nnz).
    From a dense array, a deterministic sample of :data:`SAMPLE_ROWS` evenly spaced
    rows first marks the features away from their default bin in more than
    :data:`SHAREABLE_MAX_FRACTION` of the sample as not shareable (kept in bundles
    of their own, so dense numeric data cost one pass over the sample); only the
    others are counted over all rows. Row sets are computed on demand.
    """

    def __init__(self, data, bin_mapper, sparse_columns=None):
        self.data = data
        self.bin_mapper = bin_mapper
        self.sparse_columns = sparse_columns
        self.default_bins = default_bins(bin_mapper)
        n_rows = data.shape[0]
        n_features = len(bin_mapper.bin_edges_)
        self.counts = np.full(n_features, n_rows, dtype=np.int64)
        self.shareable = np.ones(n_features, dtype=bool)
        if sparse_columns is None:
            step = max(1, n_rows // SAMPLE_ROWS)
            sample = data[::step]
            for feature in range(n_features):
                fraction = np.count_nonzero(self._mask(feature, sample[:, feature])) / len(sample)
                self.shareable[feature] = fraction <= SHAREABLE_MAX_FRACTION
            self.has_missing = np.zeros(n_features, dtype=bool)
            for start in range(0, n_rows, MISSING_SCAN_ROWS):
                self.has_missing |= np.isnan(data[start : start + MISSING_SCAN_ROWS]).any(axis=0)
            for feature in np.flatnonzero(self.shareable):
                self.counts[feature] = np.count_nonzero(
                    self._mask(feature, self._stored_values(feature))
                )
        else:
            # Every stored value tested at once against its feature's default bin.
            self._feature_of = np.repeat(
                np.arange(n_features), np.diff(sparse_columns.indptr)
            ).astype(np.int64)
            low, high = self._default_bin_bounds()
            values = sparse_columns.data
            missing = np.isnan(values)
            self._stored_non_default = ~(
                ~missing & (values > low[self._feature_of]) & (values <= high[self._feature_of])
            )
            self.has_missing = np.bincount(self._feature_of[missing], minlength=n_features) > 0
            self.counts = np.bincount(
                self._feature_of[self._stored_non_default], minlength=n_features
            ).astype(np.int64)

    def _default_bin_bounds(self):
        """Per feature, the open-closed value range ``(low, high]`` of its default bin."""
        n_features = len(self.default_bins)
        low = np.full(n_features, -np.inf)
        high = np.full(n_features, np.inf)
        for feature, edges in enumerate(self.bin_mapper.bin_edges_):
            default = int(self.default_bins[feature])
            if default > 0:
                low[feature] = edges[default - 1]
            if default < len(edges):
                high[feature] = edges[default]
        return low, high

    def _stored_values(self, feature):
        if self.sparse_columns is None:
            return self.data[:, feature]
        columns = self.sparse_columns
        return columns.data[columns.indptr[feature] : columns.indptr[feature + 1]]

    def _mask(self, feature, values):
        return _non_default(
            values, self.bin_mapper.bin_edges_[feature], int(self.default_bins[feature])
        )

    def rows(self, feature):
        """Sorted row ids (int64) where ``feature`` is not at its default bin."""
        values = self._stored_values(feature)
        mask = self._mask(feature, values)
        if self.sparse_columns is None:
            return np.flatnonzero(mask)
        columns = self.sparse_columns
        row_ids = columns.indices[columns.indptr[feature] : columns.indptr[feature + 1]]
        return np.sort(row_ids[mask].astype(np.int64))

    def row_table(self, features):
        """The non-default rows of ``features`` (bool mask) as one CSR table
        ``(indptr, rows)``: feature ``f``'s sorted rows are ``rows[indptr[f]:indptr[f + 1]]``
        (none for the features outside the mask)."""
        n_features = len(features)
        if self.sparse_columns is None:
            pieces = [
                self.rows(f) if features[f] else np.zeros(0, dtype=np.int64)
                for f in range(n_features)
            ]
            lengths = np.array([len(p) for p in pieces], dtype=np.int64)
            rows = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
            return offsets(lengths), rows.astype(np.int64, copy=False)
        columns = self.sparse_columns
        keep = self._stored_non_default & np.asarray(features, dtype=bool)[self._feature_of]
        kept_features = self._feature_of[keep]
        rows = columns.indices[keep].astype(np.int64)
        if not columns.has_sorted_indices:
            order = np.lexsort((rows, kept_features))
            rows, kept_features = rows[order], kept_features[order]
        return offsets(np.bincount(kept_features, minlength=n_features)), rows


# --------------------------------------------------------------------------- #
# Greedy bundling
# --------------------------------------------------------------------------- #


class _Bundles:
    """The bundles of the greedy search: their scalar states in arrays, so that the
    bundles a feature may join are found in one vectorized pass over all of them (a
    Python loop over the bundles for each of 100k features cost minutes); members and
    row sets in lists."""

    def __init__(self):
        self.n = 0
        self.closed = np.zeros(0, dtype=bool)  # no other feature may join
        self.width = np.zeros(0, dtype=np.int64)  # values used, ALL_DEFAULT_VALUE included
        self.conflicts = np.zeros(0, dtype=np.int64)
        self.count = np.zeros(0, dtype=np.int64)  # rows with a non-default member
        self.members = []
        self.rows = []  # sorted non-default rows, materialized on the first comparison

    def add(self, closed, count):
        """A new bundle (index) with no member yet."""
        if self.n == len(self.closed):
            size = max(64, 2 * self.n)
            for name in ("closed", "width", "conflicts", "count"):
                grown = np.zeros(size, dtype=getattr(self, name).dtype)
                grown[: self.n] = getattr(self, name)[: self.n]
                setattr(self, name, grown)
        index = self.n
        self.closed[index], self.width[index] = closed, 1
        self.conflicts[index], self.count[index] = 0, count
        self.members.append([])
        self.rows.append(None)
        self.n += 1
        return index

    def candidates(self, n_slots, count, n_rows, max_conflicts):
        """The first :data:`MAX_BUNDLES_SEARCHED` bundles (creation order) a feature of
        ``n_slots`` values and ``count`` non-default rows may join: open, narrow enough,
        and not forced over ``max_conflicts`` by the row counts alone (at least
        ``count_a + count_b - n_rows`` rows overlap)."""
        n = self.n
        eligible = ~self.closed[:n] & (self.width[:n] + n_slots <= MAX_BUNDLE_BINS)
        eligible &= self.count[:n] + count - n_rows <= max_conflicts - self.conflicts[:n]
        return np.flatnonzero(eligible)[:MAX_BUNDLES_SEARCHED]


def _common(rows, sorted_rows):
    """Whether each of ``rows`` (sorted, unique) is in ``sorted_rows`` (sorted, unique),
    and where it goes in ``sorted_rows``: O(len(rows) log len(sorted_rows))."""
    positions = np.searchsorted(sorted_rows, rows)
    if len(sorted_rows) == 0:
        return np.zeros(len(rows), dtype=bool), positions
    return sorted_rows[np.minimum(positions, len(sorted_rows) - 1)] == rows, positions


def _merge(sorted_rows, rows):
    """The sorted union of two sorted, unique row sets, in O(len(sorted_rows) + len(rows))."""
    present, positions = _common(rows, sorted_rows)
    return np.insert(sorted_rows, positions[~present], rows[~present])


def find_bundles(counts, n_slots, rows_of, n_rows, max_conflicts, shareable=None):
    """Greedy bundling by conflict count (see the module docstring).

    Parameters
    ----------
    counts : ndarray of shape (n_features,), int
        Non-default rows per feature.
    n_slots : ndarray of shape (n_features,), int
        Bundle values each feature needs (0: the feature never leaves its default bin).
    rows_of : callable feature -> sorted int64 ndarray
        The non-default rows of a feature.
    n_rows : int
    max_conflicts : int
        Most conflicting rows per bundle.
    shareable : ndarray of shape (n_features,), bool, optional
        False: the feature gets a bundle of its own that no other feature joins
        (all True by default).

    Returns
    -------
    bundles : list of list of int
        Member features of every bundle, in the order they joined. Features
        without slots join the first bundle.
    n_conflicts : int
        Conflicting rows over all bundles.
    """
    n_features = len(counts)
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    bundles = _Bundles()
    row_cache = {}

    def rows(feature):
        if feature not in row_cache:
            row_cache[feature] = rows_of(feature)
        return row_cache[feature]

    without_slots = []
    for feature in (int(f) for f in order):
        if n_slots[feature] == 0:
            without_slots.append(feature)
            continue
        chosen = None
        may_share = shareable is None or bool(shareable[feature])
        candidates = (
            bundles.candidates(int(n_slots[feature]), counts[feature], n_rows, max_conflicts)
            if may_share
            else ()
        )
        for bundle in (int(b) for b in candidates):
            if bundles.rows[bundle] is None:
                bundles.rows[bundle] = rows(bundles.members[bundle][0])
            feature_rows = rows(feature)
            conflicts = int(np.count_nonzero(_common(feature_rows, bundles.rows[bundle])[0]))
            if bundles.conflicts[bundle] + conflicts <= max_conflicts:
                chosen = bundle
                bundles.conflicts[bundle] += conflicts
                bundles.rows[bundle] = _merge(bundles.rows[bundle], feature_rows)
                bundles.count[bundle] = len(bundles.rows[bundle])
                break
        if chosen is None:
            chosen = bundles.add(not may_share, int(counts[feature]))
        bundles.members[chosen].append(feature)
        bundles.width[chosen] += int(n_slots[feature])
        if bundles.rows[chosen] is not None:  # merged into the bundle's rows: not needed any more
            row_cache.pop(feature, None)
    if without_slots:
        if not bundles.n:
            bundles.add(False, 0)
        bundles.members[0].extend(without_slots)
    assert sum(len(m) for m in bundles.members) == n_features
    return bundles.members, int(bundles.conflicts[: bundles.n].sum())


def bundle_features(data, bin_mapper, max_conflict_rate=0.0, sparse_columns=None, exclusive=None):
    """Bundle the features of a Dataset.

    Parameters
    ----------
    data : ndarray of shape (n_rows, n_features), float64 or float32
        Raw features (``Dataset.features``; float32 values compare exactly with the
        float64 edges).
    bin_mapper : BinMapper
        Fitted on ``data``.
    max_conflict_rate : float, default=0.0
        Most conflicting rows per bundle, as a fraction of ``n_rows``, in [0, 1).
    sparse_columns : scipy.sparse CSC matrix, optional
        The same features as ``data`` in CSC form (when the Dataset was built from
        a sparse matrix): only its stored entries are examined.
    exclusive : ndarray of shape (n_features,), bool, optional
        Features never bundled with another (categorical features: their splits read
        their own bins).

    Returns
    -------
    BundleMap
    """
    if not 0.0 <= max_conflict_rate < 1.0:
        raise ValueError(
            f"max_conflict_rate must be in [0, 1), got {value_repr(max_conflict_rate)}."
        )
    n_rows = data.shape[0]
    non_default = _NonDefaultRows(data, bin_mapper, sparse_columns)
    n_value_bins = np.asarray(bin_mapper.n_value_bins_, dtype=np.int32)
    n_slots = (n_value_bins - 1 + non_default.has_missing).astype(np.int32)
    max_conflicts = int(np.floor(max_conflict_rate * n_rows))
    shareable = non_default.shareable
    if exclusive is not None:
        shareable = shareable & ~np.asarray(exclusive, dtype=bool)
    if compiled_kernels_reason() is None:
        indptr, rows = non_default.row_table(shareable & (n_slots > 0))
        members, n_conflicts = find_bundles_compiled(
            non_default.counts,
            n_slots,
            indptr,
            rows,
            n_rows,
            max_conflicts,
            MAX_BUNDLE_BINS,
            MAX_BUNDLES_SEARCHED,
            shareable,
        )
    else:
        members, n_conflicts = find_bundles(
            non_default.counts, n_slots, non_default.rows, n_rows, max_conflicts, shareable
        )
    return BundleMap(
        members,
        n_slots,
        non_default.default_bins,
        n_value_bins,
        bin_mapper.missing_bin,
        n_conflicts,
        max_conflict_rate,
    )


# --------------------------------------------------------------------------- #
# The bundle map: encode, decode, expand
# --------------------------------------------------------------------------- #


class BundleMap:
    """Where every feature lives in the bundled matrix.

    Parameters
    ----------
    members : list of list of int
        Features of every bundle, in encoding order.
    n_slots : ndarray of shape (n_features,), int
        Bundle values of every feature (its non-default bins).
    default_bins : ndarray of shape (n_features,), int
    n_value_bins : ndarray of shape (n_features,), int
    missing_bin : int
    n_conflicts : int, default=0
        Rows where two members of a bundle are both non-default (summed over bundles).
    max_conflict_rate : float, default=0.0
        The setting the bundles were found with.

    Attributes
    ----------
    n_features, n_bundles : int
    feature_bundle, feature_offset, n_slots, default_bins, n_value_bins : ndarray, int32
        Per feature, shape (n_features,).
        Feature ``f`` owns values ``feature_offset[f] .. feature_offset[f] + n_slots[f] - 1``
        of column ``feature_bundle[f]``.
    bundle_widths : ndarray of shape (n_bundles,), int32
        Values used by every bundle column, ``1 + sum of its members' slots``.
    n_bins : int
        Histogram width of the bundles: the largest bundle width.
    members : list of ndarray of int32
    missing_bin, n_conflicts : int
    max_conflict_rate : float
    """

    def __init__(
        self,
        members,
        n_slots,
        default_bins,
        n_value_bins,
        missing_bin,
        n_conflicts=0,
        max_conflict_rate=0.0,
    ):
        self.n_slots = np.asarray(n_slots, dtype=np.int32)
        self.default_bins = np.asarray(default_bins, dtype=np.int32)
        self.n_value_bins = np.asarray(n_value_bins, dtype=np.int32)
        self.n_features = len(self.n_slots)
        self.missing_bin = int(missing_bin)
        self.n_conflicts = int(n_conflicts)
        self.max_conflict_rate = float(max_conflict_rate)
        self.members = [np.asarray(m, dtype=np.int32) for m in members]
        self.n_bundles = len(self.members)
        self.feature_bundle = np.full(self.n_features, -1, dtype=np.int32)
        self.feature_offset = np.zeros(self.n_features, dtype=np.int32)
        self.bundle_widths = np.zeros(self.n_bundles, dtype=np.int32)
        for bundle, features in enumerate(self.members):
            offset = ALL_DEFAULT_VALUE + 1
            for feature in features:
                if self.feature_bundle[feature] >= 0:
                    raise ValueError(f"Feature {feature} is in two bundles.")
                self.feature_bundle[feature] = bundle
                self.feature_offset[feature] = offset
                offset += int(self.n_slots[feature])
            if offset > MAX_BUNDLE_BINS:
                raise ValueError(
                    f"Bundle {bundle} needs {offset} values, more than {MAX_BUNDLE_BINS}."
                )
            self.bundle_widths[bundle] = offset
        if np.any(self.feature_bundle < 0):
            raise ValueError("Every feature must belong to a bundle.")
        self.n_bins = int(self.bundle_widths.max()) if self.n_bundles else 1

    def __repr__(self):
        return (
            f"BundleMap(n_features={self.n_features}, n_bundles={self.n_bundles}, "
            f"n_bins={self.n_bins}, n_conflicts={self.n_conflicts})"
        )

    @property
    def n_features_with_slots(self):
        """Features that ever leave their default bin (the others need no histogram column)."""
        return int(np.count_nonzero(self.n_slots))

    @property
    def reduces_columns(self):
        """Whether the bundles are fewer than the features needing a histogram column."""
        return self.n_bundles < self.n_features_with_slots

    def has_missing_slot(self, feature):
        """Whether ``feature``'s last slot holds its missing bin."""
        return bool(self.n_slots[feature] == self.n_value_bins[feature])

    # ---- per-feature slot arithmetic (array-module agnostic) ------------------
    def _slots_of_bins(self, xp, bins, feature):
        """Slot of each non-default bin (int32; meaningless at the default bin)."""
        default = int(self.default_bins[feature])
        slot = xp.where(bins < default, bins, bins - 1)
        return xp.where(bins == self.missing_bin, int(self.n_value_bins[feature]) - 1, slot)

    def _bins_of_slots(self, xp, slots, feature, missing_bin=None):
        """Bin of each slot in ``[0, n_slots[feature])`` (int32); the missing slot goes to
        ``missing_bin`` (default: the Dataset's, ``self.missing_bin``)."""
        default = int(self.default_bins[feature])
        bins = xp.where(slots < default, slots, slots + 1)
        if self.has_missing_slot(feature):
            missing = self.missing_bin if missing_bin is None else int(missing_bin)
            bins = xp.where(slots == int(self.n_value_bins[feature]) - 1, missing, bins)
        return bins

    @property
    def scan_bins(self):
        """The narrowest per-feature histogram width that holds every feature's value bins
        and a missing bin after them: ``max(n_value_bins, 2) + 1``. Expanding to it (the
        missing bin at ``scan_bins - 1`` instead of ``max_bin``) gives the split scan the
        same candidates, gains and records at a fraction of the memory when features
        have few distinct values (one-hot, counts)."""
        return scan_width(self.n_value_bins, self.missing_bin)

    def encode(self, xp, X_binned):
        """The bundled matrix of a binned matrix.

        Parameters
        ----------
        xp : module
            numpy or cupy; ``X_binned`` lives there.
        X_binned : array of shape (n_rows, n_features), uint8

        Returns
        -------
        X_bundled : array of shape (n_rows, n_bundles), uint8, C order
            A row where several members of a bundle are non-default (a conflict)
            holds the value of the member encoded last.
        """
        n_rows = X_binned.shape[0]
        X_bundled = xp.zeros((n_rows, self.n_bundles), dtype=X_BINNED_DTYPE)
        for bundle, features in enumerate(self.members):
            column = xp.zeros(n_rows, dtype=np.int32)
            for feature in (int(f) for f in features):
                if self.n_slots[feature] == 0:
                    continue
                bins = X_binned[:, feature].astype(np.int32)
                values = self._slots_of_bins(xp, bins, feature) + int(self.feature_offset[feature])
                column = xp.where(bins != int(self.default_bins[feature]), values, column)
            X_bundled[:, bundle] = column.astype(X_BINNED_DTYPE)
        return X_bundled

    def encode_naive(self, X_binned):
        """Reference loop version of :meth:`encode` (NumPy)."""
        n_rows = X_binned.shape[0]
        X_bundled = np.zeros((n_rows, self.n_bundles), dtype=X_BINNED_DTYPE)
        for bundle, features in enumerate(self.members):
            for row in range(n_rows):
                for feature in features:
                    bin_ = int(X_binned[row, feature])
                    if bin_ == self.default_bins[feature]:
                        continue
                    if bin_ == self.missing_bin:
                        slot = int(self.n_value_bins[feature]) - 1
                    else:
                        slot = bin_ if bin_ < self.default_bins[feature] else bin_ - 1
                    X_bundled[row, bundle] = self.feature_offset[feature] + slot
        return X_bundled

    def encode_sparse(self, columns, bin_mapper):
        """:meth:`encode` of the bins of a sparse matrix, from its stored entries only
        (absent entries are 0.0, in every feature's default bin): O(nnz) work plus the
        ``n_rows x n_bundles`` result, never the per-feature binned matrix.

        Parameters
        ----------
        columns : scipy.sparse CSC matrix of shape (n_rows, n_features), float64
            Canonical (``Dataset.sparse_columns``).
        bin_mapper : BinMapper
            Fitted (the one the bundles were found with).

        Returns
        -------
        X_bundled : ndarray of shape (n_rows, n_bundles), uint8, C order
            Equal to ``encode(np, bin_mapper.transform_sparse(columns))``. With the
            compiled CPU kernels one compiled pass over the entries
            (:func:`gpuboost.backends.cpu.bundling.encode_sparse`); otherwise this
            NumPy loop over the bundles and their members (the reference).
        """
        n_rows = columns.shape[0]
        X_bundled = np.zeros((n_rows, self.n_bundles), dtype=X_BINNED_DTYPE)
        if compiled_kernels_reason() is None:
            return encode_sparse_compiled(self, columns, bin_mapper.bin_edges_, X_bundled)
        for bundle, features in enumerate(self.members):
            column = np.zeros(n_rows, dtype=X_BINNED_DTYPE)
            for feature in (int(f) for f in features):
                if self.n_slots[feature] == 0:
                    continue
                start, stop = columns.indptr[feature], columns.indptr[feature + 1]
                values = columns.data[start:stop]
                bins = np.searchsorted(bin_mapper.bin_edges_[feature], values, side="left")
                bins[np.isnan(values)] = self.missing_bin
                bins = bins.astype(np.int32)
                moved = bins != int(self.default_bins[feature])
                slots = self._slots_of_bins(np, bins[moved], feature)
                column[columns.indices[start:stop][moved]] = slots + int(
                    self.feature_offset[feature]
                )
            X_bundled[:, bundle] = column
        return X_bundled

    def decode(self, xp, X_bundled):
        """Per-feature bins of a bundled matrix (the inverse of :meth:`encode` without
        conflicts; with conflicts, a member overwritten in a row reads as default).

        Returns
        -------
        X_binned : array of shape (n_rows, n_features), uint8, C order
        """
        return self.decode_features(xp, X_bundled, range(self.n_features))

    def decode_features(self, xp, X_bundled, features):
        """The bins of some features decoded from a bundled matrix (see :meth:`decode`).

        Parameters
        ----------
        xp : module
        X_bundled : array of shape (n_rows, n_bundles), uint8
        features : sequence of int

        Returns
        -------
        X_binned : array of shape (n_rows, len(features)), uint8, C order
            Column ``i`` holds the bins of ``features[i]``.
        """
        n_rows = X_bundled.shape[0]
        X_binned = xp.empty((n_rows, len(features)), dtype=X_BINNED_DTYPE)
        for column, feature in enumerate(int(f) for f in features):
            values = X_bundled[:, int(self.feature_bundle[feature])].astype(np.int32)
            slots = values - int(self.feature_offset[feature])
            owned = (slots >= 0) & (slots < int(self.n_slots[feature]))
            bins = self._bins_of_slots(xp, slots, feature)
            X_binned[:, column] = xp.where(owned, bins, int(self.default_bins[feature])).astype(
                X_BINNED_DTYPE
            )
        return X_binned

    # ---- histograms ----------------------------------------------------------
    def histogram_expansion(self, n_bins, to_device=np.asarray, missing_bin=None):
        """The index arrays of :meth:`expand_histograms`.

        Parameters
        ----------
        n_bins : int
            Width of the per-feature histograms (``max_bin + 1``, or :attr:`scan_bins`).
        to_device : callable, default=numpy.asarray
            Host array -> array of the module the histograms live in
            (``backend.to_device``).
        missing_bin : int, optional
            Where the missing bin goes in them (default ``self.missing_bin``;
            ``scan_bins - 1`` for the narrow width).

        Returns
        -------
        expansion : dict of str -> int64 array
            Over the bundle cells flattened to ``n_bundles * self.n_bins`` and the
            feature cells flattened to ``n_features * n_bins``:
            ``source``/``target`` pair every non-default (feature, bin) with its
            bundle cell; the cells of feature ``f`` are
            ``range_begin[f] .. range_end[f] - 1``; ``default_target`` is the cell
            of each feature's default bin.
        """
        range_begin = self.feature_bundle.astype(
            np.int64
        ) * self.n_bins + self.feature_offset.astype(np.int64)
        # Every feature's slots 0 .. n_slots - 1 at once (the per-feature rule of
        # _bins_of_slots, vectorized over the features).
        n_slots = self.n_slots.astype(np.int64)
        feature = np.repeat(np.arange(self.n_features, dtype=np.int64), n_slots)
        slots = np.arange(int(n_slots.sum()), dtype=np.int64) - np.repeat(
            offsets(n_slots)[:-1], n_slots
        )
        default = self.default_bins.astype(np.int64)[feature]
        bins = np.where(slots < default, slots, slots + 1)
        missing_slot = (n_slots == self.n_value_bins)[feature] & (
            slots == self.n_value_bins.astype(np.int64)[feature] - 1
        )
        missing = self.missing_bin if missing_bin is None else int(missing_bin)
        bins = np.where(missing_slot, missing, bins)
        return {
            name: to_device(np.asarray(values, dtype=np.int64))
            for name, values in (
                ("source", range_begin[feature] + slots),
                ("target", feature * n_bins + bins),
                ("range_begin", range_begin),
                ("range_end", range_begin + self.n_slots),
                (
                    "default_target",
                    np.arange(self.n_features, dtype=np.int64) * n_bins + self.default_bins,
                ),
            )
        }

    def non_default_cells(self, X_bundled, n_bins, missing_bin=None):
        """Every row's non-default entries as per-feature histogram cells (CSR), what a
        sparse histogram adds (gpuboost.backends.cpu.histogram.build_sparse_histograms):
        the histograms are then those :meth:`expand_histograms` gives, bit for bit
        (with conflicts too: a bundle value is one member's bin, the others default).

        Parameters
        ----------
        X_bundled : ndarray of shape (n_rows, n_bundles), uint8
        n_bins : int
            Width of the per-feature histograms (``max_bin + 1``, or :attr:`scan_bins`).
        missing_bin : int, optional
            As for :meth:`histogram_expansion`.

        Returns
        -------
        indptr : ndarray of shape (n_rows + 1,), int64
        cells : ndarray of shape (indptr[-1],), int32
            Row ``r``'s cells ``feature * n_bins + bin`` (bundle order):
            ``cells[indptr[r]:indptr[r + 1]]``.
        """
        expansion = self.histogram_expansion(n_bins, missing_bin=missing_bin)
        cell_of = np.full(self.n_bundles * self.n_bins, -1, dtype=np.int64)
        cell_of[expansion["source"]] = expansion["target"]
        if compiled_kernels_reason() is None:
            return non_default_cells_compiled(X_bundled, ALL_DEFAULT_VALUE, cell_of, self.n_bins)
        n_rows = X_bundled.shape[0]
        counts = np.zeros(n_rows, dtype=np.int64)
        for start in range(0, n_rows, CELL_SCAN_ROWS):
            chunk = X_bundled[start : start + CELL_SCAN_ROWS]
            counts[start : start + len(chunk)] = np.count_nonzero(
                chunk != ALL_DEFAULT_VALUE, axis=1
            )
        indptr = offsets(counts)
        cells = np.empty(int(indptr[-1]), dtype=np.int32)
        for start in range(0, n_rows, CELL_SCAN_ROWS):
            chunk = X_bundled[start : start + CELL_SCAN_ROWS]
            rows, bundles = np.nonzero(chunk != ALL_DEFAULT_VALUE)
            values = chunk[rows, bundles].astype(np.int64)
            cells[indptr[start] : indptr[start + len(chunk)]] = cell_of[
                bundles.astype(np.int64) * self.n_bins + values
            ]
        return indptr, cells

    def expand_histograms(self, xp, bundle_histograms, expansion, n_bins):
        """Per-feature histograms from bundle histograms (exact integer arithmetic).

        Parameters
        ----------
        xp : module
        bundle_histograms : array of shape (n_nodes, n_bundles, self.n_bins, 3), int64
        expansion : dict
            :meth:`histogram_expansion` on ``xp``.
        n_bins : int
            Width of the per-feature histograms.

        Returns
        -------
        histograms : array of shape (n_nodes, n_features, n_bins, 3), int64
            Bin ``b`` of feature ``f`` holds its bundle cell; the default bin holds
            the node's totals minus the feature's other bins; bins a feature does
            not have are zero. Costs one scatter of the features' non-default
            cells and prefix sums over the bundle cells, not a pass over every
            (feature, bin).
        """
        n_nodes = bundle_histograms.shape[0]
        cells = bundle_histograms.reshape(n_nodes, -1, HIST_FIELDS)
        histograms = xp.zeros((n_nodes, self.n_features * n_bins, HIST_FIELDS), dtype=HIST_DTYPE)
        histograms[:, expansion["target"]] = cells[:, expansion["source"]]
        prefix = xp.zeros((n_nodes, cells.shape[1] + 1, HIST_FIELDS), dtype=HIST_DTYPE)
        prefix[:, 1:] = xp.cumsum(cells, axis=1)
        non_default = prefix[:, expansion["range_end"]] - prefix[:, expansion["range_begin"]]
        totals = bundle_histograms[:, 0].sum(axis=1)  # every row is in one cell of bundle 0
        histograms[:, expansion["default_target"]] = totals[:, None, :] - non_default
        return histograms.reshape(n_nodes, self.n_features, n_bins, HIST_FIELDS)

    def expand_histograms_naive(self, bundle_histograms, n_bins):
        """Reference loop version of :meth:`expand_histograms` (NumPy)."""
        n_nodes = bundle_histograms.shape[0]
        histograms = np.zeros((n_nodes, self.n_features, n_bins, HIST_FIELDS), dtype=HIST_DTYPE)
        for node in range(n_nodes):
            total = bundle_histograms[node, 0].sum(axis=0)
            for feature in range(self.n_features):
                bundle = self.feature_bundle[feature]
                for slot in range(int(self.n_slots[feature])):
                    if slot == self.n_value_bins[feature] - 1:
                        bin_ = self.missing_bin
                    else:
                        bin_ = slot if slot < self.default_bins[feature] else slot + 1
                    histograms[node, feature, bin_] = bundle_histograms[
                        node, bundle, self.feature_offset[feature] + slot
                    ]
                default = self.default_bins[feature]
                histograms[node, feature, default] = total - histograms[node, feature].sum(axis=0)
        return histograms
