"""Platform-independent ``exp``, ``exp2``, ``log``, ``log2``, ``lgamma``, ``erf``, ``sin`` and
``cos`` (docs/DESIGN.md, "Platform-independent arithmetic").

A platform's ``exp`` and ``log`` (the C library's, NumPy's SIMD loops, CuPy's CUDA
math library) may differ in the last bit between CPUs, library builds and GPUs; one
ulp in one row's gradient moves the quantization scale and so every quantized
gradient. These functions are instead one fixed sequence of IEEE-754 basic operations
(``+ - * /``, comparisons, selections, and exact scalings by powers of two built from
their bits), evaluated in the same order by

* this module (vectorized, for any array module: NumPy on the host, CuPy on a GPU),
* :mod:`gpuboost.backends.cpu.strict_math` (scalar, compiled with Numba: no fastmath,
  no contraction into fused multiply-adds),
* ``cuda/strict_math.cuh`` (device functions whose every operation is an explicitly
  rounded intrinsic, ``__dadd_rn`` / ``__dmul_rn`` / ``__ddiv_rn``, which the compiler
  never contracts),

so the three give the same bits for every argument, on every machine. None of them
calls a math library. The constants below are exact roundings of their definitions
(``tests/core/test_strict_math.py`` derives them again with :mod:`decimal` and checks
the CUDA header holds the same).

Algorithms
----------
``exp(x)``
    Tang's table method. ``n = rint(x * 64 / ln 2)`` (the round-to-nearest-even of
    ``t`` as ``(t + 1.5 * 2**52) - 1.5 * 2**52``), ``r = (x - n * C1) - n * C2`` where
    ``C1 + C2 = ln 2 / 64`` and ``C1`` has 32 significant bits (``n * C1`` and the first
    difference are exact), ``|r| <= ln 2 / 128``. With ``n = 64 k + j``:
    ``exp(x) = 2**k * 2**(j/64) * exp(r)``; ``2**(j/64) = T_hi[j] + T_lo[j]`` to 106
    bits, ``exp(r) - 1 = p(r) = r + r**2 (1/2 + r (1/6 + r (1/24 + r (1/120 + r /
    720))))`` (Taylor, truncation below ``2**-63``), and ``y = T_hi + (T_lo + T_hi *
    p)``. The scaling by ``2**k`` is two exact multiplications by ``2**(k >> 1)`` and
    ``2**(k - (k >> 1))`` (only the second can round: into the subnormals, or to inf),
    so overflow, gradual underflow and 0 come out of the arithmetic with no threshold.
    ``x`` is clamped to [-1100, 1100] first (the result is already 0 or inf there); NaN
    gives NaN.
``exp2(x)``
    The same with ``n = rint(64 x)`` and ``r = (x - n / 64) * ln 2`` (the difference
    is exact).
``log(x)``
    ``x = 2**k * m`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` (subnormals are first
    scaled by ``2**54``), ``f = m - 1`` (exact), ``s = f / (2 + f)``, ``z = s * s``,
    ``hfsq = f * f / 2``, ``R = z (2/3 + z (2/5 + ... + z 2/23))`` (the series of
    ``2 atanh(s) = log(m)``, 11 terms, truncation below ``2**-63``), and
    ``log(x) = k * L_hi - ((hfsq - (s (hfsq + R) + k * L_lo)) - f)`` with
    ``L_hi + L_lo = ln 2`` and 42 significant bits in ``L_hi`` (``k * L_hi`` is exact).
    ``log(0) = -inf``, negative arguments and NaN give NaN, ``log(inf) = inf``.
``log2(x)``
    ``log(m) / ln 2`` in two parts: ``hi = f - hfsq`` with its low 32 bits cleared,
    ``lo = ((f - hi) - hfsq) + s (hfsq + R)``; ``v_hi = hi * I_hi`` (exact: 21 and 32
    bits), ``v_lo = (lo + hi) * I_lo + lo * I_hi`` with ``I_hi + I_lo = 1 / ln 2``; then
    ``w = k + v_hi``, ``v_lo = v_lo + ((k - w) + v_hi)``, ``log2(x) = v_lo + w``. Exact
    for powers of two.
``lgamma(x)``, ``x > 0``
    For an integer ``x <= 23``, ``log((x - 1)!)`` (the factorial is exact in float64).
    For ``|x - 1| <= 1/16`` and ``|x - 2| <= 1/16``, where lgamma crosses 0, its Taylor
    series there (``-gamma t + sum (-1)**k zeta(k) t**k / k`` at 1, with ``zeta(k) - 1``
    and ``1 - gamma`` at 2), the leading product exact. Elsewhere, in double-double
    arithmetic (pairs ``hi + lo`` with Knuth's two-sum and Dekker's two-product, no FMA):
    ``x`` is raised to ``z >= 16`` by ``z = x + i`` with ``P = x (x + 1) ... (x + i -
    1)``, and ``lgamma(x) = (z - 1/2) log z - z + log(2 pi) / 2 + S(1/z) - log P``, ``S``
    the first 7 terms of Stirling's series and ``log`` a double-double logarithm (a
    table of ``log(1 + j/64)`` derived with :mod:`decimal`), so the cancellation between
    the two large terms costs nothing. Vectorized only: the metrics call it through the
    array module.

``erf(x)``
    For ``a = |x| < 1.25``: ``erf(a) = (2 / sqrt(pi)) a exp(-a**2) sum_n t_n`` with ``t_0
    = 1``, ``t_(n+1) = t_n 2 a**2 / (2 n + 3)`` (every term positive, so no cancellation;
    40 terms, truncation below ``2**-70``). For ``1.25 <= a < 6``: ``erf(a) = 1 -
    erfc(a)``, ``erfc(a) = exp(-a**2) / sqrt(pi) / f`` with Laplace's continued fraction
    ``f = a + (1/2) / (a + (2/2) / (a + (3/2) / (a + ...)))`` evaluated from its 100th
    term up (so ``1 - erf`` keeps its relative accuracy: the normal distribution's tails).
    ``exp(-a**2)`` is ``exp(-h) (1 - l)`` with ``h + l = a**2`` exactly (Dekker's
    product). For ``a >= 6``, ``erf(a) = 1`` (``erfc(6) < 2**-55``). The sign of ``x`` is
    copied onto the result (``erf(-0) = -0``); NaN gives NaN. Vectorized only (the
    survival objective and metrics run it on the host). Measured against mpmath
    (``tests/core/test_strict_math.py``): at most 6 ulp in ``erf``, and ``1 - erf(a)``
    (``erfc``) within a relative 1e-14 for every ``a < 6``.

``sin(x)``, ``cos(x)``, ``|x| <= 2**19``
    Cody and Waite's reduction: ``k = rint(x * 2/pi)`` and ``r + r_lo = ((x - k P1) - k
    P2) - k P3`` with ``P1 + P2 + P3 = pi/2`` (33, 33 and 53 significant bits: ``k P1``
    and ``k P2`` are exact for ``|k| < 2**20``, and ``x - k P1`` too), the two
    roundings' errors kept in ``r_lo`` (Dekker's sum). Then, with ``z
    = r**2``, ``sin(r) = r + (r z S(z) + r_lo)`` and ``cos(r) = w + (((1 - w) - z/2) +
    (z**2 C(z) - r r_lo))``, ``w = 1 - z/2``, ``S`` and ``C`` the Taylor series to
    ``r**17`` and ``r**18`` (coefficients ``+-1/n!``, ``float(Fraction)``; truncation
    below ``2**-63`` for ``|r| <= pi/4``), and the quadrant ``k mod 4`` picks ``+-sin(r)``
    or ``+-cos(r)``. NaN for inf, NaN and ``|x| > 2**19``. Vectorized only (the synthetic
    data of :mod:`gpuboost.datasets`); within 1 ulp of mpmath (0.91 at most measured).

Accuracy (``benchmarks/strict_math_accuracy.py``, benchmarks/RESULTS.md): every function
but ``erf`` is within 1 ulp of the exact value (below 0.75 ulp in the measurements), and correctly
rounded for more than 96 % of the arguments.
"""

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

