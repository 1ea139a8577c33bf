// Two 4-bit codes per byte along one axis: byte k holds element 2k in its low
// nibble and element 2k+1 in its high nibble; an odd length pads with 0.
#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/int4_pack.h"
#include "cpu/quantize_simd.h"

namespace lucid::cpu {

void pack_int4(const Tensor& codes, const Tensor& out, int64_t outer, int64_t len, int64_t inner) {
  check<TypeError>(itemsize(codes.dtype()) == 1 && out.dtype() == DType::UInt8, "internal: pack_int4 dtypes");
  if (pack_int4_simd(codes, out, outer, len, inner)) return;
  const uint8_t* c = static_cast<const uint8_t*>(codes.raw_data());
  uint8_t* o = out.data<uint8_t>();
  int64_t half = (len + 1) / 2;
  parallel_for(outer * half, kElementwiseGrain / (inner > 0 ? inner : 1) + 1, [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      int64_t b = row / half, k = row % half;
      const uint8_t* even = c + (b * len + 2 * k) * inner;
      const uint8_t* odd = even + inner;
      uint8_t* dst = o + row * inner;
      if (2 * k + 1 < len) {
        for (int64_t i = 0; i < inner; ++i)
          dst[i] = static_cast<uint8_t>((even[i] & 0x0f) | ((odd[i] & 0x0f) << 4));
      } else {
        for (int64_t i = 0; i < inner; ++i) dst[i] = static_cast<uint8_t>(even[i] & 0x0f);
      }
    }
  });
}

void unpack_int4(const Tensor& packed, const Tensor& out, int64_t outer, int64_t len, int64_t inner) {
  check<TypeError>(packed.dtype() == DType::UInt8 && itemsize(out.dtype()) == 1, "internal: unpack_int4 dtypes");
  if (unpack_int4_simd(packed, out, outer, len, inner)) return;
  bool is_signed = out.dtype() == DType::Int8;
  const uint8_t* p = packed.data<uint8_t>();
  uint8_t* o = static_cast<uint8_t*>(out.raw_data());
  int64_t half = (len + 1) / 2;
  // Sign extension of a nibble: (n ^ 8) - 8 maps 0..7 -> 0..7 and 8..15 -> -8..-1.
  auto widen = [is_signed](unsigned n) -> uint8_t {
    return is_signed ? static_cast<uint8_t>(static_cast<int8_t>(static_cast<int>(n ^ 8u) - 8)) : static_cast<uint8_t>(n);
  };
  parallel_for(outer * half, kElementwiseGrain / (inner > 0 ? inner : 1) + 1, [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      int64_t b = row / half, k = row % half;
      const uint8_t* src = p + row * inner;
      uint8_t* even = o + (b * len + 2 * k) * inner;
      uint8_t* odd = even + inner;
      bool has_odd = 2 * k + 1 < len;
      for (int64_t i = 0; i < inner; ++i) {
        even[i] = widen(src[i] & 0x0fu);
        if (has_odd) odd[i] = widen(src[i] >> 4);
      }
    }
  });
}

}  // namespace lucid::cpu
