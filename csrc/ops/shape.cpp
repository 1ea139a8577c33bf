#include "ops/shape.h"

#include <string>

#include "core/errors.h"
#include "cpu/copy.h"
#include "cpu/shape.h"
#include "gpu/shape.h"
#include "ops/copy.h"

namespace lucid::ops {

namespace {

// Element count of a requested shape, ValueError (not a wrapped product)
// when it does not fit in int64.
int64_t checked_numel(const Shape& shape, const char* fn) {
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) empty = empty || d == 0;
  for (int64_t d : shape) {
    if (d <= 0 || empty) continue;
    check(!__builtin_mul_overflow(n, d, &n), std::string(fn) + "(): shape " + shape_str(shape) + " is too large");
  }
  return empty ? 0 : n;
}

// Resolves one -1 and checks the element count; ValueError naming `fn`.
Shape infer_shape(const Shape& shape, int64_t numel_in, const char* fn) {
  Shape out = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      check<ShapeError>(infer < 0, std::string(fn) + "(): argument 'shape' may contain only one -1, got " + shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      check<ShapeError>(out[i] >= 0, std::string(fn) + "(): argument 'shape' has a negative size: " + shape_str(shape));
      if (out[i] != 0)
        check<ShapeError>(!__builtin_mul_overflow(known, out[i], &known), std::string(fn) + "(): shape " + shape_str(shape) + " is too large");
      else
        known = 0;
    }
  }
  if (infer >= 0) {
    check<ShapeError>(known != 0 && numel_in % known == 0,
          std::string(fn) + "(): shape " + shape_str(shape) + " is invalid for input of size " +
              std::to_string(numel_in));
    out[infer] = numel_in / known;
  }
  check<ShapeError>(checked_numel(out, fn) == numel_in, std::string(fn) + "(): shape " + shape_str(shape) + " is invalid for input of size " +
                                    std::to_string(numel_in));
  return out;
}

Tensor cpu_view_of(const Tensor& x, const Shape& shape, const Strides& strides) {
  return Tensor::view_cpu(x.impl().storage, shape, strides, x.offset(), x.dtype());
}

Tensor reshape_impl(const Tensor& x, const Shape& shape, const char* fn, bool copy_ok) {
  common_device(fn, {&x});
  Shape out = infer_shape(shape, x.numel(), fn);
  if (x.device() == Device::GPU) return gpu::reshape(x, out);
  if (auto st = cpu::view_strides(x.shape(), x.strides(), out)) return cpu_view_of(x, out, *st);
  check<ShapeError>(copy_ok, std::string(fn) + "(): the input's strides " + shape_str(x.strides()) + " for shape " +
                     shape_str(x.shape()) + " do not allow a view of shape " + shape_str(out) +
                     "; use reshape() (which copies) or call contiguous() first");
  Tensor c = contiguous(x);
  return cpu_view_of(c, out, contiguous_strides(out));
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) { return reshape_impl(x, shape, "reshape", true); }
Tensor view(const Tensor& x, const Shape& shape) { return reshape_impl(x, shape, "view", false); }

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  common_device("permute", {&x});
  int nd = x.ndim();
  check(static_cast<int>(dims.size()) == nd, "permute(): argument 'dims' must name each of the input's " +
                                                 std::to_string(nd) + " axes once, got " + shape_str(dims));
  std::vector<int> perm(nd);
  std::vector<bool> seen(nd, false);
  for (int i = 0; i < nd; ++i) {
    perm[i] = normalize_axis(dims[i], nd, "permute", "dims");
    check(!seen[perm[i]], "permute(): argument 'dims' repeats axis " + std::to_string(perm[i]) + ": " +
                              shape_str(dims));
    seen[perm[i]] = true;
  }
  if (x.device() == Device::GPU) return gpu::permute(x, perm);
  Shape shape(nd);
  Strides strides(nd);
  for (int i = 0; i < nd; ++i) {
    shape[i] = x.shape()[perm[i]];
    strides[i] = x.strides()[perm[i]];
  }
  return cpu_view_of(x, shape, strides);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  common_device("expand", {&x});
  int nd = static_cast<int>(shape.size()), xd = x.ndim();
  check(nd >= xd, "expand(): argument 'size' has " + std::to_string(nd) + " dims, fewer than the input's " +
                      std::to_string(xd) + " (shape " + shape_str(x.shape()) + ")");
  Shape out(nd);
  Strides strides(nd, 0);
  int lead = nd - xd;
  for (int i = 0; i < nd; ++i) {
    int64_t want = shape[i];
    if (i < lead) {
      check(want >= 0, "expand(): argument 'size' " + shape_str(shape) + ": a new leading axis cannot be -1 or negative");
      out[i] = want;
      continue;
    }
    int64_t have = x.shape()[i - lead];
    if (want == -1) want = have;
    check(want >= 0, "expand(): argument 'size' " + shape_str(shape) + " has a negative size");
    check<ShapeError>(have == want || have == 1, "expand(): cannot expand shape " + shape_str(x.shape()) + " to " +
                                         shape_str(shape) + ": axis " + std::to_string(i) + " has size " +
                                         std::to_string(have) + ", expected 1 or " + std::to_string(want));
    out[i] = want;
    if (x.is_cpu()) strides[i] = have == want ? x.strides()[i - lead] : 0;
  }
  checked_numel(out, "expand");
  if (x.device() == Device::GPU) return gpu::expand(x, out);
  return cpu_view_of(x, out, strides);
}