__all__ = [
    "exp",
    "exp2",
    "log",
    "log2",
    "lgamma",
    "erf",
    "sin",
    "cos",
    "sin_cos",
    "scale_by_power_of_two",
    "EXP_TABLE_SIZE",
]

# ---- constants (hexadecimal float literals; derived in the module docstring) ---------
#: Table size of exp: ``2**(j / EXP_TABLE_SIZE)`` for j in [0, EXP_TABLE_SIZE).
EXP_TABLE_SIZE = 64
#: 1.5 * 2**52: ``(t + ROUND_SHIFT) - ROUND_SHIFT`` is ``rint(t)`` for ``|t| < 2**51``.
ROUND_SHIFT = float.fromhex("0x1.8p+52")
#: 64 / ln 2.
EXP_N_OVER_LN2 = float.fromhex("0x1.71547652b82fep+6")
#: ln 2 / 64 = EXP_LN2_OVER_N_HI + EXP_LN2_OVER_N_LO; the high part has 32 bits.
EXP_LN2_OVER_N_HI = float.fromhex("0x1.62e42fee00000p-7")
EXP_LN2_OVER_N_LO = float.fromhex("0x1.a39ef35793c76p-39")
#: ln 2 = LN2_HI + LN2_LO; the high part has 42 bits. LN2: ln 2 rounded.
LN2_HI = float.fromhex("0x1.62e42fefa3800p-1")
LN2_LO = float.fromhex("0x1.ef35793c76730p-45")
LN2 = float.fromhex("0x1.62e42fefa39efp-1")
#: 1 / ln 2 = INV_LN2_HI + INV_LN2_LO; the high part has 32 bits.
INV_LN2_HI = float.fromhex("0x1.7154765200000p+0")
INV_LN2_LO = float.fromhex("0x1.705fc2eefa200p-33")
#: The high 32 bits of a float64 (its low 32 bits cleared): 0xFFFFFFFF00000000.
HIGH_WORD_MASK = -(2**32)
#: 1 / i! for i = 2..6, rounded (exp's polynomial).
EXP_COEFFICIENTS = tuple(
    float.fromhex(h)
    for h in (
        "0x1.0000000000000p-1",
        "0x1.5555555555555p-3",
        "0x1.5555555555555p-5",
        "0x1.1111111111111p-7",
        "0x1.6c16c16c16c17p-10",
    )
)
#: 2 / (2 i + 1) for i = 1..11, rounded (log's series in z = s**2).
LOG_COEFFICIENTS = tuple(
    float.fromhex(h)
    for h in (
        "0x1.5555555555555p-1",
        "0x1.999999999999ap-2",
        "0x1.2492492492492p-2",
        "0x1.c71c71c71c71cp-3",
        "0x1.745d1745d1746p-3",
        "0x1.3b13b13b13b14p-3",
        "0x1.1111111111111p-3",
        "0x1.e1e1e1e1e1e1ep-4",
        "0x1.af286bca1af28p-4",
        "0x1.8618618618618p-4",
        "0x1.642c8590b2164p-4",
    )
)
#: sqrt(2) rounded: the reduced log argument is in [SQRT2 / 2, SQRT2).
SQRT2 = float.fromhex("0x1.6a09e667f3bcdp+0")
#: 2**54, the scaling of subnormal log arguments.
TWO_54 = float.fromhex("0x1p+54")
#: exp's argument clamp (beyond it the result is 0 or inf anyway).
EXP_CLAMP = 1100.0
#: log(2 pi) / 2 rounded.
HALF_LOG_2PI = float.fromhex("0x1.d67f1c864beb5p-1")
#: Stirling's series: B_2i / (2i (2i - 1)) for i = 1..7, rounded.
STIRLING_COEFFICIENTS = tuple(
    float.fromhex(h)
    for h in (
        "0x1.5555555555555p-4",
        "-0x1.6c16c16c16c17p-9",
        "0x1.a01a01a01a01ap-11",
        "-0x1.3813813813814p-11",
        "0x1.b951e2b18ff23p-11",
        "-0x1.f6ab0d9993c7dp-10",
        "0x1.a41a41a41a41ap-8",
    )
)
#: lgamma raises its argument to at least this before Stirling's series.
LGAMMA_SHIFT_TO = 16.0
#: lgamma of integers up to this is log((x - 1)!), with the factorial exact.
LGAMMA_EXACT_FACTORIAL_MAX = 23
#: (n - 1)! for n = 1 .. LGAMMA_EXACT_FACTORIAL_MAX (exact in float64).
_FACTORIALS = np.array([float(math.factorial(n - 1)) for n in range(1, 24)])
#: log(2 pi) / 2 = HALF_LOG_2PI + HALF_LOG_2PI_LO.
HALF_LOG_2PI_LO = float.fromhex("-0x1.65b5a1b7ff5dfp-55")
#: lgamma(1 + t) = t (-gamma) + sum over k >= 2 of LGAMMA_NEAR_ONE[k - 2] t**k, where
#: -gamma = LGAMMA_NEAR_ONE_LINEAR + LGAMMA_NEAR_ONE_LINEAR_LO and the coefficients are
#: (-1)**k zeta(k) / k, rounded.
LGAMMA_NEAR_ONE_LINEAR = float.fromhex("-0x1.2788cfc6fb619p-1")
LGAMMA_NEAR_ONE_LINEAR_LO = float.fromhex("0x1.6cb90701fbfabp-58")
LGAMMA_NEAR_ONE = tuple(
    float.fromhex(h)
    for h in (
        "0x1.a51a6625307d3p-1",
        "-0x1.9a4d55beab2d7p-2",
        "0x1.151322ac7d848p-2",
        "-0x1.a8b9c17aa6149p-3",
        "0x1.5b40cb100c306p-3",
        "-0x1.2703a1dcea3aep-3",
        "0x1.010b36af86397p-3",
        "-0x1.c806706d57db4p-4",
        "0x1.9a01e385d5f8fp-4",
        "-0x1.748c33114c6d6p-4",
        "0x1.556ad63243bc4p-4",
        "-0x1.3b1d971fc5985p-4",
        "0x1.2496df8320c5fp-4",
        "-0x1.11133476e7fe0p-4",
        "0x1.00010064cdeb2p-4",
        "-0x1.e1e2d311e8abdp-5",
        "0x1.c71ce3a20b419p-5",
        "-0x1.af28a1b5688a0p-5",
        "0x1.9999b3352d5bap-5",
        "-0x1.86186db77bfbfp-5",
        "0x1.745d1d1778df9p-5",
        "-0x1.642c88591b66dp-5",
        "0x1.555556aaafdcdp-5",
        "-0x1.47ae151eb9fb7p-5",
        "0x1.3b13b189d925ep-5",
        "-0x1.2f684c00002bcp-5",
        "0x1.24924936db7bcp-5",
        "-0x1.1a7b961a7b9aap-5",
        "0x1.111111155556dp-5",
        "-0x1.08421086318cep-5",
        "0x1.0000000100002p-5",
        "-0x1.f07c1f08ba2eap-6",
    )
)
#: lgamma(2 + t) = t (1 - gamma) + sum over k >= 2 of LGAMMA_NEAR_TWO[k - 2] t**k:
#: (-1)**k (zeta(k) - 1) / k, rounded.
LGAMMA_NEAR_TWO_LINEAR = float.fromhex("0x1.b0ee6072093cep-2")
LGAMMA_NEAR_TWO_LINEAR_LO = float.fromhex("0x1.6cb90701fbfabp-58")
LGAMMA_NEAR_TWO = tuple(
    float.fromhex(h)
    for h in (
        "0x1.4a34cc4a60fa6p-2",
        "-0x1.13e001a557607p-4",
        "0x1.51322ac7d8483p-6",
        "-0x1.e404fc218f5f2p-8",
        "0x1.7add6eadb6c30p-9",
        "-0x1.38ac5c2bf8e08p-10",
        "0x1.0b36af86396e9p-11",
        "-0x1.d3fd4c76d2fc8p-13",
        "0x1.a127b0f17d65ap-14",
        "-0x1.78de5bd7c81efp-15",
        "0x1.580dcee66eb02p-16",
        "-0x1.3cbc963ce2243p-17",
        "0x1.2597a39f34aacp-18",
        "-0x1.11b2eb7679541p-19",
        "0x1.0064cdeb22f0fp-20",
        "-0x1.e2600d93cfd2fp-22",
        "0x1.c76bbb3f07a4dp-23",
        "-0x1.af5a6cbbf8a97p-24",
        "0x1.99b93c2070b0fp-25",
        "-0x1.862c734df3eacp-26",
        "0x1.7469daccfadcdp-27",
        "-0x1.6434a8447aeadp-28",
        "0x1.555a877ffd2c3p-29",
        "-0x1.47b1679258d0ep-30",
        "0x1.3b15d2b2fc10cp-31",
        "-0x1.2f69a9fabe3e0p-32",
        "0x1.24932a337434cp-33",
        "-0x1.1a7c26ec2523cp-34",
        "0x1.11116e693ed98p-35",
        "-0x1.08424cbc543d8p-36",
        "0x1.000026e3f644fp-37",
        "-0x1.f07c514fc9f0ap-39",
    )
)
#: lgamma uses those series for |x - 1| and |x - 2| up to this (where lgamma is near 0).
LGAMMA_NEAR_ROOT = 0.0625
#: 1 / 12 = TWELFTH + TWELFTH_LO (the first coefficient of Stirling's series).
TWELFTH = float.fromhex("0x1.5555555555555p-4")
TWELFTH_LO = float.fromhex("0x1.5555555555555p-58")
#: Veltkamp's splitter 2**27 + 1 (a float64 into two halves of 26 bits).
SPLITTER = 134217729.0
#: 2 / sqrt(pi) and 1 / sqrt(pi), rounded.
TWO_OVER_SQRT_PI = float.fromhex("0x1.20dd750429b6dp+0")
INV_SQRT_PI = float.fromhex("0x1.20dd750429b6dp-1")
#: erf: the series below ERF_SERIES_LIMIT, the continued fraction up to ERF_ONE_LIMIT
#: (erf is 1 above), and their numbers of terms (module docstring).
ERF_SERIES_LIMIT = 1.25
ERF_ONE_LIMIT = 6.0
ERF_SERIES_TERMS = 40
ERF_FRACTION_TERMS = 100
#: log's table size in the double-double logarithm of lgamma: log(1 + j / 64).
DD_LOG_TABLE_SIZE = 64
#: 2**(j/64) = EXP_TABLE_HI[j] + EXP_TABLE_LO[j].
_EXP_TABLE = (
    ("0x1.0000000000000p+0", "0x0.0p+0"),
    ("0x1.02c9a3e778061p+0", "-0x1.19083535b085dp-56"),
    ("0x1.059b0d3158574p+0", "0x1.d73e2a475b465p-55"),
    ("0x1.0874518759bc8p+0", "0x1.186be4bb284ffp-57"),
    ("0x1.0b5586cf9890fp+0", "0x1.8a62e4adc610bp-54"),
    ("0x1.0e3ec32d3d1a2p+0", "0x1.03a1727c57b53p-59"),
    ("0x1.11301d0125b51p+0", "-0x1.6c51039449b3ap-54"),
    ("0x1.1429aaea92de0p+0", "-0x1.32fbf9af1369ep-54"),
    ("0x1.172b83c7d517bp+0", "-0x1.19041b9d78a76p-55"),
    ("0x1.1a35beb6fcb75p+0", "0x1.e5b4c7b4968e4p-55"),
    ("0x1.1d4873168b9aap+0", "0x1.e016e00a2643cp-54"),
    ("0x1.2063b88628cd6p+0", "0x1.dc775814a8495p-55"),
    ("0x1.2387a6e756238p+0", "0x1.9b07eb6c70573p-54"),
    ("0x1.26b4565e27cddp+0", "0x1.2bd339940e9d9p-55"),
    ("0x1.29e9df51fdee1p+0", "0x1.612e8afad1255p-55"),
    ("0x1.2d285a6e4030bp+0", "0x1.0024754db41d5p-54"),
    ("0x1.306fe0a31b715p+0", "0x1.6f46ad23182e4p-55"),
    ("0x1.33c08b26416ffp+0", "0x1.32721843659a6p-54"),
    ("0x1.371a7373aa9cbp+0", "-0x1.63aeabf42eae2p-54"),
    ("0x1.3a7db34e59ff7p+0", "-0x1.5e436d661f5e3p-56"),
    ("0x1.3dea64c123422p+0", "0x1.ada0911f09ebcp-55"),
    ("0x1.4160a21f72e2ap+0", "-0x1.ef3691c309278p-58"),
    ("0x1.44e086061892dp+0", "0x1.89b7a04ef80d0p-59"),
    ("0x1.486a2b5c13cd0p+0", "0x1.3c1a3b69062f0p-56"),
    ("0x1.4bfdad5362a27p+0", "0x1.d4397afec42e2p-56"),
    ("0x1.4f9b2769d2ca7p+0", "-0x1.4b309d25957e3p-54"),
    ("0x1.5342b569d4f82p+0", "-0x1.07abe1db13cadp-55"),
    ("0x1.56f4736b527dap+0", "0x1.9bb2c011d93adp-54"),
    ("0x1.5ab07dd485429p+0", "0x1.6324c054647adp-54"),
    ("0x1.5e76f15ad2148p+0", "0x1.ba6f93080e65ep-54"),
    ("0x1.6247eb03a5585p+0", "-0x1.383c17e40b497p-54"),
    ("0x1.6623882552225p+0", "-0x1.bb60987591c34p-54"),
    ("0x1.6a09e667f3bcdp+0", "-0x1.bdd3413b26456p-54"),
    ("0x1.6dfb23c651a2fp+0", "-0x1.bbe3a683c88abp-57"),
    ("0x1.71f75e8ec5f74p+0", "-0x1.16e4786887a99p-55"),
    ("0x1.75feb564267c9p+0", "-0x1.0245957316dd3p-54"),
    ("0x1.7a11473eb0187p+0", "-0x1.41577ee04992fp-55"),
    ("0x1.7e2f336cf4e62p+0", "0x1.05d02ba15797ep-56"),
    ("0x1.82589994cce13p+0", "-0x1.d4c1dd41532d8p-54"),
    ("0x1.868d99b4492edp+0", "-0x1.fc6f89bd4f6bap-54"),
    ("0x1.8ace5422aa0dbp+0", "0x1.6e9f156864b27p-54"),
    ("0x1.8f1ae99157736p+0", "0x1.5cc13a2e3976cp-55"),
    ("0x1.93737b0cdc5e5p+0", "-0x1.75fc781b57ebcp-57"),
    ("0x1.97d829fde4e50p+0", "-0x1.d185b7c1b85d1p-54"),
    ("0x1.9c49182a3f090p+0", "0x1.c7c46b071f2bep-56"),
    ("0x1.a0c667b5de565p+0", "-0x1.359495d1cd533p-54"),
    ("0x1.a5503b23e255dp+0", "-0x1.d2f6edb8d41e1p-54"),
    ("0x1.a9e6b5579fdbfp+0", "0x1.0fac90ef7fd31p-54"),
    ("0x1.ae89f995ad3adp+0", "0x1.7a1cd345dcc81p-54"),
    ("0x1.b33a2b84f15fbp+0", "-0x1.2805e3084d708p-57"),
    ("0x1.b7f76f2fb5e47p+0", "-0x1.5584f7e54ac3bp-56"),
    ("0x1.bcc1e904bc1d2p+0", "0x1.23dd07a2d9e84p-55"),
    ("0x1.c199bdd85529cp+0", "0x1.11065895048ddp-55"),
    ("0x1.c67f12e57d14bp+0", "0x1.2884dff483cadp-54"),
    ("0x1.cb720dcef9069p+0", "0x1.503cbd1e949dbp-56"),
    ("0x1.d072d4a07897cp+0", "-0x1.cbc3743797a9cp-54"),
    ("0x1.d5818dcfba487p+0", "0x1.2ed02d75b3707p-55"),
    ("0x1.da9e603db3285p+0", "0x1.c2300696db532p-54"),
    ("0x1.dfc97337b9b5fp+0", "-0x1.1a5cd4f184b5cp-54"),
    ("0x1.e502ee78b3ff6p+0", "0x1.39e8980a9cc8fp-55"),
    ("0x1.ea4afa2a490dap+0", "-0x1.e9c23179c2893p-54"),
    ("0x1.efa1bee615a27p+0", "0x1.dc7f486a4b6b0p-54"),
    ("0x1.f50765b6e4540p+0", "0x1.9d3e12dd8a18bp-54"),
    ("0x1.fa7c1819e90d8p+0", "0x1.74853f3a5931ep-55"),
)
EXP_TABLE_HI = np.array([float.fromhex(hi) for hi, _ in _EXP_TABLE])
EXP_TABLE_LO = np.array([float.fromhex(lo) for _, lo in _EXP_TABLE])


