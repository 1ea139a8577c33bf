#include "ops/nn_common.h"

#include "core/errors.h"
#include "ops/copy.h"

namespace lucid::ops::nn_detail {

// The messages below are built only on failure: these checks run on every conv /
// pool call, and a dozen eager string builds cost ~10 us per call.
void require_floating(const Tensor& x, const std::string& fn, const char* arg) {
  if (!is_floating(x.dtype()))
    throw TypeError(fn + "(): argument '" + arg + "' must be a floating-point tensor, got " + dtype_name(x.dtype()));
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

void require_ints(const std::vector<int64_t>& v, size_t n, const std::string& fn, const char* arg, bool allow_zero) {
  if (v.size() != n)
    throw ValueError(fn + "(): argument '" + arg + "' must have " + std::to_string(n) + " values, got " + ints_str(v));
  for (int64_t e : v)
    if (!(allow_zero ? e >= 0 : e > 0))
      throw ValueError(fn + "(): argument '" + arg + "' must be " + (allow_zero ? "non-negative" : "positive") +
                       ", got " + ints_str(v));
}

DType cpu_work_dtype(DType dtype) { return dtype == DType::Float64 ? DType::Float64 : DType::Float32; }

Tensor cpu_work(const Tensor& x, DType work) {
  if (!x.defined()) return x;
  return contiguous(x.dtype() == work ? x : astype(x, work));
}
Tensor cpu_work(const std::optional<Tensor>& x, DType work) { return x ? cpu_work(*x, work) : Tensor(); }

Tensor cpu_cast_back(const Tensor& y, DType dtype) { return y.dtype() == dtype ? y : astype(y, dtype); }

}  // namespace lucid::ops::nn_detail
