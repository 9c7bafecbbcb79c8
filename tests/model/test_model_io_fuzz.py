"""Fuzzing the model loader: thousands of corrupted real model files.

The contract of :meth:`gpuboost.Booster.load_model`: a file either loads to
exactly the model it describes, or raises ``ValueError``, within a time bound,
and loading never executes code. "Exactly the model it describes" is checked
independently of the loader: the loaded model re-saves to the document that
``json.loads`` reads from the file (so nothing was silently repaired, dropped
or defaulted), re-saving is a fixpoint, the model predicts finite values, and a
corruption that leaves the document unchanged (whitespace, number spelling)
re-saves to the original bytes.

Corruptions of real models (regression trained on data with NaN, so default
directions vary; 3-class multiclass with early stopping; binary lossguide with
feature names and attributes; categorical splits; a learning-rate and L2 schedule,
whose file records every round's parameters; a DART model of forests, whose file records
every tree's weight; vector leaves of three targets, a list of values per node):

* byte level: bit flips, JSON-significant bytes, deletions, duplications,
  truncations, swaps, invalid UTF-8 and NUL bytes, splices of another model;
* structure level: swapped children, a child set to an ancestor or to itself,
  out-of-range and huge integers, NaN / Infinity tokens, wrong types, deleted,
  duplicated and unknown keys, deep nesting, pickle payloads and
  ``__reduce__`` strings.

A small fuzz lives in tests/test_model_io.py; this is the big one.
"""

import builtins
import json
import pickle
import time

import numpy as np
import pandas as pd
import pytest
from _tiers import SLOW
from _timeouts import time_limit

import gpuboost
from gpuboost import Booster
from gpuboost.model import model_io
from gpuboost.params import checked_round_values, model_params, validate_file_params
from gpuboost.tree.tree import TREE_ARRAYS

#: Cases per model of each mutation family: the slow tier's count, and the
#: fast tier's (the first cases of the same random streams).
BYTE_CASES_PER_MODEL = 800
STRUCTURE_CASES_PER_MODEL = 600
FAST_CASES_PER_MODEL = 100
#: Seconds a single load may take; a case beyond it counts as a hang.
CASE_TIME_LIMIT_S = 2.0
#: Nesting depth of the deep-nesting mutation (beyond Python's recursion limit).
DEEP_NESTING = 100_000
#: Bytes that change the meaning of JSON text.
JSON_BYTES = b'{}[],:"-+.0123456789eEnNtfIa \\\x00'
#: Tokens inserted into the text or set as values.
TOKENS = [
    b"-1",
    b"0",
    b"1e5",
    b"1e400",
    b"-1e400",
    b"null",
    b"true",
    b"false",
    b'"x"',
    b"[]",
    b"{}",
    b",",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"2147483648",
    b"99999999999999999999",
    b'"__reduce__"',
    b"\xff\xfe",
    b"\x00",
]
#: Values a structure-level mutation may put anywhere.
ODD_VALUES = [
    None,
    True,
    False,
    -1,
    0,
    1,
    2**31,
    -(2**31) - 1,
    2**63,
    10**30,
    -(10**400),
    0.5,
    1e308,
    -0.0,
    "0",
    "__reduce__",
    "cos\nsystem\n(S'echo hi'\ntR.",
    [],
    {},
    [[[[]]]],
    {"__reduce__": ["os.system", ["echo hi"]]},
]
#: Text tokens placed where a JSON value was (they are not Python values).
ODD_TOKENS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "9" * 5000,
    "[" * DEEP_NESTING + "]" * DEEP_NESTING,
    "{" * 10 + "}" * 10,
]


# ---- the real models ----------------------------------------------------------------
def _features(n_rows, n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.15] = np.nan
    return X, rng


def _regression_model():
    X, rng = _features(300, 4, 1)
    y = np.nan_to_num(X[:, 0], nan=2.0) + np.isnan(X[:, 1]) + 0.1 * rng.normal(size=300)
    return gpuboost.train(
        {"device": "cpu", "max_depth": 3, "verbosity": 0},
        gpuboost.Dataset(X, label=y),
        num_boost_round=4,
    ), X


