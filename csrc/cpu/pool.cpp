#include "cpu/pool.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>
#include <limits>

#include "core/thread_pool.h"

namespace lucid::cpu {

namespace {

// Runs fn(plane) over every (sample, channel) plane in parallel.
template <class F>
void for_each_plane(int64_t planes, int64_t work_per_plane, F fn) {
  int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(work_per_plane, 1));
  parallel_for(planes, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) fn(p);
  });
}

int64_t planes_of(const Tensor& t) { return t.size(0) * t.size(1); }

// The window of output pixel (r, q) clipped to the input, as row / column ranges.
struct Clipped {
  int64_t h0, h1, w0, w1;
};
Clipped clip(const Window2d& win, int64_t r, int64_t q, int64_t h, int64_t w) {
  int64_t h0 = r * win.sh - win.ph, w0 = q * win.sw - win.pw;
  return {std::max<int64_t>(h0, 0), std::min(h0 + win.kh, h), std::max<int64_t>(w0, 0), std::min(w0 + win.kw, w)};
}

}  // namespace

namespace {

// Columns q in [lo, hi) whose window tap j reads an input column inside [0, w).
int64_t ceil_div_pos(int64_t num, int64_t den) { return num <= 0 ? 0 : (num + den - 1) / den; }

// One plane, one output row at a time: for each window tap (row-major, the order
// the pick depends on) every output of the row is updated at once. Outputs are
// independent, so there is no chain from one comparison to the next (a window
// at a time, each of its 4 compares waited on the last: ~25 ns per output on
// 8x8 planes, k2). The pick: the first tap in
// the input starts the maximum, a later one replaces it only when strictly
// greater, and the first NaN wins and sticks (once best is NaN nothing replaces it).
template <class T>
void max_plane_rows(const T* plane, T* out, int64_t* at_out, int64_t h, int64_t w, const Window2d& win,
                    const std::vector<int64_t>& col_range) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  static_assert(sizeof(Bits) == sizeof(T), "float32 or float64");
  for (int64_t r = 0; r < win.oh; ++r) {
    T* best = out + r * win.ow;
    int64_t* at = at_out + r * win.ow;
    std::fill(best, best + win.ow, -std::numeric_limits<T>::infinity());
    std::fill(at, at + win.ow, int64_t{-1});
    for (int64_t i = 0; i < win.kh; ++i) {
      const int64_t ih = win.in_row(r, i);
      if (ih < 0 || ih >= h) continue;
      const T* row = plane + ih * w;
      for (int64_t j = 0; j < win.kw; ++j) {
        const int64_t off = j * win.dw - win.pw;  // input column of output q: q * sw + off
        const int64_t lo = col_range[2 * j], hi = col_range[2 * j + 1];
        for (int64_t q = lo; q < hi; ++q) {
          const int64_t iw = q * win.sw + off;
          const T v = row[iw], b = best[q];
          const bool take = (at[q] < 0) | (v > b) | ((v != v) & (b == b));
          // Blended as integers: a `?:` here compiles into a branch, which random
          // data mispredicts half the time.
          const Bits mask = Bits{0} - static_cast<Bits>(take);
          Bits vb, bb;
          std::memcpy(&vb, &v, sizeof(T));
          std::memcpy(&bb, &b, sizeof(T));
          bb = (vb & mask) | (bb & ~mask);
          std::memcpy(&best[q], &bb, sizeof(T));
          at[q] ^= (at[q] ^ (ih * w + iw)) & -static_cast<int64_t>(take);
        }
      }
    }
  }
}

