// strict_math.cuh -- platform-independent exp, exp2, log and log2 on the device: the
// algorithms and constants of gpuboost/core/strict_math.py (its docstring derives them),
// the same operations in the same order, so the same bits as the NumPy reference and the
// compiled CPU kernels (gpuboost/backends/cpu/strict_math.py) for every argument
// (docs/DESIGN.md, "Platform-independent arithmetic"). No CUDA math library function is
// called (CUDA's exp and log differ from other libraries' in the last bit). Every kernel
// is compiled with --fmad=false, so no multiply and add is contracted into an FMA; the
// tests compare every function with the NumPy one bit for bit under the emulation, and
// check that the constants here are the Python module's.
#pragma once
#include "common.cuh"

//: 2**(j/64) = STRICT_EXP_TABLE[2 j] + STRICT_EXP_TABLE[2 j + 1] (strict_math.EXP_TABLE_HI,
//: EXP_TABLE_LO). Global memory, not __constant__: the threads of a warp read different
//: entries.
__device__ const double STRICT_EXP_TABLE[2 * 64] = {
    0x1.0000000000000p+0, 0x0.0p+0,
    0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56,
    0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55,
    0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57,
    0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54,
    0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59,
    0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54,
    0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54,
    0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55,
    0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55,
    0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54,
    0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55,
    0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54,
    0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55,
    0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55,
    0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54,
    0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55,
    0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54,
    0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54,
    0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56,
    0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55,
    0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58,
    0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59,
    0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56,
    0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56,
    0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54,
    0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55,
    0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54,
    0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54,
    0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54,
    0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54,
    0x1.6623882552225p+0, -0x1.bb60987591c34p-54,
    0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54,
    0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57,
    0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55,
    0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54,
    0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55,
    0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56,
    0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54,
    0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54,
    0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54,
    0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55,
    0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57,
    0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54,
    0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56,
    0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54,
    0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54,
    0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54,
    0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54,
    0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57,
    0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56,
    0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55,
    0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55,
    0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54,
    0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56,
    0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54,
    0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55,
    0x1.da9e603db3285p+0, 0x1.c2300696db532p-54,
    0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54,
    0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55,
    0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54,
    0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54,
    0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54,
    0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55,
};

constexpr double STRICT_ROUND_SHIFT = 0x1.8000000000000p+52;
constexpr double STRICT_EXP_N_OVER_LN2 = 0x1.71547652b82fep+6;
constexpr double STRICT_EXP_LN2_OVER_N_HI = 0x1.62e42fee00000p-7;
constexpr double STRICT_EXP_LN2_OVER_N_LO = 0x1.a39ef35793c76p-39;
constexpr double STRICT_LN2_HI = 0x1.62e42fefa3800p-1;
constexpr double STRICT_LN2_LO = 0x1.ef35793c76730p-45;
constexpr double STRICT_LN2 = 0x1.62e42fefa39efp-1;
constexpr double STRICT_INV_LN2_HI = 0x1.7154765200000p+0;
constexpr double STRICT_INV_LN2_LO = 0x1.705fc2eefa200p-33;
constexpr double STRICT_SQRT2 = 0x1.6a09e667f3bcdp+0;
constexpr double STRICT_TWO_54 = 0x1.0000000000000p+54;
constexpr double STRICT_EXP_CLAMP = 0x1.1300000000000p+10;
constexpr double STRICT_SMALLEST_NORMAL = 0x1p-1022;

//: 2.0**k for k in [-1022, 1023], from its bits (exact).
GPUBOOST_DEVICE_INLINE double strict_power_of_two(int64_t k) {
  return __longlong_as_double(static_cast<long long>((k + 1023) << 52));
}

//: 2**(n / 64) * exp(r) for the integer-valued n_float and |r| <= ln 2 / 128.
GPUBOOST_DEVICE_INLINE double strict_exp_finish(double n_float, double r) {
  const int64_t n = static_cast<int64_t>(n_float);
  const int64_t j = n & 63;
  const int64_t k = n >> 6;
  const double p =
      r + (r * r) * (0x1.0000000000000p-1 +
                     r * (0x1.5555555555555p-3 +
                          r * (0x1.5555555555555p-5 + r * (0x1.1111111111111p-7 + r * 0x1.6c16c16c16c17p-10))));
  const double table_hi = STRICT_EXP_TABLE[2 * j];
  const double y = table_hi + (STRICT_EXP_TABLE[2 * j + 1] + table_hi * p);
  const int64_t half = k >> 1;
  return (y * strict_power_of_two(half)) * strict_power_of_two(k - half);
}

