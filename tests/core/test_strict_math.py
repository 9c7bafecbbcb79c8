"""Tests of the platform-independent functions (gpuboost.core.strict_math and its compiled
twin gpuboost.backends.cpu.strict_math; the CUDA one: tests/backends/cuda/test_strict_math.py).

* Every constant is the exact rounding of its definition (derived again here with
  :mod:`decimal`, stdlib arbitrary precision) and ``cuda/strict_math.cuh`` holds the same.
* ``exp``, ``exp2``, ``log`` and ``log2`` are within 1 ulp of the correctly rounded value
  (a :mod:`decimal` reference at 40 digits) on random and edge arguments; special values
  follow IEEE / C99; ``lgamma`` against ``math.lgamma`` (an independent approximation).
* The compiled scalar functions give the vectorized ones' bits on random bit patterns
  (every exponent, subnormals, infinities, NaN).
The million-argument accuracy table is benchmarks/strict_math_accuracy.py (RESULTS.md).
"""

import math
import re
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from gpuboost.backends.cpu import jit
from gpuboost.backends.cpu import strict_math as compiled
from gpuboost.backends.cuda.sources import cuda_source_dir
from gpuboost.core import strict_math as sm

PRECISION = 60


def _ln2():
    with localcontext() as context:
        context.prec = PRECISION
        return Decimal(2).ln()


def _rounded(value):
    return float(Fraction(value))


def _truncated(value, bits):
    """``value`` with ``bits`` significant bits, rounded toward zero (exact)."""
    fraction = Fraction(value)
    exponent = math.frexp(float(fraction))[1]
    quantum = Fraction(2) ** (exponent - bits)
    return float(math.floor(fraction / quantum) * quantum)


def test_constants_are_the_roundings_of_their_definitions():
    ln2 = _ln2()
    assert sm.LN2 == _rounded(ln2)
    high = _truncated(1 / Fraction(ln2), 32)
    assert (sm.INV_LN2_HI, sm.INV_LN2_LO) == (high, _rounded(1 / Fraction(ln2) - Fraction(high)))
    assert sm.EXP_N_OVER_LN2 == _rounded(sm.EXP_TABLE_SIZE / Fraction(ln2))
    high = _truncated(Fraction(ln2) / sm.EXP_TABLE_SIZE, 32)
    assert (sm.EXP_LN2_OVER_N_HI, sm.EXP_LN2_OVER_N_LO) == (
        high,
        _rounded(Fraction(ln2) / sm.EXP_TABLE_SIZE - Fraction(high)),
    )
    high = _truncated(ln2, 42)
    assert (sm.LN2_HI, sm.LN2_LO) == (high, _rounded(Fraction(ln2) - Fraction(high)))
    assert sm.EXP_COEFFICIENTS == tuple(
        _rounded(Fraction(1, math.factorial(i))) for i in range(2, 7)
    )
    assert sm.LOG_COEFFICIENTS == tuple(_rounded(Fraction(2, 2 * i + 1)) for i in range(1, 12))
    with localcontext() as context:
        context.prec = PRECISION
        assert sm.SQRT2 == _rounded(Decimal(2).sqrt())
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
        assert sm.HALF_LOG_2PI == _rounded((2 * pi).ln() / 2)
        for j in range(sm.EXP_TABLE_SIZE):
            value = (Decimal(j) / sm.EXP_TABLE_SIZE * ln2).exp()
            assert sm.EXP_TABLE_HI[j] == _rounded(value), j
            assert sm.EXP_TABLE_LO[j] == _rounded(Fraction(value) - Fraction(sm.EXP_TABLE_HI[j]))
    bernoulli = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
                 Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6)]  # fmt: skip
    assert sm.STIRLING_COEFFICIENTS == tuple(
        _rounded(b / ((2 * i + 2) * (2 * i + 1))) for i, b in enumerate(bernoulli)
    )


def _hex_literals(text):
    return [float.fromhex(h) for h in re.findall(r"-?0x[0-9a-f]\.[0-9a-f]+p[+-]?\d+", text)]


