#include "cpu/reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/convert.h"
#include "core/dispatch.h"
#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/copy.h"
#include "cpu/elementwise_loops.h"
#include "cpu/reduce_run.h"

namespace lucid::cpu {

namespace {

// ---------------------------------------------------------------------------
// Layout: every reduction runs over a contiguous buffer viewed as
// (outer, red, inner): out[o, i] = op over r of x[o, r, i]. make_layout finds
// that view without copying when it can (contiguous input, or a strided view
// whose memory order keeps the kept axes in order, e.g. a transpose), and
// otherwise copies x once, kept axes first.

struct Layout {
  Tensor x;  // contiguous
  int64_t outer = 1, red = 1, inner = 1;
};

Tensor permuted_view(const Tensor& x, const std::vector<int>& perm) {
  Shape s;
  Strides st;
  for (int p : perm) {
    s.push_back(x.shape()[p]);
    st.push_back(x.strides()[p]);
  }
  return Tensor::view_cpu(x.impl().storage, s, st, x.offset(), x.dtype());
}

Tensor materialize(const Tensor& v) {
  if (v.is_contiguous()) return v;
  Tensor out = Tensor::empty_cpu(v.shape(), v.dtype());
  copy_into(v, out);
  return out;
}

// Coalesces (size, reduced?) runs of a contiguous view; size-1 axes vanish.
bool fits_three_levels(const Shape& shape, const std::vector<bool>& is_red, Layout& L) {
  std::vector<std::pair<int64_t, bool>> runs;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().second == is_red[d]) runs.back().first *= shape[d];
    else runs.push_back({shape[d], is_red[d]});
  }
  L.outer = L.red = L.inner = 1;
  size_t k = 0;
  if (k < runs.size() && !runs[k].second) L.outer = runs[k++].first;
  if (k < runs.size() && runs[k].second) L.red = runs[k++].first;
  if (k < runs.size() && !runs[k].second) L.inner = runs[k++].first;
  return k == runs.size();
}

Layout make_layout(const Tensor& x, const std::vector<int>& axes) {
  int nd = x.ndim();
  std::vector<bool> is_red(nd, false);
  for (int a : axes) is_red[a] = true;
  Layout L;
  // Memory order of the axes (largest stride first). If the kept axes stay
  // in their logical order, reading x in memory order changes nothing about
  // where each output element goes.
  std::vector<int> perm(nd);
  for (int d = 0; d < nd; ++d) perm[d] = d;
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) {
    if (x.shape()[a] == 1 || x.shape()[b] == 1) return false;
    return x.strides()[a] > x.strides()[b];
  });
  int last_kept = -1;
  bool kept_in_order = true;
  for (int p : perm) {
    if (is_red[p] || x.shape()[p] == 1) continue;
    kept_in_order = kept_in_order && p > last_kept;
    last_kept = p;
  }
  if (kept_in_order) {
    Tensor v = permuted_view(x, perm);
    std::vector<bool> red_p(nd);
    for (int d = 0; d < nd; ++d) red_p[d] = is_red[perm[d]];
    if (v.is_contiguous() && fits_three_levels(v.shape(), red_p, L)) {
      L.x = v;
      return L;
    }
  }
  if (fits_three_levels(x.shape(), is_red, L)) {
    L.x = materialize(x);
    return L;
  }
  // General pattern (e.g. reduce axes 0 and 2 of a 3-D tensor): one copy
  // with the kept axes first turns it into (outer, red).
  std::vector<int> kept_first;
  for (int d = 0; d < nd; ++d) if (!is_red[d]) kept_first.push_back(d);
  for (int d = 0; d < nd; ++d) if (is_red[d]) kept_first.push_back(d);
  L.x = materialize(permuted_view(x, kept_first));
  std::vector<bool> red_k(nd);
  for (int d = 0; d < nd; ++d) red_k[d] = is_red[kept_first[d]];
  fits_three_levels(L.x.shape(), red_k, L);
  return L;
}

