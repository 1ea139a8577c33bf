#include "cpu/conv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/blas.h"

namespace lucid::cpu {

namespace {

// Sizes of one convolution, named once.
struct ConvDims {
  int64_t n, c, h, w, o, groups;
  int64_t cg, og;  // channels per group (input, output)
  int64_t k;       // cg * kh * kw: rows of the column matrix
  int64_t l;       // oh * ow: output pixels per sample
};

ConvDims dims_of(const Tensor& x, const Tensor& w, const Window2d& win, int64_t groups) {
  ConvDims d{};
  d.n = x.size(0), d.c = x.size(1), d.h = x.size(2), d.w = x.size(3), d.o = w.size(0), d.groups = groups;
  d.cg = d.c / groups, d.og = d.o / groups;
  d.k = d.cg * win.kh * win.kw;
  d.l = win.oh * win.ow;
  return d;
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Output columns [lo, hi) whose input column ow*sw + off lies inside [0, w).
void valid_cols(int64_t off, int64_t sw, int64_t w, int64_t ow, int64_t& lo, int64_t& hi) {
  lo = std::clamp<int64_t>(floor_div(-off + sw - 1, sw), 0, ow);
  hi = std::clamp<int64_t>(floor_div(w - 1 - off, sw) + 1, lo, ow);
}

// Tasks below are (sample, channel) pairs; a chunk of them is worth handing
// to another thread only when it moves enough data (waking a worker costs
// microseconds, far more than copying a small plane).
int64_t task_grain(const ConvDims& d, const Window2d& win) {
  return std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(win.kh * win.kw * d.l, 1));
}

// One im2col row (kernel tap at row offset dr, column offset off) when both
// strides are 1 and the output is as wide as the input: output pixel p then
// reads input pixel p + dr*w + off, so the rows that fall inside the input are
// one contiguous copy (instead of a short copy per output row), after which the
// columns [0, lo) and [hi, ow) of each row, which wrapped into the neighbouring
// input row, are set back to the zero padding.
template <class T>
void shifted_plane(const T* plane, int64_t dr, int64_t off, int64_t lo, int64_t hi, const ConvDims& d,
                   const Window2d& win, T* row) {
  const int64_t ow = win.ow, shift = dr * d.w + off;
  const int64_t r0 = std::clamp<int64_t>(-dr, 0, win.oh), r1 = std::clamp<int64_t>(d.h - dr, r0, win.oh);
  std::fill(row, row + r0 * ow, T(0));
  std::fill(row + r1 * ow, row + win.oh * ow, T(0));
  if (r0 == r1) return;
  // Clip so every read stays inside the plane; what the clip skips is padding.
  const int64_t p0 = std::max(r0 * ow, -shift), p1 = std::min(r1 * ow, d.h * d.w - shift);
  if (p1 > p0) std::memcpy(row + p0, plane + p0 + shift, sizeof(T) * (p1 - p0));
  for (int64_t r = r0; r < r1; ++r) {
    T* dst = row + r * ow;
    std::fill(dst, dst + lo, T(0));
    std::fill(dst + hi, dst + ow, T(0));
  }
}

// Column matrix of `m` samples' group g, side by side: row (c, i, j) holds,
// for every output pixel of every sample, the input value under kernel tap
// (i, j) of channel c (0 in the padding). Rows are m * l long.
template <class T>
void im2col(const T* x, int64_t n0, int64_t m, int64_t g, const ConvDims& d, const Window2d& win, T* col) {
  const int64_t ldc = m * d.l;
  const bool same_width = win.sh == 1 && win.sw == 1 && win.ow == d.w;
  parallel_for(m * d.cg, task_grain(d, win), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t s = t / d.cg, c = t % d.cg;
      const T* plane = x + ((n0 + s) * d.c + g * d.cg + c) * d.h * d.w;
      for (int64_t i = 0; i < win.kh; ++i)
        for (int64_t j = 0; j < win.kw; ++j) {
          T* row = col + ((c * win.kh + i) * win.kw + j) * ldc + s * d.l;
          int64_t off = j * win.dw - win.pw, lo, hi;
          valid_cols(off, win.sw, d.w, win.ow, lo, hi);
          if (same_width) {
            shifted_plane(plane, i * win.dh - win.ph, off, lo, hi, d, win, row);
            continue;
          }
          for (int64_t r = 0; r < win.oh; ++r) {
            T* dst = row + r * win.ow;
            int64_t ih = win.in_row(r, i);
            if (ih < 0 || ih >= d.h) {
              std::fill(dst, dst + win.ow, T(0));
              continue;
            }
            const T* src = plane + ih * d.w + off;
            std::fill(dst, dst + lo, T(0));
            if (win.sw == 1) std::memcpy(dst + lo, src + lo, sizeof(T) * (hi - lo));
            else
              for (int64_t q = lo; q < hi; ++q) dst[q] = src[q * win.sw];
            std::fill(dst + hi, dst + win.ow, T(0));
          }
        }
    }
  });
}

