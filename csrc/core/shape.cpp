#include "core/shape.h"

#include "core/errors.h"

namespace lucid {

namespace {
[[noreturn]] void too_large(const Shape& s) {
  throw ValueError("shape " + shape_str(s) + " is too large: its element count or strides overflow int64");
}
}  // namespace

int64_t numel(const Shape& s) {
  int64_t n = 1;
  bool zero = false, overflow = false;
  for (int64_t d : s) {
    if (d == 0) zero = true;
    else overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  if (zero) return 0;  // (0, 2^62, 2^62) is a valid empty shape
  if (overflow) too_large(s);
  return n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    if (__builtin_mul_overflow(acc, s[i] > 0 ? s[i] : 1, &acc) && i > 0) too_large(s);
  }
  return st;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* fn) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(std::string(fn) + "(): shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int64_t axis, int ndim, const char* fn, const char* arg) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  if (axis < lo || axis > hi)
    throw IndexError(std::string(fn) + "(): argument '" + arg + "' is out of range: expected in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(axis));
  if (axis < 0) axis += ndim == 0 ? 1 : ndim;
  return static_cast<int>(axis);
}

}  // namespace lucid