def test_cuda_header_holds_the_python_constants():
    header = (cuda_source_dir() / "strict_math.cuh").read_text()
    table = header[header.index("STRICT_EXP_TABLE[2 * 64] = {") : header.index("};")]
    pairs = np.array(_hex_literals(table)).reshape(-1, 2)
    np.testing.assert_array_equal(pairs[:, 0], sm.EXP_TABLE_HI)
    np.testing.assert_array_equal(pairs[:, 1], sm.EXP_TABLE_LO)
    named = {
        "STRICT_ROUND_SHIFT": sm.ROUND_SHIFT,
        "STRICT_EXP_N_OVER_LN2": sm.EXP_N_OVER_LN2,
        "STRICT_EXP_LN2_OVER_N_HI": sm.EXP_LN2_OVER_N_HI,
        "STRICT_EXP_LN2_OVER_N_LO": sm.EXP_LN2_OVER_N_LO,
        "STRICT_LN2_HI": sm.LN2_HI,
        "STRICT_LN2_LO": sm.LN2_LO,
        "STRICT_LN2": sm.LN2,
        "STRICT_INV_LN2_HI": sm.INV_LN2_HI,
        "STRICT_INV_LN2_LO": sm.INV_LN2_LO,
        "STRICT_SQRT2": sm.SQRT2,
        "STRICT_TWO_54": sm.TWO_54,
        "STRICT_EXP_CLAMP": sm.EXP_CLAMP,
    }
    for name, value in named.items():
        match = re.search(rf"constexpr double {name} = ([^;]+);", header)
        assert match and float.fromhex(match.group(1)) == value, name
    # The polynomials, in Horner order: exp's from the highest degree inward.
    finish = header[header.index("strict_exp_finish(double") : header.index("strict_clamped")]
    assert _hex_literals(finish) == list(sm.EXP_COEFFICIENTS)
    parts = header[header.index("strict_log_parts(double") : header.index("strict_log_special")]
    assert _hex_literals(parts) == list(sm.LOG_COEFFICIENTS[::-1])


def _reference(function, x):
    """The exact value of ``function`` at the float ``x``, to 40 digits (Decimal)."""
    with localcontext() as context:
        context.prec = 40
        argument = Decimal(float(x))
        if function == "exp":
            return argument.exp()
        if function == "exp2":
            return (argument * Decimal(2).ln()).exp()
        if function == "log":
            return argument.ln()
        return argument.ln() / Decimal(2).ln()


def ulp_error(result, exact):
    """|result - exact| in ulps of the correctly rounded value (subnormal ulp below)."""
    rounded = float(exact)
    if rounded == 0.0 and exact == 0:
        return 0.0 if result == 0.0 else math.inf
    ulp = math.ulp(abs(rounded)) if rounded != 0.0 else math.ulp(0.0)
    return float(abs(Decimal(result) - exact) / Decimal(ulp))


def _arguments(function, rng, n):
    if function == "exp":
        return np.concatenate([rng.uniform(-745.0, 709.78, n), rng.normal(0, 2, n),
                               [1e-300, -1e-300, 1e-17, 709.78, -708.4, -744.0]])  # fmt: skip
    if function == "exp2":
        return np.concatenate(
            [rng.uniform(-1074.0, 1023.9, n), rng.normal(0, 2, n), [0.5, -1022.5]]
        )
    magnitudes = np.exp(rng.uniform(-744.0, 709.0, n))  # every binade, subnormals included
    return np.concatenate([magnitudes, rng.uniform(0.5, 2.0, n), [5e-324, 2.2e-308, 1.0 + 2**-52]])


@pytest.mark.parametrize("function", ["exp", "exp2", "log", "log2"])
def test_within_one_ulp_of_the_correctly_rounded_value(function):
    rng = np.random.default_rng(7)
    x = _arguments(function, rng, 1500)
    results = getattr(sm, function)(np, x)
    errors = [ulp_error(float(r), _reference(function, v)) for r, v in zip(results, x)]
    assert max(errors) < 1.0, x[int(np.argmax(errors))]


SPECIAL_CASES = {
    "exp": [(0.0, 1.0), (-0.0, 1.0), (np.inf, np.inf), (-np.inf, 0.0), (710.0, np.inf),
            (-746.0, 0.0), (-745.1, 5e-324), (1.0, math.e)],
    "exp2": [(0.0, 1.0), (10.0, 1024.0), (-1074.0, 5e-324), (1024.0, np.inf), (-1076.0, 0.0),
             (-np.inf, 0.0), (0.5, math.sqrt(2.0))],
    "log": [(1.0, 0.0), (0.0, -np.inf), (-0.0, -np.inf), (np.inf, np.inf), (-1.0, np.nan),
            (-np.inf, np.nan), (5e-324, -744.4400719213812), (2.0, math.log(2.0))],
    "log2": [(1.0, 0.0), (1024.0, 10.0), (0.5, -1.0), (5e-324, -1074.0), (0.0, -np.inf),
             (-2.0, np.nan), (np.inf, np.inf)],
}  # fmt: skip


