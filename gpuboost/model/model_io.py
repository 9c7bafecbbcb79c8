"""The model file: versioned JSON <-> a plain model state, validated on load.

This module knows the format and nothing of the Booster: :func:`state_to_json` takes a
*state* (a dict of the Booster's constructor arguments: ``params``, ``n_outputs``,
``n_features``, ``feature_names``, ``base_margin``, ``trees``, ``best_iteration``,
``best_score``, ``attributes``, ``tree_weights``) and :func:`state_from_json` returns one;
:class:`gpuboost.model.booster.Booster` builds itself from it. Files are written
atomically (:func:`atomic_write_text`).

Format (version 1)::

    {
      "format": "gpuboost-model",
      "version": 1,
      "learner": {
        "params": {...},                 # model-relevant training parameters
        "n_outputs": K, "n_features": F, "feature_names": [...],
        "base_margin": [K floats],
        "best_iteration": int | null, "best_score": float | null,
        "attributes": {str: str},
        "tree_weights": [floats]         # only when params "booster" is "adaboost":
      },                                 # the weight of every round (gpuboost.boosting.adaboost)
      "trees": [ {"feature": [...], "threshold_bin": [...], "threshold": [...],
                  "default_left": [0/1...], "left_child": [...], "right_child": [...],
                  "value": [...], "gain": [...], "cover": [...], "count": [...]}, ... ]
    }

Version 2 (written only by models with categorical features, docs/DESIGN.md
"Categorical features") adds ``learner.categories`` (per feature: null, or the list of
category labels, strings or numbers, in code order) and, in trees with categorical
splits, ``cat_offsets`` (``n_nodes + 1`` integers from 0, non-decreasing) and
``cat_bits`` (uint32 words): validated so that only internal nodes on categorical
features have words, exactly ``ceil(n_categories / 32)`` of them with at least one bit
and no bit at or above ``n_categories``, and every split on a categorical feature is a
categorical one. Version 1 files load as before.

Version 3 (written only by models whose rounds were trained with different per-round
parameters: a learning-rate schedule, callbacks' ``Booster.set_param``) adds
``learner.round_params``: one object per round holding the
:data:`gpuboost.params.PER_ROUND_PARAMS` whose values in that round differ from
``params`` (at least one round's differs); validated like ``params``. ``categories``
may be present in it as in version 2. Versions 1 and 2 load as before.

Version 4 (written only by forests and DART: params ``num_parallel_tree`` above 1 or
``booster`` 'dart') stores a round's ``n_outputs * num_parallel_tree`` trees forest after
forest (``Booster``), and for DART adds ``learner.weight_drop``: every tree's weight,
positive and finite (XGBoost's). ``categories`` and ``round_params`` may be present in
it as in versions 2 and 3. Versions 1 to 3 load as before.

Version 5 (written only by models of several quantile or expectile levels: params
``quantile_alpha`` or ``expectile_alpha`` a list, one output per level) allows what
versions 2 to 4 add. Versions 1 to 4 load as before.

Version 6 (written only by models of several targets or of vector leaves: params
``num_target`` above 1, or ``multi_strategy`` 'multi_output_tree'; docs/DESIGN.md
"Vector leaves") allows what versions 2 to 5 add; a vector-leaf model (``multi_strategy``
'multi_output_tree' and ``n_outputs`` above 1) stores ``num_parallel_tree`` trees a round,
and each tree's ``value`` as one list of ``n_outputs`` finite numbers per node. Versions 1
to 5 load as before.

Floats are written with Python's shortest round-trip repr, so save -> load is
exact and the same model always gives the same bytes. Loading uses only
``json.loads`` and explicit validation (never pickle, never eval): every tree
array has one entry per node, children are in range and form a tree rooted at
node 0 (each node reached once, no cycles), features are below ``n_features``,
thresholds and values are finite; no object names a key twice, no key is unknown
and every key the saver writes is present (``params`` must name the objective).
Anything else raises ``ValueError``.
"""

import json
import math
import os
import re
import secrets
import stat
import time

import numpy as np

