// The geometry of a sliding 2-D window (convolution, pooling), shared by the
// CPU and GPU streams. ops/ fills it in after validation; kernels only read it.
#pragma once
#include <cstdint>

namespace lucid {

struct Window2d {
  int64_t kh = 1, kw = 1;  // kernel size
  int64_t sh = 1, sw = 1;  // stride
  int64_t ph = 0, pw = 0;  // padding before the first row / column (after is implied by oh, ow)
  int64_t dh = 1, dw = 1;  // dilation
  int64_t oh = 0, ow = 0;  // output size

  // Input row of window position (out_row, kernel_row); may fall in the padding.
  int64_t in_row(int64_t out_row, int64_t k) const { return out_row * sh - ph + k * dh; }
  int64_t in_col(int64_t out_col, int64_t k) const { return out_col * sw - pw + k * dw; }
  // Padding needed after the last row / column so that `oh` rows fit (never negative).
  int64_t pad_bottom(int64_t h) const {
    int64_t need = (oh - 1) * sh + dh * (kh - 1) + 1 - h - ph;
    return need > 0 ? need : 0;
  }
  int64_t pad_right(int64_t w) const {
    int64_t need = (ow - 1) * sw + dw * (kw - 1) + 1 - w - pw;
    return need > 0 ? need : 0;
  }
};

}  // namespace lucid

namespace lucid {

// Adaptive pooling splits `in` positions into `out` bins; bin i covers
// [floor(i*in/out), ceil((i+1)*in/out)), so bins may overlap by one.
inline int64_t adaptive_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
inline int64_t adaptive_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

}  // namespace lucid
