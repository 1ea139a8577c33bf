// Scalar reference kernels of the quantization family: plain loops over the
// one-element formulas of vquant-scalar.h, never vectorized, so they are what
// the vector kernels are held against (kernels/test/, tests/).
#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

namespace lucid::kernels {

namespace {

template <class Q>
LUCID_SCALAR_ONLY void quantize_scalar(size_t rows, size_t len, const float* x, Q* q, const float* s,
                                       const int32_t* z, unsigned flags, float lo, float hi) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < len; ++j) {
      size_t p = (flags & kPerElem) ? j : r;
      q[r * len + j] = static_cast<Q>(scalar::quantize_one(x[r * len + j], s[p], z[p], lo, hi));
    }
}

template <class Q>
LUCID_SCALAR_ONLY void dequantize_scalar(size_t rows, size_t len, const Q* q, float* y, const float* s,
                                         const int32_t* z, unsigned flags) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < len; ++j) {
      size_t p = (flags & kPerElem) ? j : r;
      y[r * len + j] = scalar::dequantize_one(q[r * len + j], s[p], z[p]);
    }
}

LUCID_SCALAR_ONLY void fake_quantize_scalar(size_t rows, size_t len, const float* x, float* y, uint8_t* m,
                                            const float* s, const int32_t* z, unsigned flags, float lo, float hi) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < len; ++j) {
      size_t p = (flags & kPerElem) ? j : r, i = r * len + j;
      y[i] = scalar::fake_quantize_one(x[i], s[p], z[p], lo, hi, m[i]);
    }
}

LUCID_SCALAR_ONLY void mask_grad_scalar(size_t n, const uint32_t* dy, const uint8_t* m, uint32_t* dx, unsigned) {
  for (size_t i = 0; i < n; ++i) dx[i] = (m[i] & 1u) ? dy[i] : 0u;
}

LUCID_SCALAR_ONLY void pack4_scalar(size_t pairs, const uint8_t* c, uint8_t* out) {
  for (size_t i = 0; i < pairs; ++i) out[i] = static_cast<uint8_t>((c[2 * i] & 0x0f) | ((c[2 * i + 1] & 0x0f) << 4));
}

LUCID_SCALAR_ONLY void unpack4_scalar(size_t pairs, const uint8_t* p, uint8_t* out, bool is_signed) {
  for (size_t i = 0; i < pairs; ++i) {
    out[2 * i] = scalar::unpack_nibble(p[i] & 0x0fu, is_signed);
    out[2 * i + 1] = scalar::unpack_nibble(p[i] >> 4, is_signed);
  }
}

}  // namespace

const VQuantKernels& vquant_scalar() {
  static const VQuantKernels k{"scalar",
                               quantize_scalar<int8_t>,
                               quantize_scalar<uint8_t>,
                               quantize_scalar<int32_t>,
                               dequantize_scalar<int8_t>,
                               dequantize_scalar<uint8_t>,
                               fake_quantize_scalar,
                               mask_grad_scalar,
                               pack4_scalar,
                               unpack4_scalar};
  return k;
}

}  // namespace lucid::kernels