# ---- compiled loops for NumPy arrays -------------------------------------------------
#: Registered by gpuboost.backends.cpu.strict_math when Numba is there: name -> f(x) for a
#: float64 NumPy array, the vectorized function's bits in one compiled pass (or None to
#: decline). The vectorized code below stays the definition (and runs on CuPy arrays).
_HOST_LOOPS = {}


def use_host_loops(loops):
    """Register compiled loops (see ``_HOST_LOOPS``); they must give the vectorized bits."""
    _HOST_LOOPS.update(loops)


def _host_loop(xp, name, x):
    loop = _HOST_LOOPS.get(name) if xp is np else None
    return None if loop is None else loop(x)


# ---- helpers -------------------------------------------------------------------------
def _as_float64(xp, x):
    return xp.asarray(x, dtype=np.float64)


def _array_function(function):
    """The public function ``function(xp, x)``: ``x`` as float64, the compiled loop for
    NumPy arrays where one is registered, else ``function`` with NumPy's float warnings
    off (both sides of every selection are evaluated, and the side not selected may
    overflow or be NaN)."""
    name = function.__name__

    def apply(xp, x):
        x = _as_float64(xp, x)
        compiled = _host_loop(xp, name, x)
        if compiled is not None:
            return compiled
        with np.errstate(all="ignore"):
            return function(xp, x)

    return functools.update_wrapper(apply, function)


