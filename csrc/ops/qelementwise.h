// QFunctional's ops on per-tensor quantized codes, each fused into one pass:
// the codes of quantize(op(dequantize(a), dequantize(b)), scale, zero_point) on
// the grid `qdtype`, computed with exactly the composite's float32 operations
// (docs/numerics.md, "Quantized modules"). Inputs are int8 / uint8 codes with
// their per-tensor (scale, zero_point); the output grid's codes are 8-bit.
// `reference` runs the scalar CPU twin (tests compare it with the fast one).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// quantize(dequantize(a) + dequantize(b)); relu: quantize(relu(...)). a, b of one shape and dtype.
Tensor qadd(const Tensor& a, double a_scale, int64_t a_zero_point, const Tensor& b, double b_scale,
            int64_t b_zero_point, double scale, int64_t zero_point, const std::string& qdtype, bool relu,
            bool reference = false);
// quantize(dequantize(a) * dequantize(b)).
Tensor qmul(const Tensor& a, double a_scale, int64_t a_zero_point, const Tensor& b, double b_scale,
            int64_t b_zero_point, double scale, int64_t zero_point, const std::string& qdtype,
            bool reference = false);
// quantize(cat(dequantize(xs[i]), dim)): xs of one dtype, equal sizes but along dim.
Tensor qcat(const std::vector<Tensor>& xs, const std::vector<double>& scales, const std::vector<int64_t>& zero_points,
            int64_t dim, double scale, int64_t zero_point, const std::string& qdtype, bool reference = false);

}  // namespace lucid::ops
