"""A user objective: a callable ``func(raw_margin, dataset) -> (grad, hess)``."""

import numbers

import numpy as np

from ..core.array import to_numpy
from ..core.dtypes import Y_DTYPE
from .base import Objective, _IdentityLinkMixin

__all__ = ["CustomObjective", "CUSTOM_OBJECTIVE_NAME"]

#: The objective name recorded in a model trained with a user callable.
CUSTOM_OBJECTIVE_NAME = "custom"


class CustomObjective(_IdentityLinkMixin, Objective):
    """A user objective ``func(raw_margin, dataset) -> (grad, hess)``.

    As with XGBoost's ``obj=``: ``func`` receives the raw margins as a host
    NumPy array of shape (n_samples,) or (n_samples, n_outputs) and the
    training dataset (passed through unchanged), and returns gradient and
    hessian, each of the shape of the margins or, when ``n_outputs > 1``,
    flat of size ``n_samples * n_outputs`` in row-major order (element
    ``i * n_outputs + k`` is row ``i``, class ``k``).

    The returned values are used as they are: sample weights are NOT
    applied (``func`` can read them from the dataset), as in XGBoost.
    The link is the identity: predictions are raw margins, the base margin
    is 0 and ``base_score`` is used as the margin.

    Parameters
    ----------
    func : callable or None
        None for a model loaded from a file (see :meth:`from_params`).
    n_outputs : int, default=1
        Number of margin columns.
    """

    name = CUSTOM_OBJECTIVE_NAME
    default_metric = "rmse"

    def __init__(self, func, n_outputs=1):
        if func is not None and not callable(func):
            raise TypeError(f"CustomObjective: func must be callable, got {func!r}")
        if (
            isinstance(n_outputs, bool)
            or not isinstance(n_outputs, numbers.Integral)
            or n_outputs < 1
        ):
            raise ValueError(
                f"CustomObjective: n_outputs must be a positive integer, got {n_outputs!r}"
            )
        self.func = func
        self._n_outputs = int(n_outputs)

    @classmethod
    def from_params(cls, params, func=None):
        """Build from validated parameters: ``num_class`` outputs when above 1.

        Parameters
        ----------
        params : dict
            Validated parameters; only ``num_class`` is read.
        func : callable or None, default=None
            The user objective. None for a model loaded from a file, which
            records a custom objective by name only: it predicts raw margins
            (identity output) and cannot compute gradients.

        Returns
        -------
        objective : CustomObjective
        """
        num_class = params.get("num_class")
        n_outputs = num_class if num_class is not None and num_class > 1 else 1
        return cls(func, n_outputs=n_outputs)

    def n_outputs(self):
        return self._n_outputs

    def get_params(self):
        return {"func": self.func, "n_outputs": self._n_outputs}

    def gradients(self, xp, y, raw, weight, dataset=None):
        """Call ``func(raw_as_numpy, dataset)`` and validate its result.

        ``y`` and ``weight`` are not used (see the class docstring).

        Returns
        -------
        grad, hess : arrays of the shape of ``raw``, dtype float64

        Raises
        ------
        ValueError
            If ``func`` does not return two arrays of the expected shape,
            convertible to float64, with finite values, or if the hessians of an
            output are all <= 0.
        """
        raw = xp.asarray(raw, dtype=Y_DTYPE)
        if self.func is None:
            raise ValueError(
                "this model was trained with a custom objective, which is not "
                "saved in the model file; pass obj= to train() to continue training"
            )
        result = self.func(to_numpy(raw), dataset)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise ValueError(
                f"custom objective must return a pair (grad, hess), got {type(result).__name__}"
            )
        grad = self._validated(result[0], "grad", raw.shape)
        hess = self._validated(result[1], "hess", raw.shape)
        columns = hess.reshape(hess.shape[0], -1)
        no_positive = ~np.any(columns > 0, axis=0)
        if no_positive.any():
            which = f" (output {int(np.argmax(no_positive))})" if columns.shape[1] > 1 else ""
            raise ValueError(
                f"custom objective returned hessians that are all <= 0{which}: leaf values "
                f"-G / (H + lambda) need a positive sum of hessians, so the model would stay "
                f"constant. Return the second derivative of a convex loss, or a positive "
                f"constant (e.g. 1.0) for a first-order method."
            )
        return xp.asarray(grad), xp.asarray(hess)

    @staticmethod
    def _validated(values, what, raw_shape):
        """Return ``values`` as a float64 host array of shape ``raw_shape``."""
        if np.iscomplexobj(values):
            raise ValueError(
                f"custom objective returned a complex {what}; real values are required"
            )
        try:
            values = np.asarray(values, dtype=Y_DTYPE)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"custom objective returned a {what} that cannot be converted to float64: {error}"
            ) from None
        flat_size = int(np.prod(raw_shape))
        if values.shape != raw_shape:
            if len(raw_shape) == 2 and values.shape == (flat_size,):
                values = values.reshape(raw_shape)
            else:
                expected = f"{raw_shape}"
                if len(raw_shape) == 2:
                    expected += f" or ({flat_size},)"
                raise ValueError(
                    f"custom objective returned {what} of shape {values.shape}; expected {expected}"
                )
        if not np.isfinite(values).all():
            raise ValueError(f"custom objective returned a {what} with NaN or infinite values")
        return values

    def base_margin(self, y, weight):
        return np.zeros(self._n_outputs, dtype=Y_DTYPE)

    def base_score_to_margin(self, base_score):
        value = self._check_base_score(base_score, lambda v: True, "finite")
        return np.full(self._n_outputs, value, dtype=Y_DTYPE)