GPUBOOST_DEVICE_INLINE double strict_clamped(double x) {
  if (x > STRICT_EXP_CLAMP) return STRICT_EXP_CLAMP;
  if (x < -STRICT_EXP_CLAMP) return -STRICT_EXP_CLAMP;
  return x;
}

//: e**x (strict_math.exp).
GPUBOOST_DEVICE_INLINE double strict_exp(double x) {
  if (x != x) return x;
  const double clamped = strict_clamped(x);
  const double n_float = (clamped * STRICT_EXP_N_OVER_LN2 + STRICT_ROUND_SHIFT) - STRICT_ROUND_SHIFT;
  const double r =
      (clamped - n_float * STRICT_EXP_LN2_OVER_N_HI) - n_float * STRICT_EXP_LN2_OVER_N_LO;
  return strict_exp_finish(n_float, r);
}

//: 2**x (strict_math.exp2).
GPUBOOST_DEVICE_INLINE double strict_exp2(double x) {
  if (x != x) return x;
  const double clamped = strict_clamped(x);
  const double n_float = (clamped * 64.0 + STRICT_ROUND_SHIFT) - STRICT_ROUND_SHIFT;
  const double r = (clamped - n_float * (1.0 / 64.0)) * STRICT_LN2;
  return strict_exp_finish(n_float, r);
}

//: k, f, hfsq and s * (hfsq + R) of a positive finite x (strict_math._log_parts).
GPUBOOST_DEVICE_INLINE void strict_log_parts(double x, double& k_out, double& f, double& hfsq,
                                             double& correction) {
  int64_t adjust = 0;
  if (x < STRICT_SMALLEST_NORMAL) {
    x = x * STRICT_TWO_54;
    adjust = 54;
  }
  const int64_t bits = static_cast<int64_t>(__double_as_longlong(x));
  int64_t k = ((bits >> 52) & 0x7FF) - 1023 - adjust;
  double m = __longlong_as_double(
      static_cast<long long>((bits & 0x000FFFFFFFFFFFFFLL) | 0x3FF0000000000000LL));
  if (m > STRICT_SQRT2) {
    m = m * 0.5;
    k += 1;
  }
  f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double series = 0x1.642c8590b2164p-4;
  series = 0x1.8618618618618p-4 + z * series;
  series = 0x1.af286bca1af28p-4 + z * series;
  series = 0x1.e1e1e1e1e1e1ep-4 + z * series;
  series = 0x1.1111111111111p-3 + z * series;
  series = 0x1.3b13b13b13b14p-3 + z * series;
  series = 0x1.745d1745d1746p-3 + z * series;
  series = 0x1.c71c71c71c71cp-3 + z * series;
  series = 0x1.2492492492492p-2 + z * series;
  series = 0x1.999999999999ap-2 + z * series;
  series = 0x1.5555555555555p-1 + z * series;
  series = z * series;
  hfsq = 0.5 * f * f;
  correction = s * (hfsq + series);
  k_out = static_cast<double>(k);
}

//: log's value outside the positive finite numbers: -inf at 0, inf at inf, else NaN.
GPUBOOST_DEVICE_INLINE double strict_log_special(double x) {
  if (x == 0.0) return -__longlong_as_double(0x7FF0000000000000LL);
  if (x > 0.0) return x;
  return __longlong_as_double(0x7FF8000000000000LL);
}

//: Natural logarithm (strict_math.log).
GPUBOOST_DEVICE_INLINE double strict_log(double x) {
  if (!(x > 0.0 && x < __longlong_as_double(0x7FF0000000000000LL))) return strict_log_special(x);
  double k, f, hfsq, correction;
  strict_log_parts(x, k, f, hfsq, correction);
  return k * STRICT_LN2_HI - ((hfsq - (correction + k * STRICT_LN2_LO)) - f);
}

//: Base-2 logarithm (strict_math.log2).
GPUBOOST_DEVICE_INLINE double strict_log2(double x) {
  if (!(x > 0.0 && x < __longlong_as_double(0x7FF0000000000000LL))) return strict_log_special(x);
  double k, f, hfsq, correction;
  strict_log_parts(x, k, f, hfsq, correction);
  const double hi = __longlong_as_double(
      __double_as_longlong(f - hfsq) & static_cast<long long>(0xFFFFFFFF00000000ULL));
  const double lo = ((f - hi) - hfsq) + correction;
  const double value_hi = hi * STRICT_INV_LN2_HI;
  double value_lo = (lo + hi) * STRICT_INV_LN2_LO + lo * STRICT_INV_LN2_HI;
  const double w = k + value_hi;
  value_lo = value_lo + ((k - w) + value_hi);
  return value_lo + w;
}
