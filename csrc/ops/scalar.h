// Python numbers next to a tensor (PyTorch's "weak" scalars): `x + 2.0`,
// `x * 3`, `x == True`. The binding classifies the Python object; the rule for
// the dtype it takes lives here, once, for every op that coerces scalars.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// Python bool / numpy bool, an integer (int, numpy integer), a real (float,
// numpy floating).
enum class ScalarKind { Bool, Integer, Real };

// The dtype a number of `kind` takes next to a tensor of dtype `like`: `like`,
// unless the number's kind is higher (bool < integer < real). An integer next
// to a bool tensor is int64; a real next to a bool or integer tensor is float32.
DType scalar_dtype(ScalarKind kind, DType like);

// The number as a 0-d tensor on `like`'s device, in scalar_dtype(kind, like).
Tensor scalar_tensor(double value, ScalarKind kind, const Tensor& like);

}  // namespace lucid::ops
