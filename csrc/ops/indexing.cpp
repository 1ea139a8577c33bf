#include "ops/indexing.h"

#include <string>

#include "core/errors.h"
#include "cpu/indexing.h"
#include "gpu/indexing.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

// Any integer dtype -> int64 (contiguous on the CPU stream); TypeError otherwise.
Tensor index_int64(const Tensor& index, const std::string& fn) {
  check<TypeError>(index.defined(), fn + "(): argument 'index' is undefined");
  check<TypeError>(is_integral(index.dtype()) && index.dtype() != DType::Bool,
                   fn + "(): argument 'index' must be an integer tensor, got " + dtype_name(index.dtype()));
  Tensor out = index.dtype() == DType::Int64 ? index : astype(index, DType::Int64);
  return contiguous(out);
}

// Every value in [lo, hi), checked before any kernel touches memory.
void check_values(const Tensor& idx, int64_t lo, int64_t hi, int axis, const std::string& fn) {
  if (idx.numel() == 0) return;
  auto [mn, mx] = idx.is_cpu() ? cpu::index_bounds(idx) : gpu::index_bounds(idx);
  if (mn < lo || mx >= hi) {
    int64_t bad = mn < lo ? mn : mx;
    throw IndexError(fn + "(): argument 'index' holds " + std::to_string(bad) + ", out of range for dim " +
                     std::to_string(axis) + " with size " + std::to_string(hi) + " (expected values in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "))");
  }
}

int axis_of(const Tensor& x, int64_t axis, const std::string& fn) {
  return normalize_axis(axis, x.ndim(), fn.c_str(), "dim");
}

void check_numeric(const Tensor& t, const std::string& fn, const char* arg) {
  check<TypeError>(t.dtype() != DType::Bool, fn + "(): argument '" + arg + "' must be numeric, got bool");
}

}  // namespace

Tensor wrap_index(const Tensor& index, int64_t size, int64_t axis, const std::string& fn) {
  common_device(fn.c_str(), {&index});
  Tensor idx = index_int64(index, fn);
  check_values(idx, -size, size, static_cast<int>(axis), fn);
  return idx.is_cpu() ? cpu::wrap_negative(idx, size) : gpu::wrap_negative(idx, size);
}

Tensor gather(const Tensor& x, int64_t axis, const Tensor& index) {
  const std::string fn = "gather";
  common_device("gather", {&x, &index});
  int ax = axis_of(x, axis, fn);
  Tensor idx = index_int64(index, fn);
  check(idx.ndim() == x.ndim(), "gather(): argument 'index' must have the input's " + std::to_string(x.ndim()) +
                                    " dims, got shape " + shape_str(idx.shape()));
  for (int d = 0; d < x.ndim(); ++d)
    check(d == ax || idx.shape()[d] <= x.shape()[d],
          "gather(): argument 'index' of shape " + shape_str(idx.shape()) + " is larger than the input " +
              shape_str(x.shape()) + " on dim " + std::to_string(d));
  int64_t size = x.ndim() == 0 ? 1 : x.shape()[ax];
  check_values(idx, 0, size, ax, fn);
  if (x.device() == Device::GPU) return gpu::gather(x, ax, idx);
  Tensor out = Tensor::empty_cpu(idx.shape(), x.dtype());
  cpu::gather(x, ax, idx, out);
  return out;
}

