// GPU-stream forms of QFunctional's fused ops (cpu/qelementwise.h): the same
// float32 operations composed from MLX's elementwise ops (those of
// gpu::dequantize, lucid's add / multiply / relu and gpu::quantize), so the
// codes equal the CPU stream's and the composite path's bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "core/qelementwise_kind.h"
#include "core/tensor.h"

namespace lucid::gpu {

struct QGrid {
  float s;
  int32_t z;
};

// quantize(op(dequantize(a, pa), dequantize(b, pb)), po) on the grid [lo, hi] in `storage`.
Tensor qbinary(QBinaryOp op, const Tensor& a, QGrid pa, const Tensor& b, QGrid pb, QGrid po, float lo, float hi,
               DType storage);
// cat(quantize(dequantize(xs[i], ps[i]), po), dim).
Tensor qcat(const std::vector<Tensor>& xs, const std::vector<QGrid>& ps, int64_t dim, QGrid po, float lo, float hi,
            DType storage);

}  // namespace lucid::gpu