from ..core.categorical import bitset_words
from ..data.categorical import check_categories
from ..objectives import get_objective
from ..params import (
    PARAMETERS,
    PER_ROUND_PARAMS,
    checked_round_values,
    model_params,
    round_values,
    validate_file_params,
)
from ..tree.tree import CATEGORICAL_ARRAYS, TREE_ARRAYS, Tree

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "state_to_json",
    "atomic_write_bytes",
    "state_from_json",
    "read_model_text",
    "atomic_write_text",
    "check_model_path",
    "validate_tree_dict",
]

#: Suffix of XGBoost's binary JSON (UBJSON) model files, which gpuboost does not write.
UBJSON_SUFFIX = ".ubj"
#: Temporary files of :func:`atomic_write_text`: ``.gpuboost-<pid>-<hex>.part``.
TEMP_PREFIX = ".gpuboost-"
TEMP_SUFFIX = ".part"
_TEMP_NAME = re.compile(r"^\.gpuboost-(\d+)-[0-9a-f]+\.part$")
#: Seconds a dead process's temporary file stays before a later save removes it.
STALE_TEMP_SECONDS = 60
#: Permissions asked for a new file; the umask takes its bits away (0644 under 022).
NEW_FILE_MODE = 0o666
FORMAT_NAME = "gpuboost-model"
#: Version written by models with categorical features (``learner.categories``, the
#: trees' ``cat_offsets`` / ``cat_bits``); models without keep writing
#: :data:`BASE_FORMAT_VERSION`, so their bytes (and older readers) are unchanged.
CATEGORICAL_FORMAT_VERSION = 2
#: Version written by models whose rounds were trained with different per-round
#: parameters (``learner.round_params``; categories optional).
ROUND_PARAMS_FORMAT_VERSION = 3
#: Version written by forests (``num_parallel_tree`` > 1) and DART models
#: (``learner.weight_drop``); categories and round_params optional.
FOREST_FORMAT_VERSION = 4
#: Version written by models of several levels (``quantile_alpha`` / ``expectile_alpha``
#: lists); what versions 2 to 4 add optional.
LEVELS_FORMAT_VERSION = 5
#: Version written by models of several targets (``num_target`` > 1) or of vector leaves
#: (``multi_strategy='multi_output_tree'``; trees' ``value`` lists of lists); what
#: versions 2 to 5 add optional; the newest version.
VECTOR_FORMAT_VERSION = 6
FORMAT_VERSION = VECTOR_FORMAT_VERSION
BASE_FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1, 2, 3, 4, 5, 6)
#: Parameters that may hold several levels (a list: version 5).
LEVEL_PARAMS = ("quantile_alpha", "expectile_alpha")
#: Largest model file read (guards against reading a huge unrelated file).
MAX_MODEL_BYTES = 1 << 32


def _round_params_differences(state):
    """Per round, the PER_ROUND_PARAMS values that differ from ``params``' (what
    ``learner.round_params`` stores), or None when no round's differ."""
    rounds = state.get("round_params")
    if rounds is None:
        return None
    current = round_values(state["params"])
    differences = [
        {name: values[name] for name in PER_ROUND_PARAMS if values[name] != current[name]}
        for values in rounds
    ]
    return differences if any(differences) else None


def _is_forest(params):
    """Whether validated ``params`` describe a forest or DART (version 4 or later)."""
    return params.get("num_parallel_tree", 1) > 1 or params.get("booster") == "dart"


def _has_levels(params):
    """Whether ``params`` name several quantile or expectile levels (version 5)."""
    return any(isinstance(params.get(name), list) for name in LEVEL_PARAMS)


def _has_targets(params):
    """Whether ``params`` name several targets or vector leaves (version 6)."""
    return params.get("num_target", 0) > 1 or params.get("multi_strategy") == "multi_output_tree"


def _vector_leaves(params, n_outputs):
    """Whether a model's trees hold a value per output (as ``Booster.vector_leaves``)."""
    return n_outputs > 1 and params.get("multi_strategy") == "multi_output_tree"


def _required_version(params):
    """The version ``params`` need (None: versions 1 to 3, as the rest of the model says)."""
    if _has_targets(params):
        return VECTOR_FORMAT_VERSION
    if _has_levels(params):
        return LEVELS_FORMAT_VERSION
    if _is_forest(params):
        return FOREST_FORMAT_VERSION
    return None


