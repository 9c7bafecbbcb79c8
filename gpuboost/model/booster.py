"""The Booster: a trained ensemble, its prediction, importances, dumps and files."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ..backends import get_backend
from ..core.array import to_numpy
from ..data.categorical import AUTO, check_categories, encode_features, recode_categories
from ..data.convert import (
    check_numeric_dtype,
    convert_features,
    densify,
    feature_positions,
    frame_column_names,
    has_default_names,
    is_sparse_matrix,
    select_features,
    sparse_frame_columns,
)
from ..data.dataset import Dataset
from ..data.device import device_features, training_device
from ..errors import value_repr
from ..objectives import get_objective
from ..params import (
    PER_ROUND_PARAMS,
    RUNTIME_ONLY,
    canonical_name,
    checked_round_values,
    round_values,
    validate_params,
)
from .dropout import dropped_trees
from .model_io import (
    atomic_write_bytes,
    atomic_write_text,
    check_model_path,
    read_model_text,
    state_from_json,
    state_to_json,
)
from .onnx_format import ensemble_spec, ensemble_to_onnx
from .refit import updated_trees
from .xgboost_format import state_from_xgboost_json, state_to_xgboost_json

__all__ = ["Booster", "samme_score_scale"]

#: Bytes of the dense float64 block of rows that prediction of sparse input makes at a
#: time (``n_rows_per_block = SPARSE_PREDICT_BLOCK_BYTES // (8 * n_features)``).
SPARSE_PREDICT_BLOCK_BYTES = 64 << 20

#: A file system path.
PathLike = Union[str, "os.PathLike[str]"]

#: Columns of :meth:`Booster.trees_to_dataframe` (XGBoost's, plus ``Count``).
TREES_TO_DATAFRAME_COLUMNS = (
    "Tree",
    "Node",
    "ID",
    "Feature",
    "Split",
    "Yes",
    "No",
    "Missing",
    "Gain",
    "Cover",
    "Count",
)
#: ``importance_type`` values of :meth:`Booster.feature_importance` (XGBoost's names, plus
#: LightGBM's ``'split'`` and Friedman's ``'relative_influence'``).
IMPORTANCE_TYPES = (
    "weight",
    "split",
    "gain",
    "total_gain",
    "relative_influence",
    "cover",
    "total_cover",
)


def samme_score_scale(tree_weights, n_outputs):
    """Divisor of the SAMME scores before the probability link.

    Parameters
    ----------
    tree_weights : sequence of float
        The weights ``c`` of the rounds used.
    n_outputs : int
        1 (two classes) or the number of classes ``K``.

    Returns
    -------
    float
        ``sum(c) * (K - 1)**2 / K`` with ``K = 2`` for one output (see
        gpuboost.boosting.adaboost), ``sum(c)`` summed exactly (``math.fsum``); 1.0 when
        no round is used.
    """
    total = math.fsum(float(w) for w in tree_weights)
    if total <= 0.0:
        return 1.0
    n_classes = 2 if n_outputs == 1 else n_outputs
    return total * ((n_classes - 1) * (n_classes - 1)) / n_classes


class Booster:
    """A gradient-boosted tree ensemble.

    Built by :func:`gpuboost.train` or :meth:`load_model`. Trees are stored round
    by round: round ``r`` holds trees ``r * T .. (r + 1) * T - 1`` where ``T =
    n_outputs * num_parallel_tree`` (:attr:`trees_per_round`), forest after forest
    (tree ``r * T + p * n_outputs + k`` is the ``p``-th tree of output ``k``), so tree
    ``i`` adds to output ``i % n_outputs``. Vector-leaf models (:attr:`vector_leaves`)
    have ``T = num_parallel_tree`` trees a round, each adding ``value[:, k]`` to every
    output ``k``.

    Attributes
    ----------
    params : dict
        Validated training parameters (model-relevant ones are saved).
    trees : list of Tree
    n_outputs : int
        1, or the number of classes.
    base_margin : ndarray of shape (n_outputs,), float64
        Initial raw prediction of every row.
    n_features : int
    feature_names : list of str
    best_iteration : int or None
        Round index of the best evaluation score (early stopping).
    best_score : float or None
    tree_weights : list of float or None
        AdaBoost models (``params['booster'] == 'adaboost'``): the weight of every
        round (gpuboost.boosting.adaboost); None for gradient boosting.
    weight_drop : list of float or None
        DART models (``params['booster'] == 'dart'``, gpuboost.boosting.dart): every
        tree's weight (XGBoost's ``weight_drop``); a tree adds its leaf value times its
        weight. None for the other families.
    round_params : list of dict
        Per round, the values of the parameters a training may change between rounds
        (:data:`gpuboost.params.PER_ROUND_PARAMS`: a learning-rate schedule, callbacks'
        :meth:`set_param`) that its trees were trained with.
    """

    def __init__(
        self,
        params,
        n_outputs,
        base_margin,
        n_features,
        feature_names,
        trees=None,
        best_iteration=None,
        best_score=None,
        attributes=None,
        tree_weights=None,
        categories=None,
        round_params=None,
        weight_drop=None,
    ):
        self.params = dict(params)
        self.n_outputs = int(n_outputs)
        self.base_margin = np.asarray(base_margin, dtype=np.float64).reshape(self.n_outputs)
        self.n_features = int(n_features)
        self.feature_names = list(feature_names)
        self.trees = list(trees or [])
        self.best_iteration = best_iteration
        self.best_score = best_score
        self.attributes = dict(attributes or {})
        self.tree_weights = None if tree_weights is None else [float(w) for w in tree_weights]
        self.weight_drop = None if weight_drop is None else [float(w) for w in weight_drop]
        #: Per feature, the category labels in code order (None: a numeric feature); None
        #: for a model without categorical features.
        self.categories = check_categories(categories, self.n_features)
        #: Each round's PER_ROUND_PARAMS values, or None: every round's are ``params``'.
        self._round_params = None if round_params is None else [dict(r) for r in round_params]
        self._objective = None

    # ---- basic facts --------------------------------------------------------
    @property
    def objective(self):
        """The objective object (built from ``params``)."""
        if self._objective is None:
            self._objective = get_objective(self.params["objective"], self.params)
        return self._objective

    @property
    def round_params(self):
        """Per round, the :data:`gpuboost.params.PER_ROUND_PARAMS` values its trees were
        trained with (list of dict; those of ``params`` for rounds trained before the
        model recorded them)."""
        if self._round_params is None:
            return [round_values(self.params) for _ in range(self.num_boosted_rounds())]
        return [dict(values) for values in self._round_params]

    def set_param(self, params: Union[str, Dict[str, Any]], value: Any = None) -> None:
        """Set parameters (XGBoost's ``Booster.set_param``): ``set_param("learning_rate",
        0.1)`` or ``set_param({...})``. Those a training may change between rounds
        (:data:`gpuboost.params.PER_ROUND_PARAMS`: a callback's schedule; the next rounds
        are trained with them and the model records them per round) and the runtime ones
        (``device``, ``nthread``, ``verbosity``).

        Raises
        ------
        ValueError
            A parameter that would change what the trained model means (train a new model
            instead), or a bad value.
        """
        given = {params: value} if isinstance(params, str) else dict(params)
        per_round = {k: v for k, v in given.items() if canonical_name(k) in PER_ROUND_PARAMS}
        runtime = {k: v for k, v in given.items() if k not in per_round}
        for name in runtime:
            if canonical_name(name) not in RUNTIME_ONLY:
                raise ValueError(
                    f"set_param({name!r}) would change what the model means; parameters "
                    f"that may change between rounds: {', '.join(PER_ROUND_PARAMS)}; at any "
                    f"time: {', '.join(sorted(RUNTIME_ONLY))}."
                )
        validated = validate_params(runtime)
        self.params.update({canonical_name(k): validated[canonical_name(k)] for k in runtime})
        self.params.update(checked_round_values(per_round))

    @property
    def vector_leaves(self):
        """Whether a round grows one tree for every output, its leaves holding a value
        per output (``multi_strategy='multi_output_tree'`` with several outputs;
        docs/DESIGN.md "Vector leaves")."""
        return self.n_outputs > 1 and self.params.get("multi_strategy") == "multi_output_tree"

    @property
    def trees_per_round(self):
        """Trees a round adds: ``n_outputs * num_parallel_tree`` (``num_parallel_tree``
        vector-leaf trees where :attr:`vector_leaves`)."""
        per_output = 1 if self.vector_leaves else self.n_outputs
        return per_output * self.params.get("num_parallel_tree", 1)

    def num_boosted_rounds(self) -> int:
        """Number of boosting rounds (trees / :attr:`trees_per_round`)."""
        return len(self.trees) // self.trees_per_round

    def num_features(self) -> int:
        """Number of features the model expects."""
        return self.n_features

    def __len__(self):
        return self.num_boosted_rounds()

    def __getitem__(self, rounds: Union[int, slice]) -> Booster:
        """A Booster of some rounds: ``booster[2:10]`` (rounds 2..9), ``booster[::2]``,
        ``booster[-1]`` (the last round alone).

        The base margin and parameters are kept, ``best_iteration`` dropped; predictions
        of ``booster[a:b]`` equal ``booster.predict(X, iteration_range=(a, b))``. The
        trees are shared with this Booster, not copied.

        Raises
        ------
        IndexError
            A round index out of range.
        ValueError
            A slice of no round.
        TypeError
            Neither an integer nor a slice.
        """
        n_rounds = self.num_boosted_rounds()
        if isinstance(rounds, slice):
            selected = range(*rounds.indices(n_rounds))
            if not selected:
                raise ValueError(
                    f"booster[{rounds.start}:{rounds.stop}:{rounds.step}] selects no round of "
                    f"the {n_rounds}."
                )
        elif isinstance(rounds, (int, np.integer)) and not isinstance(rounds, bool):
            index = int(rounds) + (n_rounds if rounds < 0 else 0)
            if not 0 <= index < n_rounds:
                raise IndexError(f"round {int(rounds)} is out of range: the model has {n_rounds}.")
            selected = [index]
        else:
            raise TypeError(f"A Booster is indexed by rounds (an int or a slice), got {rounds!r}.")
        k = self.trees_per_round
        indices = [i for r in selected for i in range(r * k, (r + 1) * k)]
        return Booster(
            self.params,
            self.n_outputs,
            self.base_margin,
            self.n_features,
            self.feature_names,
            trees=[self.trees[i] for i in indices],
            attributes=self.attributes,
            tree_weights=None
            if self.tree_weights is None
            else [self.tree_weights[r] for r in selected],
            categories=self.categories,
            round_params=None
            if self._round_params is None
            else [self._round_params[r] for r in selected],
            weight_drop=None
            if self.weight_drop is None
            else [self.weight_drop[i] for i in indices],
        )

    def _keep_rounds(self, n_rounds):
        """Drop every round from ``n_rounds`` on, in place (early stopping's
        ``save_best``)."""
        end = n_rounds * self.trees_per_round
        self.trees = self.trees[:end]
        if self.weight_drop is not None:
            self.weight_drop = self.weight_drop[:end]
        if self.tree_weights is not None:
            self.tree_weights = self.tree_weights[:n_rounds]
        if self._round_params is not None:
            self._round_params = self._round_params[:n_rounds]

    def __eq__(self, other):
        return isinstance(other, Booster) and self.to_json() == other.to_json()

    def copy(self) -> Booster:
        """A deep copy."""
        return Booster.from_json(self.to_json())

    # ---- prediction ---------------------------------------------------------
    def _check_features(self, X):
        """``X``'s raw features in the model's feature order, a Dataset's base margin, and
        the :class:`~gpuboost.data.device.DeviceFeatures` of device input (else None).

        Columns are matched by name when both ``X`` (a DataFrame, or a Dataset with
        feature names) and the model carry names; otherwise by position.
        """
        device = self._device_input(X)
        if device is not None:  # kept on its device (gpuboost.data.device)
            data = device.array
            names = X.feature_names if isinstance(X, Dataset) and X.has_feature_names else None
            names = device.names if names is None else names
        elif isinstance(X, Dataset):
            data, names = X.features, (X.feature_names if X.has_feature_names else None)
            if X.categories != self.categories:
                data = self._recode_dataset(X, data, names)
        else:
            X = self._encode_categories(X)
            data, names = convert_features(X, min_rows=0, keep_float32=True)
        data = select_features(data, names, self.feature_names, "X")
        if data.shape[1] != self.n_features:
            raise ValueError(
                f"X has {data.shape[1]} features, but the model was trained with "
                f"{self.n_features} features."
            )
        return data, (X.get_base_margin() if isinstance(X, Dataset) else None), device

    def _device_input(self, X):
        """:class:`~gpuboost.data.device.DeviceFeatures` of device input (an array, or a
        Dataset of one), else None.

        Raises
        ------
        ValueError
            The model has categorical features (device input carries none).
        """
        if not isinstance(X, Dataset):  # a cuDF frame's categories re-coded by label
            return device_features(X, AUTO, self._categories_of(frame_column_names(X)))
        device = X.device_features
        if device is not None and X.categories != self.categories:
            raise ValueError(
                "This Dataset's categories differ from the model's; build it with "
                "reference= the training Dataset (device input is re-coded by label only "
                "from a cuDF DataFrame)."
            )
        return device

    def _categories_of(self, names):
        """The model's categories for columns ``names`` (matched by name when the model
        has feature names), or None for a model without categorical features."""
        if self.categories is None:
            return None
        if names is not None and not has_default_names(self.feature_names):
            by_name = dict(zip(self.feature_names, self.categories))
            return [by_name.get(str(name)) for name in names]
        return self.categories

    def _sparse_rows(self, X):
        """A sparse ``X`` as ``(rows, absent_missing, base_margin)``: ``rows`` a canonical
        scipy CSR matrix in the model's feature order, ``absent_missing`` whether an entry
        it does not store is missing (else 0.0), a Dataset's base margin (or None); None
        for dense input. A scipy.sparse matrix: absent entries are 0.0; a sparse Dataset:
        its ``sparse_absent``; a pandas DataFrame with sparse columns: its fill values
        (:func:`~gpuboost.data.convert.sparse_frame_columns`). A model with categorical
        features reads every input the dense way (it re-codes columns by label)."""
        if self.categories is not None:
            return None
        names, row_margin = None, None
        if isinstance(X, Dataset):
            if X.sparse_columns is None:
                return None
            rows, absent_missing = X.sparse_columns.tocsr(), X.sparse_absent == "missing"
            names = X.feature_names if X.has_feature_names else None
            row_margin = X.get_base_margin()
        elif is_sparse_matrix(X):
            check_numeric_dtype("X", X)
            rows, absent_missing = X.tocsr(), False
            if not rows.has_canonical_format:
                rows = rows.copy()
                rows.sum_duplicates()  # also sorts each row's columns
        else:
            frame = sparse_frame_columns(X, min_rows=0)
            if frame is None:
                return None
            columns, names, absent_missing = frame
            rows = columns.tocsr()
        if names is not None and not has_default_names(self.feature_names):
            if list(names) != list(self.feature_names):
                rows = rows[:, feature_positions(names, self.feature_names, "X")]
        if rows.shape[1] != self.n_features:
            raise ValueError(
                f"X has {rows.shape[1]} features, but the model was trained with "
                f"{self.n_features} features."
            )
        if rows.dtype not in (np.float32, np.float64):
            rows = rows.astype(np.float64)
        rows.sort_indices()
        return rows, absent_missing, row_margin

    def _encode_categories(self, X):
        """``X`` with its categorical columns re-coded by label against the model's
        categories (columns matched by name for DataFrames); unseen categories become
        missing. A model without categorical features refuses category columns."""
        if self.categories is None:
            return X  # category columns are refused by convert_features
        return encode_features(X, categories=self._categories_of(frame_column_names(X)))[0]

    def _recode_dataset(self, dataset, data, names):
        """A Dataset's codes re-coded from its own categories to the model's."""
        own = dataset.categories or [None] * dataset.n_features
        model = self.categories or [None] * self.n_features
        if names is not None and not has_default_names(self.feature_names):
            by_name = dict(zip(self.feature_names, model))
            model = [by_name.get(name) for name in names]
        if len(model) != len(own):
            return data
        return recode_categories(data, own, model)

    def _tree_range(self, iteration_range):
        n_rounds = self.num_boosted_rounds()
        if iteration_range is None or tuple(iteration_range) == (0, 0):
            end = n_rounds if self.best_iteration is None else self.best_iteration + 1
            begin = 0
        else:
            begin, end = (int(v) for v in iteration_range)
        if not 0 <= begin <= end <= n_rounds:
            raise ValueError(
                f"iteration_range {value_repr(iteration_range)} is out of bounds: the model has "
                f"{n_rounds} rounds."
            )
        return begin * self.trees_per_round, end * self.trees_per_round

    def _prediction_trees(self, first, last, dropped=()):
        """``(trees, outputs)``: trees ``first:last`` as prediction adds them, but those
        in ``dropped`` (DART's dropouts), and the output each adds to. DART's
        (``weight_drop``) have every value times the tree's weight (the product rounded
        once, as XGBoost's ``weight * leaf``); the others are the model's own."""
        kept = (
            [i for i in range(first, last) if i not in dropped] if dropped else range(first, last)
        )
        if self.weight_drop is None:
            trees = [self.trees[i] for i in kept]
        else:
            trees = [
                self.trees[i].replaced(value=self.trees[i].value * self.weight_drop[i])
                for i in kept
            ]
        if not self.vector_leaves:
            return trees, [i % self.n_outputs for i in kept]
        # A vector-leaf tree adds to every output: as the trees of its outputs, in
        # output order (each output's margins get the same additions as in training).
        outputs = list(range(self.n_outputs))
        return [tree.output_tree(t) for tree in trees for t in outputs], outputs * len(trees)

    def _predict_backend(self, device_input=None):
        """The backend of a prediction: the model's device ('auto': the CPU); for device
        input (``device_input``, DeviceFeatures) the input's own device, whatever the
        model's (the same bytes, and no copy of the input)."""
        device = self.params.get("device", "cpu")
        if device_input is not None:
            return get_backend(training_device("cuda" if device == "cpu" else device, device_input))
        return get_backend(device if device != "auto" else "cpu")

    def predict(
        self,
        X: Union[ArrayLike, Dataset],
        output_margin: bool = False,
        pred_leaf: bool = False,
        iteration_range: Optional[Tuple[int, int]] = None,
        pred_contribs: bool = False,
        pred_interactions: bool = False,
        training: bool = False,
    ) -> np.ndarray:
        """Predict.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features) or Dataset
            Raw features; NaN is missing. A NumPy array, a DataFrame (pandas, polars,
            pyarrow; see :class:`~gpuboost.Dataset`) or a Dataset. When both ``X`` (a
            DataFrame, or a Dataset with feature names) and the model carry feature
            names, columns are matched by name: reordered columns are put in the
            model's order, missing or unknown names raise ValueError. ``n_rows`` may
            be 0 (an empty result).
        output_margin : bool
            Return raw margins instead of transformed predictions.
        pred_leaf : bool
            Return the leaf index of every row in every tree, shape (n_rows, n_trees).
        iteration_range : (int, int), optional
            Rounds ``[begin, end)`` to use. Default: up to the best iteration after
            early stopping, else all rounds.
        pred_contribs : bool
            Return the SHAP values (exact TreeSHAP, docs/DESIGN.md "SHAP") of the raw
            margins: shape (n_rows, n_features + 1), or (n_rows, n_outputs,
            n_features + 1) for several outputs; the last column is the bias (the
            expected margin: base margin plus the trees' cover-weighted means), and
            each row sums to the margin.
        pred_interactions : bool
            Return the SHAP interaction values, shape (n_rows, n_features + 1,
            n_features + 1) (an output axis after the rows for several outputs),
            summing over the last axis to the contributions (XGBoost's definition).
        training : bool
            Predict as a training round sees the model (XGBoost's): a DART model
            (``booster='dart'``) without the trees its next round would drop
            (:func:`gpuboost.model.dropout.dropped_trees` of round
            :meth:`num_boosted_rounds`; the same set on every call). No effect on the
            other families.

        Returns
        -------
        ndarray
            (n_rows,) for single-output models, (n_rows, n_outputs) otherwise
            (``multi:softmax`` returns class indices of shape (n_rows,)). For AdaBoost
            models (``tree_weights`` set) the margins are the SAMME scores, and the
            predictions the link of the scores divided by
            :func:`samme_score_scale` (scikit-learn's probabilities).
        """
        kinds = (output_margin, pred_leaf, pred_contribs, pred_interactions)
        sparse = self._sparse_rows(X)
        first, last = self._tree_range(iteration_range)
        dropped = ()
        if training and self.weight_drop is not None:
            dropped = frozenset(
                dropped_trees(self.weight_drop, self.params, self.num_boosted_rounds())
            )
        trees, outputs = self._prediction_trees(first, last, dropped)
        if sparse is not None:
            rows, absent_missing, row_margin = sparse
            # No rows: nothing to launch on a device; the empty result has the usual shape.
            backend = self._predict_backend() if rows.shape[0] else get_backend("cpu")
            if pred_leaf or pred_contribs or pred_interactions or not backend.predicts_sparse_rows:
                # Dense blocks of rows, one at a time, never the whole matrix dense (but
                # at once with the rows' own base margins).
                n_block_rows = max(1, SPARSE_PREDICT_BLOCK_BYTES // (8 * self.n_features))
                if row_margin is not None or rows.shape[0] <= n_block_rows:
                    n_block_rows = max(1, rows.shape[0])
                parts = [
                    self._predict_dense(
                        densify(rows[start : start + n_block_rows], absent_missing),
                        row_margin,
                        first,
                        last,
                        kinds,
                        dropped,
                    )
                    for start in range(0, max(1, rows.shape[0]), n_block_rows)
                ]
                return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
            margins = self._start_margins(backend, rows.shape[0], row_margin)
            absent = np.nan if absent_missing else 0.0
            margins = backend.predict_forest_sparse(rows, absent, trees, outputs, margins)
            return self._margins_output(backend, margins, first, last, output_margin)
        data, row_margin, device = self._check_features(X)
        return self._predict_dense(data, row_margin, first, last, kinds, dropped, device)

    def _start_margins(self, backend, n_rows, row_margin):
        """The margins prediction starts from (backend array (n_rows, n_outputs)): the
        rows' own base margins, else the model's."""
        if row_margin is not None:
            margins = np.array(row_margin, dtype=np.float64).reshape(n_rows, self.n_outputs)
        else:
            margins = np.broadcast_to(self.base_margin, (n_rows, self.n_outputs)).copy()
        return backend.to_device(margins)

    def _predict_dense(self, data, row_margin, first, last, kinds, dropped, device_input=None):
        """:meth:`predict` of dense features in the model's order (trees ``first:last``
        but ``dropped``); ``kinds``: its ``(output_margin, pred_leaf, pred_contribs,
        pred_interactions)``. Device input (``device_input``) is predicted on its device,
        into device arrays."""
        output_margin, pred_leaf, pred_contribs, pred_interactions = kinds
        on_device = device_input is not None
        # No rows: nothing to launch on a device; the empty result has the usual shape.
        if on_device:
            backend = self._predict_backend(device_input)
        else:
            backend = self._predict_backend() if data.shape[0] else get_backend("cpu")
        features = backend.prepare_features(data)
        if pred_leaf:  # every tree's leaf, whatever its weight
            leaves = backend.predict_forest_leaves(features, self.trees[first:last])
            return leaves if on_device else backend.to_host(leaves)
        trees, outputs = self._prediction_trees(first, last, dropped)
        if pred_contribs or pred_interactions:
            return self._predict_shap(
                backend, features, trees, outputs, row_margin, pred_interactions, on_device
            )
        margins = self._start_margins(backend, data.shape[0], row_margin)
        margins = backend.predict_forest_raw(features, trees, outputs, margins)
        return self._margins_output(backend, margins, first, last, output_margin, on_device)

    def _margins_output(self, backend, margins, first, last, output_margin, on_device=False):
        """What :meth:`predict` returns for the margins (n_rows, n_outputs) of trees
        ``first:last``: the margins, or the objective's transform of them (device arrays
        ``on_device``, else host arrays)."""
        if output_margin:
            result = margins
        else:
            # On the margins' device (cuda:N): the transform's arrays are made there.
            with backend.guard("transforming the margins into predictions"):
                if self.tree_weights is not None:  # AdaBoost: normalized SAMME scores
                    margins = margins / samme_score_scale(
                        self.tree_weights[
                            first // self.trees_per_round : last // self.trees_per_round
                        ],
                        self.n_outputs,
                    )
                result = self.objective.output(
                    backend.xp, margins if self.n_outputs > 1 else margins[:, 0]
                )
            return result if on_device else backend.to_host(result)
        result = result if on_device else backend.to_host(result)
        return result[:, 0] if self.n_outputs == 1 else result

    def margins_to_continue(self, features):
        """The margins of all this model's rounds on a training Dataset's features, where
        training continues from it (``init_model``).

        ``features`` (its ``features_for(backend)``, in this model's feature order) hold
        category *codes* in the categorical columns, not labels: :meth:`predict` would
        re-code them by label (every code unseen, so missing), hence the dense prediction
        of the codes as they are for a model with categorical features.

        Returns
        -------
        ndarray of shape (n_rows, n_outputs), float64 (host)
        """
        if self.categories is None:
            margins = self.predict(
                features, output_margin=True, iteration_range=(0, self.num_boosted_rounds())
            )
        else:  # host codes: a model with categorical features takes no device input
            kinds = (True, False, False, False)
            margins = self._predict_dense(features, None, 0, len(self.trees), kinds, ())
        n_rows = features.shape[0]
        return to_numpy(margins).astype(np.float64).reshape(n_rows, self.n_outputs)

    def inplace_predict(self, X: Union[ArrayLike, Dataset], **kwargs: Any) -> np.ndarray:
        """Alias of :meth:`predict` (XGBoost compatibility)."""
        return self.predict(X, **kwargs)

    # ---- refitting ------------------------------------------------------------
    def refit(
        self,
        data: Union[ArrayLike, Dataset],
        label: Optional[ArrayLike] = None,
        decay_rate: float = 0.9,
        weight: Optional[ArrayLike] = None,
    ) -> Booster:
        """A copy whose leaf values are refitted on new data (LightGBM's ``refit``): the
        same trees, each leaf ``decay_rate * old + (1 - decay_rate) * new``, the new value
        the training's leaf value of the new rows' gradients at the refitted margins
        (:mod:`gpuboost.model.refit`).

        Parameters
        ----------
        data : array-like of shape (n_rows, n_features) or Dataset
            New rows (a Dataset brings its label, weight, queries and base margin).
        label : array-like of shape (n_rows,), optional
            Their labels (with a Dataset: its own when None).
        decay_rate : float, default=0.9
            In [0, 1]; 1 keeps the model, 0 replaces every reached leaf.
        weight : array-like of shape (n_rows,), optional

        Returns
        -------
        Booster
            ``best_iteration`` and attributes kept.

        Raises
        ------
        ValueError
            No labels; ``decay_rate`` outside [0, 1]; an AdaBoost model, an objective
            whose leaves are quantiles (``reg:absoluteerror``, ``reg:quantile``), or
            monotone constraints.
        """
        if not isinstance(data, Dataset):
            data = Dataset(self._encode_categories(data), label=label, weight=weight)
        elif label is not None or weight is not None:
            data = data.subset(np.arange(data.n_rows))
            if label is not None:
                data.set_label(label)
            if weight is not None:
                data.set_weight(weight)
        return self._updated(data, "refit", decay_rate)

    def _updated(self, data, mode, decay_rate=0.0, rounds=None, backend=None):
        """A copy whose trees of the first ``rounds`` rounds (default all) are updated on
        the Dataset ``data`` (:func:`gpuboost.model.refit.updated_trees`: ``mode``
        'refit', 'refresh' or 'refresh_stats'), on ``backend`` (default: the one that
        predicts ``data``). :meth:`refit` and the update process
        (:mod:`gpuboost.boosting.update`) call it."""
        copy = self.copy()
        if not self.trees:
            return copy
        features, row_margin, device = self._check_features(data)
        if backend is None:  # a training's backend comes configured
            backend = self._predict_backend(device)
            backend.configure(self.params)
        margins = backend.to_host(self._start_margins(backend, data.n_rows, row_margin))
        with backend.guard("updating the trees"):
            copy.trees = updated_trees(
                self,
                backend,
                backend.prepare_features(features),
                data,
                margins,
                mode,
                decay_rate,
                rounds,
            )
        return copy

    # ---- introspection ------------------------------------------------------
    def feature_importance(
        self, importance_type: str = "gain", iteration_range: Optional[Tuple[int, int]] = None
    ) -> np.ndarray:
        """Importance of every feature, shape (n_features,) float64.

        Parameters
        ----------
        importance_type : str, default='gain'
            As in XGBoost: 'weight' (LightGBM's 'split'): the number of splits on the
            feature. 'gain': the average gain of those splits (total gain / number of
            splits). 'total_gain' (LightGBM's 'gain'): the sum of their gains. 'cover' /
            'total_cover': the mean / total hessian sum of the nodes split on the
            feature. 'relative_influence': Friedman's relative influence (Friedman 2001,
            eq. 44-45, the squared influence averaged over trees): total gain / number
            of trees. Features without a split have 0.
        iteration_range : (int, int), optional
            Rounds ``[begin, end)`` counted; default as :meth:`predict`.
        """
        if importance_type not in IMPORTANCE_TYPES:
            raise ValueError(
                f"importance_type must be one of {list(IMPORTANCE_TYPES)}, got {importance_type!r}."
            )
        first, last = self._tree_range(iteration_range)
        trees = self.trees[first:last]
        weight = np.zeros(self.n_features)
        total_gain = np.zeros(self.n_features)
        total_cover = np.zeros(self.n_features)
        for tree in trees:
            internal = tree.feature >= 0
            features = tree.feature[internal]
            weight += np.bincount(features, minlength=self.n_features)
            total_gain += np.bincount(
                features, weights=tree.gain[internal], minlength=self.n_features
            )
            total_cover += np.bincount(
                features, weights=tree.cover[internal], minlength=self.n_features
            )
        if importance_type in ("weight", "split"):
            return weight
        if importance_type == "total_gain":
            return total_gain
        if importance_type == "relative_influence":
            return total_gain / max(len(trees), 1)
        if importance_type == "total_cover":
            return total_cover
        total = total_gain if importance_type == "gain" else total_cover
        return np.where(weight > 0, total / np.maximum(weight, 1), 0.0)

    def get_score(self, importance_type: str = "weight") -> Dict[str, float]:
        """``{feature_name: importance}`` for features used at least once (XGBoost style;
        ``importance_type`` as in :meth:`feature_importance`)."""
        values = self.feature_importance(importance_type)
        used = self.feature_importance("weight") > 0
        return {name: float(v) for name, v, u in zip(self.feature_names, values, used) if u}

    def dump_model(self, with_stats: bool = True, format: str = "text") -> List[str]:
        """Every tree as readable text or JSON (a list of str, one per tree).

        Parameters
        ----------
        with_stats : bool, default=True
            Include gain, cover and count.
        format : {'text', 'json'}, default='text'
            'text': one node per line, indented by depth
            (``id:[name<=threshold] yes=..,no=..,missing=..`` and ``id:leaf=value``);
            'json': XGBoost's JSON dump of nested nodes (see ``Tree.dump_dict``;
            ``decision_type`` ``'<='`` says a split sends ``x <= split_condition`` to
            ``yes``). Trees are in model order: tree ``i`` adds to output
            ``i % n_outputs``.
        """
        if format == "text":
            return [
                tree.dump(self.feature_names, with_stats, self.categories) for tree in self.trees
            ]
        if format == "json":
            return [
                json.dumps(tree.dump_dict(self.feature_names, with_stats, self.categories))
                for tree in self.trees
            ]
        raise ValueError(f"format must be 'text' or 'json', got {format!r}.")

    def get_dump(self, with_stats: bool = True, dump_format: str = "text") -> List[str]:
        """:meth:`dump_model` under XGBoost's names."""
        return self.dump_model(with_stats, dump_format)

    def trees_to_dataframe(self):
        """One row per node of every tree, a pandas DataFrame (XGBoost's columns).

        Columns: ``Tree``, ``Node``, ``ID`` (``'<tree>-<node>'``), ``Feature`` (the
        name, ``'Leaf'`` for leaves), ``Split`` (the threshold: ``x <= Split`` goes to
        ``Yes``; NaN for leaves), ``Yes``, ``No``, ``Missing`` (node IDs; NaN for
        leaves), ``Gain`` (the split's gain; for a leaf its value, as XGBoost; a vector
        leaf's list of values), ``Cover``
        (hessian sum) and ``Count`` (rows). Sorted by tree, then node. A model with
        categorical features has one more column, ``Category`` (XGBoost's name): the
        labels going to ``Yes`` at a categorical split (``Split`` is then NaN), None
        elsewhere.

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        try:
            import pandas  # optional: only this method needs it
        except ImportError:
            raise ImportError("trees_to_dataframe needs pandas: pip install pandas") from None
        columns = {name: [] for name in TREES_TO_DATAFRAME_COLUMNS}
        if self.categories is not None:
            columns["Category"] = []
        for index, tree in enumerate(self.trees):
            categorical = tree.is_categorical
            for node in range(tree.n_nodes):
                leaf = tree.feature[node] < 0
                left, right = int(tree.left_child[node]), int(tree.right_child[node])
                missing = left if tree.default_left[node] else right
                columns["Tree"].append(index)
                columns["Node"].append(node)
                columns["ID"].append(f"{index}-{node}")
                columns["Feature"].append(
                    "Leaf" if leaf else self.feature_names[int(tree.feature[node])]
                )
                if "Category" in columns:
                    labels = None
                    if categorical[node]:
                        names = self.categories[int(tree.feature[node])]
                        labels = [names[c] for c in tree.category_set(node) if c < len(names)]
                    columns["Category"].append(labels)
                columns["Split"].append(
                    np.nan if leaf or categorical[node] else float(tree.threshold[node])
                )
                for column, child in (("Yes", left), ("No", right), ("Missing", missing)):
                    columns[column].append(None if leaf else f"{index}-{child}")
                columns["Gain"].append(tree.leaf_value(node) if leaf else float(tree.gain[node]))
                columns["Cover"].append(float(tree.cover[node]))
                columns["Count"].append(int(tree.count[node]))
        return pandas.DataFrame(columns)

    def dump_text(self, path: Optional[PathLike] = None, with_stats: bool = True) -> str:
        """All trees as one text (``booster[i]:`` headers); written to ``path`` if given."""
        text = "".join(
            f"booster[{i}]:\n{dump}\n" for i, dump in enumerate(self.dump_model(with_stats))
        )
        if path is not None:
            atomic_write_text(path, text)
        return text

    # ---- persistence --------------------------------------------------------
    def _state(self):
        """The model state gpuboost.model.model_io serializes."""
        return {
            "params": self.params,
            "n_outputs": self.n_outputs,
            "base_margin": self.base_margin,
            "n_features": self.n_features,
            "feature_names": self.feature_names,
            "trees": self.trees,
            "best_iteration": self.best_iteration,
            "best_score": self.best_score,
            "attributes": self.attributes,
            "tree_weights": self.tree_weights,
            "categories": self.categories,
            "round_params": self._round_params,
            "weight_drop": self.weight_drop,
        }

    def to_json(self) -> str:
        """The model file's text (versioned JSON, deterministic; gpuboost.model.model_io)."""
        return state_to_json(self._state())

    @classmethod
    def from_json(cls, text: str) -> Booster:
        """A Booster from a model file's text (validated; never executes code)."""
        return cls(**state_from_json(text))

    def save_model(self, path: PathLike) -> None:
        """Write the model as versioned JSON, atomically (see gpuboost.model.model_io).

        Raises
        ------
        ValueError
            ``path`` ends in ``.ubj``: XGBoost writes UBJSON under that name, gpuboost
            only JSON, so such a name is refused rather than holding JSON.
        """
        check_model_path(path)
        atomic_write_text(path, self.to_json())

    @classmethod
    def load_model(cls, path: PathLike) -> Booster:
        """Read a model written by :meth:`save_model` (validated; never executes code)."""
        return cls.from_json(read_model_text(path))

    def save_raw(self) -> bytes:
        """The model JSON as bytes."""
        return self.to_json().encode("utf-8")

    def __getstate__(self):
        return {"model_json": self.to_json()}

    def __setstate__(self, state):
        other = Booster.from_json(state["model_json"])
        self.__dict__.update(other.__dict__)

    def set_attr(self, **kwargs: Any) -> None:
        """Store string attributes in the model."""
        for key, value in kwargs.items():
            if value is None:
                self.attributes.pop(key, None)
            else:
                self.attributes[key] = str(value)

    def attr(self, key: str) -> Optional[str]:
        """A stored attribute or None."""
        return self.attributes.get(key)

    def append_round(self, trees, values=None):
        """Append one round's trees (:attr:`trees_per_round` of them, in their order),
        trained with the :data:`gpuboost.params.PER_ROUND_PARAMS` ``values`` (default:
        ``params``'). A DART model's weights are the learner's to append."""
        if len(trees) != self.trees_per_round:
            raise ValueError(
                "a round adds exactly num_parallel_tree trees per output "
                f"({self.trees_per_round}), got {len(trees)}"
            )
        if values is not None or self._round_params is not None:
            if self._round_params is None:  # every earlier round's, recorded once
                self._round_params = self.round_params
            self._round_params.append(dict(round_values(self.params) if values is None else values))
        self.trees.extend(trees)

    def __repr__(self):
        return (
            f"Booster(objective={self.params.get('objective')!r}, rounds="
            f"{self.num_boosted_rounds()}, n_features={self.n_features})"
        )

    # ---- explanation ----------------------------------------------------------
    def _predict_shap(
        self, backend, features, trees, outputs, row_margin, interactions, on_device=False
    ):
        """SHAP values (``interactions``: interaction values) of ``trees`` (adding to
        ``outputs``, :meth:`_prediction_trees`), with the base margin (or the rows' own)
        in the bias (device arrays ``on_device``)."""
        backend.configure(self.params)  # the NumPy backend's threads (nthread)
        if interactions:
            values = backend.predict_interactions(features, trees, outputs, self.n_outputs)
        else:
            values = backend.predict_contributions(features, trees, outputs, self.n_outputs)
        if not on_device:
            values = backend.to_host(values)
        n_rows = values.shape[0]
        if row_margin is not None:
            base = np.asarray(row_margin, dtype=np.float64).reshape(n_rows, self.n_outputs)
        else:
            base = np.broadcast_to(self.base_margin, (n_rows, self.n_outputs)).copy()
        with backend.guard("adding the base margin to the SHAP values"):
            bias = values[:, :, -1, -1] if interactions else values[:, :, -1]
            bias += backend.xp.asarray(base) if on_device else base
        return values[:, 0] if self.n_outputs == 1 else values

    # ---- XGBoost's format -----------------------------------------------------
    def export_xgboost(self, path: Optional[PathLike] = None) -> str:
        """The model in XGBoost's JSON format; written to ``path`` (atomically) if given.

        The file loads in ``xgboost.Booster(model_file=path)``, Treelite and
        ``shap.TreeExplainer``, with the same leaves for every float32 input and
        margins equal to float32 rounding (thresholds converted exactly:
        gpuboost.model.xgboost_format). Every round is exported.

        Raises
        ------
        ValueError
            AdaBoost models and objectives XGBoost lacks (``binary:exponential``,
            custom objectives), with what to do instead.
        """
        text = state_to_xgboost_json(self._state())
        if path is not None:
            atomic_write_text(path, text)
        return text

    def _onnx_spec(self, labels=None):
        """The ONNX operator of every round (gpuboost.model.onnx_format.ensemble_spec;
        ``labels``: a classifier's class labels)."""
        trees, outputs = self._prediction_trees(0, len(self.trees))
        divisor = 1.0
        if self.tree_weights is not None:  # AdaBoost: the SAMME scores' divisor
            divisor = samme_score_scale(self.tree_weights, self.n_outputs)
        return ensemble_spec(
            self.params["objective"],
            self.n_outputs,
            self.base_margin,
            trees,
            outputs,
            divisor,
            labels,
            n_targets=self.objective.n_targets,
        )

    def to_onnx(self, path: Optional[PathLike] = None, class_labels: Optional[Any] = None) -> bytes:
        """The model as ONNX (an ``ai.onnx.ml`` tree ensemble; gpuboost.model.onnx_format),
        for ONNX Runtime, Triton and other ONNX servers; written to ``path`` (atomically)
        if given. Needs the ``onnx`` package.

        The graph takes float32 features (NaN missing) and gives what :meth:`predict`
        gives, to float32 rounding: regression and ranking margins, ``exp`` of them for
        the log-link objectives, the rearranged levels of several quantiles or
        expectiles, and for classifiers ``label`` and ``probabilities`` (binary: two
        columns; the positive class's is :meth:`predict`'s; ``label`` the class index, or
        ``class_labels[index]`` when given: integers, else strings). Every round is
        exported (DART with its weights, AdaBoost with its SAMME scale).

        Raises
        ------
        ImportError
            onnx is not installed.
        ValueError
            Categorical splits or a custom objective, with the reason.
        """
        data = ensemble_to_onnx(self._onnx_spec(class_labels), self.n_features)
        if path is not None:
            atomic_write_bytes(path, data)
        return data

    @classmethod
    def from_xgboost(cls, source: Any) -> Booster:
        """A Booster from an XGBoost model: an ``xgboost.Booster`` (or an XGBoost
        scikit-learn estimator), the path of its JSON model file, or the JSON text.

        Predictions equal XGBoost's on float32 inputs (gpuboost.model.xgboost_format);
        ``predict(pred_contribs=True)`` and the CUDA backend then work on it.
        """
        if hasattr(source, "get_booster"):  # xgboost.XGBModel
            source = source.get_booster()
        if hasattr(source, "save_raw"):  # xgboost.Booster
            text = bytes(source.save_raw(raw_format="json")).decode("utf-8")
        elif isinstance(source, (bytes, bytearray)):
            text = bytes(source).decode("utf-8")
        elif isinstance(source, str) and source.lstrip().startswith("{"):
            text = source
        else:
            text = read_model_text(source)
        return cls(**state_from_xgboost_json(text))

    # ---- split values -----------------------------------------------------------
    def get_split_value_histogram(
        self, feature: Union[int, str], bins: Optional[int] = None, as_pandas: bool = True
    ) -> Any:
        """Histogram of the thresholds of the splits on one feature (XGBoost's method).

        Parameters
        ----------
        feature : int or str
            Feature index or name.
        bins : int, optional
            Number of equal-width bins, at most the number of distinct thresholds
            (default: that number, XGBoost's rule).
        as_pandas : bool
            Return a pandas DataFrame when pandas is installed.

        Returns
        -------
        DataFrame with columns ``SplitValue``, ``Count``, or ndarray of shape (n, 2)
            The upper edge of every non-empty bin and the number of splits in it.
            Thresholds are gpuboost's (``x <= t`` goes left; XGBoost reports its
            ``x < t'``, see gpuboost.model.xgboost_format). Every round is counted.
        """
        if isinstance(feature, str):
            if feature not in self.feature_names:
                raise ValueError(
                    f"Unknown feature {feature!r}; the model's features are {self.feature_names}."
                )
            index = self.feature_names.index(feature)
        else:
            index = int(feature)
            if not 0 <= index < self.n_features:
                raise ValueError(f"feature {index} is out of range [0, {self.n_features}).")
        if self.categories is not None and self.categories[index] is not None:
            raise ValueError(
                f"Feature {self.feature_names[index]!r} is categorical: its splits are "
                f"category sets, not values (see trees_to_dataframe()['Category'])."
            )
        values = np.concatenate(
            [tree.threshold[tree.feature == index] for tree in self.trees] or [np.zeros(0)]
        )
        n_distinct = len(np.unique(values))
        n_bins = max(min(n_distinct, n_distinct if bins is None else int(bins)), 1)
        counts, edges = np.histogram(values, bins=n_bins)
        table = np.column_stack((edges[1:], counts))
        table = table[table[:, 1] > 0]
        if as_pandas:
            try:
                import pandas
            except ImportError:
                return table
            return pandas.DataFrame(table, columns=["SplitValue", "Count"])
        return table