// Columns [0, cnt) of rows [r0, r1) of a (red, inner) slab starting at x,
// folded into wide[0, cnt) (initialised by the caller). Rows are read whole
// (cnt contiguous elements each) so memory is streamed in order.
template <class R, class T>
LUCID_REDUCE_CLONES void reduce_cols(const T* x, int64_t r0, int64_t r1, int64_t inner, int64_t cnt, typename R::W* wide) {
  using A = typename R::A;
  A acc[kWideCols];
  for (int64_t b = r0; b < r1; b += kRowsPerFlush) {
    int64_t e = std::min(r1, b + kRowsPerFlush);
    for (int64_t i = 0; i < cnt; ++i) acc[i] = R::init();
    for (int64_t r = b; r < e; ++r) {
      const T* row = x + r * inner;
      for (int64_t i = 0; i < cnt; ++i) acc[i] = R::step(acc[i], R::load(row[i]));
    }
    for (int64_t i = 0; i < cnt; ++i) wide[i] = R::wstep(wide[i], acc[i]);
  }
}

// Reducing an outer axis of wide rows: each task owns a block of columns of
// one outer slab and runs down all its rows, so its accumulator row stays in
// cache and each input row segment is read once, in order. A column's sum
// does not depend on the block it falls in (rows in order, flushed every
// kRowsPerFlush), so the block width may follow the thread count: one
// thread reads whole rows, several split them evenly.
template <class R, class T>
void reduce_wide_cols(const T* x, int64_t outer, int64_t red, int64_t inner, typename R::Out* out) {
  using W = typename R::W;
  int64_t threads = get_num_threads();
  int64_t per_thread = (inner + threads - 1) / threads;
  int64_t width = std::min<int64_t>(kWideCols, std::max<int64_t>(64, (per_thread + 63) / 64 * 64));
  int64_t blocks = (inner + width - 1) / width;
  parallel_for(outer * blocks, 1, [&](int64_t lo, int64_t hi) {
    std::vector<W> wide(width);
    for (int64_t t = lo; t < hi; ++t) {
      int64_t o = t / blocks, c = (t % blocks) * width, cnt = std::min(width, inner - c);
      for (int64_t i = 0; i < cnt; ++i) wide[i] = R::winit();
      if (red > 0) reduce_cols<R>(x + o * red * inner + c, 0, red, inner, cnt, wide.data());
      for (int64_t i = 0; i < cnt; ++i) out[o * inner + c + i] = convert<typename R::Out>(wide[i]);
    }
  });
}

template <class R, class T>
void reduce_layout(const Layout& L, const Tensor& out_t) {
  using Out = typename R::Out;
  using W = typename R::W;
  const T* x = L.x.numel() ? L.x.template data<T>() : nullptr;
  Out* out = out_t.data<Out>();
  int64_t outer = L.outer, red = L.red, inner = L.inner;
  if (outer * inner == 0) return;
  if (inner == 1) {
    int64_t tasks_per_row = std::max<int64_t>(1, (red + kTask - 1) / kTask);
    if (tasks_per_row == 1) {
      int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(red, 1));
      parallel_for(outer, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t o = lo; o < hi; ++o) out[o] = convert<Out>(reduce_run<R>(x + o * red, red));
      });
      return;
    }
    // Long rows: fixed-size tasks (so the result does not depend on the
    // thread count), partials folded in order.
    std::vector<W> part(outer * tasks_per_row);
    parallel_for(outer * tasks_per_row, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        int64_t o = t / tasks_per_row, b = (t % tasks_per_row) * kTask;
        part[t] = reduce_run<R>(x + o * red + b, std::min(kTask, red - b));
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      W w = part[o * tasks_per_row];
      for (int64_t b = 1; b < tasks_per_row; ++b) w = R::wcomb(w, part[o * tasks_per_row + b]);
      out[o] = convert<Out>(w);
    }
    return;
  }
  if (inner >= kMinWideInner) return reduce_wide_cols<R>(x, outer, red, inner, out);
  // Reducing an outer axis of narrow rows: tasks are (outer slab, column chunk, row block);
  // each folds its rows into a partial row of W, and the partials of one
  // (slab, chunk) are combined in row-block order (thread-count independent).
  int64_t col_tasks = (inner + kCols - 1) / kCols;
  int64_t width = std::min<int64_t>(inner, kCols);
  int64_t rows_per_task = std::max<int64_t>(kRowsPerFlush, (kTask / width + kRowsPerFlush - 1) / kRowsPerFlush * kRowsPerFlush);
  int64_t row_tasks = std::max<int64_t>(1, (red + rows_per_task - 1) / rows_per_task);
  std::vector<W> part(outer * col_tasks * row_tasks * width);
  parallel_for(outer * col_tasks * row_tasks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      int64_t rt = t % row_tasks, ct = (t / row_tasks) % col_tasks, o = t / (row_tasks * col_tasks);
      int64_t c = ct * kCols, cnt = std::min<int64_t>(kCols, inner - c);
      W* wide = part.data() + t * width;
      for (int64_t i = 0; i < cnt; ++i) wide[i] = R::winit();
      int64_t r0 = rt * rows_per_task, r1 = std::min(red, r0 + rows_per_task);
      if (r0 < r1) reduce_cols<R>(x + o * red * inner + c, r0, r1, inner, cnt, wide);
    }
  });
  parallel_for(outer * col_tasks, std::max<int64_t>(1, kElementwiseGrain / (width * row_tasks)), [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      int64_t o = t / col_tasks, c = (t % col_tasks) * kCols, cnt = std::min<int64_t>(kCols, inner - c);
      W* first = part.data() + t * row_tasks * width;
      for (int64_t rt = 1; rt < row_tasks; ++rt) {
        const W* p = first + rt * width;
        for (int64_t i = 0; i < cnt; ++i) first[i] = R::wcomb(first[i], p[i]);
      }
      for (int64_t i = 0; i < cnt; ++i) out[o * inner + c + i] = convert<Out>(first[i]);
    }
  });
}