@pytest.mark.parametrize("function", sorted(SPECIAL_CASES))
def test_special_values(function):
    cases = SPECIAL_CASES[function] + [(np.nan, np.nan)]
    x = np.array([c[0] for c in cases])
    expected = np.array([c[1] for c in cases])
    np.testing.assert_array_equal(getattr(sm, function)(np, x), expected)
    assert getattr(sm, function)(np, 2.0).shape == ()  # 0-d in, 0-d out


def test_lgamma_constants():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200

    def pair(value):
        hi = float(value)
        return hi, float(value - mpmath.mpf(hi))

    gamma = mpmath.euler
    assert (sm.LGAMMA_NEAR_ONE_LINEAR, sm.LGAMMA_NEAR_ONE_LINEAR_LO) == pair(-gamma)
    assert (sm.LGAMMA_NEAR_TWO_LINEAR, sm.LGAMMA_NEAR_TWO_LINEAR_LO) == pair(1 - gamma)
    n = len(sm.LGAMMA_NEAR_ONE)
    assert sm.LGAMMA_NEAR_ONE == tuple(
        float((-1) ** k * mpmath.zeta(k) / k) for k in range(2, n + 2)
    )
    assert sm.LGAMMA_NEAR_TWO == tuple(
        float((-1) ** k * (mpmath.zeta(k) - 1) / k) for k in range(2, n + 2)
    )
    assert (sm.HALF_LOG_2PI, sm.HALF_LOG_2PI_LO) == pair(mpmath.log(2 * mpmath.pi) / 2)
    assert (sm.TWELFTH, sm.TWELFTH_LO) == pair(mpmath.mpf(1) / 12)
    table_hi, table_lo = sm._dd_log_table()
    for j in range(sm.DD_LOG_TABLE_SIZE):
        assert (table_hi[j], table_lo[j]) == pair(mpmath.log(1 + mpmath.mpf(j) / 64)), j


