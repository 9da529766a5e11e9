// File: pmath.h
// -----------------------------------------------------------------------------
// Portable libm: musl 1.2.3's src/math compiled from source into both the native
// and the wasm build, so every result is bit-identical across them (glibc and
// emscripten's libm disagree by 1-3 ulp, and glibc picks FMA code paths at run
// time). The core calls these, never <cmath>'s transcendental functions.
//
// sqrt is deliberately absent: IEEE 754 requires it to be correctly rounded, so
// std::sqrt is already identical everywhere (as are + - * /, with
// -ffp-contract=off and without -ffast-math).
//
// Example:
//   double bytes = pm_pow(2.0, 30.0);
#ifndef CORE_PMATH_PMATH_H_
#define CORE_PMATH_PMATH_H_

#ifdef __cplusplus
extern "C" {
#endif

// Exponentials and logarithms.
double pm_exp(double x);
double pm_exp2(double x);
double pm_expm1(double x);
double pm_log(double x);
double pm_log2(double x);
double pm_log10(double x);
double pm_log1p(double x);
double pm_pow(double x, double y);
double pm_cbrt(double x);
double pm_hypot(double x, double y);

// Trigonometric and hyperbolic functions.
double pm_sin(double x);
double pm_cos(double x);
double pm_tan(double x);
double pm_asin(double x);
double pm_acos(double x);
double pm_atan(double x);
double pm_atan2(double y, double x);
double pm_sinh(double x);
double pm_cosh(double x);
double pm_tanh(double x);

// Error function.
double pm_erf(double x);
double pm_erfc(double x);

// Rounding and remainders (exact everywhere, here so that the core needs no
// <cmath> at all).
double pm_ceil(double x);
double pm_floor(double x);
double pm_trunc(double x);
double pm_round(double x);
double pm_fmod(double x, double y);
double pm_scalbn(double x, int n);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // CORE_PMATH_PMATH_H_
