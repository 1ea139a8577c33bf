// CPU-stream kernels of the int4_pack family (ops/int4_pack.h).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::cpu {

// int4 packing along the middle axis of a contiguous (outer, len, inner)
// view: out is (outer, ceil(len/2), inner) uint8, low nibble = even index.
void pack_int4(const Tensor& codes, const Tensor& out, int64_t outer, int64_t len, int64_t inner);
void unpack_int4(const Tensor& packed, const Tensor& out, int64_t outer, int64_t len, int64_t inner);

}  // namespace lucid::cpu