def _lgamma_arguments(rng, n):
    return np.concatenate(
        [
            rng.uniform(1e-3, 30.0, n),
            rng.uniform(0.5, 2.5, n),  # both roots and the windows' edges
            1.0 + rng.uniform(-0.07, 0.07, n // 4),
            2.0 + rng.uniform(-0.07, 0.07, n // 4),
            np.exp(rng.uniform(-700.0, 700.0, n // 2)),
            [5e-324, 1e-300, 0.0625, 0.9375, 1.0625, 1.9375, 2.0625, 24.0, 1e300, 1.7e308],
        ]
    )


def test_lgamma_within_one_ulp():
    mpmath = pytest.importorskip("mpmath")  # the test extra's high-precision reference
    mpmath.mp.prec = 120
    x = _lgamma_arguments(np.random.default_rng(3), 2000)
    result = sm.lgamma(np, x)
    errors = []
    for value, got in zip(x, result):
        exact = mpmath.loggamma(mpmath.mpf(float(value)))
        errors.append(float(abs((mpmath.mpf(float(got)) - exact) / math.ulp(float(exact)))))
    assert max(errors) < 1.0, x[int(np.argmax(errors))]


def test_lgamma_exact_values_and_special_cases():
    integers = np.arange(1.0, sm.LGAMMA_EXACT_FACTORIAL_MAX + 1)
    exact = [_rounded(Decimal(math.factorial(int(n) - 1)).ln()) if n > 2 else 0.0 for n in integers]
    errors = [abs(r - e) / math.ulp(e or 1.0) for r, e in zip(sm.lgamma(np, integers), exact)]
    assert max(errors) <= 1.0  # log of the exact factorial
    assert sm.lgamma(np, 1.0) == 0.0 and sm.lgamma(np, 2.0) == 0.0
    assert sm.lgamma(np, 2.5).shape == ()
    special = sm.lgamma(np, np.array([0.0, -1.0, -0.5, np.inf, np.nan, -np.inf]))
    np.testing.assert_array_equal(special, [np.nan, np.nan, np.nan, np.inf, np.nan, np.nan])
    # Against the C library's (an independent approximation, a few ulps at most).
    x = _lgamma_arguments(np.random.default_rng(4), 3000)
    x = x[x < 1e305]  # the C library's overflows (inf: ours too)
    expected = [math.lgamma(v) for v in x]  # absolute error near the roots: glibc's
    np.testing.assert_allclose(sm.lgamma(np, x), expected, rtol=1e-14, atol=4e-15)


def _random_bit_patterns(rng, n):
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    near = rng.uniform(-1200.0, 1200.0, n)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
             709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412,
             1024.0, -1074.0, -1075.0, 1.0, 2.0]  # fmt: skip
    return np.concatenate([bits, near, rng.normal(0, 3, n), edges])


@pytest.mark.skipif(not jit.NUMBA_AVAILABLE, reason="needs Numba")
@pytest.mark.parametrize("function", ["exp", "exp2", "log", "log2", "erf"])
def test_compiled_scalar_functions_give_the_vectorized_bits(function):
    from numba import njit  # only with Numba (skipif above)

    scalar = getattr(compiled, function)

    @njit
    def apply(x, out):
        for i in range(x.shape[0]):
            out[i] = scalar(x[i])

    x = _random_bit_patterns(np.random.default_rng(11), 300_000)
    out = np.empty_like(x)
    apply(x, out)
    expected = getattr(sm, function)(np, x)
    np.testing.assert_array_equal(out.view(np.uint64), expected.view(np.uint64))


@pytest.mark.skipif(not jit.NUMBA_AVAILABLE, reason="needs Numba")
@pytest.mark.parametrize("function", ["exp", "exp2", "log", "log2", "erf"])
def test_compiled_loops_for_numpy_arrays_give_the_vectorized_bits(function, monkeypatch):
    """gpuboost.backends.cpu.strict_math registers compiled loops that the vectorized
    functions use on NumPy arrays; they decline under GPUBOOST_CPU_KERNELS=numpy."""
    assert function in sm._HOST_LOOPS
    x = _random_bit_patterns(np.random.default_rng(12), 50_000)[:150_000].reshape(-1, 3)
    compiled = getattr(sm, function)(np, x)
    assert compiled.shape == x.shape
    monkeypatch.setattr(sm, "_HOST_LOOPS", {})
    vectorized = getattr(sm, function)(np, x)
    np.testing.assert_array_equal(compiled.view(np.uint64), vectorized.view(np.uint64))
    monkeypatch.undo()
    monkeypatch.setenv(jit.CPU_KERNELS_ENV_VAR, "numpy")
    assert sm._HOST_LOOPS[function](x) is None  # the NumPy reference computes itself


def test_erf_constants():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    assert sm.TWO_OVER_SQRT_PI == float(2 / mpmath.sqrt(mpmath.pi))
    assert sm.INV_SQRT_PI == float(1 / mpmath.sqrt(mpmath.pi))


def test_erf_and_its_complement_against_mpmath():
    """At most a few ulp in erf; ``1 - erf(a)`` within a relative 2e-14 below 6 (the
    tails of the normal distribution, which survival:aft's CDF reads)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 120
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            rng.uniform(-7.0, 7.0, 1500),
            rng.uniform(-1.4, 1.4, 1000),  # both sides of the series' limit
            rng.uniform(-1e-3, 1e-3, 200),
            [1.25, -1.25, np.nextafter(1.25, 0), 6.0, np.nextafter(6.0, 0), 5e-324, 1e-300],
        ]
    )
    result = sm.erf(np, x)
    ulps = []
    for value, got in zip(x, result):
        exact = mpmath.erf(mpmath.mpf(float(value)))
        ulps.append(float(abs(mpmath.mpf(float(got)) - exact) / math.ulp(float(exact))))
    assert max(ulps) <= 8.0, x[int(np.argmax(ulps))]
    a = np.abs(x[(np.abs(x) >= sm.ERF_SERIES_LIMIT) & (np.abs(x) <= sm.ERF_ONE_LIMIT)])
    complement = sm._erfc_fraction(np, a)  # erf = 1 - this: the tails' accuracy
    complement_errors = [
        float(abs(got - mpmath.erfc(mpmath.mpf(float(v)))) / mpmath.erfc(mpmath.mpf(float(v))))
        for v, got in zip(a, complement)
    ]
    assert max(complement_errors) <= 2e-14


def test_erf_special_values_and_the_c_library():
    special = sm.erf(np, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 6.0, -30.0]))
    np.testing.assert_array_equal(special, [0.0, -0.0, 1.0, -1.0, np.nan, 1.0, -1.0])
    assert np.signbit(special[1]) and not np.signbit(special[0])
    x = np.random.default_rng(6).uniform(-6.5, 6.5, 5000)
    np.testing.assert_allclose(sm.erf(np, x), [math.erf(v) for v in x], rtol=2e-15, atol=0)


# ---- sin and cos (vectorized only: the synthetic data of gpuboost.datasets) -------------
def test_sin_cos_constants():
    """pi / 2 in three parts of 33, 33 and 53 bits summing to it within 2**-118; the
    polynomials' coefficients are +-1/n!, rounded."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 300
    parts = (sm.PIO2_1, sm.PIO2_2, sm.PIO2_3)
    for part, bits in zip(parts, (33, 33, 53)):
        mantissa = Fraction(part) / Fraction(2) ** (math.frexp(part)[1] - bits)
        assert mantissa.denominator == 1, (part, bits)  # at most `bits` significant bits
    rest = mpmath.pi / 2 - sum(mpmath.mpf(p) for p in parts)
    assert abs(rest) < mpmath.mpf(2) ** -118
    assert parts[0] + parts[1] == math.pi / 2 and sm.TWO_OVER_PI == float(2 / mpmath.pi)
    assert sm.SIN_COEFFICIENTS == tuple(
        _rounded(Fraction((-1) ** i, math.factorial(2 * i + 1))) for i in range(1, 9)
    )
    assert sm.COS_COEFFICIENTS == tuple(
        _rounded(Fraction((-1) ** i, math.factorial(2 * i))) for i in range(2, 10)
    )


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_within_one_ulp_against_mpmath(name):
    """Random arguments up to the limit, near the multiples of pi / 4 and pi / 2 (the
    reduction's worst cases), tiny ones: at most 1 ulp (0.91 at most measured by
    benchmarks/strict_math_accuracy.py)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    rng = np.random.default_rng(7)
    quarter_turns = np.arange(-400, 401) * (math.pi / 4)
    x = np.concatenate(
        [
            rng.uniform(-20.0, 20.0, 2000),
            rng.uniform(-sm.TRIG_LIMIT, sm.TRIG_LIMIT, 500),
            rng.uniform(-1e-4, 1e-4, 200),
            quarter_turns,
            np.nextafter(quarter_turns, np.inf),
            [sm.TRIG_LIMIT, -sm.TRIG_LIMIT, 1e-300, 5e-324],
        ]
    )
    result = getattr(sm, name)(np, x)
    exact_function = getattr(mpmath, name)
    ulps = []
    for value, got in zip(x, result):
        exact = exact_function(mpmath.mpf(float(value)))
        ulps.append(float(abs(mpmath.mpf(float(got)) - exact) / math.ulp(float(exact))))
    assert max(ulps) <= 1.0, x[int(np.argmax(ulps))]


def test_sin_cos_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, sm.TRIG_LIMIT * 1.5, -1e300])
    sine, cosine = sm.sin(np, x), sm.cos(np, x)
    np.testing.assert_array_equal(sine, [0.0, -0.0] + [np.nan] * 5)
    np.testing.assert_array_equal(cosine, [1.0, 1.0] + [np.nan] * 5)
    assert np.signbit(sine[1]) and not np.signbit(sine[0])


def test_sin_cos_together_are_sin_and_cos():
    """One reduction for both: the bits of ``sin`` and ``cos``, special values included."""
    rng = np.random.default_rng(8)
    x = np.concatenate(
        [
            rng.uniform(-20.0, 20.0, 3000),
            rng.uniform(-sm.TRIG_LIMIT, sm.TRIG_LIMIT, 1000),
            np.arange(-40, 41) * (math.pi / 4),
            [0.0, -0.0, np.inf, -np.inf, np.nan, sm.TRIG_LIMIT, -sm.TRIG_LIMIT * 1.5],
        ]
    )
    sine, cosine = sm.sin_cos(np, x)
    assert sine.tobytes() == sm.sin(np, x).tobytes()
    assert cosine.tobytes() == sm.cos(np, x).tobytes()
    assert np.signbit(sm.sin_cos(np, -0.0)[0])
