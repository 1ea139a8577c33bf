#include "core/dtype.h"

#include "core/errors.h"

namespace lucid {

size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Int16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  static const char* names[kNumDTypes] = {"bool",  "uint8",   "int8",     "int16",  "int32",
                                          "int64", "float16", "bfloat16", "float32", "float64"};
  return names[static_cast<int>(t)];
}

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  throw TypeError("unknown dtype '" + name + "'");
}

bool is_floating(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
bool is_integral(DType t) { return !is_floating(t) && t != DType::Bool; }
bool is_signed(DType t) { return t != DType::Bool && t != DType::UInt8; }

namespace {
// Category order: bool < integer < floating.
int int_bits(DType t) { return static_cast<int>(itemsize(t)) * 8; }
DType signed_int_of_bits(int bits) {
  switch (bits) { case 8: return DType::Int8; case 16: return DType::Int16;
                  case 32: return DType::Int32; default: return DType::Int64; }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  if (fa && fb) {
    if (a == DType::Float32 || b == DType::Float32) return DType::Float32;
    return DType::Float32;  // float16 with bfloat16: neither holds the other
  }
  if (fa || fb) {
    // As numpy: a half type only holds 8-bit integers exactly; wider integers
    // promote to float32 (numpy's float64 is float32 here: lucid has no float64).
    DType f = fa ? a : b, i = fa ? b : a;
    return itemsize(i) == 1 ? f : DType::Float32;
  }
  // Both integers.
  bool sa = is_signed(a), sb = is_signed(b);
  if (sa == sb) return int_bits(a) >= int_bits(b) ? a : b;
  DType u = sa ? b : a, s = sa ? a : b;  // only unsigned type is uint8
  (void)u;
  return int_bits(s) > 8 ? s : DType::Int16;
}

}  // namespace lucid