def _power_of_two(k):
    """``2.0**k`` for an int64 array ``k`` in [-1022, 1023], from its bits (exact)."""
    return ((k + 1023) << 52).view(np.float64)


def _rint(t):
    """Round to nearest, ties to even, for ``|t| < 2**51`` (two additions)."""
    return (t + ROUND_SHIFT) - ROUND_SHIFT


def scale_by_power_of_two(y, k):
    """``y * 2**k`` for an int64 array ``k`` in [-2044, 2046] (any array module): two
    power-of-two factors built from their bits, exact unless the result is subnormal or
    overflows (then rounded once, by the second multiplication)."""
    half = k >> 1
    return (y * _power_of_two(half)) * _power_of_two(k - half)


def _exp_finish(xp, n_float, r):
    """``2**(n / 64) * exp(r)`` for the integer-valued ``n_float`` and ``|r| <= ln 2 / 128``."""
    n = n_float.astype(np.int64)
    j = n & (EXP_TABLE_SIZE - 1)
    k = n >> 6
    c2, c3, c4, c5, c6 = EXP_COEFFICIENTS
    p = r + (r * r) * (c2 + r * (c3 + r * (c4 + r * (c5 + r * c6))))
    table_hi = xp.asarray(EXP_TABLE_HI)[j]
    y = table_hi + (xp.asarray(EXP_TABLE_LO)[j] + table_hi * p)
    return scale_by_power_of_two(y, k)