def state_to_json(state):
    """Serialize a model state (see the module docstring) to JSON (deterministic bytes)."""
    best_iteration, best_score = state["best_iteration"], state["best_score"]
    learner = {
        "params": model_params(state["params"], state.get("categories") is not None),
        "n_outputs": int(state["n_outputs"]),
        "n_features": int(state["n_features"]),
        "feature_names": list(state["feature_names"]),
        "base_margin": [float(v) for v in state["base_margin"]],
        "best_iteration": None if best_iteration is None else int(best_iteration),
        "best_score": None if best_score is None else float(best_score),
        "attributes": dict(sorted(state["attributes"].items())),
    }
    if state["tree_weights"] is not None:
        learner["tree_weights"] = [float(w) for w in state["tree_weights"]]
    categories = state.get("categories")
    if categories is not None:
        learner["categories"] = [None if c is None else list(c) for c in categories]
    round_params = _round_params_differences(state)
    if round_params is not None:
        learner["round_params"] = round_params
    if state.get("weight_drop") is not None:
        learner["weight_drop"] = [float(w) for w in state["weight_drop"]]
    version = BASE_FORMAT_VERSION
    if _required_version(state["params"]) is not None:
        version = _required_version(state["params"])
    elif round_params is not None:
        version = ROUND_PARAMS_FORMAT_VERSION
    elif categories is not None:
        version = CATEGORICAL_FORMAT_VERSION
    document = {
        "format": FORMAT_NAME,
        "version": version,
        "learner": learner,
        "trees": [tree.to_dict() for tree in state["trees"]],
    }
    return json.dumps(document, separators=(",", ":"), allow_nan=False)


def check_model_path(path):
    """Raise ValueError for a model file name gpuboost cannot honour: one ending in
    ``.ubj`` (XGBoost writes UBJSON under that suffix; gpuboost writes JSON only, and
    never JSON under that name)."""
    if os.fspath(path).lower().endswith(UBJSON_SUFFIX):
        raise ValueError(
            f"Cannot save a model to {os.fspath(path)!r}: the {UBJSON_SUFFIX} suffix means "
            f"UBJSON, and gpuboost writes model files as JSON only. Use a .json name."
        )


def _process_alive(pid):
    """Whether process ``pid`` runs on this machine (True when that cannot be told)."""
    if os.name != "posix":  # os.kill(pid, 0) would end the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: it exists, under another user
        return True
    return True


def _remove_stale_temporaries(folder):
    """Remove the temporary files of saves that died in ``folder`` (see
    :func:`atomic_write_text`): those of a process that no longer runs, untouched for
    :data:`STALE_TEMP_SECONDS`. Best effort: errors are ignored."""
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if match is None or _process_alive(int(match.group(1))):
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime >= STALE_TEMP_SECONDS:
                os.unlink(entry.path)
        except OSError:
            pass


def _naming(error, destination):
    """``error`` (an OSError) naming ``destination`` instead of a temporary file."""
    try:
        if error.errno is None:
            return type(error)(f"{error} (writing {destination})")
        return type(error)(error.errno, error.strerror, destination)
    except TypeError:  # an OSError subclass with another signature
        return OSError(f"{error} (writing {destination})")


def atomic_write_text(path, text):
    """Write ``text`` as UTF-8 to ``path`` atomically (:func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path, data):
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder,
    fsync, rename over ``path``. The one writer of model files (JSON, ONNX), dumps,
    checkpoints and the command line's outputs.

    Like any file written in place: a new file gets the permissions of the umask
    (``0o666 & ~umask``: 0644 under 022), a replaced file keeps its permissions, and a
    symbolic link is followed (its target is written; the link stays). The temporary
    file is ``.gpuboost-<pid>-<random>.part``; a save that dies leaves it behind, and a
    later save in the same folder removes it once its process is gone (after
    :data:`STALE_TEMP_SECONDS`). Errors (``OSError``) name ``path``, not the temporary
    file.
    """
    path = os.fspath(path)
    destination = os.path.realpath(path) if os.path.islink(path) else path
    folder = os.path.dirname(os.path.abspath(destination))
    _remove_stale_temporaries(folder)
    try:
        mode = stat.S_IMODE(os.stat(destination).st_mode)
    except OSError:  # a new file: the umask decides (os.open below)
        mode = None
    temporary = os.path.join(
        folder, f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
    )
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(temporary, flags, NEW_FILE_MODE)
    except OSError as error:
        raise _naming(error, path) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, destination)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise _naming(error, path) from None
        raise


