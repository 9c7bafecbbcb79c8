"""The ``gpuboost`` console command: ``demo``, ``train``, ``predict``, ``doctor`` and
``compile``.

Usage::

    gpuboost demo [--rows 200000] [--features 28] [--rounds 100] [--device auto]
                  [--max-depth 6] [--learning-rate 0.3] [--seed 0]
    gpuboost train --data train.csv --label-column NAME [--label-column NAME2 ...]
                   [--valid valid.csv] [--no-header]
                   [--objective NAME] [--rounds 100] [--param key=value ...]
                   [--model-out model.json] [--device auto] [--early-stopping-rounds N]
    gpuboost predict --model model.json --data test.csv [--output preds.csv]
                     [--output-margin] [--label-column NAME] [--no-header]
    gpuboost doctor [--rows 1000000]
    gpuboost compile [--processes N]
    gpuboost --version

CSV files have a header line (a first line of numbers is refused: ``--no-header``
reads files without one, columns numbered from 0); an empty field (or ``NA``,
``NaN``, ``null``, ``?``) is a missing value. Errors in the input are reported as
``gpuboost: error: ...`` on stderr with exit status 2, without a traceback.
"""

import argparse
import sys
import time

import numpy as np

from ._version import __version__
from .backends import DeviceUnavailableError, get_backend
from .boosting.train import train
from .core.dtypes import X_DTYPE
from .data.convert import feature_positions, has_default_names
from .data.dataset import Dataset
from .data.io import read_csv
from .datasets import make_higgs_like
from .doctor import EMULATED_TIMING_ROWS, TIMING_ROWS, run_doctor
from .metrics import get_metric
from .model.booster import Booster
from .model.model_io import atomic_write_text, check_model_path
from .params import canonical_name
from .warmup import warm_up

__all__ = ["main", "parse_param"]

#: Exit status of a run that failed on bad input (as argparse's usage errors).
EXIT_ERROR = 2
#: Exit status after Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130
#: Errors reported as one ``gpuboost: error:`` line instead of a traceback.
REPORTED_ERRORS = (ValueError, TypeError, OSError, DeviceUnavailableError)

# -- demo defaults: about 30-60 s on a 2-core CPU with the NumPy backend ------ #
DEMO_ROWS = 200_000
DEMO_FEATURES = 28
DEMO_ROUNDS = 100
DEMO_MAX_DEPTH = 6
DEMO_LEARNING_RATE = 0.1
#: Fraction of the demo rows held out for testing.
DEMO_TEST_FRACTION = 0.1
#: Smallest demo size, so that both splits hold both classes.
DEMO_MIN_ROWS = 100
#: Rounds between two progress lines of ``demo`` and ``train``.
PROGRESS_PERIOD = 10
#: Metrics the demo reports on the test split, in this order (the last, auc,
#: would drive early stopping).
DEMO_METRICS = ("logloss", "auc")

#: Header of the predictions of a single-output model; multi-output models
#: get PREDICTION_COLUMN + "_<k>".
PREDICTION_COLUMN = "prediction"


# --------------------------------------------------------------------------- #
# CSV input and output
# --------------------------------------------------------------------------- #


def _split_label(path, names, values, label_columns, required, header=True):
    """Remove the label columns; returns (feature names, features, label or None): the
    label of shape (n_rows,) for one column, (n_rows, k) for k (several targets).

    Without a header (``header=False``) the columns are named by position (``'0'``,
    ``'1'``, ...) and each of ``label_columns`` is such a position.
    """
    if not label_columns:
        return names, values, None
    indices = []
    for label_column in label_columns:
        if not header and not (label_column.isdigit() and int(label_column) < len(names)):
            raise ValueError(
                f"with --no-header, --label-column is the label's position (0 to "
                f"{len(names) - 1}: {path} has {len(names)} columns), got {label_column!r}."
            )
        if names.count(label_column) > 1:
            raise ValueError(f"{path} has several columns named {label_column!r}.")
        if label_column not in names:
            if not required:
                continue
            raise ValueError(
                f"label column {label_column!r} is not in {path}; its columns are: "
                f"{', '.join(names)}."
            )
        if names.index(label_column) in indices:
            raise ValueError(f"--label-column {label_column!r} is given twice.")
        indices.append(names.index(label_column))
    if not indices:
        return names, values, None
    feature_names = [name for i, name in enumerate(names) if i not in indices]
    features = np.ascontiguousarray(np.delete(values, indices, axis=1))
    label = values[:, indices].astype(np.float64)
    return feature_names, features, label[:, 0] if len(indices) == 1 else label