// The 2x2, stride-2 window of most CNNs, every window inside the input: the four
// taps in registers, each output on its own (no stores between taps), the same
// row-major pick as max_plane_rows. ~4x fewer instructions per output.
template <class T>
void max_plane_2x2(const T* plane, T* out, int64_t* at_out, int64_t w, int64_t oh, int64_t ow) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  for (int64_t r = 0; r < oh; ++r) {
    const T* row0 = plane + 2 * r * w;
    const T* row1 = row0 + w;
    for (int64_t q = 0; q < ow; ++q) {
      const T taps[4] = {row0[2 * q], row0[2 * q + 1], row1[2 * q], row1[2 * q + 1]};
      const int64_t base = 2 * r * w + 2 * q;
      const int64_t where[4] = {base, base + 1, base + w, base + w + 1};
      T best = taps[0];
      int64_t at = where[0];
      for (int t = 1; t < 4; ++t) {
        const T v = taps[t];
        const bool take = (v > best) | ((v != v) & (best == best));
        const Bits mask = Bits{0} - static_cast<Bits>(take);
        Bits vb, bb;
        std::memcpy(&vb, &v, sizeof(T));
        std::memcpy(&bb, &best, sizeof(T));
        bb = (vb & mask) | (bb & ~mask);
        std::memcpy(&best, &bb, sizeof(T));
        at ^= (at ^ where[t]) & -static_cast<int64_t>(take);
      }
      out[r * ow + q] = best;
      at_out[r * ow + q] = at;
    }
  }
}

}  // namespace

template <class T>
void max_pool2d_typed(const Tensor& x, const Tensor& y, const Tensor& idx, const Window2d& win) {
  const int64_t h = x.size(2), w = x.size(3), l = win.oh * win.ow;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  int64_t* ip = idx.data<int64_t>();
  if (win.kh == 2 && win.kw == 2 && win.sh == 2 && win.sw == 2 && win.dh == 1 && win.dw == 1 && win.ph == 0 &&
      win.pw == 0 && 2 * win.oh <= h && 2 * win.ow <= w) {
    for_each_plane(planes_of(x), l * 4, [&](int64_t p) {
      max_plane_2x2<T>(xp + p * h * w, yp + p * l, ip + p * l, w, win.oh, win.ow);
    });
    return;
  }
  // Per window column j, the outputs whose tap j falls inside the input, computed
  // once (two divisions per tap per row cost as much as the whole comparison).
  std::vector<int64_t> col_range(static_cast<size_t>(2 * win.kw));
  for (int64_t j = 0; j < win.kw; ++j) {
    const int64_t off = j * win.dw - win.pw;
    col_range[2 * j] = ceil_div_pos(-off, win.sw);
    col_range[2 * j + 1] = std::min(win.ow, ceil_div_pos(w - off, win.sw));
  }
  for_each_plane(planes_of(x), l * win.kh * win.kw, [&](int64_t p) {
    max_plane_rows<T>(xp + p * h * w, yp + p * l, ip + p * l, h, w, win, col_range);
  });
}

namespace {

// One plane's window maxima; scalar arguments so the byte stores cannot force reloads.
template <class T>
void qmax_plane(const T* plane, T* out, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t oh, int64_t ow) {
  for (int64_t r = 0; r < oh; ++r)
    for (int64_t q = 0; q < ow; ++q) {
      T best = std::numeric_limits<T>::lowest();
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t ih = r * sh - ph + i * dh;
        if (ih < 0 || ih >= h) continue;
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t iw = q * sw - pw + j * dw;
          if (iw >= 0 && iw < w) best = std::max(best, plane[ih * w + iw]);
        }
      }
      out[r * ow + q] = best;
    }
}

// The 2x2, stride-2 window inside the input: the max of the two rows, then of
// each column pair. No bounds tests, so the loops vectorize (the general loop
// above tests every tap: ~10x slower on 8x8 planes). A max of codes is exact,
// so the result equals qmax_plane's.
template <class T>
void qmax_plane_2x2(const T* plane, T* out, int64_t w, int64_t oh, int64_t ow) {
  for (int64_t r = 0; r < oh; ++r) {
    const T* __restrict row0 = plane + 2 * r * w;
    const T* __restrict row1 = row0 + w;
    T* __restrict dst = out + r * ow;
    for (int64_t q = 0; q < ow; ++q) {
      const T a = std::max(row0[2 * q], row1[2 * q]);
      const T b = std::max(row0[2 * q + 1], row1[2 * q + 1]);
      dst[q] = std::max(a, b);
    }
  }
}