def _horner(coefficients, z):
    """``c0 + z (c1 + z (c2 + ...))`` for ``coefficients = (c0, c1, ...)``, from the last."""
    series = coefficients[-1]
    for coefficient in coefficients[-2::-1]:
        series = coefficient + z * series
    return series


def _clamped(xp, x, limit):
    """``x`` clamped to [-limit, limit], NaN replaced by 0 (restored by the caller)."""
    return xp.where(x != x, 0.0, xp.minimum(xp.maximum(x, -limit), limit))


# ---- the functions -------------------------------------------------------------------
@_array_function
def exp(xp, x):
    """``e**x``, the same bits on every platform (module docstring).

    Parameters
    ----------
    xp : module
        The array module of ``x`` (``numpy`` or ``cupy``).
    x : array_like of any shape, float64

    Returns
    -------
    xp array of the shape of ``x``, float64
    """
    clamped = _clamped(xp, x, EXP_CLAMP)
    n_float = _rint(clamped * EXP_N_OVER_LN2)
    r = (clamped - n_float * EXP_LN2_OVER_N_HI) - n_float * EXP_LN2_OVER_N_LO
    return xp.where(x != x, x, _exp_finish(xp, n_float, r))


@_array_function
def exp2(xp, x):
    """``2**x``, the same bits on every platform (module docstring).

    Parameters
    ----------
    xp : module
    x : array_like of any shape, float64

    Returns
    -------
    xp array of the shape of ``x``, float64
    """
    clamped = _clamped(xp, x, EXP_CLAMP)
    n_float = _rint(clamped * float(EXP_TABLE_SIZE))
    r = (clamped - n_float * (1.0 / EXP_TABLE_SIZE)) * LN2
    return xp.where(x != x, x, _exp_finish(xp, n_float, r))


