"""Reference losses and data of the objective tests (tests/objectives/), written
independently of gpuboost.objectives."""

import numpy as np

from gpuboost.core.dtypes import Y_DTYPE

N_SAMPLES = 40
NUM_CLASS = 4
HUBER_DELTA = 0.7
QUANTILE_ALPHA = 0.3
FD_STEP = 1e-4  # finite difference step for gradients
FD_STEP_SECOND = 1e-3  # finite difference step for hessians
KINK_MARGIN = 1e-2  # keep |raw - y| and |raw - y| - delta away from 0
# Conventions (XGBoost floor and poisson step; exact softmax diagonal), restated to pin them down.
HESSIAN_FLOOR = 1e-16
MULTICLASS_HESSIAN_FACTOR = 1.0  # the exact diagonal of the softmax hessian
POISSON_MAX_DELTA_STEP = 0.7


# ---------------------------------------------------------------------------
# Reference losses (per row), written independently of the module.
# ---------------------------------------------------------------------------


def squared_loss(y, f):
    return 0.5 * (f - y) ** 2


def absolute_loss(y, f):
    return np.abs(f - y)


def huber_loss(y, f, delta=HUBER_DELTA):
    r = np.abs(f - y)
    return np.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta))


def pinball_loss(y, f, alpha=QUANTILE_ALPHA):
    return np.where(y >= f, alpha * (y - f), (1 - alpha) * (f - y))


def logistic_loss(y, f):
    p = 1.0 / (1.0 + np.exp(-f))
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def exponential_loss(y, f):
    return np.exp(-(2 * y - 1) * f)


def poisson_loss(y, f):
    return np.exp(f) - y * f


def gamma_loss(y, f):
    return y * np.exp(-f) + f


def make_tweedie_loss(rho):
    def tweedie_loss(y, f):
        if rho == 1.0:
            return poisson_loss(y, f)
        return -y * np.exp((1 - rho) * f) / (1 - rho) + np.exp((2 - rho) * f) / (2 - rho)

    return tweedie_loss


def softmax_loss(y, f):
    """Cross-entropy of rows f (n, K) against class indices y."""
    shifted = f - f.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_p[np.arange(len(y)), y.astype(int)]


def make_labels(name, rng, n=N_SAMPLES):
    if name == "binary:logistic":
        return rng.uniform(0, 1, n)
    if name == "binary:exponential":
        return rng.integers(0, 2, n).astype(Y_DTYPE)
    if name.startswith("multi:"):
        return rng.integers(0, NUM_CLASS, n).astype(Y_DTYPE)
    if name == "count:poisson":
        return rng.poisson(2.0, n).astype(Y_DTYPE)
    if name in ("reg:gamma", "reg:tweedie"):
        return rng.gamma(2.0, 1.5, n)
    if name.startswith("rank:"):  # relevance grades
        return rng.integers(0, 4, n).astype(Y_DTYPE)
    if name == "survival:aft":  # intervals: observed and right-censored times
        time = rng.gamma(2.0, 1.5, n)
        return np.column_stack([time, np.where(rng.uniform(size=n) < 0.3, np.inf, time)])
    return rng.normal(0, 2, n)


def make_raw(objective, rng, n=N_SAMPLES):
    k = objective.n_outputs()
    shape = (n,) if k == 1 else (n, k)
    return rng.normal(0, 1, shape)


PARAMS = {
    "num_class": NUM_CLASS,
    "huber_delta": HUBER_DELTA,
    "quantile_alpha": QUANTILE_ALPHA,
    "tweedie_variance_power": 1.5,
}

# name -> (reference loss, hessian = factor * second derivative of the loss,
#          or None when the hessian is the constant 1 instead)
SMOOTH_CASES = {
    "reg:squarederror": (squared_loss, 1.0),
    "binary:logistic": (logistic_loss, 1.0),
    "binary:exponential": (exponential_loss, 1.0),
    "count:poisson": (poisson_loss, np.exp(POISSON_MAX_DELTA_STEP)),
    "reg:gamma": (gamma_loss, 1.0),
    "reg:tweedie": (make_tweedie_loss(1.5), 1.0),
}
NONSMOOTH_CASES = {
    "reg:absoluteerror": absolute_loss,
    "reg:huber": huber_loss,
    "reg:quantile": pinball_loss,
}


def central_difference(loss, y, f, step):
    """Fourth-order central first difference of ``loss`` in ``f``."""
    return (
        -loss(y, f + 2 * step)
        + 8 * loss(y, f + step)
        - 8 * loss(y, f - step)
        + loss(y, f - 2 * step)
    ) / (12 * step)


def second_difference(loss, y, f, step):
    """Fourth-order central second difference of ``loss`` in ``f``."""
    numerator = (
        -loss(y, f + 2 * step)
        + 16 * loss(y, f + step)
        - 30 * loss(y, f)
        + 16 * loss(y, f - step)
        - loss(y, f - 2 * step)
    )
    return numerator / (12 * step**2)