def _select_model_features(path, names, features, model_names, label_column, header=True):
    """The columns of ``features`` in the model's feature order: matched by name (columns
    the model does not use are ignored, with a note), or by position for a file without
    a header or a model trained without feature names."""
    if not header or (has_default_names(model_names) and len(names) == len(model_names)):
        if features.shape[1] != len(model_names):
            raise ValueError(
                f"{path} has {features.shape[1]} feature columns, the model "
                f"{len(model_names)}; without a header they are matched by position."
            )
        return features
    try:
        positions = feature_positions(names, model_names, path, allow_unknown=True)
    except ValueError as error:
        hint = "" if label_column else " (pass --label-column if the file has a label column)"
        raise ValueError(f"{error} {path} has the columns: {', '.join(names)}{hint}.") from None
    unused = [name for name in names if name not in set(model_names)]
    if unused:
        print(
            f"gpuboost: note: ignoring columns of {path} the model does not use: "
            f"{', '.join(unused)}",
            file=sys.stderr,
        )
    return np.ascontiguousarray(features[:, positions])


def _format_predictions(predictions):
    """CSV text of the predictions, one column per output, exact float repr."""
    predictions = np.asarray(predictions, dtype=X_DTYPE)
    if predictions.ndim == 1:
        header = PREDICTION_COLUMN
        predictions = predictions.reshape(-1, 1)
    else:
        header = ",".join(f"{PREDICTION_COLUMN}_{k}" for k in range(predictions.shape[1]))
    lines = [header]
    lines.extend(",".join(repr(value) for value in row) for row in predictions.tolist())
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- #
# --param parsing
# --------------------------------------------------------------------------- #