template <class T>
void reduce_typed(ReduceOp op, const Layout& L, const Tensor& out) {
  switch (op) {
    case ReduceOp::Sum: return reduce_layout<SumR<T>, T>(L, out);
    case ReduceOp::Prod: return reduce_layout<ProdR<T>, T>(L, out);
    case ReduceOp::Max: return reduce_layout<ExtremeR<T, true>, T>(L, out);
    case ReduceOp::Min: return reduce_layout<ExtremeR<T, false>, T>(L, out);
    case ReduceOp::All: return reduce_layout<LogicR<T, true>, T>(L, out);
    case ReduceOp::Any: return reduce_layout<LogicR<T, false>, T>(L, out);
  }
}

// ---------------------------------------------------------------------------
// Arg-extreme: first index of the max (min); a NaN beats everything and the
// first NaN wins.

template <class C, bool kMax>
inline bool better(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return kMax ? v > best : v < best;
}

// First i with x[i] == m (or x[i] NaN when m is NaN). Blocks are tested
// with a vectorizable OR before the scalar scan, so the scan stays fast.
template <class T, class C>
LUCID_REDUCE_CLONES int64_t find_first(const T* x, int64_t n, C m) {
  bool want_nan = false;
  if constexpr (std::is_floating_point_v<C>) want_nan = m != m;
  auto match = [&](C v) -> bool {
    if constexpr (std::is_floating_point_v<C>) return want_nan ? v != v : v == m;
    else return v == m;
  };
  for (int64_t b = 0; b < n; b += 256) {
    int64_t e = std::min(n, b + 256);
    uint8_t hit = 0;
    for (int64_t i = b; i < e; ++i) hit |= match(static_cast<C>(x[i])) ? 1 : 0;
    if (hit)
      for (int64_t i = b; i < e; ++i)
        if (match(static_cast<C>(x[i]))) return i;
  }
  return 0;
}

// The extreme of one chunk and its first index (relative to the chunk).
template <class C>
struct ArgBest {
  C value;
  int64_t index;
};