// The small windows of CNNs (2x2 and 3x3 kernels, strides 1 and 2, no dilation,
// any padding the ops layer allows), one output row at a time: the column maxima of
// the window's in-image rows into a row buffer whose padding columns hold the
// grid's lowest code, then the window maxima along that buffer. Padding with the
// lowest code gives exactly the max over the in-image taps (every window holds at
// least one input column, and a max never picks the padding over an equal code).
// No bounds test in either loop, so both vectorize: the AVX2 clone is chosen at
// load time on x86-64 glibc. qmax_plane above is the scalar twin.
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_QPOOL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_QPOOL_CLONES
#endif

// The helpers are inlined into the cloned plane loop below, so they are compiled
// for its target: one dispatch per block of planes, not two calls per (often
// 28-byte) output row.
template <class T>
inline void qcol_max2(const T* __restrict a, const T* __restrict b, T* __restrict d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = std::max(a[i], b[i]);
}

template <class T>
inline void qcol_max3(const T* __restrict a, const T* __restrict b, const T* __restrict c, T* __restrict d,
                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = std::max(std::max(a[i], b[i]), c[i]);
}

// out[q] = max(buf[q*S .. q*S + K)); for S = 2 GCC splits the even and odd codes
// with byte shuffles (an interleaved load group), still one pass over the row.
template <class T, int K, int S>
inline void qrow_max(const T* __restrict buf, T* __restrict out, int64_t ow) {
  for (int64_t q = 0; q < ow; ++q) {
    T m = std::max(buf[S * q], buf[S * q + 1]);
    if constexpr (K == 3) m = std::max(m, buf[S * q + 2]);
    out[q] = m;
  }
}

// Planes [p0, p1) of a kernel-K-wide, stride-S window; `row` holds len codes whose
// padding columns are the lowest code.
template <class T, int K, int S>
LUCID_QPOOL_CLONES void qmax_small_block(const T* xp, T* yp, int64_t p0, int64_t p1, int64_t h, int64_t w,
                                         int64_t kh, int64_t sh, int64_t ph, int64_t pw, int64_t oh, int64_t ow,
                                         T* row) {
  T* cols = row + pw;
  for (int64_t p = p0; p < p1; ++p) {
    const T* plane = xp + p * h * w;
    T* dst = yp + p * oh * ow;
    for (int64_t r = 0; r < oh; ++r) {
      const int64_t top = r * sh - ph;
      const int64_t i0 = std::max<int64_t>(top, 0), i1 = std::min(top + kh, h);
      const int64_t n = i1 - i0;
      const T* in = plane + i0 * w;
      if (n == 3) qcol_max3<T>(in, in + w, in + 2 * w, cols, w);
      else if (n == 2) qcol_max2<T>(in, in + w, cols, w);
      else if (n == 1) std::memcpy(cols, in, static_cast<size_t>(w) * sizeof(T));
      else std::fill(cols, cols + w, std::numeric_limits<T>::lowest());
      qrow_max<T, K, S>(row, dst + r * ow, ow);
    }
  }
}

template <class T>
void qmax_small_planes(const T* xp, T* yp, int64_t planes, int64_t h, int64_t w, const Window2d& win) {
  const int64_t oh = win.oh, ow = win.ow, kh = win.kh;
  // The padded row: pw lowest codes, the w column maxima, then lowest codes up to
  // the last window's end.
  const int64_t len = std::max(win.pw + w, (ow - 1) * win.sw + win.kw);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(oh * ow * kh * win.kw, 1));
  parallel_for(planes, grain, [&](int64_t p0, int64_t p1) {
    std::vector<T> row(static_cast<size_t>(len + 1), std::numeric_limits<T>::lowest());
    auto run = [&](auto block) { block(xp, yp, p0, p1, h, w, kh, win.sh, win.ph, win.pw, oh, ow, row.data()); };
    if (win.kw == 2) {
      if (win.sw == 1) run(qmax_small_block<T, 2, 1>);
      else run(qmax_small_block<T, 2, 2>);
    } else {
      if (win.sw == 1) run(qmax_small_block<T, 3, 1>);
      else run(qmax_small_block<T, 3, 2>);
    }
  });
}

