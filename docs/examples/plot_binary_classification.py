"""
Binary classification
=====================

A breast-cancer classifier (scikit-learn's bundled table, 569 rows, 30 features) with
``binary:logistic``: the held-out probabilities by true class, and the log loss and AUC
``gpuboost.metrics`` computes for them (the same bits on every machine).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

import gpuboost
from gpuboost.metrics import get_metric

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

params = {"objective": "binary:logistic", "max_depth": 3, "learning_rate": 0.1}
booster = gpuboost.train(params, gpuboost.Dataset(X_train, label=y_train), 200)
proba = booster.predict(X_test)

print("log loss", get_metric("logloss")(y_test, proba))
print("AUC", get_metric("auc")(y_test, proba))

fig, ax = plt.subplots(figsize=(6, 3.5))
bins = np.linspace(0, 1, 26)
ax.hist(proba[y_test == 0], bins=bins, alpha=0.7, label="malignant (0)")
ax.hist(proba[y_test == 1], bins=bins, alpha=0.7, label="benign (1)")
ax.set_xlabel("predicted probability of class 1")
ax.set_ylabel("held-out rows")
ax.legend()
fig.tight_layout()