// One pass over x[0, n), n <= kTask, in blocks of kArgBlock: a block's
// extreme comes from plain vector max/min lanes (NaNs only flagged), and
// only a block that strictly beats the running extreme is scanned again,
// while it is still in L1, for the first position of its extreme. So the
// first block holding the chunk's extreme supplies the index, and random
// data rescans just a handful of blocks. A block with a NaN ends the run at
// the chunk's first NaN.
template <class T, bool kMax, class C>
LUCID_REDUCE_CLONES ArgBest<C> arg_run(const T* x, int64_t n) {
  using R = ExtremeR<T, kMax>;
  ArgBest<C> r{static_cast<C>(x[0]), 0};
  int64_t b = 0;
  for (; b + kArgBlock <= n; b += kArgBlock) {
    C lane[kLanes];
    int32_t nan[kLanes] = {};
    for (int j = 0; j < kLanes; ++j) lane[j] = static_cast<C>(x[b + j]);
    for (int64_t i = b; i < b + kArgBlock; i += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        C v = static_cast<C>(x[i + j]);
        lane[j] = R::fast(lane[j], v);
        if constexpr (std::is_floating_point_v<C>) nan[j] |= v != v;
      }
    if constexpr (std::is_floating_point_v<C>) {
      int32_t any_nan = 0;
      for (int j = 0; j < kLanes; ++j) any_nan |= nan[j];
      if (any_nan) {
        C q = std::numeric_limits<C>::quiet_NaN();
        return {q, b + find_first(x + b, n - b, q)};
      }
    }
    for (int w = kLanes / 2; w > 0; w /= 2)
      for (int j = 0; j < w; ++j) lane[j] = R::fast(lane[j], lane[j + w]);
    if (b == 0 || (kMax ? lane[0] > r.value : lane[0] < r.value))
      r = {lane[0], b + find_first(x + b, kArgBlock, lane[0])};
  }
  for (; b < n; ++b) {  // the tail, or all of a short run: later indices win only strictly
    C v = static_cast<C>(x[b]);
    if (better<C, kMax>(v, r.value)) r = {v, b};
  }
  return r;
}

// Contiguous rows (inner == 1): one pass per fixed-size chunk (so the
// result does not depend on the thread count); chunks combine in index
// order with a strict compare, so the first chunk holding the extreme (or
// the first NaN) wins.
template <class T, bool kMax>
void arg_rows(const Layout& L, int64_t* idx, T* val) {
  using C = typename ExtremeR<T, kMax>::A;
  const T* x = L.x.data<T>();
  int64_t red = L.red;
  int64_t chunks = (red + kTask - 1) / kTask;
  std::vector<ArgBest<C>> part(L.outer * chunks);
  parallel_for(L.outer * chunks, std::max<int64_t>(1, kElementwiseGrain / std::min(red, kTask)), [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      int64_t o = t / chunks, b = (t % chunks) * kTask;
      part[t] = arg_run<T, kMax, C>(x + o * red + b, std::min(kTask, red - b));
      part[t].index += b;
    }
  });
  for (int64_t o = 0; o < L.outer; ++o) {
    ArgBest<C> r = part[o * chunks];
    for (int64_t c = 1; c < chunks; ++c)
      if (better<C, kMax>(part[o * chunks + c].value, r.value)) r = part[o * chunks + c];
    idx[o] = r.index;
    if (val) val[o] = x[o * red + r.index];
  }
}

template <class T, bool kMax>
void arg_typed(const Layout& L, const Tensor& idx_t, const Tensor* val_t) {
  using C = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;
  const T* x = L.x.data<T>();
  int64_t* idx = idx_t.data<int64_t>();
  T* val = val_t ? val_t->data<T>() : nullptr;
  int64_t red = L.red, inner = L.inner;
  if (inner == 1) return arg_rows<T, kMax>(L, idx, val);
  int64_t col_tasks = (inner + kCols - 1) / kCols;
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(red * std::min<int64_t>(inner, kCols), 1));
  parallel_for(L.outer * col_tasks, grain, [&](int64_t lo, int64_t hi) {
    C best[kCols];
    int64_t arg[kCols];
    for (int64_t t = lo; t < hi; ++t) {
      int64_t o = t / col_tasks, c = (t % col_tasks) * kCols;
      int64_t cnt = std::min<int64_t>(kCols, inner - c);
      const T* slab = x + o * red * inner + c;
      for (int64_t i = 0; i < cnt; ++i) {
        best[i] = static_cast<C>(slab[i]);
        arg[i] = 0;
      }
      for (int64_t r = 1; r < red; ++r) {
        const T* row = slab + r * inner;
        for (int64_t i = 0; i < cnt; ++i) {
          C v = static_cast<C>(row[i]);
          if (better<C, kMax>(v, best[i])) {
            best[i] = v;
            arg[i] = r;
          }
        }
      }
      for (int64_t i = 0; i < cnt; ++i) {
        idx[o * inner + c + i] = arg[i];
        if (val) val[o * inner + c + i] = slab[arg[i] * inner + i];
      }
    }
  });
}

// ---------------------------------------------------------------------------
// aminmax: min and max in one pass (observers read 16M-element activations;
// one read instead of two halves their cost). min / max are exact, so the
// split into tasks and the fold order cannot change the result.