def _log_parts(xp, x):
    """``(k, f, hfsq, s * (hfsq + R))`` of a positive finite ``x`` (module docstring)."""
    subnormal = x < float.fromhex("0x1p-1022")
    x = xp.where(subnormal, x * TWO_54, x)
    bits = x.view(np.int64)
    k = ((bits >> 52) & 0x7FF) - 1023 - xp.where(subnormal, 54, 0)
    m = ((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000).view(np.float64)
    above = m > SQRT2
    m = xp.where(above, m * 0.5, m)
    k = k + above
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    series = z * _horner(LOG_COEFFICIENTS, z)
    hfsq = 0.5 * f * f
    return k.astype(np.float64), f, hfsq, s * (hfsq + series)


def _log_special(xp, x, finite_result):
    """The finite result where ``x > 0`` is finite; else ``log``'s special values."""
    special = xp.where(x == 0.0, -np.inf, xp.where(x > 0.0, x, np.nan))  # inf stays inf
    return xp.where((x > 0.0) & (x < np.inf), finite_result, special)


def _positive_finite(xp, x):
    return xp.where((x > 0.0) & (x < np.inf), x, 1.0)


@_array_function
def log(xp, x):
    """Natural logarithm, the same bits on every platform (module docstring).

    Parameters
    ----------
    xp : module
    x : array_like of any shape, float64

    Returns
    -------
    xp array of the shape of ``x``, float64
        ``-inf`` at 0, NaN for negative arguments and NaN.
    """
    k, f, hfsq, correction = _log_parts(xp, _positive_finite(xp, x))
    result = k * LN2_HI - ((hfsq - (correction + k * LN2_LO)) - f)
    return _log_special(xp, x, result)


@_array_function
def log2(xp, x):
    """Base-2 logarithm, the same bits on every platform; exact for powers of two.

    Parameters
    ----------
    xp : module
    x : array_like of any shape, float64

    Returns
    -------
    xp array of the shape of ``x``, float64
    """
    k, f, hfsq, correction = _log_parts(xp, _positive_finite(xp, x))
    hi = ((f - hfsq).view(np.int64) & HIGH_WORD_MASK).view(np.float64)
    lo = ((f - hi) - hfsq) + correction
    value_hi = hi * INV_LN2_HI
    value_lo = (lo + hi) * INV_LN2_LO + lo * INV_LN2_HI
    w = k + value_hi
    value_lo = value_lo + ((k - w) + value_hi)
    return _log_special(xp, x, value_lo + w)


# ---- sin and cos: Cody and Waite's reduction by pi / 2, Taylor polynomials -----------
#: ``sin`` and ``cos`` take arguments with ``|x| <= TRIG_LIMIT`` (NaN beyond, and for inf):
#: the quadrant ``k`` then fits in 19 bits, so ``k * PIO2_1`` and ``k * PIO2_2`` are exact.
TRIG_LIMIT = 2.0**19
#: 2 / pi, rounded (the quadrant's estimate; a quadrant off by one leaves ``|r|`` a
#: rounding beyond pi / 4, where the polynomials hold as well).
TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
#: 1 / n! for the odd n = 3..17 (sin) and the even n = 4..18 (cos), with alternating
#: signs: ``float(Fraction)`` rounds correctly, so they are the same on every machine.
SIN_COEFFICIENTS = tuple(float(Fraction((-1) ** i, math.factorial(2 * i + 1))) for i in range(1, 9))
COS_COEFFICIENTS = tuple(float(Fraction((-1) ** i, math.factorial(2 * i))) for i in range(2, 10))
#: pi / 2 = PIO2_1 + PIO2_2 + PIO2_3 (within 2**-118): 33, 33 and 53 significant bits, each
#: the rounding of what the previous parts leave.
PIO2_1 = float.fromhex("0x1.921fb54400000p+0")
PIO2_2 = float.fromhex("0x1.0b4611a600000p-34")
PIO2_3 = float.fromhex("0x1.3198a2e037073p-69")


def _reduced_by_quadrant(xp, x):
    """``(q, s, c)``: ``x = k pi / 2 + r`` with ``|r| <~ pi / 4`` and ``q = k mod 4``,
    ``s = sin(r)`` and ``c = cos(r)`` (module docstring, ``sin(x)``, ``cos(x)``)."""
    inside = xp.abs(x) <= TRIG_LIMIT  # False for inf and NaN
    x = xp.where(inside, x, 0.0)
    k = _rint(x * TWO_OVER_PI)
    t = x - k * PIO2_1  # exact
    # r + r_lo = t - k (PIO2_2 + PIO2_3), each subtraction's error kept (Dekker's sum).
    u = t - k * PIO2_2
    u_lo = (t - u) - k * PIO2_2
    r = u - k * PIO2_3
    r_lo = ((u - r) - k * PIO2_3) + u_lo
    z = r * r
    s = r + ((r * z) * _horner(SIN_COEFFICIENTS, z) + r_lo)
    half_z = 0.5 * z
    w = 1.0 - half_z
    c = w + (((1.0 - w) - half_z) + ((z * z) * _horner(COS_COEFFICIENTS, z) - r * r_lo))
    return inside, k.astype(np.int64) & 3, s, c


def _by_quadrant(xp, q, s, c):
    """``sin(k pi / 2 + r)`` for ``q = k mod 4``, ``s = sin(r)``, ``c = cos(r)``: ``+-s`` or
    ``+-c`` by the quadrant."""
    return xp.where(q == 0, s, xp.where(q == 1, c, xp.where(q == 2, -s, -c)))


def _sine(xp, x, inside, q, s, c):
    """``sin(x)`` from :func:`_reduced_by_quadrant`'s parts; ``sin(-0) = -0``."""
    return xp.where(inside, xp.where(x == 0.0, x, _by_quadrant(xp, q, s, c)), np.nan)


def _cosine(xp, inside, q, s, c):
    """``cos(x) = sin(x + pi / 2)``: the quadrant a quarter turn on."""
    return xp.where(inside, _by_quadrant(xp, (q + 1) & 3, s, c), np.nan)


@_array_function
def sin(xp, x):
    """Sine, the same bits on every platform (module docstring); NaN for ``|x| >
    TRIG_LIMIT``, inf and NaN. ``x``: float64 array_like of any shape; an xp array of
    its shape."""
    return _sine(xp, x, *_reduced_by_quadrant(xp, x))


@_array_function
def cos(xp, x):
    """Cosine, ``sin(x + pi / 2)`` by the quadrant (as :func:`sin`)."""
    return _cosine(xp, *_reduced_by_quadrant(xp, x))


def sin_cos(xp, x):
    """``(sin(x), cos(x))``, the bits of :func:`sin` and :func:`cos`, for the price of one
    argument reduction."""
    x = _as_float64(xp, x)
    with np.errstate(all="ignore"):
        parts = _reduced_by_quadrant(xp, x)
        return _sine(xp, x, *parts), _cosine(xp, *parts)


# ---- lgamma: double-double arithmetic (a value is hi + lo, |lo| <= ulp(hi) / 2) ------
def _two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth)."""
    s = a + b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (b - b_virtual)


def _fast_two_sum(a, b):
    """As :func:`_two_sum` for ``|a| >= |b|`` (Dekker)."""
    s = a + b
    return s, b - (s - a)


def _split(xp, a):
    """Veltkamp's split of ``a`` into two 26-bit halves (scaled where it would overflow)."""
    big = xp.abs(a) > 2.0**900
    scaled = xp.where(big, a * 2.0**-64, a)
    c = SPLITTER * scaled
    hi = c - (c - scaled)
    lo = scaled - hi
    return xp.where(big, hi * 2.0**64, hi), xp.where(big, lo * 2.0**64, lo)