def _parse_scalar(text):
    """An int, float, bool or None from its text; else the stripped text."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_param(text):
    """Parse one ``--param key=value``.

    Values are read as int, then float, then ``true``/``false``/``none``,
    else kept as a string; a value with commas is a list of such values
    (``eval_metric=auc,logloss``), unless it starts with a bracket: then it stays one
    string (``interaction_constraints=[[0,1],[2,3]]``, ``monotone_constraints=(1,0,-1)``).

    Returns
    -------
    (str, object)

    Raises
    ------
    ValueError
        Without ``=`` or with an empty key.
    """
    key, separator, value = text.partition("=")
    key = key.strip()
    if not separator or not key:
        raise ValueError(f"--param expects key=value, got {text!r}.")
    if "," in value and not value.lstrip().startswith(("[", "(")):
        return key, [_parse_scalar(item) for item in value.split(",")]
    return key, _parse_scalar(value)


def _training_params(param_texts, dedicated):
    """Params from ``--param`` items plus the dedicated options that were given.

    ``dedicated`` maps a parameter name to an option value (None = not given).
    """
    params, given_as = {}, {}
    for text in param_texts or []:
        key, value = parse_param(text)
        name = canonical_name(key)
        if name in given_as:
            raise ValueError(
                f"parameter {name!r} given twice (--param {given_as[name]} and --param {key})."
            )
        params[key] = value
        given_as[name] = key
    for name, value in dedicated.items():
        if value is None:
            continue
        if name in given_as:
            raise ValueError(
                f"parameter {name!r} given twice (--{name.replace('_', '-')} and "
                f"--param {given_as[name]}=...)."
            )
        params[name] = value
    return params


# --------------------------------------------------------------------------- #
# Devices
# --------------------------------------------------------------------------- #


def _cuda_unavailable_reason():
    """Why ``device='auto'`` does not pick CUDA here (a sentence)."""
    from . import backends
    from .backends.emulation import emulation_enabled

    if emulation_enabled():
        return (
            "'auto' never picks the CPU emulation of the CUDA kernels "
            "(GPUBOOST_EMULATE_CUDA is set); use --device cuda to run it"
        )
    reason = backends._cuda_reason()
    return reason or "the CUDA backend is not usable"


def _device_description(device):
    """``(used, line)``: 'cpu' or 'cuda', and a line saying which and why."""
    backend = get_backend(device)  # DeviceUnavailableError for an unusable 'cuda'
    used = "cuda" if backend.name == "cuda" else "cpu"
    line = f"device: {used} (requested {device!r}, {backend.name} backend)"
    if device == "auto" and used == "cpu":
        line += f"; no CUDA device: {_cuda_unavailable_reason()}"
    return used, line


# --------------------------------------------------------------------------- #
# Subcommands
# --------------------------------------------------------------------------- #


def _run_demo(args):
    if args.rows < DEMO_MIN_ROWS:
        raise ValueError(f"--rows must be at least {DEMO_MIN_ROWS}, got {args.rows}.")
    if args.features < 1 or args.rounds < 1 or args.max_depth < 1 or args.seed < 0:
        raise ValueError("--features, --rounds and --max-depth must be >= 1 and --seed >= 0.")
    _, device_line = _device_description(args.device)
    print(f"gpuboost {__version__} demo: HIGGS-like synthetic binary classification")
    print(device_line)
    print(
        f"settings: rows={args.rows} features={args.features} rounds={args.rounds} "
        f"max_depth={args.max_depth} learning_rate={args.learning_rate} seed={args.seed}"
    )

    start = time.perf_counter()
    X, y = make_higgs_like(args.rows, args.features, args.seed)
    n_test = max(1, int(round(args.rows * DEMO_TEST_FRACTION)))
    n_train = args.rows - n_test
    print(
        f"data: {X.shape[0]} rows x {X.shape[1]} features ({n_train} train, {n_test} test, "
        f"{y.mean():.1%} positive), generated in {time.perf_counter() - start:.1f} s"
    )

    start = time.perf_counter()
    dtrain = Dataset(X[:n_train], label=y[:n_train], seed=args.seed)
    dtest = Dataset(X[n_train:], label=y[n_train:], reference=dtrain)
    _ = dtrain.X_binned  # bin now, so the training time below is training only
    print(f"binned in {time.perf_counter() - start:.1f} s")

    params = {
        "objective": "binary:logistic",
        "eval_metric": list(DEMO_METRICS),
        "max_depth": args.max_depth,
        "learning_rate": args.learning_rate,
        "seed": args.seed,
        "device": args.device,
    }
    start = time.perf_counter()
    booster = train(
        params,
        dtrain,
        num_boost_round=args.rounds,
        evals=[(dtest, "test")],
        verbose_eval=PROGRESS_PERIOD,
    )
    elapsed = time.perf_counter() - start

    probability = booster.predict(dtest.data)
    label = dtest.label
    auc = get_metric("auc")(label, probability)
    logloss = get_metric("logloss")(label, probability)
    accuracy = 1.0 - get_metric("error")(label, probability)
    rounds = booster.num_boosted_rounds()
    print(f"test: AUC={auc:.4f} logloss={logloss:.4f} accuracy={accuracy:.4f}")
    print(f"training: {rounds} rounds in {elapsed:.1f} s ({rounds / elapsed:.2f} rounds/s)")
    return 0


def _run_train(args):
    if args.rounds < 0:
        raise ValueError(f"--rounds must be >= 0, got {args.rounds}.")
    check_model_path(args.model_out)  # before the training, not after it
    header = not args.no_header
    categorical = [name.strip() for name in (args.categorical or "").split(",") if name.strip()]
    names, values = read_csv(args.data, header=header, text_columns=categorical)
    feature_names, features, label = _split_label(
        args.data, names, values, args.label_column, required=True, header=header
    )
    if set(args.label_column) & set(categorical):
        raise ValueError("--categorical names a label column; it lists feature columns.")
    if not feature_names:
        raise ValueError(f"{args.data} has no feature columns besides the label.")
    params = _training_params(args.param, {"objective": args.objective, "device": args.device})
    # Without a header the features keep the default names f0, f1, ... (by position).
    dtrain = Dataset(
        features,
        label=label,
        feature_names=feature_names if header else None,
        categorical_features=[feature_names.index(name) for name in categorical],
    )
    evals = [(dtrain, "train")]
    if args.valid is not None:
        valid_names, valid_values = read_csv(args.valid, header=header, text_columns=categorical)
        valid_feature_names, valid_features, valid_label = _split_label(
            args.valid, valid_names, valid_values, args.label_column, required=True, header=header
        )
        valid_features = _select_model_features(
            args.valid,
            valid_feature_names,
            valid_features,
            dtrain.feature_names,
            args.label_column,
            header,
        )
        evals.append((Dataset(valid_features, label=valid_label, reference=dtrain), "valid"))
    elif args.early_stopping_rounds is not None:
        raise ValueError("--early-stopping-rounds needs a validation file: pass --valid.")
    _, device_line = _device_description(params.get("device", "auto"))
    print(device_line)
    print(f"data: {dtrain.n_rows} rows x {dtrain.n_features} features from {args.data}")
    start = time.perf_counter()
    booster = train(
        params,
        dtrain,
        num_boost_round=args.rounds,
        evals=evals,
        early_stopping_rounds=args.early_stopping_rounds,
        verbose_eval=PROGRESS_PERIOD,
    )
    elapsed = time.perf_counter() - start
    booster.save_model(args.model_out)
    best = (
        ""
        if booster.best_iteration is None
        else (f", best iteration {booster.best_iteration} (score {booster.best_score:.6g})")
    )
    print(f"trained {booster.num_boosted_rounds()} rounds in {elapsed:.1f} s{best}")
    print(f"model written to {args.model_out}")
    return 0


def _run_doctor(args):
    if args.rows is not None and args.rows < 0:
        raise ValueError(f"--rows must be >= 0, got {args.rows}.")
    return run_doctor(timing_rows=args.rows)


def _run_compile(args):
    if args.processes is not None and args.processes < 1:
        raise ValueError(f"--processes must be >= 1, got {args.processes}.")
    seconds = warm_up(processes=args.processes, say=print)
    print(f"the CPU kernels are compiled and cached ({seconds:.1f} s)")
    return 0


def _text_columns(booster, header):
    """The columns to read as text for ``booster``: its categorical features (by name;
    by position without a header)."""
    if booster.categories is None:
        return ()
    return [
        name if header else str(position)
        for position, (name, labels) in enumerate(zip(booster.feature_names, booster.categories))
        if labels is not None
    ]


def _run_predict(args):
    booster = Booster.load_model(args.model)
    header = not args.no_header
    names, values = read_csv(args.data, header=header, text_columns=_text_columns(booster, header))
    feature_names, features, _ = _split_label(
        args.data, names, values, args.label_column, required=False, header=header
    )
    features = _select_model_features(
        args.data, feature_names, features, booster.feature_names, args.label_column, header
    )
    predictions = booster.predict(features, output_margin=args.output_margin)
    text = _format_predictions(predictions)
    if args.output is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(args.output, text)
        print(f"{len(features)} predictions written to {args.output}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- #
# Parser and entry point
# --------------------------------------------------------------------------- #


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="gpuboost", description="Gradient-boosted decision trees on GPUs and CPUs."
    )
    parser.add_argument("--version", action="version", version=f"gpuboost {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    device_help = "'auto' (a GPU when usable, else the CPU), 'cpu', 'cuda' or 'cuda:N'"
    no_header_help = (
        "the CSV files have no header line: columns are numbered from 0 and features are "
        "matched by position"
    )

    demo = commands.add_parser(
        "demo",
        help="train on HIGGS-like synthetic data and report speed and accuracy",
        description="Generate a HIGGS-like synthetic binary classification data set "
        "(90% train, 10% test), train on it and report test AUC, logloss, "
        "accuracy and training speed.",
    )
    demo.add_argument("--rows", type=int, default=DEMO_ROWS, help="rows (default %(default)s)")
    demo.add_argument(
        "--features",
        type=int,
        default=DEMO_FEATURES,
        help="features; 28 as in HIGGS, extra ones are noise (default %(default)s)",
    )
    demo.add_argument(
        "--rounds", type=int, default=DEMO_ROUNDS, help="boosting rounds (default %(default)s)"
    )
    demo.add_argument("--device", default="auto", help=f"{device_help} (default %(default)s)")
    demo.add_argument(
        "--max-depth", type=int, default=DEMO_MAX_DEPTH, help="tree depth (default %(default)s)"
    )
    demo.add_argument(
        "--learning-rate",
        type=float,
        default=DEMO_LEARNING_RATE,
        help="learning rate (default %(default)s)",
    )
    demo.add_argument("--seed", type=int, default=0, help="data and training seed")
    demo.set_defaults(handler=_run_demo)

    train_parser = commands.add_parser(
        "train",
        help="train a model on a CSV file",
        description="Train on a CSV file with a header; the label column is given by name, "
        "every other column is a feature. Empty fields (and NA, NaN, null, ?) are missing "
        "values. A first line of numbers is refused as a header: pass --no-header for a file "
        "without one.",
    )
    train_parser.add_argument("--data", required=True, help="training CSV file")
    train_parser.add_argument(
        "--label-column",
        required=True,
        action="append",
        help="name of the label column (with --no-header: its position, from 0); given "
        "several times, one target per column (a model of several targets)",
    )
    train_parser.add_argument("--valid", help="validation CSV file (same columns)")
    train_parser.add_argument(
        "--categorical",
        metavar="NAMES",
        help="comma-separated categorical feature columns (positions with --no-header): "
        "read as text labels, split by category sets; predict reads them by label",
    )
    train_parser.add_argument("--no-header", action="store_true", help=no_header_help)
    train_parser.add_argument(
        "--objective", help="objective, e.g. binary:logistic (default reg:squarederror)"
    )
    train_parser.add_argument(
        "--rounds", type=int, default=DEMO_ROUNDS, help="boosting rounds (default %(default)s)"
    )
    train_parser.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="training parameter, repeatable (e.g. max_depth=3, eval_metric=auc,logloss)",
    )
    train_parser.add_argument(
        "--model-out", default="model.json", help="model file to write (default %(default)s)"
    )
    train_parser.add_argument("--device", help=f"{device_help} (default auto)")
    train_parser.add_argument(
        "--early-stopping-rounds",
        type=int,
        help="stop when the last metric on --valid has not improved for this many rounds",
    )
    train_parser.set_defaults(handler=_run_train)

    predict = commands.add_parser(
        "predict",
        help="predict a CSV file with a saved model",
        description="Predict with a model written by 'gpuboost train' (or Booster.save_model). "
        "Feature columns are matched to the model's feature names.",
    )
    predict.add_argument("--model", required=True, help="model JSON file")
    predict.add_argument("--data", required=True, help="CSV file with a header")
    predict.add_argument("--output", help="CSV file to write (default: standard output)")
    predict.add_argument(
        "--output-margin",
        action="store_true",
        help="raw margins instead of transformed predictions",
    )
    predict.add_argument(
        "--label-column",
        action="append",
        help="a label column to drop if present (with --no-header: its position, from 0); "
        "repeatable",
    )
    predict.add_argument("--no-header", action="store_true", help=no_header_help)
    predict.set_defaults(handler=_run_predict)

    doctor = commands.add_parser(
        "doctor",
        help="report versions, the GPU, kernel resources and CPU/GPU parity (for bug reports)",
        description="Print the versions of gpuboost, Python, NumPy, CuPy, the CUDA driver, "
        "runtime and NVRTC; every visible GPU; the registers and shared memory of every "
        "kernel; the parity of every primitive and of a few trainings with the CPU backend; "
        "the time of one boosting round; and whether this machine is supported. Exits 0 "
        "without a GPU, 1 when a GPU fails a check.",
    )
    doctor.add_argument(
        "--rows",
        type=int,
        help=f"rows of the timed boosting round (default {TIMING_ROWS:,} on a GPU, "
        f"{EMULATED_TIMING_ROWS:,} under the emulation; 0 skips it)",
    )
    doctor.set_defaults(handler=_run_doctor)

    compile_parser = commands.add_parser(
        "compile",
        help="compile and cache the CPU kernels now instead of at the first training",
        description="Compile every kernel signature the CPU backend's trainings and "
        "predictions use and write them to Numba's cache, so that the first training in a "
        "new process does not wait for compiles. 'pip install -e .' does this at install; "
        "run it after a non-editable install, in a container image, or after moving "
        "NUMBA_CACHE_DIR.",
    )
    compile_parser.add_argument(
        "--processes", type=int, help="worker processes (default: one per CPU core)"
    )
    compile_parser.set_defaults(handler=_run_compile)
    return parser


def main(argv=None):
    """Run the ``gpuboost`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 on a usage or input error (reported on stderr as
        ``gpuboost: error: ...``), 130 when interrupted.
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # --help, --version and usage errors
        code = exit_request.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_ERROR)
    try:
        return args.handler(args)
    except REPORTED_ERRORS as error:
        print(f"gpuboost: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("gpuboost: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
