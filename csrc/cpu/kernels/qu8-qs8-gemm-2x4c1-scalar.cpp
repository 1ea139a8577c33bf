// Scalar reference microkernel: a 2x4 register tile over a uint8 activation
// panel and int8 weights packed one k per column (c1). It is the "reference"
// engine and the oracle every vector kernel is tested against, so it stays
// plain C++ and is kept out of the vectorizer.
#include "cpu/kernels/qgemm.h"

namespace lucid::kernels {

namespace {

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  for (int i = 0; i < mr; ++i) {
    const uint8_t* ai = a + i * a_stride;
    int32_t acc[4] = {0, 0, 0, 0};
    for (size_t k = 0; k < kp; ++k) {
      int32_t x = ai[k];
      for (int j = 0; j < 4; ++j) acc[j] += x * int32_t{w[k * 4 + j]};
    }
    for (int j = 0; j < 4; ++j) c[i * 4 + j] = acc[j];
  }
}

bool always() { return true; }

}  // namespace

const QGemmKernel qgemm_2x4c1_scalar = {"reference", "qu8-qs8-gemm-2x4c1-scalar", 2, 4, 1, 1, false, false, always, ukernel};

}  // namespace lucid::kernels
