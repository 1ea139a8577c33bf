// Names of the math family's ops (ops/math.h), shared by both streams'
// kernels (like elementwise_kind.h) so each is spelled the same in cpu/,
// gpu/ and ops/.
#pragma once

namespace lucid {

// y = op(x) over a floating x, y of x's dtype.
enum class MathUnaryOp {
  Tan, Sinh, Cosh, Asin, Acos, Atan, Asinh, Acosh, Atanh, Trunc, Frac, Log10, Exp2, Erfc, Erfinv, Lgamma,
  Digamma, Sinc
};
// bool = op(x) over x of any dtype.
enum class MathPredicate { Signbit, IsPosInf, IsNegInf };
// y = op(a, b), a, b and y of one floating dtype.
enum class MathBinaryOp { Hypot, LogAddExp, LogAddExp2, Xlogy, Copysign, Fmax, Fmin, Nextafter };

}  // namespace lucid