struct MinMax {
  float lo = INFINITY, hi = -INFINITY;
  bool nan = false;
  void add(const MinMax& o) {
    lo = o.lo < lo ? o.lo : lo;
    hi = o.hi > hi ? o.hi : hi;
    nan = nan || o.nan;
  }
};

// One contiguous run: kLanes independent min / max / NaN-flag lanes (one
// minps, one maxps, one unordered compare per vector).
template <class T>
LUCID_REDUCE_CLONES MinMax minmax_run(const T* x, int64_t n) {
  float lo[kLanes], hi[kLanes];
  int32_t bad[kLanes];
  for (int j = 0; j < kLanes; ++j) lo[j] = INFINITY, hi[j] = -INFINITY, bad[j] = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      float v = static_cast<float>(static_cast<compute_t<T>>(x[i + j]));
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = v > hi[j] ? v : hi[j];
      bad[j] |= v != v;
    }
  for (; i < n; ++i) {
    float v = static_cast<float>(static_cast<compute_t<T>>(x[i]));
    lo[0] = v < lo[0] ? v : lo[0];
    hi[0] = v > hi[0] ? v : hi[0];
    bad[0] |= v != v;
  }
  MinMax r;
  for (int j = 0; j < kLanes; ++j) r.add(MinMax{lo[j], hi[j], bad[j] != 0});
  return r;
}

// Rows of `channels` contiguous values (channels last): element-wise fold into acc.
template <class T>
LUCID_REDUCE_CLONES void minmax_rows(const T* x, int64_t rows, int64_t channels, float* lo, float* hi, int32_t* bad) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      float v = static_cast<float>(static_cast<compute_t<T>>(row[c]));
      lo[c] = v < lo[c] ? v : lo[c];
      hi[c] = v > hi[c] ? v : hi[c];
      bad[c] |= v != v;
    }
  }
}

template <class T>
void aminmax_typed(const T* x, int64_t outer, int64_t channels, int64_t inner, T* mn, T* mx) {
  std::vector<MinMax> acc(channels);
  if (inner == 1 && channels > 1) {
    // Channels last: tasks take blocks of rows and fold them column-wise.
    int64_t rows_per_task = std::max<int64_t>(1, kTask / channels);
    int64_t tasks = (outer + rows_per_task - 1) / rows_per_task;
    std::vector<MinMax> part(tasks * channels);
    parallel_for(tasks, 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> lo(channels), hi(channels);
      std::vector<int32_t> bad(channels);
      for (int64_t t = t0; t < t1; ++t) {
        std::fill(lo.begin(), lo.end(), INFINITY);
        std::fill(hi.begin(), hi.end(), -INFINITY);
        std::fill(bad.begin(), bad.end(), 0);
        int64_t r0 = t * rows_per_task, r1 = std::min(outer, r0 + rows_per_task);
        minmax_rows<T>(x + r0 * channels, r1 - r0, channels, lo.data(), hi.data(), bad.data());
        for (int64_t c = 0; c < channels; ++c) part[t * channels + c] = MinMax{lo[c], hi[c], bad[c] != 0};
      }
    });
    for (int64_t t = 0; t < tasks; ++t)
      for (int64_t c = 0; c < channels; ++c) acc[c].add(part[t * channels + c]);
  } else {
    // Runs of `inner` contiguous values, cut into fixed-size tasks.
    int64_t chunks = std::max<int64_t>(1, (inner + kTask - 1) / kTask);
    int64_t runs = outer * channels;
    std::vector<MinMax> part(runs * chunks);
    parallel_for(runs * chunks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        int64_t run = t / chunks, b = (t % chunks) * kTask;
        part[t] = minmax_run<T>(x + run * inner + b, std::min(kTask, inner - b));
      }
    });
    for (int64_t t = 0; t < runs * chunks; ++t) acc[(t / chunks) % channels].add(part[t]);
  }
  for (int64_t c = 0; c < channels; ++c) {
    float lo = acc[c].nan ? NAN : acc[c].lo, hi = acc[c].nan ? NAN : acc[c].hi;
    mn[c] = convert<T>(lo);
    mx[c] = convert<T>(hi);
  }
}

}  // namespace

void reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, const Tensor& out) {
  Layout L = make_layout(x, axes);
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_typed<T>(op, L, out);
  });
}

