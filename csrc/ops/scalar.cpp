#include "ops/scalar.h"

#include "ops/copy.h"

namespace lucid::ops {

DType scalar_dtype(ScalarKind kind, DType like) {
  switch (kind) {
    case ScalarKind::Bool:
      return like;
    case ScalarKind::Integer:
      return like == DType::Bool ? DType::Int64 : like;
    case ScalarKind::Real:
      return is_floating(like) ? like : DType::Float32;
  }
  return like;
}

Tensor scalar_tensor(double value, ScalarKind kind, const Tensor& like) {
  return full(Shape{}, value, scalar_dtype(kind, like.dtype()), like.device());
}

}  // namespace lucid::ops
