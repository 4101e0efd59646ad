"""The CUDA Math API's single- and double-precision names, one table for both directions.

``DOUBLE_MATH_FUNCTIONS`` are the double-precision functions whose single-precision form is the same
name with an ``f`` suffix (``tanh`` / ``tanhf``): the ``demote-double`` recipe maps double -> float, the
float64 run of a launch-spec kernel (``double_promotion``) maps float -> double. The other tables hold
the float forms whose double form is not a suffix away (intrinsics, conversions, constants).
Pure data: no torch, no tree-sitter.
"""

from __future__ import annotations

DOUBLE_MATH_FUNCTIONS = (
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt",
    "rcbrt", "pow", "hypot", "erf", "erfc", "erfinv", "erfcinv", "lgamma", "tgamma", "fabs", "fmax",
    "fmin", "fmod", "floor", "ceil", "round", "trunc", "rint", "fma", "copysign", "remainder", "sinpi",
    "cospi", "normcdf", "normcdfinv", "ldexp", "frexp", "modf",
)  # fmt: skip
"""Double-precision math functions whose float form is ``name + "f"`` (CUDA Math API)."""

_MORE_SUFFIXED = (
    "sincos", "sincospi", "erfcx", "norm3d", "rnorm3d", "norm4d", "rnorm4d", "rhypot", "norm", "rnorm",
    "fdim", "nan", "nextafter", "scalbn", "scalbln", "logb", "ilogb", "lround", "llround", "lrint",
    "llrint", "nearbyint", "remquo", "j0", "j1", "jn", "y0", "y1", "yn", "cyl_bessel_i0", "cyl_bessel_i1",
)  # fmt: skip

FLOAT_TO_DOUBLE: dict[str, str] = {
    **{f"{name}f": name for name in (*DOUBLE_MATH_FUNCTIONS, *_MORE_SUFFIXED)},
    # fast-math intrinsics: the double form is the accurate function
    "__expf": "exp", "__exp10f": "exp10", "__logf": "log", "__log2f": "log2", "__log10f": "log10",
    "__sinf": "sin", "__cosf": "cos", "__tanf": "tan", "__powf": "pow", "__sincosf": "sincos",
    "__frsqrt_rn": "rsqrt",
    "__isinff": "isinf", "__isnanf": "isnan", "__finitef": "isfinite",
    # conversions from float
    **{f"__float2{to}_{mode}": f"__double2{to}_{mode}" for to in ("int", "uint", "ll", "ull")
       for mode in ("rn", "rz", "ru", "rd")},
    # conversions to float (to double they are exact: one rounding mode)
    **{f"__{frm}2float_{mode}": f"__{frm}2double_rn" for frm in ("int", "uint", "ll", "ull")
       for mode in ("rn", "rz", "ru", "rd")},
    # IEEE-rounded arithmetic
    **{f"__f{op}_{mode}": f"__d{op}_{mode}" for op in ("add", "sub", "mul", "div", "rcp", "sqrt")
       for mode in ("rn", "rz", "ru", "rd")},
    **{f"__fmaf_{mode}": f"__fma_{mode}" for mode in ("rn", "rz", "ru", "rd")},
    # vector types' constructors
    **{f"make_float{n}": f"make_double{n}" for n in (1, 2, 3, 4)},
    # limits (<cfloat>, math_constants.h)
    "FLT_MAX": "DBL_MAX", "FLT_MIN": "DBL_MIN", "FLT_EPSILON": "DBL_EPSILON", "FLT_TRUE_MIN": "DBL_TRUE_MIN",
    "HUGE_VALF": "HUGE_VAL", "CUDART_INF_F": "CUDART_INF", "CUDART_NAN_F": "CUDART_NAN",
    "CUDART_PI_F": "CUDART_PI", "CUDART_SQRT_2_F": "CUDART_SQRT_2", "CUDART_L2E_F": "CUDART_L2E",
    "CUDART_LN2_F": "CUDART_LN2", "CUDART_ZERO_F": "CUDART_ZERO", "CUDART_ONE_F": "CUDART_ONE",
}  # fmt: skip
"""Float-only names of the CUDA Math API and headers -> their double forms."""

_NOT_ALL_FLOATING = frozenset(
    {"frexp", "modf", "ldexp", "sincos", "sincospi", "remquo", "nan", "scalbn", "scalbln", "jn", "yn", "norm",
     "rnorm", "lround", "llround", "lrint", "llrint", "ilogb"}
)  # fmt: skip
FLOATING_ARGUMENTS = frozenset(
    name for name in (*DOUBLE_MATH_FUNCTIONS, *_MORE_SUFFIXED) if name not in _NOT_ALL_FLOATING
)
"""Double math functions whose every argument is a floating value: a float call's integer argument
(``sqrtf(n)``) is converted to float there, while ``sqrt(n)`` would pick an integer overload, so the
promotion casts such arguments to double."""

FLOAT_HELPERS: dict[str, str] = {
    "__fdividef": "__device__ __forceinline__ double {name}(double a, double b) { return a / b; }",
    "fdividef": "__device__ __forceinline__ double {name}(double a, double b) { return a / b; }",
    "__saturatef": "__device__ __forceinline__ double {name}(double x) { return fmin(fmax(x, 0.0), 1.0); }",
}
"""Float intrinsics with no double function of their own: a double helper of this body stands in."""

VECTOR_TYPES = {f"float{n}": f"double{n}" for n in (1, 2, 3, 4)}
"""Float vector types -> double vector types (same member names, twice the width)."""