void arg_reduce(bool is_max, const Tensor& x, int axis, const Tensor& indices, const Tensor* values) {
  Layout L;
  L.x = materialize(x);
  if (axis < 0) {
    L.red = x.numel();
  } else {
    for (int d = 0; d < axis; ++d) L.outer *= x.shape()[d];
    L.red = x.shape()[axis];
    for (int d = axis + 1; d < x.ndim(); ++d) L.inner *= x.shape()[d];
  }
  if (L.outer * L.inner == 0) return;
  check<RuntimeError>(L.red > 0, "internal: arg_reduce over an empty axis");
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (is_max) arg_typed<T, true>(L, indices, values);
    else arg_typed<T, false>(L, indices, values);
  });
}

void equal_mask(const Tensor& x, const Tensor& v, const Tensor& mask) {
  Tensor xc = materialize(x), vc = materialize(v);
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      throw TypeError("internal: equal_mask expects a floating tensor");
    } else {
      const T* px = xc.data<T>();
      const T* pv = vc.data<T>();
      T* pm = mask.data<T>();
      parallel_for(x.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          using F = float_lane_t<T>;
          F a = static_cast<F>(px[i]), b = static_cast<F>(pv[i]);
          pm[i] = T((a == b || (a != a && b != b)) ? F(1) : F(0));
        }
      });
    }
  });
}

void prod_of_others(const Tensor& x, const std::vector<int>& axes, const Tensor& out) {
  int nd = x.ndim();
  std::vector<bool> is_red(nd, false);
  for (int a : axes) is_red[a] = true;
  std::vector<int> perm;
  for (int d = 0; d < nd; ++d) if (!is_red[d]) perm.push_back(d);
  for (int d = 0; d < nd; ++d) if (is_red[d]) perm.push_back(d);
  Tensor xp = materialize(permuted_view(x, perm));
  Tensor op = Tensor::empty_cpu(xp.shape(), x.dtype());
  int64_t red = 1;
  for (int a : axes) red *= x.shape()[a];
  int64_t rows = red == 0 ? 0 : x.numel() / red;
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      throw TypeError("internal: prod_of_others expects a floating tensor");
    } else {
      const T* px = xp.numel() ? xp.data<T>() : nullptr;
      T* po = op.numel() ? op.data<T>() : nullptr;
      parallel_for(rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(red, 1)), [&](int64_t lo, int64_t hi) {
        for (int64_t row = lo; row < hi; ++row) {
          const T* a = px + row * red;
          T* o = po + row * red;
          using F = float_lane_t<T>;
          F prefix = F(1);  // product of a[0, r)
          for (int64_t r = 0; r < red; ++r) {
            o[r] = T(prefix);
            prefix *= static_cast<F>(a[r]);
          }
          F suffix = F(1);  // product of a(r, red)
          for (int64_t r = red - 1; r >= 0; --r) {
            o[r] = T(static_cast<F>(o[r]) * suffix);
            suffix *= static_cast<F>(a[r]);
          }
        }
      });
    }
  });
  // Write back in x's axis order: out viewed through the same permutation.
  copy_into(op, permuted_view(out, perm));
}

void scatter_along(const Tensor& g, const Tensor& indices, int axis, const Tensor& out) {
  Tensor gc = materialize(g), ic = materialize(indices);
  int64_t outer = 1, inner = 1, n = out.shape()[axis];
  for (int d = 0; d < axis; ++d) outer *= out.shape()[d];
  for (int d = axis + 1; d < out.ndim(); ++d) inner *= out.shape()[d];
  if (outer * inner == 0) return;
  const int64_t* pi = ic.data<int64_t>();
  for (int64_t k = 0; k < outer * inner; ++k)
    check<RuntimeError>(pi[k] >= 0 && pi[k] < n, "internal: scatter_along index out of range");
  dispatch(g.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pg = gc.data<T>();
    T* po = out.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) po[(o * n + pi[o * inner + i]) * inner + i] = pg[o * inner + i];
  });
}

void aminmax(const Tensor& x, int64_t outer, int64_t channels, int64_t inner, const Tensor& mn, const Tensor& mx) {
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      aminmax_typed<T>(x.numel() ? x.data<T>() : nullptr, outer, channels, inner, mn.data<T>(), mx.data<T>());
    else
      throw TypeError("aminmax(): internal: integer input reached the fused kernel");
  });
}

}  // namespace lucid::cpu
