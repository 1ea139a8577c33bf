// Maps a runtime DType onto its C++ storage type for templated CPU kernels:
//   dispatch(dtype, [&](auto tag) { using T = typename decltype(tag)::type; ... });
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/half.h"

namespace lucid {

template <class T> struct TypeTag { using type = T; };

template <class F>
decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::UInt8: return f(TypeTag<uint8_t>{});
    case DType::Int8: return f(TypeTag<int8_t>{});
    case DType::Int16: return f(TypeTag<int16_t>{});
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    case DType::Float16: return f(TypeTag<float16>{});
    case DType::BFloat16: return f(TypeTag<bfloat16>{});
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
  }
  throw TypeError("unsupported dtype");
}

// The type arithmetic is carried out in: half types widen to float.
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<float16> { using type = float; };
template <> struct compute_type<bfloat16> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

template <class T> constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

}  // namespace lucid