def _two_product(xp, a, b):
    """``(p, e)`` with ``p = fl(a * b)`` and ``p + e = a * b`` exactly, without an FMA."""
    p = a * b
    a_hi, a_lo = _split(xp, a)
    b_hi, b_lo = _split(xp, b)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _dd_add(xp, a, b):
    s, e = _two_sum(a[0], b[0])
    return _fast_two_sum(s, e + (a[1] + b[1]))


def _dd_multiply(xp, a, b):
    p, e = _two_product(xp, a[0], b[0])
    return _fast_two_sum(p, e + (a[0] * b[1] + a[1] * b[0]))


_DD_LOG_TABLE = []


def _dd_log_table():
    """``log(1 + j / 64)`` as (hi, lo) arrays, derived once with :mod:`decimal` (exact
    decimal arithmetic, the same on every machine)."""
    if not _DD_LOG_TABLE:
        with localcontext() as context:
            context.prec = 50
            exact = [Fraction((1 + Decimal(j) / DD_LOG_TABLE_SIZE).ln()) for j in range(64)]
        hi = [float(value) for value in exact]
        lo = [float(value - Fraction(h)) for value, h in zip(exact, hi)]
        _DD_LOG_TABLE.append((np.array(hi), np.array(lo)))
    return _DD_LOG_TABLE[0]


