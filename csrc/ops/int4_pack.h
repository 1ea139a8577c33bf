// The int4_pack family: two 4-bit codes per byte along one axis (the storage
// of qint4 / quint4 weights), on both streams with the same bytes.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::ops {

// Packs int8 (qint4) or uint8 (quint4) codes two per uint8 byte along `axis`:
// the low nibble holds the even index; an odd length pads with 0.
Tensor pack_int4(const Tensor& codes, int64_t axis);
// The `length` codes pack_int4 stored along `axis`, as int8 (sign-extended
// nibbles) when `is_signed`, else uint8.
Tensor unpack_int4(const Tensor& packed, int64_t length, bool is_signed, int64_t axis);

}  // namespace lucid::ops