// The adjoint of im2col: adds every column entry back onto the input pixel it
// came from. Each (sample, channel) task writes its own plane of gx.
template <class T>
void col2im(const T* col, int64_t n0, int64_t m, int64_t g, const ConvDims& d, const Window2d& win, T* gx) {
  const int64_t ldc = m * d.l;
  parallel_for(m * d.cg, task_grain(d, win), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t s = t / d.cg, c = t % d.cg;
      T* plane = gx + ((n0 + s) * d.c + g * d.cg + c) * d.h * d.w;
      for (int64_t i = 0; i < win.kh; ++i)
        for (int64_t j = 0; j < win.kw; ++j) {
          const T* row = col + ((c * win.kh + i) * win.kw + j) * ldc + s * d.l;
          int64_t off = j * win.dw - win.pw, lo, hi;
          valid_cols(off, win.sw, d.w, win.ow, lo, hi);
          for (int64_t r = 0; r < win.oh; ++r) {
            int64_t ih = win.in_row(r, i);
            if (ih < 0 || ih >= d.h) continue;
            const T* src = row + r * win.ow;
            T* dst = plane + ih * d.w + off;
            if (win.sw == 1)  // contiguous: the compiler vectorizes this form
              for (int64_t q = lo; q < hi; ++q) dst[q] += src[q];
            else
              for (int64_t q = lo; q < hi; ++q) dst[q * win.sw] += src[q];
          }
        }
    }
  });
}

// A 1x1, stride-1, unpadded convolution: the input plane already is the column matrix.
bool is_pointwise(const Window2d& win) {
  return win.kh == 1 && win.kw == 1 && win.sh == 1 && win.sw == 1 && win.ph == 0 && win.pw == 0;
}

// Samples per GEMM: small images are batched into one wide GEMM (BLAS is far
// more efficient on a wide matrix), capped so the column buffer stays cache-sized.
// 256 KB, a quarter of a 1 MB L2: the backward also holds gy and the gradient
// planes (a 1 MB budget measured 0.92x of torch on N=32 3->16 k=5, this 0.72x).
constexpr int64_t kColumnBudget = int64_t{1} << 16;  // elements (float32 or float64)
int64_t samples_per_chunk(const ConvDims& d, const Window2d& win) {
  if (is_pointwise(win) || d.l >= 1024) return 1;
  int64_t per_sample = std::max<int64_t>(d.k * d.l, 1);
  return std::clamp<int64_t>(kColumnBudget / per_sample, 1, std::max<int64_t>(d.n, 1));
}

// Scratch buffers reused across calls on a thread: a fresh multi-megabyte
// vector per call costs a zero-fill plus page faults that rival the GEMM.
template <class T>
T* scratch(int slot, int64_t n) {
  thread_local std::vector<T> buffers[3];
  std::vector<T>& b = buffers[slot];
  if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
  return b.data();
}

// Row r of the [rows, len] matrix c becomes bias[r] everywhere; nothing when
// there is no bias (the GEMM then runs with beta = 0 and ignores c).
template <class T>
void fill_rows(T* c, const T* bias, int64_t rows, int64_t len) {
  if (!bias) return;
  for (int64_t r = 0; r < rows; ++r) std::fill(c + r * len, c + (r + 1) * len, bias[r]);
}

// Sum of a row in the element type, eight independent partial sums: the compiler can
// keep them in one vector register (a single running sum is a serial chain).
template <class T>
T row_sum(const T* row, int64_t len) {
  T part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t q = 0;
  for (; q + 8 <= len; q += 8)
    for (int k = 0; k < 8; ++k) part[k] += row[q + k];
  for (; q < len; ++q) part[q % 8] += row[q];
  return ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
}

}  // namespace

template <class T>
void conv2d_typed(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Window2d& win,
                  int64_t groups) {
  const ConvDims d = dims_of(x, w, win, groups);
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  T* yp = y.data<T>();
  const T* bp = b.defined() ? b.data<T>() : nullptr;
  const T beta = bp ? T(1) : T(0);
  const int64_t hw = d.h * d.w, nb = samples_per_chunk(d, win);
  for (int64_t n0 = 0; n0 < d.n; n0 += nb) {
    const int64_t m = std::min(nb, d.n - n0), width = m * d.l;
    for (int64_t g = 0; g < groups; ++g) {
      const T* wg = wp + g * d.og * d.k;
      const T* bg = bp ? bp + g * d.og : nullptr;
      const T* cols;
      if (is_pointwise(win) && m == 1) {
        cols = xp + (n0 * d.c + g * d.cg) * hw;
      } else {
        T* col = scratch<T>(0, d.k * width);
        im2col(xp, n0, m, g, d, win, col);
        cols = col;
      }
      // The output rows start as the bias, so the GEMM adds onto it (beta = 1)
      // and no second pass over y is needed.
      if (m == 1) {
        T* yg = yp + (n0 * d.o + g * d.og) * d.l;
        fill_rows(yg, bg, d.og, d.l);
        blas::gemm(false, false, d.og, d.l, d.k, T(1), wg, d.k, cols, d.l, beta, yg, d.l);
        continue;
      }
      // One wide GEMM for the chunk, then scatter [og, m*l] back to [m, og, l].
      T* tmp = scratch<T>(1, d.og * width);
      fill_rows(tmp, bg, d.og, width);
      blas::gemm(false, false, d.og, width, d.k, T(1), wg, d.k, cols, width, beta, tmp, width);
      for (int64_t s = 0; s < m; ++s)
        for (int64_t o = 0; o < d.og; ++o)
          std::memcpy(yp + ((n0 + s) * d.o + g * d.og + o) * d.l, tmp + o * width + s * d.l,
                      sizeof(T) * d.l);
    }
  }
}

