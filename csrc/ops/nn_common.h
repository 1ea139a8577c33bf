// Helpers shared by the nn op families (conv, pool, linear, embedding):
// argument checks that phrase errors the same way, and the float32 round
// trip the CPU kernels (float32 or float64, BLAS) need for half-precision inputs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops::nn_detail {

// TypeError unless x has a floating dtype; names the function and argument.
void require_floating(const Tensor& x, const std::string& fn, const char* arg);
// ValueError unless v has exactly n positive (or, with allow_zero, non-negative) entries.
void require_ints(const std::vector<int64_t>& v, size_t n, const std::string& fn, const char* arg,
                  bool allow_zero = false);
// The dtype the CPU kernels compute a `dtype` input in: float64 stays
// float64 (DGEMM, double loops); float32 and half precision compute in float32.
DType cpu_work_dtype(DType dtype);
// A contiguous version of x in `work` (cpu_work_dtype of the op's input);
// an undefined (or absent optional) tensor stays undefined.
Tensor cpu_work(const Tensor& x, DType work);
Tensor cpu_work(const std::optional<Tensor>& x, DType work);
// Casts a CPU result computed in the work dtype back to the caller's dtype.
Tensor cpu_cast_back(const Tensor& y, DType dtype);
std::string ints_str(const std::vector<int64_t>& v);

}  // namespace lucid::ops::nn_detail