def _fail(message):
    raise ValueError(f"Invalid gpuboost model: {message}")


def _require(mapping, key, types, where):
    if not isinstance(mapping, dict) or key not in mapping:
        _fail(f"missing {where}{key!r}")
    value = mapping[key]
    if not isinstance(value, types) or (types is int and isinstance(value, bool)):
        _fail(f"{where}{key!r} has the wrong type ({type(value).__name__})")
    return value


def _number_list(values, name, integer, tree_index):
    if not isinstance(values, list):
        _fail(f"tree {tree_index}: {name!r} must be a list")
    for v in values:
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or (integer and not isinstance(v, int))
        ):
            _fail(
                f"tree {tree_index}: {name!r} holds a non-{'integer' if integer else 'number'} "
                f"entry {v!r}"
            )
        if not integer and not math.isfinite(v):
            _fail(f"tree {tree_index}: {name!r} holds a non-finite value")
    return values


def _validate_category_sets(data, arrays, categories, n_nodes, tree_index):
    """The trees' ``cat_offsets`` / ``cat_bits`` (see the module docstring)."""
    present = [name in data for name in CATEGORICAL_ARRAYS]
    if not any(present):
        offsets, bits = np.zeros(n_nodes + 1, dtype=np.int64), np.zeros(0, dtype=np.uint32)
    else:
        if not all(present):
            _fail(f"tree {tree_index}: 'cat_offsets' and 'cat_bits' come together")
        if categories is None:
            _fail(f"tree {tree_index} has category sets, but the model has no categories")
        offsets = _number_list(data["cat_offsets"], "cat_offsets", True, tree_index)
        bits = _number_list(data["cat_bits"], "cat_bits", True, tree_index)
        if len(offsets) != n_nodes + 1 or offsets[0] != 0 or offsets[-1] != len(bits):
            _fail(
                f"tree {tree_index}: 'cat_offsets' must have n_nodes + 1 entries from 0 to "
                f"the length of 'cat_bits'"
            )
        if any(b < 0 or b > 0xFFFFFFFF for b in bits):
            _fail(f"tree {tree_index}: 'cat_bits' words must be in [0, 2**32)")
        offsets = np.asarray(offsets, dtype=np.int64)
        bits = np.asarray(bits, dtype=np.uint32)
        if np.any(np.diff(offsets) < 0):
            _fail(f"tree {tree_index}: 'cat_offsets' must not decrease")
    feature = arrays["feature"]
    sizes = np.diff(offsets)
    for node in range(n_nodes):
        f = int(feature[node])
        labels = None if categories is None or f < 0 else categories[f]
        if sizes[node] == 0:
            if labels is not None:
                _fail(
                    f"tree {tree_index}: node {node} splits categorical feature {f} by a "
                    f"threshold (it needs a category set)"
                )
            continue
        if f < 0:
            _fail(f"tree {tree_index}: leaf {node} has a category set")
        if labels is None:
            _fail(f"tree {tree_index}: node {node} has a category set on numeric feature {f}")
        if sizes[node] != bitset_words(len(labels)):
            _fail(
                f"tree {tree_index}: node {node}'s category set has {int(sizes[node])} words; "
                f"feature {f} has {len(labels)} categories, so "
                f"{bitset_words(len(labels))} words"
            )
        words = bits[offsets[node] : offsets[node + 1]]
        members = np.flatnonzero(
            ((words[:, None] >> np.arange(32, dtype=np.uint32)[None, :]) & 1).reshape(-1)
        )
        if not len(members) or members[-1] >= len(labels):
            _fail(
                f"tree {tree_index}: node {node}'s category set is empty or names a category "
                f"id outside [0, {len(labels)})"
            )
    arrays["cat_offsets"], arrays["cat_bits"] = offsets, bits


