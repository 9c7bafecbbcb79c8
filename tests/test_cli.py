"""Tests of gpuboost.cli: the ``gpuboost`` console command."""

import csv
import os

import numpy as np
import pytest

import gpuboost
from gpuboost.cli import main, parse_param
from gpuboost.datasets import make_higgs_like


def write_csv(path, names, rows):
    """Write a CSV with a header; None becomes an empty (missing) field."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        for row in rows:
            writer.writerow(
                [
                    ""
                    if value is None or (isinstance(value, float) and np.isnan(value))
                    else repr(float(value))
                    for value in row
                ]
            )


def read_predictions(path_or_text, from_text=False):
    """Header and float values of a predictions CSV."""
    lines = path_or_text if from_text else open(path_or_text, encoding="utf-8").read()
    rows = list(csv.reader(lines.splitlines()))
    return rows[0], np.array([[float(v) for v in row] for row in rows[1:]])


@pytest.fixture
def table(tmp_path):
    """A regression CSV: columns a, label, b, c; some missing values in b."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X[::7, 1] = np.nan
    y = X[:, 0] * 2.0 + np.nan_to_num(X[:, 1]) + 0.1 * rng.normal(size=300)
    path = tmp_path / "train.csv"
    write_csv(
        path, ["a", "label", "b", "c"], [[X[i, 0], y[i], X[i, 1], X[i, 2]] for i in range(len(y))]
    )
    return path, X, y


def run(capsys, argv):
    """``main(argv)`` and its (stdout, stderr)."""
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- #
# demo and the generator
# --------------------------------------------------------------------------- #


def test_demo_small_run(capsys):
    code, out, err = run(capsys, ["demo", "--rows", 3000, "--rounds", 5, "--device", "cpu"])
    assert code == 0, err
    assert "device: cpu" in out
    assert "3000 rows x 28 features" in out
    assert "test-logloss" in out and "test-auc" in out
    auc_text = out.split("AUC=")[1].split()[0]
    assert 0.6 < float(auc_text) <= 1.0
    assert "rounds/s" in out


def test_demo_auto_reports_device(capsys):
    code, out, err = run(capsys, ["demo", "--rows", 500, "--rounds", 1, "--features", 5])
    assert code == 0, err
    if gpuboost.cuda_available() and "GPUBOOST_EMULATE_CUDA" not in os.environ:
        assert "device: cuda" in out
    else:
        assert "device: cpu" in out and "no CUDA device:" in out
    assert "500 rows x 5 features" in out


def test_demo_rejects_tiny_data(capsys):
    code, _, err = run(capsys, ["demo", "--rows", 10])
    assert code == 2
    assert err.startswith("gpuboost: error:") and "--rows" in err


def test_demo_help_prints_plain_percent_signs(capsys):
    code, out, _ = run(capsys, ["demo", "--help"])
    assert code == 0
    assert "(90% train, 10% test)" in " ".join(out.split()) and "%%" not in out


# --------------------------------------------------------------------------- #
# train and predict
# --------------------------------------------------------------------------- #


def test_train_predict_round_trip(tmp_path, capsys, table):
    path, X, _ = table
    model_path = tmp_path / "model.json"
    code, out, err = run(
        capsys,
        [
            "train",
            "--data",
            path,
            "--label-column",
            "label",
            "--rounds",
            5,
            "--param",
            "max_depth=3",
            "--model-out",
            model_path,
            "--device",
            "cpu",
        ],
    )
    assert code == 0, err
    assert "model written to" in out
    booster = gpuboost.Booster.load_model(model_path)
    assert booster.feature_names == ["a", "b", "c"]
    assert booster.num_boosted_rounds() == 5
    assert booster.params["max_depth"] == 3 and isinstance(booster.params["max_depth"], int)
    expected = booster.predict(X)

    output_path = tmp_path / "predictions.csv"
    code, _, err = run(
        capsys,
        [
            "predict",
            "--model",
            model_path,
            "--data",
            path,
            "--label-column",
            "label",
            "--output",
            output_path,
        ],
    )
    assert code == 0, err
    header, predictions = read_predictions(output_path)
    assert header == ["prediction"]
    np.testing.assert_array_equal(predictions[:, 0], expected)

    # To standard output; margins; for regression margins equal predictions.
    code, out, err = run(
        capsys,
        [
            "predict",
            "--model",
            model_path,
            "--data",
            path,
            "--label-column",
            "label",
            "--output-margin",
        ],
    )
    assert code == 0, err
    _, margins = read_predictions(out, from_text=True)
    np.testing.assert_array_equal(margins[:, 0], booster.predict(X, output_margin=True))