namespace {

Tensor scatter_checked(const Tensor& self, int ax, const Tensor& idx, const Tensor& src, bool accumulate) {
  if (self.device() == Device::GPU) return gpu::scatter(self, ax, idx, src, accumulate);
  Tensor out = clone(self);
  cpu::scatter(out, ax, idx, src, accumulate);
  return out;
}

Tensor scatter_impl(const std::string& fn, const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src,
                    bool accumulate) {
  common_device(fn.c_str(), {&self, &index, &src});
  int ax = axis_of(self, axis, fn);
  if (accumulate) check_numeric(self, fn, "input");
  check(src.dtype() == self.dtype(), fn + "(): argument 'src' has dtype " + dtype_name(src.dtype()) +
                                         ", expected the input's " + dtype_name(self.dtype()));
  Tensor idx = index_int64(index, fn);
  check(idx.ndim() == self.ndim() && src.ndim() == self.ndim(),
        fn + "(): arguments 'index' " + shape_str(idx.shape()) + " and 'src' " + shape_str(src.shape()) +
            " must have the input's " + std::to_string(self.ndim()) + " dims");
  for (int d = 0; d < self.ndim(); ++d) {
    check(idx.shape()[d] <= src.shape()[d], fn + "(): argument 'index' of shape " + shape_str(idx.shape()) +
                                                " is larger than 'src' " + shape_str(src.shape()) + " on dim " +
                                                std::to_string(d));
    check(d == ax || idx.shape()[d] <= self.shape()[d],
          fn + "(): argument 'index' of shape " + shape_str(idx.shape()) + " is larger than the input " +
              shape_str(self.shape()) + " on dim " + std::to_string(d));
  }
  check_values(idx, 0, self.ndim() == 0 ? 1 : self.shape()[ax], ax, fn);
  return scatter_checked(self, ax, idx, src, accumulate);
}

Tensor index_scatter_impl(const std::string& fn, const Tensor& self, int64_t axis, const Tensor& index,
                          const Tensor& src, bool accumulate) {
  common_device(fn.c_str(), {&self, &index, &src});
  check(self.ndim() > 0, fn + "(): argument 'input' must have at least one dimension, got a 0-d tensor");
  int ax = axis_of(self, axis, fn);
  if (accumulate) check_numeric(self, fn, "input");
  check(src.dtype() == self.dtype(), fn + "(): argument 'source' has dtype " + dtype_name(src.dtype()) +
                                         ", expected the input's " + dtype_name(self.dtype()));
  Tensor idx = index_int64(index, fn);
  check(idx.ndim() <= 1, fn + "(): argument 'index' must be 1-d, got shape " + shape_str(idx.shape()));
  Shape want = self.shape();
  want[ax] = idx.numel();
  check(src.shape() == want, fn + "(): argument 'source' has shape " + shape_str(src.shape()) + ", expected " +
                                 shape_str(want));
  check_values(idx, 0, self.shape()[ax], ax, fn);
  // Row m of src goes to row index[m]: a scatter with the index broadcast
  // over src's other axes (a stride-0 view, no copy).
  Shape line(self.ndim(), 1);
  line[ax] = idx.numel();
  Tensor spread = expand(reshape(idx, line), src.shape());
  return scatter_checked(self, ax, spread, src, accumulate);
}

}  // namespace

Tensor scatter_add(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src) {
  return scatter_impl("scatter_add", self, axis, index, src, true);
}

Tensor scatter(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src) {
  return scatter_impl("scatter", self, axis, index, src, false);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  const std::string fn = "index_select";
  common_device("index_select", {&x, &index});
  check(x.ndim() > 0, "index_select(): argument 'input' must have at least one dimension, got a 0-d tensor");
  int ax = axis_of(x, axis, fn);
  Tensor idx = index_int64(index, fn);
  check(idx.ndim() <= 1, "index_select(): argument 'index' must be 1-d, got shape " + shape_str(idx.shape()));
  check_values(idx, 0, x.shape()[ax], ax, fn);
  Tensor flat = idx.ndim() == 1 ? idx : reshape(idx, {1});
  if (x.device() == Device::GPU) return gpu::index_select(x, ax, flat);
  Shape shape = x.shape();
  shape[ax] = flat.numel();
  Tensor out = Tensor::empty_cpu(shape, x.dtype());
  cpu::index_select(contiguous(x), ax, flat, out);
  return out;
}

Tensor index_add(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src) {
  return index_scatter_impl("index_add", self, axis, index, src, true);
}

Tensor index_copy(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src) {
  return index_scatter_impl("index_copy", self, axis, index, src, false);
}

}  // namespace lucid::ops
