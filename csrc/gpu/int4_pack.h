// GPU-stream kernels of the int4_pack family (ops/int4_pack.h), MLX bit ops:
// the bytes equal the CPU stream's.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::gpu {

Tensor pack_int4(const Tensor& codes, int64_t outer, int64_t len, int64_t inner, const Shape& out_shape);
Tensor unpack_int4(const Tensor& packed, int64_t outer, int64_t len, int64_t inner, DType out,
                   const Shape& out_shape);

}  // namespace lucid::gpu