def _scheduled_model():
    """A learning-rate and L2 schedule: a version-3 file with ``round_params``."""
    X, rng = _features(300, 4, 5)
    y = np.nan_to_num(X[:, 1], nan=-1.0) + 0.1 * rng.normal(size=300)
    return gpuboost.train(
        {"device": "cpu", "max_depth": 3, "verbosity": 0},
        gpuboost.Dataset(X, label=y),
        num_boost_round=4,
        callbacks=[
            gpuboost.reset_parameter(learning_rate=[0.5, 0.3, 0.2, 0.1], reg_lambda=[1, 2, 2, 3])
        ],
    ), X


def _multiclass_model():
    X, rng = _features(300, 3, 2)
    y = np.digitize(np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=300), [-0.5, 0.5])
    dataset = gpuboost.Dataset(X, label=y.astype(float))
    booster = gpuboost.train(
        {
            "device": "cpu",
            "objective": "multi:softprob",
            "num_class": 3,
            "max_depth": 2,
            "verbosity": 0,
        },
        dataset,
        num_boost_round=6,
        evals=[(dataset, "train")],
        early_stopping_rounds=2,
        verbose_eval=False,
    )
    return booster, X


def _binary_model():
    X, rng = _features(300, 3, 3)
    y = (np.nan_to_num(X[:, 1]) > 0.2).astype(float)
    booster = gpuboost.train(
        {
            "device": "cpu",
            "objective": "binary:logistic",
            "max_leaves": 4,
            "grow_policy": "lossguide",
            "max_depth": 0,
            "verbosity": 0,
        },
        gpuboost.Dataset(X, label=y, feature_names=["a", "b", "c"]),
        num_boost_round=3,
    )
    booster.set_attr(note="fuzz \u00e9\u4e2d", run="7")
    return booster, X


def _categorical_model():
    """Categorical splits (format version 2): string labels, a 40-level feature (two
    bitset words), missing and numeric values."""
    rng = np.random.default_rng(4)
    big = rng.integers(0, 40, 300)
    frame = pd.DataFrame(
        {
            "big": pd.Categorical([f"k{v}" for v in big]),
            "small": pd.Categorical(rng.choice(["a", "b", "c"], 300)),
            "x": rng.normal(size=300),
        }
    )
    frame.loc[rng.random(300) < 0.1, "big"] = np.nan
    y = np.sin(big) + (frame["small"] == "a") + 0.5 * frame["x"]
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 3, "min_data_per_group": 5, "verbosity": 0},
        gpuboost.Dataset(frame, label=y.to_numpy()),
        num_boost_round=4,
    )
    # Predicted on by position (a corrupted feature name must not stop the prediction):
    # an object array of labels and numbers, re-coded by label like a DataFrame.
    return booster, frame.to_numpy(dtype=object)


def _dart_forest_model():
    """Format version 4: two trees per round (num_parallel_tree) and DART's weights."""
    X, rng = _features(300, 3, 5)
    y = (np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=300) > 0).astype(float)
    booster = gpuboost.train(
        {
            "device": "cpu",
            "objective": "binary:logistic",
            "booster": "dart",
            "rate_drop": 0.5,
            "num_parallel_tree": 2,
            "subsample": 0.8,
            "max_depth": 2,
            "verbosity": 0,
        },
        gpuboost.Dataset(X, label=y),
        num_boost_round=4,
    )
    return booster, X


def _vector_leaf_model():
    """Format version 6: three targets, one tree a round of vector leaves."""
    X, rng = _features(300, 3, 6)
    base = np.nan_to_num(X[:, 0])
    Y = np.column_stack([base, base * 2 - np.isnan(X[:, 1]), rng.normal(size=300)])
    booster = gpuboost.train(
        {"device": "cpu", "multi_strategy": "multi_output_tree", "max_depth": 2, "verbosity": 0},
        gpuboost.Dataset(X, label=Y),
        num_boost_round=4,
    )
    return booster, X