def test_predict_matches_columns_by_name(tmp_path, capsys, table):
    path, X, _ = table
    model_path = tmp_path / "model.json"
    assert (
        main(
            [
                "train",
                "--data",
                str(path),
                "--label-column",
                "label",
                "--rounds",
                "3",
                "--model-out",
                str(model_path),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    capsys.readouterr()
    booster = gpuboost.Booster.load_model(model_path)
    # Columns reordered, no label, an extra id column: matched by name.
    shuffled = tmp_path / "shuffled.csv"
    write_csv(
        shuffled,
        ["c", "id", "a", "b"],
        [[X[i, 2], float(i), X[i, 0], X[i, 1]] for i in range(len(X))],
    )
    code, out, err = run(capsys, ["predict", "--model", model_path, "--data", shuffled])
    assert code == 0, err
    assert "ignoring columns" in err and "id" in err
    _, predictions = read_predictions(out, from_text=True)
    np.testing.assert_array_equal(predictions[:, 0], booster.predict(X))

    incomplete = tmp_path / "incomplete.csv"
    write_csv(incomplete, ["a", "c"], [[X[i, 0], X[i, 2]] for i in range(5)])
    code, _, err = run(capsys, ["predict", "--model", model_path, "--data", incomplete])
    assert code == 2
    assert "gpuboost: error:" in err and "missing ['b']" in err


def test_files_without_a_header(tmp_path, capsys, table):
    path, X, y = table
    rows = [[y[i], X[i, 0], X[i, 1], X[i, 2]] for i in range(len(y))]
    headerless = tmp_path / "headerless.csv"
    with open(headerless, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [["" if np.isnan(v) else repr(float(v)) for v in row] for row in rows]
        )
    model_path = tmp_path / "model.json"
    train_argv = ["train", "--data", headerless, "--label-column", 0, "--rounds", 3]
    code, _, err = run(capsys, train_argv + ["--model-out", model_path])
    assert code == 2 and "only numbers" in err and "--no-header" in err
    code, _, err = run(capsys, train_argv + ["--model-out", model_path, "--no-header"])
    assert code == 0, err
    booster = gpuboost.Booster.load_model(model_path)
    assert booster.feature_names == ["f0", "f1", "f2"]
    expected = gpuboost.train(
        {}, gpuboost.Dataset(X, label=y), 3, evals=[], verbose_eval=False
    ).predict(X)
    argv = ["predict", "--model", model_path, "--data", headerless, "--no-header"]
    code, out, err = run(capsys, argv + ["--label-column", 0])
    assert code == 0, err
    np.testing.assert_array_equal(read_predictions(out, from_text=True)[1][:, 0], expected)
    code, _, err = run(capsys, argv)  # the label column is then a fourth feature
    assert code == 2 and "4 feature columns, the model 3" in err
    code, _, err = run(capsys, train_argv + ["--no-header", "--label-column", "y"])
    assert code == 2 and "position" in err


def test_narrow_fields_with_missing_markers_train(tmp_path, capsys):
    path = tmp_path / "narrow.csv"
    lines = ["x,y"] + [
        f"{'NA' if i % 5 == 0 else ('?' if i % 7 == 0 else i % 10)},{i % 2}" for i in range(60)
    ]
    path.write_text("\n".join(lines) + "\n")
    argv = ["train", "--data", path, "--label-column", "y", "--rounds", 2]
    code, _, err = run(capsys, argv + ["--model-out", tmp_path / "m.json"])
    assert code == 0, err


def test_categorical_columns_train_and_predict_by_label(tmp_path, capsys):
    """--categorical reads text columns as categories; predict reads them by label (an
    unseen one predicts as missing) whatever the column order."""
    rng = np.random.default_rng(3)
    colours = rng.choice(["red", "green", "blue", "grey", "pink", "teal"], 400)
    x = rng.normal(size=400)
    y = np.isin(colours, ["red", "blue", "teal"]) * 2.0 + x
    train = tmp_path / "train.csv"
    lines = ["colour,x,y"] + [
        f"{'NA' if i % 17 == 0 else colours[i]},{float(x[i])!r},{float(y[i])!r}" for i in range(400)
    ]
    train.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.json"
    argv = ["train", "--data", train, "--label-column", "y", "--categorical", "colour"]
    code, _, err = run(
        capsys, argv + ["--rounds", 5, "--param", "min_data_per_group=10", "--model-out", model]
    )
    assert code == 0, err
    booster = gpuboost.Booster.load_model(model)
    assert sorted(booster.categories[0]) == ["blue", "green", "grey", "pink", "red", "teal"]
    test = tmp_path / "test.csv"
    test.write_text("x,colour\n0.5,red\n0.5,purple\n0.5,NA\n0.5,green\n")
    code, out, err = run(capsys, ["predict", "--model", model, "--data", test])
    assert code == 0, err
    values = [float(v) for v in out.split()[1:]]
    assert values[1] == values[2]  # unseen = missing
    assert values[0] - values[3] > 1.0  # red vs green


def test_binary_training_with_validation_and_early_stopping(tmp_path, capsys):
    X, y = make_higgs_like(2000, n_features=6, seed=1)
    names = [f"x{i}" for i in range(6)] + ["target"]
    train_path, valid_path = tmp_path / "train.csv", tmp_path / "valid.csv"
    write_csv(train_path, names, np.column_stack([X[:1500], y[:1500]]).tolist())
    write_csv(valid_path, names, np.column_stack([X[1500:], y[1500:]]).tolist())
    model_path = tmp_path / "model.json"
    code, out, err = run(
        capsys,
        [
            "train",
            "--data",
            train_path,
            "--valid",
            valid_path,
            "--label-column",
            "target",
            "--objective",
            "binary:logistic",
            "--param",
            "eval_metric=logloss,auc",
            "--param",
            "learning_rate=0.5",
            "--rounds",
            200,
            "--early-stopping-rounds",
            3,
            "--model-out",
            model_path,
            "--device",
            "cpu",
        ],
    )
    assert code == 0, err
    assert "valid-auc" in out and "best iteration" in out
    booster = gpuboost.Booster.load_model(model_path)
    assert booster.params["objective"] == "binary:logistic"
    assert booster.params["eval_metric"] == ["logloss", "auc"]
    assert booster.best_iteration is not None
    assert booster.num_boosted_rounds() < 200


def test_multiclass_predictions_have_one_column_per_class(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)
    path = tmp_path / "train.csv"
    write_csv(path, ["u", "v", "y"], np.column_stack([X, y]).tolist())
    model_path = tmp_path / "model.json"
    assert (
        main(
            [
                "train",
                "--data",
                str(path),
                "--label-column",
                "y",
                "--rounds",
                "3",
                "--objective",
                "multi:softprob",
                "--param",
                "num_class=3",
                "--model-out",
                str(model_path),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    capsys.readouterr()
    code, out, err = run(
        capsys, ["predict", "--model", model_path, "--data", path, "--label-column", "y"]
    )
    assert code == 0, err
    header, predictions = read_predictions(out, from_text=True)
    assert header == ["prediction_0", "prediction_1", "prediction_2"]
    np.testing.assert_allclose(predictions.sum(axis=1), 1.0)


def test_several_label_columns_train_a_model_of_several_targets(tmp_path, capsys):
    """``--label-column`` given twice: two targets, one tree of vector leaves a round;
    predict drops both columns and writes a column per target."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    Y = np.column_stack([X[:, 0], X[:, 0] - X[:, 1]])
    path = tmp_path / "train.csv"
    write_csv(path, ["y1", "u", "y2", "v"], np.column_stack([Y[:, 0], X[:, 0], Y[:, 1], X[:, 1]]))
    model_path = tmp_path / "model.json"
    code, _, err = run(
        capsys,
        [
            "train", "--data", path, "--label-column", "y1", "--label-column", "y2",
            "--rounds", "3", "--param", "multi_strategy=multi_output_tree",
            "--model-out", model_path, "--device", "cpu",
        ],
    )  # fmt: skip
    assert code == 0, err
    booster = gpuboost.Booster.load_model(model_path)
    assert booster.vector_leaves and booster.feature_names == ["u", "v"]
    code, out, err = run(
        capsys,
        ["predict", "--model", model_path, "--data", path]
        + ["--label-column", "y1", "--label-column", "y2"],
    )
    assert code == 0, err
    header, predictions = read_predictions(out, from_text=True)
    assert header == ["prediction_0", "prediction_1"]
    np.testing.assert_allclose(predictions, booster.predict(X), rtol=1e-12)


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #


def test_bad_label_column_exits_2_with_clear_message(capsys, table):
    path, _, _ = table
    code, _, err = run(capsys, ["train", "--data", path, "--label-column", "nope"])
    assert code == 2
    assert err.startswith("gpuboost: error: label column 'nope' is not in")
    assert "a, label, b, c" in err
    assert "Traceback" not in err


def test_corrupt_model_exits_2(tmp_path, capsys, table):
    path, _, _ = table
    model_path = tmp_path / "model.json"
    model_path.write_text('{"format": "gpuboost-model", "version": 1, "learner": ')
    code, _, err = run(capsys, ["predict", "--model", model_path, "--data", path])
    assert code == 2
    assert err.startswith("gpuboost: error: Invalid gpuboost model")
    code, _, err = run(capsys, ["predict", "--model", tmp_path / "absent.json", "--data", path])
    assert code == 2
    assert "gpuboost: error:" in err and "absent.json" in err


def test_input_errors_exit_2(tmp_path, capsys, table):
    path, _, _ = table
    bad_value = tmp_path / "bad.csv"
    bad_value.write_text("a,b,label\n1,2,3\n4,oops,6\n")
    code, _, err = run(capsys, ["train", "--data", bad_value, "--label-column", "label"])
    assert code == 2 and "data row 2, column 'b': 'oops' is not a number" in err
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,label\n1,2,3\n4,5\n")
    code, _, err = run(capsys, ["train", "--data", ragged, "--label-column", "label"])
    assert code == 2 and "line 3" in err
    code, _, err = run(
        capsys, ["train", "--data", tmp_path / "absent.csv", "--label-column", "label"]
    )
    assert code == 2 and "absent.csv" in err
    code, _, err = run(
        capsys, ["train", "--data", path, "--label-column", "label", "--early-stopping-rounds", 2]
    )
    assert code == 2 and "--valid" in err
    code, _, err = run(
        capsys, ["train", "--data", path, "--label-column", "label", "--param", "max_depth"]
    )
    assert code == 2 and "key=value" in err
    code, _, err = run(
        capsys,
        [
            "train",
            "--data",
            path,
            "--label-column",
            "label",
            "--objective",
            "reg:absoluteerror",
            "--param",
            "objective=reg:squarederror",
        ],
    )
    assert code == 2 and "given twice" in err
    code, _, err = run(
        capsys, ["train", "--data", path, "--label-column", "label", "--param", "no_such_param=1"]
    )
    assert code == 2 and "no_such_param" in err
    code, _, err = run(
        capsys, ["train", "--data", path, "--label-column", "label", "--model-out", "m.ubj"]
    )
    assert code == 2 and "UBJSON" in err and not os.path.exists("m.ubj")
    code, _, err = run(capsys, ["train", "--data", path])  # argparse usage error
    assert code == 2 and "--label-column" in err


def test_version(capsys):
    code, out, _ = run(capsys, ["--version"])
    assert code == 0
    assert out.strip() == f"gpuboost {gpuboost.__version__}"


# --------------------------------------------------------------------------- #
# Helpers
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "text, expected",
    [
        ("max_depth=3", ("max_depth", 3)),
        ("learning_rate=0.05", ("learning_rate", 0.05)),
        ("objective=binary:logistic", ("objective", "binary:logistic")),
        ("eval_metric=auc,logloss", ("eval_metric", ["auc", "logloss"])),
        (" base_score = 1e-3 ", ("base_score", 0.001)),
        ("flag=true", ("flag", True)),
    ],
)
def test_parse_param(text, expected):
    key, value = parse_param(text)
    assert (key, value) == expected
    assert type(value) is type(expected[1])
