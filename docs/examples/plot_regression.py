"""
Regression
==========

Scikit-learn's diabetes table (442 rows, 10 features) with ``reg:squarederror`` and the
scikit-learn estimator :class:`gpuboost.GBRegressor`: held-out predictions against the
truth, and the RMSE of ``gpuboost.metrics``.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

import gpuboost
from gpuboost.metrics import get_metric

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

model = gpuboost.GBRegressor(n_estimators=300, learning_rate=0.03, max_depth=3, subsample=0.8)
model.fit(X_train, y_train)
prediction = model.predict(X_test)
print("held-out RMSE", get_metric("rmse")(y_test, prediction))

fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(y_test, prediction, s=12)
low, high = y.min(), y.max()
ax.plot([low, high], [low, high], color="grey", linewidth=1)
ax.set_xlabel("true disease progression")
ax.set_ylabel("predicted")
fig.tight_layout()