@pytest.fixture(scope="module")
def models():
    """name -> (original bytes, data to predict on)."""
    built = {
        "regression": _regression_model(),
        "multiclass": _multiclass_model(),
        "binary": _binary_model(),
        "categorical": _categorical_model(),
        "scheduled": _scheduled_model(),
        "dart_forest": _dart_forest_model(),
        "vector_leaves": _vector_leaf_model(),
    }
    out = {name: (booster.save_raw(), X) for name, (booster, X) in built.items()}
    # The corruptions need every field they aim at to be there.
    assert json.loads(out["multiclass"][0])["learner"]["best_iteration"] is not None
    assert any(
        0 in tree["default_left"] and 1 in tree["default_left"]
        for tree in json.loads(out["regression"][0])["trees"]
    )
    assert sum("cat_bits" in tree for tree in json.loads(out["categorical"][0])["trees"]) >= 3
    assert json.loads(out["scheduled"][0])["learner"]["round_params"][0]
    assert len(set(json.loads(out["dart_forest"][0])["learner"]["weight_drop"])) > 2
    return out


# ---- the oracle ---------------------------------------------------------------------
def _normalized(document):
    """What a file's document means, for comparison with a re-saved model: canonical
    params without runtime-only ones, and numbers of float fields read as float64."""
    learner = document["learner"]
    learner["params"] = model_params(validate_file_params(learner["params"]))
    if "round_params" in learner:
        learner["round_params"] = [checked_round_values(r) for r in learner["round_params"]]
    learner["base_margin"] = [float(v) for v in learner["base_margin"]]
    if "weight_drop" in learner:
        learner["weight_drop"] = [float(v) for v in learner["weight_drop"]]
    if learner["best_score"] is not None:
        learner["best_score"] = float(learner["best_score"])
    for tree in document["trees"]:
        for name, dtype in TREE_ARRAYS.items():
            if np.dtype(dtype).kind == "f":  # a vector leaf's values: one list per node
                tree[name] = [
                    [float(x) for x in v] if isinstance(v, list) else float(v) for v in tree[name]
                ]
    return document


