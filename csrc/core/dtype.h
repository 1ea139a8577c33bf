// Element types, their sizes and numpy-like promotion.
#pragma once
#include <cstdint>
#include <string>

namespace lucid {

// Float64 exists on the CPU stream only (MLX GPUs have no float64): the GPU
// stream rejects it with TypeError (gpu/array.cpp, ops/copy.cpp).
enum class DType : uint8_t { Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64 };
constexpr int kNumDTypes = 10;

size_t itemsize(DType t);
const char* dtype_name(DType t);  // "float32", ...
DType dtype_from_name(const std::string& name);  // throws TypeError
bool is_floating(DType t);
bool is_integral(DType t);  // Bool excluded
bool is_signed(DType t);
// numpy's promotion of two tensor dtypes (float16 + bfloat16 -> float32,
// uint8 + int8 -> int16, int16 + float16 -> float32, int8 + float16 ->
// float16); float64 wins over every other dtype, but wide integers with a
// narrower float give float32 (not numpy's float64), as PyTorch does.
DType promote_types(DType a, DType b);

}  // namespace lucid