def validate_tree_dict(data, n_features, tree_index=0, categories=None, n_values=1):
    """Check one tree's dict and return the Tree; ValueError on any inconsistency.

    ``categories``: the model's labels per feature (None without categorical features);
    ``n_values``: values per node (above 1: a vector-leaf tree, ``value`` one list of
    ``n_values`` numbers per node).
    """
    if not isinstance(data, dict):
        _fail(f"tree {tree_index} is not an object")
    unknown = set(data) - set(TREE_ARRAYS) - set(CATEGORICAL_ARRAYS)
    if unknown:
        _fail(f"tree {tree_index} has unknown fields {sorted(unknown)}")
    arrays = {}
    n_nodes = None
    int32_max = np.iinfo(np.int32).max
    for name, dtype in TREE_ARRAYS.items():
        integer = np.issubdtype(dtype, np.integer) or dtype == np.bool_
        values = _require(data, name, list, f"tree {tree_index} field ")
        if name == "value" and n_values > 1:
            for row in values:
                if not isinstance(row, list) or len(row) != n_values:
                    _fail(
                        f"tree {tree_index}: 'value' must hold one list of {n_values} "
                        f"numbers per node (vector leaves)"
                    )
                _number_list(row, name, integer, tree_index)
        else:
            values = _number_list(values, name, integer, tree_index)
        if n_nodes is None:
            n_nodes = len(values)
            if n_nodes == 0:
                _fail(f"tree {tree_index} has no nodes")
        elif len(values) != n_nodes:
            _fail(f"tree {tree_index}: {name!r} has {len(values)} entries, expected {n_nodes}")
        if (
            integer
            and values
            and (max(values) > int32_max or min(values) < -int32_max)
            and name != "count"
        ):
            _fail(f"tree {tree_index}: {name!r} holds an out-of-range integer")
        if dtype == np.bool_ and any(v not in (0, 1) for v in values):
            _fail(f"tree {tree_index}: 'default_left' entries must be 0 or 1")
        arrays[name] = np.asarray(values, dtype=dtype)
    feature, left, right = arrays["feature"], arrays["left_child"], arrays["right_child"]
    internal = feature >= 0
    if np.any(feature < -1) or np.any(feature >= n_features):
        _fail(f"tree {tree_index}: feature index out of range [0, {n_features})")
    if np.any(internal & ((left <= 0) | (left >= n_nodes) | (right <= 0) | (right >= n_nodes))):
        _fail(f"tree {tree_index}: child index out of range")
    if np.any(~internal & ((left != -1) | (right != -1))):
        _fail(f"tree {tree_index}: a leaf has children")
    if (
        np.any(arrays["count"] < 0)
        or np.any(arrays["threshold_bin"] < 0)
        or np.any(arrays["threshold_bin"] > 255)
    ):
        _fail(f"tree {tree_index}: negative count or threshold_bin out of [0, 255]")
    # Every node reached exactly once from the root: a tree, no cycles, no orphans.
    seen = np.zeros(n_nodes, dtype=bool)
    stack = [0]
    while stack:
        node = stack.pop()
        if seen[node]:
            _fail(f"tree {tree_index}: node {node} is reached twice (cycle or shared child)")
        seen[node] = True
        if internal[node]:
            stack.append(int(left[node]))
            stack.append(int(right[node]))
    if not seen.all():
        _fail(f"tree {tree_index}: nodes {np.flatnonzero(~seen)[:5].tolist()} are unreachable")
    _validate_category_sets(data, arrays, categories, n_nodes, tree_index)
    return Tree(arrays)


def state_from_json(text):
    """Parse and validate a model JSON string; returns the model state (a dict of the
    Booster's constructor arguments)."""
    try:
        return _state_from_json(text)
    except (OverflowError, RecursionError) as error:
        # e.g. integers beyond float64/int64 in numeric fields, absurd nesting
        raise ValueError(f"Invalid gpuboost model: {error}") from None


#: Keys of the top-level object and of "learner"; any other key is an error (as in trees).
_DOCUMENT_KEYS = frozenset({"format", "version", "learner", "trees"})
_LEARNER_KEYS = frozenset(
    {
        "params",
        "n_outputs",
        "n_features",
        "feature_names",
        "base_margin",
        "best_iteration",
        "best_score",
        "attributes",
        "tree_weights",
        "categories",
        "round_params",
        "weight_drop",
    }
)


def _object_without_duplicate_keys(pairs):
    """``json.loads`` hook: an object naming a key twice is ambiguous, hence invalid."""
    document = dict(pairs)
    if len(document) != len(pairs):
        keys = [key for key, _ in pairs]
        duplicate = next(key for key in keys if keys.count(key) > 1)
        _fail(f"duplicate key {duplicate!r} in an object")
    return document