namespace {

void check_slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                 const Shape& lengths, const char* fn) {
  // Messages are built only on failure (`if`, not check(cond, msg)): x[1:3] runs this on every call.
  size_t nd = x.shape().size();
  if (!(starts.size() == nd && steps.size() == nd && lengths.size() == nd))
    throw IndexError(std::string(fn) + "(): expected one start, step and length per axis (" + std::to_string(nd) + ")");
  for (size_t i = 0; i < nd; ++i) {
    int64_t size = x.shape()[i], len = lengths[i], st = steps[i], b = starts[i];
    if (st == 0) throw ValueError(std::string(fn) + "(): slice step cannot be zero (axis " + std::to_string(i) + ")");
    if (!(len >= 0 && len <= size))
      throw ValueError(std::string(fn) + "(): slice length " + std::to_string(len) + " on axis " + std::to_string(i) +
                       " is outside [0, " + std::to_string(size) + "]");
    if (len == 0) continue;
    // |step| < size whenever two elements fit, so (len - 1) * step cannot overflow below.
    int64_t last = len == 1 ? b : (st > -size && st < size ? b + (len - 1) * st : -1);
    if (!(b >= 0 && b < size && last >= 0 && last < size))
      throw IndexError(std::string(fn) + "(): slice of axis " + std::to_string(i) + " (start " + std::to_string(b) +
                       ", step " + std::to_string(st) + ", length " + std::to_string(len) +
                       ") is out of range for size " + std::to_string(size));
  }
}

bool any_negative(const std::vector<int64_t>& steps, const Shape& lengths) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i] < 0 && lengths[i] > 1) return true;
  return false;
}

}  // namespace

Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
             const Shape& lengths) {
  common_device("slice", {&x});
  check_slice(x, starts, steps, lengths, "slice");
  if (x.device() == Device::GPU) return gpu::slice(x, starts, steps, lengths);
  Tensor v = cpu::strided_view(x, starts, steps, lengths);
  if (!any_negative(steps, lengths)) return v;
  Tensor out = Tensor::empty_cpu(v.shape(), v.dtype());
  cpu::copy_into(v, out);
  return out;
}

void slice_assign(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                  const Shape& lengths, const Tensor& value) {
  common_device("setitem", {&x, &value});
  check_slice(x, starts, steps, lengths, "setitem");
  check(broadcast_shapes(value.shape(), lengths, "setitem") == lengths,
        "setitem(): value of shape " + shape_str(value.shape()) + " cannot be broadcast to the indexed shape " +
            shape_str(lengths));
  if (x.device() == Device::GPU) {
    gpu::slice_assign(x, starts, steps, lengths, value);
    return;
  }
  copy_(cpu::strided_view(x, starts, steps, lengths), value);
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t axis) {
  check(!tensors.empty(), "cat(): argument 'tensors' must be a non-empty sequence of tensors");
  const Tensor& first = tensors[0];
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    std::string which = "cat(): argument 'tensors' item " + std::to_string(k);
    check<TypeError>(t.defined(), which + " is undefined");
    check<DeviceError>(t.device() == first.device(), which + " is on '" + device_name(t.device()) + "', item 0 on '" +
                                            device_name(first.device()) + "'; move one with .to()");
    check(t.dtype() == first.dtype(), which + " has dtype " + dtype_name(t.dtype()) + ", item 0 has " +
                                          dtype_name(first.dtype()) + "; cast one with .to()");
    check(t.ndim() > 0, which + " is 0-d; zero-dimensional tensors cannot be concatenated (use stack)");
    check(t.ndim() == first.ndim(), which + " has " + std::to_string(t.ndim()) + " dims, item 0 has " +
                                        std::to_string(first.ndim()));
  }
  int ax = normalize_axis(axis, first.ndim(), "cat", "dim");
  Shape out = first.shape();
  out[ax] = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    for (int d = 0; d < first.ndim(); ++d)
      check(d == ax || t.shape()[d] == first.shape()[d],
            "cat(): argument 'tensors' item " + std::to_string(k) + " has shape " + shape_str(t.shape()) +
                ", which differs from item 0's " + shape_str(first.shape()) + " outside dim " + std::to_string(ax));
    out[ax] += t.shape()[ax];
  }
  if (first.device() == Device::GPU) return gpu::cat(tensors, ax);
  Tensor result = Tensor::empty_cpu(out, first.dtype());
  cpu::cat_into(tensors, ax, result);
  return result;
}

}  // namespace lucid::ops
