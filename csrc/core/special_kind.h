// Names of the special family's unary ops (ops/special.h), shared by both
// streams' kernels (like elementwise_kind.h).
#pragma once

namespace lucid {

// y = op(x) over a floating x, y of x's dtype: log1p, expm1, log2.
enum class SpecialOp { Log1p, Expm1, Log2 };

}  // namespace lucid
