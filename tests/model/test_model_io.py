"""Tests of gpuboost.model.model_io: the versioned JSON format, validation and atomic writes."""

import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import gpuboost
from gpuboost.model.booster import Booster
from gpuboost.model.model_io import (
    BASE_FORMAT_VERSION,
    FORMAT_NAME,
    FORMAT_VERSION,
    STALE_TEMP_SECONDS,
    atomic_write_text,
    validate_tree_dict,
)
from gpuboost.params import RUNTIME_ONLY
from gpuboost.tree.tree import TREE_ARRAYS

N_FUZZ_MUTATIONS = 300


@pytest.fixture
def booster(regression_data):
    X, y = regression_data
    booster = gpuboost.train(
        {"device": "cpu", "max_depth": 3, "verbosity": 0},
        gpuboost.Dataset(X, label=y),
        num_boost_round=4,
        verbose_eval=False,
    )
    booster.set_attr(purpose="test")
    return booster


@pytest.fixture
def document(booster):
    return json.loads(booster.to_json())


def load_document(document):
    return Booster.from_json(json.dumps(document))


def assert_invalid(text_or_document, match=None):
    text = text_or_document if isinstance(text_or_document, str) else json.dumps(text_or_document)
    with pytest.raises(ValueError, match=match):
        Booster.from_json(text)


# ---------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------


def test_save_load_save_is_byte_identical(booster, tmp_path, regression_data):
    X, _ = regression_data
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    booster.save_model(first)
    loaded = Booster.load_model(first)
    loaded.save_model(second)
    assert first.read_bytes() == second.read_bytes() == booster.save_raw()
    assert loaded == booster
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    for tree, original in zip(loaded.trees, booster.trees):
        for name in TREE_ARRAYS:
            assert getattr(tree, name).tobytes() == getattr(original, name).tobytes()


def test_booster_methods_use_the_format(booster, tmp_path):
    path = tmp_path / "model.json"
    booster.save_model(str(path))
    assert path.read_bytes() == booster.save_raw()
    assert Booster.load_model(path) == booster


def test_round_trip_of_multiclass_model_with_best_iteration(multiclass_data, tmp_path):
    X, y = multiclass_data
    dataset = gpuboost.Dataset(X, label=y)
    booster = gpuboost.train(
        {
            "device": "cpu",
            "objective": "multi:softprob",
            "num_class": 3,
            "eval_metric": ["mlogloss", "merror"],
        },
        dataset,
        num_boost_round=5,
        evals=[(dataset, "train")],
        verbose_eval=False,
        early_stopping_rounds=2,
    )
    assert booster.best_iteration is not None
    path = tmp_path / "model.json"
    booster.save_model(path)
    loaded = Booster.load_model(path)
    assert loaded.best_iteration == booster.best_iteration
    assert loaded.best_score == booster.best_score
    assert loaded.params["eval_metric"] == ["mlogloss", "merror"]
    assert loaded.to_json() == booster.to_json()
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


def test_document_layout(document):
    # Version 1: the model has no categorical features (version 2), no per-round
    # parameters (version 3: tests/boosting/test_schedules.py) and is neither a forest
    # nor DART (version 4: tests/boosting/test_forests.py, test_dart.py), has one level
    # (version 5: tests/objectives/test_levels.py) and one target without vector leaves
    # (version 6, the newest: tests/tree/test_vector_leaves.py).
    assert document["format"] == FORMAT_NAME and document["version"] == BASE_FORMAT_VERSION
    assert FORMAT_VERSION == 6
    learner = document["learner"]
    assert not set(learner["params"]) & RUNTIME_ONLY
    assert learner["n_outputs"] == 1 and learner["n_features"] == 5
    assert learner["attributes"] == {"purpose": "test"}
    assert len(document["trees"]) == 4
    assert list(document["trees"][0]) == list(TREE_ARRAYS)


def test_serialization_is_deterministic_and_compact(booster):
    text = booster.to_json()
    assert text == booster.copy().to_json()
    assert ": " not in text and ", " not in text
    assert "NaN" not in text and "Infinity" not in text


def test_floats_round_trip_exactly(booster):
    booster.trees[0].value[1] = 0.1 + 0.2
    booster.trees[0].threshold[0] = np.nextafter(1.0, 2.0)
    booster.base_margin[0] = 1e-300
    loaded = Booster.from_json(booster.to_json())
    assert loaded.trees[0].value[1] == 0.1 + 0.2
    assert loaded.trees[0].threshold[0] == np.nextafter(1.0, 2.0)
    assert loaded.base_margin[0] == 1e-300


