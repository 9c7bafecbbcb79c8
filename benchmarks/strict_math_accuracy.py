"""Accuracy and speed of gpuboost's platform-independent functions (issue 28;
gpuboost.core.strict_math, docs/DESIGN.md "Platform-independent arithmetic").

Accuracy: for each function, ``--n`` random arguments over its whole useful range (and
the range that matters to training, |x| <= 40 for exp), compared with the exact value
(Python's :mod:`decimal` at 40 significant digits, correctly rounded there): the largest
error in ulps of the correctly rounded result and the share of results that are
correctly rounded (error <= 0.5 ulp). ``lgamma``'s, ``sin``'s and ``cos``'s exact values
come from mpmath (``pip install mpmath``; the test extra has it), at 120 bits; ``sin`` and
``cos`` on [-20, 20] and on their whole domain ``|x| <= 2**19``.

Speed (:func:`speed`): ns per element on 4M arguments of the compiled scalar function in
a Numba loop (what the CPU gradient kernels call), the compiled array loop (what the
vectorized function runs on NumPy arrays), the array code (the NumPy reference backend's
path and the GPU's through CuPy), NumPy's own ufunc and the C library's function in the
same kind of Numba loop (``math.exp`` compiles to libm's ``exp``).

    python benchmarks/strict_math_accuracy.py            # 1M arguments per function
    python benchmarks/strict_math_accuracy.py --n 20000  # quick
"""

import argparse
import math
import multiprocessing
import platform
import time
from decimal import Decimal, localcontext

import numpy as np

from gpuboost.core import strict_math

FUNCTIONS = ("exp", "exp2", "log", "log2")


def _arguments(name, n, rng):
    half = n // 2
    if name == "exp":
        return np.concatenate([rng.uniform(-745.0, 709.78, half), rng.uniform(-40, 40, n - half)])
    if name == "exp2":
        return np.concatenate([rng.uniform(-1074.0, 1023.9, half), rng.uniform(-60, 60, n - half)])
    # log, log2: every binade (subnormals included) and [0.5, 2).
    bits = rng.integers(1, 0x7FF0000000000000, half, dtype=np.int64).view(np.float64)
    return np.concatenate([bits, rng.uniform(0.5, 2.0, n - half)])


def _exact(name, x):
    with localcontext() as context:
        context.prec = 40
        argument = Decimal(float(x))
        if name == "exp":
            return argument.exp()
        if name == "exp2":
            return (argument * Decimal(2).ln()).exp()
        if name == "log":
            return argument.ln()
        return argument.ln() / Decimal(2).ln()


def _ulp_errors(task):
    name, arguments, results = task
    errors = np.empty(len(arguments))
    for i, (x, result) in enumerate(zip(arguments, results)):
        exact = _exact(name, x)
        rounded = float(exact)
        if rounded == 0.0 or math.isinf(rounded):
            errors[i] = 0.0 if result == rounded else math.inf
            continue
        ulp = Decimal(math.ulp(rounded))
        errors[i] = float(abs(Decimal(float(result)) - exact) / ulp)
    return errors