def _exact(node):
    """A JSON document in a form whose ``==`` is exact: floats by their repr (-0.0 is not
    0.0), bools apart from the integers 0 and 1."""
    if isinstance(node, dict):
        return {key: _exact(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_exact(value) for value in node]
    if isinstance(node, (bool, float)):
        return (type(node).__name__, repr(node))
    return node


def check_case(data, original, X, tmp_path):
    """Load ``data`` (bytes); returns "loaded" or "rejected", asserting the contract."""
    path = tmp_path / "model.json"
    path.write_bytes(data)
    start = time.perf_counter()
    try:
        with time_limit(CASE_TIME_LIMIT_S, "loading"):
            loaded = Booster.load_model(path)
    except ValueError:
        return "rejected"
    assert time.perf_counter() - start < CASE_TIME_LIMIT_S
    resaved = loaded.save_raw()
    # Exactly the model the file describes: nothing repaired, dropped or defaulted ...
    assert _exact(json.loads(resaved)) == _exact(_normalized(json.loads(data))), (
        "the loader changed the model"
    )
    # ... a fixpoint ...
    assert Booster.from_json(resaved.decode("utf-8")).save_raw() == resaved
    # ... the original when the corruption did not change the document ...
    if _exact(json.loads(data)) == _exact(json.loads(original)):
        assert resaved == original
    # ... and a usable model.
    with np.errstate(over="ignore"):
        prediction = loaded.predict(X, output_margin=True)
    assert prediction.shape[0] == len(X)
    assert not np.any(np.isnan(prediction))
    return "loaded"


# ---- byte-level corruptions ---------------------------------------------------------
def mutate_bytes(raw, other, rng):
    """One random byte-level corruption of ``raw`` (``other``: another model's bytes)."""
    data = bytearray(raw)
    kind = int(rng.integers(0, 10))
    position = int(rng.integers(0, len(data)))
    length = int(rng.integers(1, 40))
    if kind == 0:  # flip one bit
        data[position] ^= 1 << int(rng.integers(0, 8))
    elif kind == 1:  # a JSON-significant byte
        data[position] = JSON_BYTES[int(rng.integers(0, len(JSON_BYTES)))]
    elif kind == 2:  # delete a slice
        del data[position : position + length]
    elif kind == 3:  # duplicate a slice
        data[position:position] = data[position : position + length]
    elif kind == 4:  # truncate
        del data[position:]
    elif kind == 5:  # change a digit
        digits = [i for i, b in enumerate(data) if 48 <= b <= 57]
        data[digits[int(rng.integers(0, len(digits)))]] = 48 + int(rng.integers(0, 10))
    elif kind == 6:  # swap two slices
        other_position = int(rng.integers(0, len(data)))
        a, b = sorted((position, other_position))
        chunk_a, chunk_b = data[a : a + length], data[b : b + length]
        if a + length <= b:
            data[b : b + length] = chunk_a
            data[a : a + length] = chunk_b
    elif kind == 7:  # insert a token
        token = TOKENS[int(rng.integers(0, len(TOKENS)))]
        data[position:position] = token
    elif kind == 8:  # splice: a slice of another model replaces a slice of this one
        start = int(rng.integers(0, len(other)))
        data[position : position + length] = other[start : start + int(rng.integers(1, 400))]
    else:  # random bytes
        data[position : position + length] = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
    return bytes(data)


@pytest.mark.parametrize(
    "n_cases", [FAST_CASES_PER_MODEL, pytest.param(BYTE_CASES_PER_MODEL, marks=SLOW)]
)
def test_byte_level_corruptions_load_identically_or_raise_value_error(models, tmp_path, n_cases):
    rng = np.random.default_rng(20240)
    outcomes = {"loaded": 0, "rejected": 0}
    names = list(models)
    for index, name in enumerate(names):
        raw, X = models[name]
        other = models[names[(index + 1) % len(names)]][0]
        for _ in range(n_cases):
            outcomes[check_case(mutate_bytes(raw, other, rng), raw, X, tmp_path)] += 1
    total = len(names) * n_cases
    assert outcomes["rejected"] > total // 2
    assert outcomes["loaded"] > 0  # some corruptions (a digit) leave a valid model


# ---- structure-level corruptions ----------------------------------------------------
def _paths(node, prefix=()):
    """Every (path, value) in a JSON document, containers included."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for position, value in enumerate(node):
            yield from _paths(value, prefix + (position,))


def _set(document, path, value):
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def _internal_nodes(tree):
    return [node for node, feature in enumerate(tree["feature"]) if feature >= 0]


def _ancestors(tree, node):
    parents = {}
    for parent in _internal_nodes(tree):
        parents[tree["left_child"][parent]] = parent
        parents[tree["right_child"][parent]] = parent
    chain = []
    while node in parents:
        node = parents[node]
        chain.append(node)
    return chain


def mutate_structure(document, rng):
    """One random structure-level corruption; returns the new file text (str)."""
    document = json.loads(json.dumps(document))
    trees = document["trees"]
    tree = trees[int(rng.integers(0, len(trees)))]
    internal = _internal_nodes(tree)
    kind = int(rng.integers(0, 13))
    placeholder = None
    if kind == 12 and "cat_bits" not in tree:
        categorical_trees = [t for t in trees if "cat_bits" in t]
        if categorical_trees:
            tree = categorical_trees[int(rng.integers(0, len(categorical_trees)))]
        else:
            kind = 0
    if kind == 0 and internal:  # swap the children of a node (a valid, different tree)
        node = internal[int(rng.integers(0, len(internal)))]
        tree["left_child"][node], tree["right_child"][node] = (
            tree["right_child"][node],
            tree["left_child"][node],
        )
    elif kind == 1 and internal:  # a child points to an ancestor, itself, or the root
        node = internal[int(rng.integers(0, len(internal)))]
        targets = _ancestors(tree, node) + [node, 0]
        side = "left_child" if rng.random() < 0.5 else "right_child"
        tree[side][node] = targets[int(rng.integers(0, len(targets)))]
    elif kind == 2:  # an odd value anywhere
        paths = [path for path, _ in _paths(document) if path]
        path = paths[int(rng.integers(0, len(paths)))]
        _set(document, path, ODD_VALUES[int(rng.integers(0, len(ODD_VALUES)))])
    elif kind == 3:  # an odd token anywhere (NaN, huge numbers, deep nesting)
        paths = [path for path, _ in _paths(document) if path]
        placeholder = "\u2603PLACEHOLDER\u2603"
        _set(document, paths[int(rng.integers(0, len(paths)))], placeholder)
    elif kind == 4:  # delete a key
        paths = [path for path, value in _paths(document) if path and isinstance(path[-1], str)]
        path = paths[int(rng.integers(0, len(paths)))]
        target = document
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    elif kind == 5:  # add an unknown key to an object
        objects = [value for _, value in _paths(document) if isinstance(value, dict)]
        objects[int(rng.integers(0, len(objects)))]["__reduce__"] = ["os.system", "echo hi"]
    elif kind == 6:  # out-of-range index in a tree array
        name = ["feature", "left_child", "right_child", "threshold_bin"][int(rng.integers(0, 4))]
        node = int(rng.integers(0, len(tree[name])))
        tree[name][node] = int(rng.choice([-2, len(tree["feature"]), 256, 2**31, 2**40]))
    elif kind == 7:  # drop or add a node in one array (shape mismatch)
        name = list(TREE_ARRAYS)[int(rng.integers(0, len(TREE_ARRAYS)))]
        if rng.random() < 0.5:
            tree[name].pop()
        else:
            tree[name].append(tree[name][0])
    elif kind == 8:  # remove or duplicate a whole tree
        if rng.random() < 0.5:
            trees.pop(int(rng.integers(0, len(trees))))
        else:
            trees.append(json.loads(json.dumps(tree)))
    elif kind == 9:  # a leaf becomes internal, or an internal node a leaf
        node = int(rng.integers(0, len(tree["feature"])))
        tree["feature"][node] = 0 if tree["feature"][node] < 0 else -1
    elif kind == 10:  # learner facts changed
        key = ["n_outputs", "n_features", "best_iteration", "version"][int(rng.integers(0, 4))]
        container = document if key == "version" else document["learner"]
        container[key] = int(rng.choice([-1, 0, 2, 3, 5, 1000]))
    elif kind == 12:  # the category sets and labels (format version 2)
        categories = document["learner"]["categories"]
        labelled = [labels for labels in categories if labels is not None]
        labels = labelled[int(rng.integers(0, len(labelled)))]
        choice = int(rng.integers(0, 7))
        if choice == 0 and tree["cat_bits"]:  # flip a bit (past the categories or not)
            word = int(rng.integers(0, len(tree["cat_bits"])))
            tree["cat_bits"][word] ^= 1 << int(rng.integers(0, 32))
        elif choice == 1:  # move an offset
            node = int(rng.integers(0, len(tree["cat_offsets"])))
            tree["cat_offsets"][node] += int(rng.choice([-1, 1]))
        elif choice == 2:  # one word more or less
            if rng.random() < 0.5 and tree["cat_bits"]:
                tree["cat_bits"].pop()
            else:
                tree["cat_bits"].append(int(rng.integers(0, 2**32)))
        elif choice == 3:  # a label duplicated, dropped, or renamed
            action = int(rng.integers(0, 3))
            if action == 0:
                labels.append(labels[0])
            elif action == 1:
                labels.pop()
            else:
                labels[int(rng.integers(0, len(labels)))] = "renamed"
        elif choice == 4:  # a numeric feature made categorical, or the reverse
            feature = int(rng.integers(0, len(categories)))
            categories[feature] = None if categories[feature] is not None else ["a", "b"]
        elif choice == 5:  # the set of a node moved to a leaf or another node
            sizes = np.diff(tree["cat_offsets"])
            node = int(np.flatnonzero(sizes)[0])
            other = int(rng.integers(0, len(tree["feature"])))
            begin = tree["cat_offsets"][node]
            words = tree["cat_bits"][begin : begin + int(sizes[node])]
            sizes[node], sizes[other] = 0, sizes[other] + len(words)
            del tree["cat_bits"][begin : begin + len(words)]
            insert = int(np.sum(sizes[:other]))
            tree["cat_bits"][insert:insert] = words
            tree["cat_offsets"] = [0] + np.cumsum(sizes).tolist()
        else:  # the sets removed from a tree with categorical splits
            del tree["cat_offsets"], tree["cat_bits"]
    else:  # a param changed to another valid-looking value
        params = document["learner"]["params"]
        key = ["objective", "num_class", "max_bin", "learning_rate"][int(rng.integers(0, 4))]
        params[key] = [
            "reg:squarederror",
            "multi:softprob",
            "binary:logistic",
            0,
            2,
            3,
            "rank:none",
            1.5,
        ][int(rng.integers(0, 8))]
    text = json.dumps(document, separators=(",", ":"))
    if placeholder is not None:
        token = ODD_TOKENS[int(rng.integers(0, len(ODD_TOKENS)))]
        text = text.replace(json.dumps(placeholder), token)
    return text


@pytest.mark.parametrize(
    "n_cases", [FAST_CASES_PER_MODEL, pytest.param(STRUCTURE_CASES_PER_MODEL, marks=SLOW)]
)
def test_structure_level_corruptions_load_identically_or_raise_value_error(
    models, tmp_path, n_cases
):
    rng = np.random.default_rng(777)
    outcomes = {"loaded": 0, "rejected": 0}
    for raw, X in models.values():
        document = json.loads(raw)
        for _ in range(n_cases):
            text = mutate_structure(document, rng)
            outcomes[check_case(text.encode("utf-8"), raw, X, tmp_path)] += 1
    total = len(models) * n_cases
    assert outcomes["rejected"] > total // 2
    assert outcomes["loaded"] > 0  # e.g. swapped children: a valid, different model


# ---- specific hazards ---------------------------------------------------------------
def test_swapped_children_load_as_the_swapped_tree(models):
    raw, X = models["regression"]
    document = json.loads(raw)
    tree = document["trees"][0]
    tree["left_child"][0], tree["right_child"][0] = tree["right_child"][0], tree["left_child"][0]
    loaded = Booster.from_json(json.dumps(document))
    assert loaded.trees[0].left_child[0] == tree["left_child"][0]
    assert loaded.save_raw() != raw


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_tokens_are_rejected_anywhere(models, token):
    text = models["multiclass"][0].decode("utf-8")
    for where in ('"learning_rate":', '"base_margin":[', '"threshold":[', '"best_score":'):
        start = text.index(where) + len(where)
        end = start
        while text[end] not in ",]}":
            end += 1
        with pytest.raises(ValueError):
            Booster.from_json(text[:start] + token + text[end:])


def test_duplicate_keys_are_rejected(models):
    raw, _ = models["regression"]
    text = raw.decode("utf-8")
    trees = text[text.index('"trees":') : -1]
    with pytest.raises(ValueError, match="duplicate"):
        Booster.from_json(text[:-1] + "," + trees + "}")
    with pytest.raises(ValueError, match="duplicate"):
        Booster.from_json(text.replace('"version":1', '"version":1,"version":1'))


@pytest.mark.parametrize("key", ["best_iteration", "best_score", "attributes"])
def test_learner_keys_the_saver_writes_are_required(models, key):
    document = json.loads(models["multiclass"][0])
    del document["learner"][key]
    with pytest.raises(ValueError, match=key):
        Booster.from_json(json.dumps(document))


def test_objective_is_required(models):
    # Without it the default objective would turn probabilities into raw margins.
    document = json.loads(models["binary"][0])
    del document["learner"]["params"]["objective"]
    with pytest.raises(ValueError, match="objective"):
        Booster.from_json(json.dumps(document))


@pytest.mark.parametrize("where", ["top", "learner"])
def test_unknown_keys_are_rejected(models, where):
    document = json.loads(models["regression"][0])
    # ("categories" is a key of version 2 now: a key no version has.)
    (document if where == "top" else document["learner"])["category_sets"] = []
    with pytest.raises(ValueError, match="unknown"):
        Booster.from_json(json.dumps(document))


def test_deep_nesting_and_huge_numbers_fail_fast(models, tmp_path):
    raw, X = models["regression"]
    text = raw.decode("utf-8")
    for replacement in (
        "[" * DEEP_NESTING,
        "[" * DEEP_NESTING + "]" * DEEP_NESTING,
        "9" * 100_000,
        "1" + "0" * 400,
        "-" + "9" * 4000 + ".5e99999",
    ):
        changed = text.replace('"base_margin":[', '"base_margin":[' + replacement + ",", 1)
        assert check_case(changed.encode("utf-8"), raw, X, tmp_path) == "rejected"


class _Exploit:
    """Unpickling this would call :func:`_record_execution`."""

    def __reduce__(self):
        return (_record_execution, ("pickle payload ran",))


EXECUTED = []


def _record_execution(message):
    EXECUTED.append(message)


@pytest.fixture
def code_execution_forbidden(monkeypatch):
    """eval, exec, compile and every unpickler raise while the test runs."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the loader tried to execute code")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, forbidden)
    for name in ("loads", "load", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    yield
    EXECUTED.clear()


def test_pickle_payloads_are_value_errors_and_never_run(models, tmp_path, code_execution_forbidden):
    raw, _ = models["regression"]
    payloads = [pickle.dumps(_Exploit(), protocol=protocol) for protocol in (0, 2, 5)]
    payloads.append(pickle.dumps(gpuboost.Booster))  # a class reference
    payloads.append(raw[:40] + payloads[0] + raw[40:])
    payloads.append(b'{"__reduce__":["os.system",["echo pwned"]],' + raw[1:])
    payloads.append(b"\x80\x05" + raw)
    path = tmp_path / "model.json"
    for payload in payloads:
        path.write_bytes(payload)
        with pytest.raises(ValueError):
            Booster.load_model(path)
    assert EXECUTED == []


def test_reduce_strings_in_data_fields_are_only_data(models, tmp_path, code_execution_forbidden):
    raw, X = models["binary"]
    document = json.loads(raw)
    document["learner"]["feature_names"] = ["__reduce__", "os.system", "__import__('os')"]
    document["learner"]["attributes"] = {"__reduce__": "cos\nsystem\n(S'echo hi'\ntR."}
    text = json.dumps(document, separators=(",", ":"))
    path = tmp_path / "model.json"
    path.write_text(text, encoding="utf-8")
    loaded = Booster.load_model(path)
    assert loaded.feature_names == ["__reduce__", "os.system", "__import__('os')"]
    assert loaded.save_raw() == text.encode("utf-8")
    assert EXECUTED == []


def test_valid_models_load_without_executing_code(models, tmp_path, code_execution_forbidden):
    for raw, _ in models.values():
        path = tmp_path / "model.json"
        path.write_bytes(raw)
        assert Booster.load_model(path).save_raw() == raw


def test_a_file_larger_than_any_model_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2048)
    monkeypatch.setattr(model_io, "MAX_MODEL_BYTES", 1024)
    opened = []
    # The loader's module-level name ``open`` (builtins' open) records any call.
    monkeypatch.setattr(
        model_io, "open", lambda *args, **kwargs: opened.append(args), raising=False
    )
    with pytest.raises(ValueError, match="larger"):
        Booster.load_model(path)
    assert opened == []