# ---------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------


def test_atomic_write_leaves_no_temp_file(tmp_path):
    path = tmp_path / "out.txt"
    atomic_write_text(path, "first")
    atomic_write_text(path, "second")
    assert path.read_text(encoding="utf-8") == "second"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_failed_replace_keeps_the_original_and_removes_the_temp_file(
    booster, tmp_path, monkeypatch
):
    path = tmp_path / "model.json"
    path.write_text("original content", encoding="utf-8")

    def failing_replace(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        booster.save_model(path)
    assert path.read_text(encoding="utf-8") == "original content"
    assert os.listdir(tmp_path) == ["model.json"]


def test_failed_write_keeps_the_original(tmp_path, monkeypatch):
    path = tmp_path / "model.json"
    path.write_text("original content", encoding="utf-8")

    def failing_fsync(fd):
        raise OSError("io error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="io error"):
        atomic_write_text(path, "new content")
    assert path.read_text(encoding="utf-8") == "original content"
    assert os.listdir(tmp_path) == ["model.json"]


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_respect_the_umask(tmp_path, umask, expected):
    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "model.json", "{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "model.json").st_mode) == expected


def test_replaced_files_keep_their_permissions(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_saving_through_a_symbolic_link_writes_its_target(booster, tmp_path):
    target = tmp_path / "models" / "v1.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "current.json"
    link.symlink_to(os.path.join("models", "v1.json"))  # relative, as links often are
    booster.save_model(link)
    assert link.is_symlink() and os.readlink(link) == os.path.join("models", "v1.json")
    assert target.read_bytes() == booster.save_raw()
    assert sorted(os.listdir(target.parent)) == ["v1.json"]


def test_a_later_save_removes_temporary_files_of_dead_saves(tmp_path):
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(finished.stdout)
    old = time.time() - 2 * STALE_TEMP_SECONDS
    stale = tmp_path / f".gpuboost-{dead_pid}-0123abcd.part"
    recent = tmp_path / f".gpuboost-{dead_pid}-89abcdef.part"  # may be a slow save's
    alive = tmp_path / f".gpuboost-{os.getppid()}-0123abcd.part"  # a running process's
    unrelated = tmp_path / ".other-1-0123abcd.part"
    for path in (stale, alive, unrelated):
        path.write_text("partial")
        os.utime(path, (old, old))
    recent.write_text("partial")
    atomic_write_text(tmp_path / "model.json", "{}")
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["model.json", recent.name, alive.name, unrelated.name]
    )


def test_errors_name_the_destination_not_the_temporary_file(booster, tmp_path, monkeypatch):
    missing_folder = tmp_path / "absent" / "model.json"
    with pytest.raises(FileNotFoundError) as error:
        booster.save_model(missing_folder)
    assert str(missing_folder) in str(error.value) and ".part" not in str(error.value)

    def failing_replace(source, destination):
        raise PermissionError(13, "Permission denied", source)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(PermissionError) as error:
        booster.save_model(tmp_path / "model.json")
    assert "model.json" in str(error.value) and ".part" not in str(error.value)
    assert os.listdir(tmp_path) == []


def test_ubj_names_are_refused(booster, tmp_path):
    with pytest.raises(ValueError, match="UBJSON.*JSON only.*.json"):
        booster.save_model(tmp_path / "model.ubj")
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------
# Corrupt files
# ---------------------------------------------------------------------------


def test_truncated_files_raise_value_error(booster, tmp_path):
    raw = booster.save_raw()
    path = tmp_path / "model.json"
    offsets = sorted(set(np.linspace(0, len(raw) - 1, 80).astype(int)) | {1, len(raw) - 1})
    for offset in offsets:
        path.write_bytes(raw[:offset])
        with pytest.raises(ValueError, match="Invalid gpuboost model"):
            Booster.load_model(path)


def test_flipped_bytes(booster, tmp_path):
    raw = bytearray(booster.save_raw())
    path = tmp_path / "model.json"
    for position, value in [
        (0, ord("[")),
        (5, 0xFF),
        (len(raw) - 1, ord("]")),
        (raw.index(b'"trees"') + 1, ord("x")),
    ]:
        corrupted = bytearray(raw)
        corrupted[position] = value
        path.write_bytes(bytes(corrupted))
        with pytest.raises(ValueError):
            Booster.load_model(path)


@pytest.mark.parametrize(
    "text", ["", "garbage", "[]", "null", "1", '"gpuboost-model"', "[" * 100_000]
)
def test_not_a_model_object(text):
    assert_invalid(text, match="Invalid gpuboost model")


def test_wrong_format_name(document):
    document["format"] = "xgboost-model"
    assert_invalid(document, match="'format'")
    del document["format"]
    assert_invalid(document, match="'format'")


@pytest.mark.parametrize("version", [0, 2, "1", 1.0, True, None])
def test_wrong_version(document, version):
    document["version"] = version
    assert_invalid(document, match="version")


def test_child_index_out_of_range(document):
    tree = document["trees"][0]
    n_nodes = len(tree["feature"])
    for bad in (n_nodes, -1, 0, 10**6):
        tree["left_child"][0] = bad
        assert_invalid(document, match="child|out-of-range")


def test_cycle_to_an_ancestor(document):
    tree = document["trees"][0]
    # Node 1 is internal; make one of its children point back to node 1's parent's child.
    assert tree["feature"][1] >= 0
    tree["left_child"][tree["left_child"][1]] = 1
    tree["right_child"][tree["left_child"][1]] = 2
    tree["feature"][tree["left_child"][1]] = 0
    assert_invalid(document, match="reached twice")


def test_shared_child_and_unreachable_node(document):
    tree = document["trees"][0]
    tree["right_child"][0] = tree["left_child"][0]
    assert_invalid(document, match="reached twice|unreachable")


def test_leaf_with_children(document):
    tree = document["trees"][0]
    leaf = tree["feature"].index(-1)
    tree["left_child"][leaf] = 1
    assert_invalid(document, match="leaf has children")


@pytest.mark.parametrize("feature", [5, 1000, -2])
def test_feature_index_out_of_range(document, feature):
    document["trees"][1]["feature"][0] = feature
    assert_invalid(document, match="feature index")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("field", ["threshold", "value", "gain", "cover"])
def test_non_finite_numbers(booster, field, token):
    text = booster.to_json()
    document = json.loads(text)
    original = json.dumps(document["trees"][0][field], separators=(",", ":"))
    values = list(document["trees"][0][field])
    values[0] = "TOKEN"
    replaced = json.dumps(values, separators=(",", ":")).replace('"TOKEN"', token)
    text = text.replace(f'"{field}":{original}', f'"{field}":{replaced}', 1)
    assert token in text
    assert_invalid(text, match="non-finite")


@pytest.mark.parametrize("token", ["NaN", "Infinity"])
def test_non_finite_base_margin(booster, token):
    text = booster.to_json()
    document = json.loads(text)
    value = json.dumps(document["learner"]["base_margin"])
    text = text.replace(f'"base_margin":{value.replace(" ", "")}', f'"base_margin":[{token}]')
    assert token in text
    assert_invalid(text, match="base_margin")


def test_unknown_and_missing_tree_fields(document):
    document["trees"][0]["split_type"] = [0] * len(document["trees"][0]["feature"])
    assert_invalid(document, match="unknown fields")
    del document["trees"][0]["split_type"]
    del document["trees"][0]["cover"]
    assert_invalid(document, match="'cover'")


@pytest.mark.parametrize(
    "field, value",
    [
        ("feature", "0"),
        ("feature", 1.5),
        ("feature", True),
        ("default_left", 2),
        ("default_left", True),
        ("threshold", "0.5"),
        ("threshold_bin", 256),
        ("threshold_bin", -1),
        ("count", -3),
        ("value", None),
        ("left_child", 2**40),
    ],
)
def test_bad_tree_entries(document, field, value):
    document["trees"][0][field][0] = value
    assert_invalid(document)


def test_tree_array_lengths(document):
    document["trees"][0]["gain"].append(0.0)
    assert_invalid(document, match="entries")
    document["trees"][0] = {name: [] for name in TREE_ARRAYS}
    assert_invalid(document, match="no nodes")
    document["trees"][0] = {name: 0 for name in TREE_ARRAYS}
    assert_invalid(document, match="wrong type")
    document["trees"][0] = [1, 2]
    assert_invalid(document, match="not an object")


@pytest.mark.parametrize(
    "key, value",
    [
        ("n_features", 0),
        ("n_features", 4),
        ("n_features", "5"),
        ("n_outputs", 0),
        ("n_outputs", 3),
        ("feature_names", ["a"] * 4),
        ("feature_names", [1, 2, 3, 4, 5]),
        ("base_margin", [0.0, 0.0]),
        ("base_margin", ["0"]),
        ("base_margin", [True]),
        ("best_iteration", 4),
        ("best_iteration", -1),
        ("best_iteration", 1.0),
        ("best_score", "good"),
        ("attributes", {"a": 1}),
        ("attributes", []),
        ("params", {"max_dept": 3}),
        ("params", {"learning_rate": -1}),
        ("params", []),
    ],
)
def test_bad_learner_entries(document, key, value):
    document["learner"][key] = value
    assert_invalid(document)


def test_missing_learner_entries(document):
    for key in ("params", "n_outputs", "n_features", "feature_names", "base_margin"):
        broken = json.loads(json.dumps(document))
        del broken["learner"][key]
        assert_invalid(broken, match=key)
    del document["trees"]
    assert_invalid(document, match="trees")


def test_validate_tree_dict_returns_the_tree(booster):
    tree = validate_tree_dict(booster.trees[2].to_dict(), n_features=5, tree_index=2)
    assert tree == booster.trees[2]
    with pytest.raises(ValueError, match="tree 7"):
        validate_tree_dict({"feature": [-1]}, n_features=5, tree_index=7)


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        Booster.load_model(tmp_path / "absent.json")


@pytest.mark.parametrize("where", ["threshold", "value", "count", "base_margin"])
def test_huge_integers_raise_value_error(booster, where):
    document = json.loads(booster.to_json())
    if where == "base_margin":
        document["learner"]["base_margin"][0] = 10**400
    else:
        document["trees"][0][where][0] = 10**400
    assert_invalid(document, match="Invalid gpuboost model")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_best_score(booster, token):
    text = booster.to_json().replace('"best_score":null', f'"best_score":{token}')
    assert token in text
    assert_invalid(text, match="best_score")


def test_n_outputs_must_match_the_objective(document):
    document["learner"]["params"].update(objective="multi:softprob", num_class=3)
    assert_invalid(document, match="n_outputs|num_class")


# ---------------------------------------------------------------------------
# Fuzzing
# ---------------------------------------------------------------------------


def mutate(raw, rng):
    """One random corruption of the bytes ``raw``."""
    data = bytearray(raw)
    kind = int(rng.integers(0, 7))
    position = int(rng.integers(0, len(data)))
    if kind == 0:  # flip one bit
        data[position] ^= 1 << int(rng.integers(0, 8))
    elif kind == 1:  # replace a byte by a JSON-significant character
        data[position] = rng.choice(list(b'{}[],:"-.0123456789eEn '))
    elif kind == 2:  # delete a short slice
        del data[position : position + int(rng.integers(1, 20))]
    elif kind == 3:  # duplicate a short slice
        chunk = data[position : position + int(rng.integers(1, 20))]
        data[position:position] = chunk
    elif kind == 4:  # change a digit
        digits = [i for i, b in enumerate(data) if chr(b).isdigit()]
        data[digits[int(rng.integers(0, len(digits)))]] = ord(str(int(rng.integers(0, 10))))
    elif kind == 5:  # swap two bytes
        other = int(rng.integers(0, len(data)))
        data[position], data[other] = data[other], data[position]
    else:  # insert a token
        token = rng.choice([b"-1", b"0", b"1e5", b"null", b"true", b'"x"', b"[]", b"{}", b","])
        data[position:position] = token
    return bytes(data)


def test_random_mutations_load_identically_or_raise_value_error(booster, tmp_path):
    rng = np.random.default_rng(2024)
    raw = booster.save_raw()
    original_document = json.loads(raw)
    path = tmp_path / "model.json"
    outcomes = {"rejected": 0, "loaded": 0}
    for _ in range(N_FUZZ_MUTATIONS):
        mutated = mutate(raw, rng)
        path.write_bytes(mutated)
        try:
            loaded = Booster.load_model(path)
        except ValueError:
            outcomes["rejected"] += 1
            continue
        outcomes["loaded"] += 1
        # Whatever loads is a valid model: it serializes and reloads to itself ...
        again = Booster.from_json(loaded.to_json())
        assert again.to_json() == loaded.to_json()
        # ... and equals the original when the mutation did not change the document.
        if json.loads(mutated) == original_document:
            assert loaded.save_raw() == raw
    assert outcomes["rejected"] > N_FUZZ_MUTATIONS // 2
    assert outcomes["loaded"] > 0