def accuracy(n, seed=0, processes=None, lgamma_n=200_000):
    rows = []
    rng = np.random.default_rng(seed)
    with multiprocessing.Pool(processes) as pool:
        for name in FUNCTIONS:
            x = _arguments(name, n, rng)
            results = getattr(strict_math, name)(np, x)
            chunks = np.array_split(np.arange(n), 64)
            errors = np.concatenate(
                pool.map(_ulp_errors, [(name, x[c], results[c]) for c in chunks])
            )
            rows.append((name, n, float(errors.max()), float(np.mean(errors <= 0.5))))
    n = lgamma_n
    import mpmath  # lgamma's reference (decimal has none)

    mpmath.mp.prec = 120
    positive = np.concatenate(
        [rng.uniform(1e-3, 30.0, n // 2), rng.uniform(0.5, 2.5, n // 4),
         np.exp(rng.uniform(-700.0, 700.0, n - n // 2 - n // 4))]
    )  # fmt: skip
    positive = positive[positive < 2.5e305]  # lgamma beyond is inf
    trig = np.concatenate(
        [
            rng.uniform(-20.0, 20.0, n // 2),
            rng.uniform(-strict_math.TRIG_LIMIT, strict_math.TRIG_LIMIT, n - n // 2),
        ]
    )
    # Vectorized only, with mpmath's reference (decimal has none of them).
    for name, reference, x in (("lgamma", mpmath.loggamma, positive), ("sin", mpmath.sin, trig),
                               ("cos", mpmath.cos, trig)):  # fmt: skip
        results = getattr(strict_math, name)(np, x)
        errors = np.array(
            [
                float(abs((mpmath.mpf(float(r)) - e) / math.ulp(float(e))))
                for r, e in ((r, reference(mpmath.mpf(float(v)))) for v, r in zip(x, results))
            ]
        )
        rows.append((name, len(x), float(errors.max()), float(np.mean(errors <= 0.5))))
    return rows


def _timed(function, *args, repeats=5):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
    return best


def speed(n=4_000_000, seed=1):
    """ns per element: the compiled scalar function in a one-thread Numba loop (what the
    gradient kernels call), the compiled array loop on every thread (what the vectorized
    function runs on NumPy arrays), the vectorized array code itself (the NumPy
    reference's path, and on CuPy arrays the GPU's), NumPy's ufunc, libm in a Numba loop."""
    from numba import njit

    from gpuboost.backends.cpu import strict_math as compiled

    def loop(scalar):
        @njit
        def apply(x, out):
            for i in range(x.shape[0]):
                out[i] = scalar(x[i])

        return apply

    libm = {
        "exp": lambda v: math.exp(v),
        "log": lambda v: math.log(v),
        "exp2": lambda v: 2.0**v,
        "log2": lambda v: math.log2(v),
    }
    rng = np.random.default_rng(seed)
    rows = []
    loops = dict(strict_math._HOST_LOOPS)
    for name in FUNCTIONS:
        x = rng.uniform(-40.0, 40.0, n) if name.startswith("exp") else rng.uniform(1e-3, 1e3, n)
        out = np.empty_like(x)
        ours, theirs = loop(getattr(compiled, name)), loop(njit(libm[name]))
        ours(x[:10], out[:10]), theirs(x[:10], out[:10])  # compile
        vectorized = getattr(strict_math, name)
        vectorized(np, x[:10])
        array_loop = 1e9 * _timed(vectorized, np, x) / n
        strict_math._HOST_LOOPS.clear()
        array_code = 1e9 * _timed(vectorized, np, x, repeats=2) / n
        strict_math._HOST_LOOPS.update(loops)
        rows.append(
            (
                name,
                1e9 * _timed(ours, x, out) / n,
                array_loop,
                array_code,
                1e9 * _timed(getattr(np, name), x) / n,
                1e9 * _timed(theirs, x, out) / n,
            )
        )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="arguments per function")
    parser.add_argument(
        "--lgamma-n", type=int, default=200_000, help="lgamma, sin and cos arguments (each)"
    )
    parser.add_argument("--skip-accuracy", action="store_true")
    arguments = parser.parse_args()
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            cpu = next(line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line)
    except (OSError, StopIteration):
        pass
    print(f"machine: {cpu}, NumPy {np.__version__}")
    if not arguments.skip_accuracy:
        print("\n| function | arguments | max error (ulp) | correctly rounded |")
        print("|---|---|---|---|")
        for name, n, worst, share in accuracy(arguments.n, lgamma_n=arguments.lgamma_n):
            print(f"| {name} | {n:,} | {worst:.3f} | {100 * share:.3f} % |")
    print("\n| function (ns/element) | compiled, 1 thread | array loop, all threads ", end="")
    print("| array code | NumPy's ufunc | libm in a Numba loop, 1 thread |")
    print("|---|---|---|---|---|---|")
    for name, ours, array_loop, array_code, numpy_ufunc, libm in speed():
        print(
            f"| {name} | {ours:.2f} | {array_loop:.2f} | {array_code:.1f} | {numpy_ufunc:.2f} "
            f"| {libm:.2f} |"
        )


if __name__ == "__main__":
    main()