def _check_keys(mapping, allowed, where):
    unknown = set(mapping) - allowed
    if unknown:
        _fail(f"unknown keys {sorted(unknown)} in {where}")


def _state_from_json(text):
    try:
        document = json.loads(text, object_pairs_hook=_object_without_duplicate_keys)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise ValueError(f"Invalid gpuboost model: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        _fail("top level is not an object")
    if document.get("format") != FORMAT_NAME:
        _fail(f"'format' must be {FORMAT_NAME!r}")
    version = _require(document, "version", int, "")
    if version not in SUPPORTED_VERSIONS:
        _fail(
            f"unsupported version {version} (this gpuboost reads versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))})"
        )
    _check_keys(document, _DOCUMENT_KEYS, "the top-level object")
    learner = _require(document, "learner", dict, "")
    _check_keys(learner, _LEARNER_KEYS, "'learner'")
    for key in ("best_iteration", "best_score", "attributes"):  # always written; may be null
        if key not in learner:
            _fail(f"missing learner {key!r}")
    params = _require(learner, "params", dict, "learner ")
    if not any(key in params for key in ("objective",) + PARAMETERS["objective"].aliases):
        _fail("learner params lack 'objective' (the default would change the predictions)")
    try:
        params = validate_file_params(params, learner.get("categories") is not None)
    except ValueError as error:
        _fail(f"bad params: {error}")
    n_outputs = _require(learner, "n_outputs", int, "learner ")
    n_features = _require(learner, "n_features", int, "learner ")
    if n_outputs < 1 or n_features < 1:
        _fail("n_outputs and n_features must be positive")
    objective_name = params["objective"]
    if isinstance(objective_name, str):
        try:
            expected_outputs = get_objective(objective_name, params).n_outputs()
        except (ValueError, TypeError) as error:
            _fail(f"bad objective: {error}")
        if expected_outputs != n_outputs:
            _fail(
                f"n_outputs is {n_outputs} but objective {objective_name!r} "
                f"(num_class={params['num_class']}) has {expected_outputs} outputs"
            )
    names = _require(learner, "feature_names", list, "learner ")
    if len(names) != n_features or not all(isinstance(n, str) for n in names):
        _fail("feature_names must be n_features strings")
    base_margin = _require(learner, "base_margin", list, "learner ")
    if len(base_margin) != n_outputs or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in base_margin
    ):
        _fail("base_margin must be n_outputs finite numbers")
    best_iteration = learner.get("best_iteration")
    if best_iteration is not None and (
        not isinstance(best_iteration, int)
        or isinstance(best_iteration, bool)
        or best_iteration < 0
    ):
        _fail("best_iteration must be a non-negative integer or null")
    best_score = learner.get("best_score")
    if best_score is not None and (
        not isinstance(best_score, (int, float))
        or isinstance(best_score, bool)
        or not math.isfinite(best_score)
    ):
        _fail("best_score must be a finite number or null")
    attributes = learner.get("attributes", {})
    if not isinstance(attributes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in attributes.items()
    ):
        _fail("attributes must map strings to strings")
    trees_data = _require(document, "trees", list, "")
    required = _required_version(params)
    if required is not None and version != required:
        _fail(
            f"these params need version {required} of the format (version 4: "
            f"num_parallel_tree above 1 or booster 'dart'; version 5: several quantile or "
            f"expectile levels; version 6: several targets or multi_output_tree), not "
            f"version {version}"
        )
    if required is None and version >= FOREST_FORMAT_VERSION:
        _fail(
            f"version {version} is written by forests and DART (4), models of several "
            f"levels (5) or of several targets or vector leaves (6); these params are none"
        )
    vector = _vector_leaves(params, n_outputs)
    per_round = (1 if vector else n_outputs) * params["num_parallel_tree"]
    if len(trees_data) % per_round:
        _fail(f"{len(trees_data)} trees is not a whole number of rounds of {per_round}")
    categories = learner.get("categories")
    if version == BASE_FORMAT_VERSION and categories is not None:
        _fail("'categories' needs version 2 (or 3) of the format, not version 1")
    if version == CATEGORICAL_FORMAT_VERSION and categories is None:
        _fail("'categories' must be present in a version 2 file")
    if categories is not None:
        if not isinstance(categories, list) or not all(
            c is None
            or (
                isinstance(c, list)
                and all(
                    isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))
                    for v in c
                )
            )
            for c in categories
        ):
            _fail("'categories' must hold, per feature, null or a list of strings and numbers")
        try:
            categories = check_categories(categories, n_features)
        except (TypeError, ValueError) as error:
            _fail(f"bad categories: {error}")
        if categories is None:
            _fail("'categories' names no categorical feature")
    n_values = n_outputs if vector else 1
    trees = [
        validate_tree_dict(t, n_features, i, categories, n_values) for i, t in enumerate(trees_data)
    ]
    n_rounds = len(trees) // per_round
    if best_iteration is not None and best_iteration >= max(n_rounds, 1):
        _fail(f"best_iteration {best_iteration} is beyond the {n_rounds} rounds")
    tree_weights = learner.get("tree_weights")
    if (params["booster"] == "adaboost") != (tree_weights is not None):
        _fail("'tree_weights' must be present exactly when params 'booster' is 'adaboost'")
    if tree_weights is not None and (
        not isinstance(tree_weights, list)
        or len(tree_weights) != n_rounds
        or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w > 0
            for w in tree_weights
        )
    ):
        _fail("tree_weights must hold one positive finite number per round")
    weight_drop = learner.get("weight_drop")
    if (params["booster"] == "dart") != (weight_drop is not None):
        _fail("'weight_drop' must be present exactly when params 'booster' is 'dart'")
    if weight_drop is not None and (
        not isinstance(weight_drop, list)
        or len(weight_drop) != len(trees)
        or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w > 0
            for w in weight_drop
        )
    ):
        _fail("weight_drop must hold one positive finite number per tree")
    round_params = _checked_round_params(learner.get("round_params"), version, params, n_rounds)
    return {
        "params": params,
        "n_outputs": n_outputs,
        "base_margin": np.asarray(base_margin, dtype=np.float64),
        "n_features": n_features,
        "feature_names": names,
        "trees": trees,
        "best_iteration": best_iteration,
        "best_score": best_score,
        "attributes": attributes,
        "tree_weights": tree_weights,
        "categories": categories,
        "round_params": round_params,
        "weight_drop": weight_drop,
    }