bool small_window(const Window2d& win) {
  return win.dh == 1 && win.dw == 1 && (win.kh == 2 || win.kh == 3) && (win.kw == 2 || win.kw == 3) &&
         (win.sw == 1 || win.sw == 2) && win.ph < win.kh && win.pw < win.kw;
}

template <class T>
void qmax_planes(const Tensor& x, const Tensor& y, const Window2d& win) {
  const int64_t h = x.size(2), w = x.size(3), l = win.oh * win.ow;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  if (win.kh == 2 && win.kw == 2 && win.sh == 2 && win.sw == 2 && win.dh == 1 && win.dw == 1 && win.ph == 0 &&
      win.pw == 0 && 2 * win.oh <= h && 2 * win.ow <= w) {
    const int64_t oh = win.oh, ow = win.ow;
    if (h == 2 * oh) {  // no row left over: the planes stack into one of planes * h rows
      const int64_t rows = planes_of(x) * oh, grain = std::max<int64_t>(1, (int64_t{1} << 14) / (4 * ow));
      parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
        qmax_plane_2x2<T>(xp + 2 * r0 * w, yp + r0 * ow, w, r1 - r0, ow);
      });
      return;
    }
    for_each_plane(planes_of(x), l * 4, [&](int64_t p) { qmax_plane_2x2<T>(xp + p * h * w, yp + p * l, w, oh, ow); });
    return;
  }
  if (small_window(win)) {
    qmax_small_planes<T>(xp, yp, planes_of(x), h, w, win);
    return;
  }
  for_each_plane(planes_of(x), l * win.kh * win.kw, [&](int64_t p) {
    qmax_plane<T>(xp + p * h * w, yp + p * l, h, w, win.kh, win.kw, win.sh, win.sw, win.ph, win.pw, win.dh, win.dw,
                  win.oh, win.ow);
  });
}

}  // namespace

void qmax_pool2d(const Tensor& x, const Tensor& y, const Window2d& win) {
  if (x.dtype() == DType::Int8)
    qmax_planes<int8_t>(x, y, win);
  else
    qmax_planes<uint8_t>(x, y, win);
}

template <class T>
void max_pool2d_backward_typed(const Tensor& g, const Tensor& idx, const Tensor& gx) {
  const int64_t hw = gx.size(2) * gx.size(3), l = g.size(2) * g.size(3);
  const T* gp = g.data<T>();
  const int64_t* ip = idx.data<int64_t>();
  T* out = gx.data<T>();
  for_each_plane(planes_of(gx), l + hw, [&](int64_t p) {
    T* plane = out + p * hw;
    std::fill(plane, plane + hw, T(0));
    for (int64_t o = 0; o < l; ++o) {
      const int64_t at = ip[p * l + o];
      if (at >= 0 && at < hw) plane[at] += gp[p * l + o];
    }
  });
}

template <class T>
void avg_pool2d_typed(const Tensor& x, const Tensor& y, const Window2d& win, const std::vector<float>& divisor) {
  const int64_t h = x.size(2), w = x.size(3), l = win.oh * win.ow;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  for_each_plane(planes_of(x), l * win.kh * win.kw, [&](int64_t p) {
    const T* plane = xp + p * h * w;
    for (int64_t r = 0; r < win.oh; ++r)
      for (int64_t q = 0; q < win.ow; ++q) {
        const Clipped c = clip(win, r, q, h, w);
        T sum = 0;
        for (int64_t ih = c.h0; ih < c.h1; ++ih)
          for (int64_t iw = c.w0; iw < c.w1; ++iw) sum += plane[ih * w + iw];
        yp[p * l + r * win.ow + q] = sum / static_cast<T>(divisor[r * win.ow + q]);
      }
  });
}

