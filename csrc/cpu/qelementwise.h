// CPU-stream kernels of QFunctional's ops on per-tensor codes (docs/numerics.md,
// "Quantized modules"): each element dequantized, combined and requantized in one
// pass, the same float32 operations in the same order as the composite
// dequantize / add / relu / quantize, so the codes are the same bits.
#pragma once
#include <cstdint>
#include <vector>

#include "core/qelementwise_kind.h"
#include "core/tensor.h"
#include "cpu/quantize.h"

namespace lucid::cpu {

// One per-tensor grid: real = (code - z) * s.
struct QAffine {
  float s;
  int32_t z;
};

// out = quantize(op(dequantize(a, pa), dequantize(b, pb)), po) clamped to `bounds`;
// a, b contiguous int8 / uint8 codes of one shape and dtype, out int8 / uint8.
// `reference` runs the scalar twin, single-threaded.
void qbinary(QBinaryOp op, const Tensor& a, QAffine pa, const Tensor& b, QAffine pb, const Tensor& out, QAffine po,
             QBounds bounds, bool reference);
// out = cat(quantize(dequantize(xs[i], ps[i]), po), dim): the inputs contiguous
// codes of one dtype, out contiguous of the concatenated shape.
void qcat(const std::vector<Tensor>& xs, const std::vector<QAffine>& ps, int64_t dim, const Tensor& out, QAffine po,
          QBounds bounds, bool reference);

}  // namespace lucid::cpu