def _checked_round_params(differences, version, params, n_rounds):
    """``learner.round_params`` (present in every version 3 file, allowed in version 4:
    per round, an object of the PER_ROUND_PARAMS whose values differ from ``params``' --
    only those -- one round's at least) as every round's full values, validated; None
    without it."""
    if version == ROUND_PARAMS_FORMAT_VERSION and differences is None:
        _fail("'round_params' must be present in a version 3 file")
    if differences is not None and version < ROUND_PARAMS_FORMAT_VERSION:
        _fail("'round_params' needs version 3 (or 4) of the format")
    if differences is None:
        return None
    if not isinstance(differences, list) or len(differences) != n_rounds:
        _fail(f"'round_params' must hold one object per round ({n_rounds})")
    if not any(differences):
        _fail("'round_params' records no round whose parameters differ")
    current = round_values(params)
    rounds = []
    for index, values in enumerate(differences):
        if not isinstance(values, dict):
            _fail(f"round_params[{index}] is not an object")
        if any(name not in PER_ROUND_PARAMS for name in values):
            _fail(f"round_params[{index}] names a parameter that cannot change between rounds")
        try:
            checked = checked_round_values(values)
        except (TypeError, ValueError) as error:
            _fail(f"round_params[{index}]: {error}")
        repeated = [name for name, value in checked.items() if value == current[name]]
        if repeated:  # only differences are written: a file holds one spelling of a model
            _fail(f"round_params[{index}] repeats params' value of {repeated[0]!r}")
        rounds.append(dict(current, **checked))
    return rounds


def read_model_text(path):
    """The text of a model file (at most :data:`MAX_MODEL_BYTES`, UTF-8)."""
    path = os.fspath(path)
    size = os.path.getsize(path)
    if size > MAX_MODEL_BYTES:
        raise ValueError(f"Invalid gpuboost model: {path} is {size} bytes, larger than any model")
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"Invalid gpuboost model: {path} is not UTF-8 JSON") from None
    return text