def _dd_log(xp, value):
    """Double-double ``log`` of a positive finite double-double ``value``, to about
    ``2**-100`` relative: ``x = 2**k m``, ``m = c (1 + v)`` with ``c = 1 + j / 64``,
    ``log x = k ln 2 + log c + log(1 + v)`` with ``|v| < 1 / 64``."""
    x = value[0]
    subnormal = x < float.fromhex("0x1p-1022")
    scaled = xp.where(subnormal, x * TWO_54, x)
    bits = scaled.view(np.int64)
    k = (((bits >> 52) & 0x7FF) - 1023 - xp.where(subnormal, 54, 0)).astype(np.float64)
    j = (bits >> 46) & (DD_LOG_TABLE_SIZE - 1)
    m = ((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000).view(np.float64)
    c = 1.0 + j.astype(np.float64) * (1.0 / DD_LOG_TABLE_SIZE)
    u = m - c  # exact, in [0, 1 / 64)
    v_hi = u / c
    p, e = _two_product(xp, v_hi, c)
    v_lo = ((u - p) - e) / c
    # log(1 + v) = v - v**2 / 2 + v**3 (1/3 - v/4 + ... - v**10 / 13).
    square, square_lo = _two_product(xp, v_hi, v_hi)
    square_lo = square_lo + 2.0 * v_hi * v_lo
    tail = 1.0 / 13.0
    for n in range(12, 2, -1):
        tail = (1.0 / n) - v_hi * tail
    cubic = v_hi * square * tail
    log1p = _dd_add(xp, (v_hi, v_lo), (-0.5 * square, -0.5 * square_lo + cubic))
    table_hi, table_lo = _dd_log_table()
    table = (xp.asarray(table_hi)[j], xp.asarray(table_lo)[j])
    total = _dd_add(xp, _dd_add(xp, (k * LN2_HI, k * LN2_LO), table), log1p)
    # The low part of the argument: log(hi + lo) = log(hi) + lo / hi (to 2**-106).
    return _dd_add(xp, total, (value[1] / x, xp.zeros_like(x)))


def _near_root(xp, t, linear, linear_lo, coefficients):
    """``t (linear + linear_lo) + sum of coefficients[i] t**(i + 2)``, the leading product
    kept exact."""
    series = _horner(coefficients, t)
    p, e = _two_product(xp, t, linear)
    return p + ((e + linear_lo * t) + (t * t) * series)


def _stirling(xp, x):
    """lgamma(x), x > 0 finite, in double-double: raised to ``z >= 16`` (``z = x + i``
    and ``P = x (x + 1) ... (x + i - 1)``, both double-double), then
    ``(z - 1/2) log z - z + log(2 pi) / 2 + S(1 / z) - log P``."""
    zero = xp.zeros_like(x)
    z = (x, zero)
    product = (xp.ones_like(x), zero)
    for _ in range(int(LGAMMA_SHIFT_TO)):
        below = z[0] < LGAMMA_SHIFT_TO
        multiplied = _dd_multiply(xp, product, z)
        product = tuple(xp.where(below, m, p) for m, p in zip(multiplied, product))
        raised = _dd_add(xp, z, (xp.ones_like(x), zero))
        z = tuple(xp.where(below, r, current) for r, current in zip(raised, z))
    # S(w) = w / 12 + w**3 T(w**2): the leading term in double-double (w = 1 / z too).
    w = 1.0 / z[0]
    p, e = _two_product(xp, z[0], w)
    w_dd = (w, ((1.0 - p) - e - z[1] * w) / z[0])
    w2 = w * w
    tail = _horner(STIRLING_COEFFICIENTS[1:], w2)
    leading = _dd_multiply(xp, w_dd, (xp.full_like(x, TWELFTH), xp.full_like(x, TWELFTH_LO)))
    half_less = _dd_add(xp, z, (xp.full_like(x, -0.5), zero))
    result = _dd_multiply(xp, half_less, _dd_log(xp, z))
    result = _dd_add(xp, result, (-z[0], -z[1]))
    result = _dd_add(xp, result, (xp.full_like(x, HALF_LOG_2PI), xp.full_like(x, HALF_LOG_2PI_LO)))
    result = _dd_add(xp, result, leading)
    result = _dd_add(xp, result, (w * w2 * tail, zero))
    log_product = _dd_log(xp, product)
    result = _dd_add(xp, result, (-log_product[0], -log_product[1]))
    value = result[0] + result[1]
    # Beyond about 2.556e305, lgamma exceeds the largest float64 (inf - inf gave NaN).
    return xp.where((value != value) & (x > 1e300), np.inf, value)


@_array_function
def lgamma(xp, x):
    """``log(Gamma(x))`` for ``x > 0``, the same bits on every platform (module docstring).

    Parameters
    ----------
    xp : module
    x : array_like of any shape, float64
        Positive; other arguments give NaN (``+inf`` gives ``+inf``).

    Returns
    -------
    xp array of the shape of ``x``, float64
    """
    valid = (x > 0.0) & (x < np.inf)
    z = xp.where(valid, x, 1.0)
    result = xp.where(x == np.inf, x, np.nan)
    # Integers up to LGAMMA_EXACT_FACTORIAL_MAX: log((z - 1)!), the factorial exact.
    small_integer = valid & (z == xp.floor(z)) & (z <= LGAMMA_EXACT_FACTORIAL_MAX)
    near_one = valid & ~small_integer & (xp.abs(z - 1.0) <= LGAMMA_NEAR_ROOT)
    near_two = valid & ~small_integer & (xp.abs(z - 2.0) <= LGAMMA_NEAR_ROOT)
    elsewhere = valid & ~(small_integer | near_one | near_two)
    # Each branch on its own elements only (the Stirling one costs some 300 operations).
    if bool(xp.any(small_integer)):
        log_factorials = log(xp, xp.asarray(_FACTORIALS))  # 23 values, then gathered
        result[small_integer] = log_factorials[z[small_integer].astype(np.int64) - 1]
    for mask, linear, linear_lo, coefficients, root in (
        (near_one, LGAMMA_NEAR_ONE_LINEAR, LGAMMA_NEAR_ONE_LINEAR_LO, LGAMMA_NEAR_ONE, 1.0),
        (near_two, LGAMMA_NEAR_TWO_LINEAR, LGAMMA_NEAR_TWO_LINEAR_LO, LGAMMA_NEAR_TWO, 2.0),
    ):
        if bool(xp.any(mask)):
            result[mask] = _near_root(xp, z[mask] - root, linear, linear_lo, coefficients)
    if bool(xp.any(elsewhere)):
        result[elsewhere] = _stirling(xp, z[elsewhere])
    return result


# ---- erf -----------------------------------------------------------------------------
def _exp_minus_square(xp, a):
    """``exp(-a**2)`` with ``a**2`` taken exactly as ``h + l``: ``exp(-h) (1 - l)``."""
    square, error = _two_product(xp, a, a)
    return exp(xp, -square) * (1.0 - error), square


def _erf_series(xp, a):
    """``erf(a)`` for ``0 <= a < ERF_SERIES_LIMIT`` (module docstring)."""
    factor, square = _exp_minus_square(xp, a)
    ratio = square + square
    term = xp.ones_like(a)
    total = xp.ones_like(a)
    for n in range(ERF_SERIES_TERMS):
        term = (term * ratio) / (2 * n + 3)
        total = total + term
    return ((TWO_OVER_SQRT_PI * a) * factor) * total


def _erfc_fraction(xp, a):
    """``erfc(a)`` for ``ERF_SERIES_LIMIT <= a <= ERF_ONE_LIMIT`` (module docstring)."""
    factor, _ = _exp_minus_square(xp, a)
    fraction = a
    for k in range(ERF_FRACTION_TERMS, 0, -1):
        fraction = a + (k * 0.5) / fraction
    return (INV_SQRT_PI * factor) / fraction


@_array_function
def erf(xp, x):
    """The error function, the same bits on every platform (module docstring); the
    parameters and the result as :func:`exp`'s."""
    a = xp.abs(x)
    value = xp.ones_like(a)  # a >= ERF_ONE_LIMIT (and inf)
    near = a < ERF_SERIES_LIMIT
    far = ~near & (a < ERF_ONE_LIMIT)
    # Each region on its own elements (the same operations on each element either way).
    value[near] = _erf_series(xp, a[near])
    value[far] = 1.0 - _erfc_fraction(xp, a[far])
    return xp.where(x != x, x, xp.copysign(value, x))
