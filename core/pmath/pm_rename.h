/* Force-included (-include) into every musl math source by
 * //tools/third_party_build:musl_libm.BUILD: gives each public and internal musl
 * math symbol a pm_ prefix, so that this copy never clashes with, or silently
 * replaces, the platform libm (glibc natively, emscripten's musl in wasm).
 * Keep in sync with _FUNCS there and with pmath.h. */
#ifndef CORE_PMATH_PM_RENAME_H_
#define CORE_PMATH_PM_RENAME_H_

/* Public functions. */
#define acos pm_acos
#define asin pm_asin
#define atan pm_atan
#define atan2 pm_atan2
#define cbrt pm_cbrt
#define ceil pm_ceil
#define cos pm_cos
#define cosh pm_cosh
#define erf pm_erf
#define erfc pm_erfc
#define exp pm_exp
#define exp2 pm_exp2
#define expm1 pm_expm1
#define floor pm_floor
#define fmod pm_fmod
#define hypot pm_hypot
#define log pm_log
#define log10 pm_log10
#define log1p pm_log1p
#define log2 pm_log2
#define pow pm_pow
#define round pm_round
#define scalbn pm_scalbn
#define sin pm_sin
#define sinh pm_sinh
#define tan pm_tan
#define tanh pm_tanh
#define trunc pm_trunc

/* musl-internal helpers and tables. */
#define __cos pm___cos
#define __exp_data pm___exp_data
#define __expo2 pm___expo2
#define __log2_data pm___log2_data
#define __log_data pm___log_data
#define __math_divzero pm___math_divzero
#define __math_divzerof pm___math_divzerof
#define __math_invalid pm___math_invalid
#define __math_invalidf pm___math_invalidf
#define __math_oflow pm___math_oflow
#define __math_oflowf pm___math_oflowf
#define __math_uflow pm___math_uflow
#define __math_uflowf pm___math_uflowf
#define __math_xflow pm___math_xflow
#define __math_xflowf pm___math_xflowf
#define __pow_log_data pm___pow_log_data
#define __rem_pio2 pm___rem_pio2
#define __rem_pio2_large pm___rem_pio2_large
#define __sin pm___sin
#define __tan pm___tan

/* musl-internal attribute macros (src/include/features.h); the wasm build uses
 * emscripten's public musl headers, which do not define them. */
#ifndef hidden
#define hidden __attribute__((__visibility__("hidden")))
#endif
#ifndef weak
#define weak __attribute__((__weak__))
#endif
#ifndef weak_alias
#define weak_alias(old, new) \
  extern __typeof(old) new __attribute__((__weak__, __alias__(#old)))
#endif

#endif /* CORE_PMATH_PM_RENAME_H_ */
