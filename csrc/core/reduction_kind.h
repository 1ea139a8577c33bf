// Names of the reductions, shared by both streams' kernels (like
// elementwise_kind.h) so each is spelled the same in cpu/, gpu/ and ops/.
#pragma once

namespace lucid {

// Sum and Prod accumulate wide (float32 for floating inputs, int64 for
// integers and bool); Max and Min propagate NaN; All and Any give bool.
enum class ReduceOp { Sum, Prod, Max, Min, All, Any };

}  // namespace lucid