template <class T>
void avg_pool2d_backward_typed(const Tensor& g, const Tensor& gx, const Window2d& win,
                               const std::vector<float>& divisor) {
  const int64_t h = gx.size(2), w = gx.size(3), l = win.oh * win.ow;
  const T* gp = g.data<T>();
  T* out = gx.data<T>();
  for_each_plane(planes_of(gx), l * win.kh * win.kw + h * w, [&](int64_t p) {
    T* plane = out + p * h * w;
    std::fill(plane, plane + h * w, T(0));
    for (int64_t r = 0; r < win.oh; ++r)
      for (int64_t q = 0; q < win.ow; ++q) {
        const Clipped c = clip(win, r, q, h, w);
        const T share = gp[p * l + r * win.ow + q] / static_cast<T>(divisor[r * win.ow + q]);
        for (int64_t ih = c.h0; ih < c.h1; ++ih)
          for (int64_t iw = c.w0; iw < c.w1; ++iw) plane[ih * w + iw] += share;
      }
  });
}

template <class T>
void adaptive_avg_pool2d_typed(const Tensor& x, const Tensor& y) {
  const int64_t h = x.size(2), w = x.size(3), oh = y.size(2), ow = y.size(3);
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  for_each_plane(planes_of(x), h * w, [&](int64_t p) {
    const T* plane = xp + p * h * w;
    for (int64_t r = 0; r < oh; ++r) {
      const int64_t h0 = adaptive_start(r, h, oh), h1 = adaptive_end(r, h, oh);
      for (int64_t q = 0; q < ow; ++q) {
        const int64_t w0 = adaptive_start(q, w, ow), w1 = adaptive_end(q, w, ow);
        T sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += plane[ih * w + iw];
        yp[(p * oh + r) * ow + q] = sum / static_cast<T>((h1 - h0) * (w1 - w0));
      }
    }
  });
}

template <class T>
void adaptive_avg_pool2d_backward_typed(const Tensor& g, const Tensor& gx) {
  const int64_t h = gx.size(2), w = gx.size(3), oh = g.size(2), ow = g.size(3);
  const T* gp = g.data<T>();
  T* out = gx.data<T>();
  for_each_plane(planes_of(gx), h * w, [&](int64_t p) {
    T* plane = out + p * h * w;
    std::fill(plane, plane + h * w, T(0));
    for (int64_t r = 0; r < oh; ++r) {
      const int64_t h0 = adaptive_start(r, h, oh), h1 = adaptive_end(r, h, oh);
      for (int64_t q = 0; q < ow; ++q) {
        const int64_t w0 = adaptive_start(q, w, ow), w1 = adaptive_end(q, w, ow);
        const T share = gp[(p * oh + r) * ow + q] / static_cast<T>((h1 - h0) * (w1 - w0));
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) plane[ih * w + iw] += share;
      }
    }
  });
}

// float64 tensors run in double; everything else arrives as float32.
#define LUCID_POOL_DISPATCH(name, key, ...) \
  if ((key).dtype() == DType::Float64) name##_typed<double>(__VA_ARGS__); \
  else name##_typed<float>(__VA_ARGS__)

void max_pool2d(const Tensor& x, const Tensor& y, const Tensor& idx, const Window2d& win) {
  LUCID_POOL_DISPATCH(max_pool2d, x, x, y, idx, win);
}
void max_pool2d_backward(const Tensor& g, const Tensor& idx, const Tensor& gx) {
  LUCID_POOL_DISPATCH(max_pool2d_backward, gx, g, idx, gx);
}
void avg_pool2d(const Tensor& x, const Tensor& y, const Window2d& win, const std::vector<float>& divisor) {
  LUCID_POOL_DISPATCH(avg_pool2d, x, x, y, win, divisor);
}
void avg_pool2d_backward(const Tensor& g, const Tensor& gx, const Window2d& win, const std::vector<float>& divisor) {
  LUCID_POOL_DISPATCH(avg_pool2d_backward, gx, g, gx, win, divisor);
}
void adaptive_avg_pool2d(const Tensor& x, const Tensor& y) { LUCID_POOL_DISPATCH(adaptive_avg_pool2d, x, x, y); }
void adaptive_avg_pool2d_backward(const Tensor& g, const Tensor& gx) {
  LUCID_POOL_DISPATCH(adaptive_avg_pool2d_backward, gx, g, gx);
}
#undef LUCID_POOL_DISPATCH

}  // namespace lucid::cpu