template <class T>
void conv2d_backward_typed(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                           const Tensor& gb, const Window2d& win, int64_t groups) {
  const ConvDims d = dims_of(x, w, win, groups);
  const T* gp = g.data<T>();
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  T* gxp = gx.defined() ? gx.data<T>() : nullptr;
  T* gwp = gw.defined() ? gw.data<T>() : nullptr;
  const int64_t hw = d.h * d.w, nb = samples_per_chunk(d, win);
  if (gxp) std::fill(gxp, gxp + d.n * d.c * hw, T(0));
  T* gwt = gwp ? scratch<T>(2, d.o * d.k) : nullptr;
  if (gwt) std::fill(gwt, gwt + d.o * d.k, T(0));
  for (int64_t n0 = 0; n0 < d.n && (gxp || gwp); n0 += nb) {
    const int64_t m = std::min(nb, d.n - n0), width = m * d.l;
    for (int64_t g_ = 0; g_ < groups; ++g_) {
      // dL/dy of this chunk and group as one [og, m*l] matrix.
      const T* gy;
      if (m == 1) {
        gy = gp + (n0 * d.o + g_ * d.og) * d.l;
      } else {
        T* tmp = scratch<T>(1, d.og * width);
        for (int64_t s = 0; s < m; ++s)
          for (int64_t o = 0; o < d.og; ++o)
            std::memcpy(tmp + o * width + s * d.l, gp + ((n0 + s) * d.o + g_ * d.og + o) * d.l,
                        sizeof(T) * d.l);
        gy = tmp;
      }
      const bool direct = is_pointwise(win) && m == 1;
      // Weight gradient, transposed: gwt_g[k, og] += col[k, m*l] @ gy[og, m*l]^T.
      // OpenBLAS runs this orientation (wide output, short rows of gy) about
      // 1.5x faster than gw_g[og, k] += gy @ col^T at conv shapes.
      if (gwp) {
        const T* cols;
        if (direct) {
          cols = xp + (n0 * d.c + g_ * d.cg) * hw;
        } else {
          T* col = scratch<T>(0, d.k * width);
          im2col(xp, n0, m, g_, d, win, col);
          cols = col;
        }
        blas::gemm(false, true, d.k, d.og, width, T(1), cols, width, gy, width, T(1), gwt + g_ * d.k * d.og, d.og);
      }
      if (gxp) {  // gcol[k, m*l] = w_g[og, k]^T @ gy[og, m*l], then col2im
        const T* wg = wp + g_ * d.og * d.k;
        if (direct) {
          blas::gemm(true, false, d.k, d.l, d.og, T(1), wg, d.k, gy, d.l, T(0), gxp + (n0 * d.c + g_ * d.cg) * hw, d.l);
          continue;
        }
        // Same buffer as the columns above (the weight-gradient GEMM is done
        // with them): two column-sized buffers no longer fit in L2 together,
        // and keeping both doubled this step's time.
        T* gcol = scratch<T>(0, d.k * width);
        blas::gemm(true, false, d.k, width, d.og, T(1), wg, d.k, gy, width, T(0), gcol, width);
        col2im(gcol, n0, m, g_, d, win, gxp);
      }
    }
  }
  if (gwp)  // gw_g[o, kk] = gwt_g[kk, o]
    for (int64_t g_ = 0; g_ < groups; ++g_)
      for (int64_t o = 0; o < d.og; ++o)
        for (int64_t kk = 0; kk < d.k; ++kk) gwp[(g_ * d.og + o) * d.k + kk] = gwt[(g_ * d.k + kk) * d.og + o];
  if (gb.defined()) {
    T* gbp = gb.data<T>();
    parallel_for(d.o, 16, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        double acc = 0.0;  // double: long sums over batch and pixels
        for (int64_t n = 0; n < d.n; ++n) {
          acc += row_sum(gp + (n * d.o + o) * d.l, d.l);
        }
        gbp[o] = static_cast<T>(acc);
      }
    });
  }
}

// float64 tensors (the CPU stream's float64) run the same code with dgemm;
// everything else arrives as float32 (ops/conv.cpp converts half precision).
void conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Window2d& win,
            int64_t groups) {
  if (x.dtype() == DType::Float64) conv2d_typed<double>(x, w, b, y, win, groups);
  else conv2d_typed<float>(x, w, b, y, win, groups);
}

void conv2d_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                     const Tensor& gb, const Window2d& win, int64_t groups) {
  if (x.dtype() == DType::Float64) conv2d_backward_typed<double>(g, x, w, gx, gw, gb, win, groups);
  else conv2d_backward_typed<float>(g, x, w, gx, gw, gb, win, groups);
}

}  // namespace lucid::cpu
