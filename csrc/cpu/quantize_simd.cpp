// Glue between the tensor-level quantization entry points and the pointer-
// level microkernels: the segment walker hands out (start, length, parameter)
// runs, each becoming one kernel call (per-group runs along the last axis
// batch into one call with a parameter per row).
#include "cpu/quantize_simd.h"

#include <limits>

#include "core/thread_pool.h"
#include "cpu/quantize_loop.h"

namespace lucid::cpu {

namespace {

bool reference_table(const kernels::VQuantKernels& k) { return &k == &kernels::vquant_scalar(); }

// Non-temporal output stores pay when the call touches more memory than a
// last-level cache holds (the output is evicted before anyone reads it) and
// then save the read of every output line before it is written.
unsigned stream_flag(int64_t n, int64_t bytes_per_element) {
  return n * bytes_per_element >= (int64_t{32} << 20) ? kernels::kStream : 0u;
}

// Walks `seg` calling fn(rows, len, start, param, per_elem).
template <class F>
void walk(const QSegments& seg, bool threaded, F&& fn) {
  for_each_segment(
      seg, threaded, [&](int64_t i, int64_t len, int64_t p) { fn(1, len, i, p, false); },
      [&](int64_t i, int64_t len, int64_t p) { fn(1, len, i, p, true); },
      [&](int64_t i, int64_t rows, int64_t len, int64_t p) { fn(rows, len, i, p, false); });
}

template <class Q>
void quantize_with(kernels::vquantize_fn<Q> fn, const float* x, Q* q, const QSegments& seg, const float* scale,
                   const int32_t* zp, QBounds b, bool threaded) {
  unsigned stream = threaded ? stream_flag(seg.n, 4 + sizeof(Q)) : 0u;
  walk(seg, threaded, [&](int64_t rows, int64_t len, int64_t i, int64_t p, bool pe) {
    fn(rows, len, x + i, q + i, scale + p, zp + p, (pe ? kernels::kPerElem : 0u) | stream, b.lo, b.hi);
  });
}

}  // namespace

bool quantize_simd(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp,
                   QBounds b, const kernels::VQuantKernels& k) {
  if (x.dtype() != DType::Float32) return false;
  bool threaded = !reference_table(k);
  const float* px = x.data<float>();
  switch (out.dtype()) {
    case DType::Int8: quantize_with(k.quantize_qs8, px, out.data<int8_t>(), seg, scale, zp, b, threaded); return true;
    case DType::UInt8: quantize_with(k.quantize_qu8, px, out.data<uint8_t>(), seg, scale, zp, b, threaded); return true;
    case DType::Int32: quantize_with(k.quantize_qs32, px, out.data<int32_t>(), seg, scale, zp, b, threaded); return true;
    default: return false;
  }
}

bool dequantize_simd(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp,
                     const kernels::VQuantKernels& k) {
  if (out.dtype() != DType::Float32) return false;
  bool threaded = !reference_table(k);
  unsigned stream = threaded ? stream_flag(seg.n, 5) : 0u;
  float* py = out.data<float>();
  auto run = [&](auto fn, const auto* pq) {
    walk(seg, threaded, [&](int64_t rows, int64_t len, int64_t i, int64_t p, bool pe) {
      fn(rows, len, pq + i, py + i, scale + p, zp + p, (pe ? kernels::kPerElem : 0u) | stream);
    });
  };
  if (q.dtype() == DType::Int8) run(k.dequantize_qs8, q.data<int8_t>());
  else if (q.dtype() == DType::UInt8) run(k.dequantize_qu8, q.data<uint8_t>());
  else return false;
  return true;
}

bool fake_quantize_simd(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                        const float* scale, const int32_t* zp, int64_t qmin, int64_t qmax,
                        const kernels::VQuantKernels& k) {
  // Grids at least 2^31 wide need q - z in int64: the generic loop handles them.
  if (x.dtype() != DType::Float32 || qmax - qmin > std::numeric_limits<int32_t>::max()) return false;
  QBounds b = QBounds::of(qmin, qmax);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  uint8_t* pm = static_cast<uint8_t*>(mask.raw_data());
  bool threaded = !reference_table(k);
  unsigned stream = threaded ? stream_flag(seg.n, 9) : 0u;
  walk(seg, threaded, [&](int64_t rows, int64_t len, int64_t i, int64_t p, bool pe) {
    k.fake_quantize(rows, len, px + i, py + i, pm + i, scale + p, zp + p, (pe ? kernels::kPerElem : 0u) | stream,
                    b.lo, b.hi);
  });
  return true;
}

bool masked_grad_simd(const Tensor& dy, const Tensor& mask, const Tensor& dx) {
  if (itemsize(dy.dtype()) != 4) return false;
  const auto& k = kernels::vquant_best();
  const uint32_t* g = static_cast<const uint32_t*>(dy.raw_data());
  const uint8_t* m = static_cast<const uint8_t*>(mask.raw_data());
  uint32_t* d = static_cast<uint32_t*>(dx.raw_data());
  unsigned stream = stream_flag(dx.numel(), 9);
  parallel_for(dx.numel(), kElementwiseGrain,
               [&](int64_t lo, int64_t hi) { k.mask_grad(hi - lo, g + lo, m + lo, d + lo, stream); });
  return true;
}

// Along the last axis (inner == 1) the pairs of a row are consecutive bytes;
// with an even length the whole tensor is one run of pairs.
bool pack_int4_simd(const Tensor& codes, const Tensor& out, int64_t outer, int64_t len, int64_t inner) {
  if (inner != 1) return false;
  const auto& k = kernels::vquant_best();
  const uint8_t* c = static_cast<const uint8_t*>(codes.raw_data());
  uint8_t* o = out.data<uint8_t>();
  int64_t half = (len + 1) / 2, pairs = len / 2;
  if (len % 2 == 0) {
    parallel_for(outer * pairs, kElementwiseGrain, [&](int64_t lo, int64_t hi) { k.pack4(hi - lo, c + 2 * lo, o + lo); });
    return true;
  }
  parallel_for(outer, kElementwiseGrain / (len + 1) + 1, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      k.pack4(pairs, c + r * len, o + r * half);
      o[r * half + pairs] = static_cast<uint8_t>(c[r * len + len - 1] & 0x0f);  // odd length pads with 0
    }
  });
  return true;
}

bool unpack_int4_simd(const Tensor& packed, const Tensor& out, int64_t outer, int64_t len, int64_t inner) {
  if (inner != 1) return false;
  const auto& k = kernels::vquant_best();
  bool is_signed = out.dtype() == DType::Int8;
  const uint8_t* p = packed.data<uint8_t>();
  uint8_t* o = static_cast<uint8_t*>(out.raw_data());
  int64_t half = (len + 1) / 2, pairs = len / 2;
  if (len % 2 == 0) {
    parallel_for(outer * pairs, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      k.unpack4(hi - lo, p + lo, o + 2 * lo, is_signed);
    });
    return true;
  }
  parallel_for(outer, kElementwiseGrain / (len + 1) + 1, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      k.unpack4(pairs, p + r * half, o + r * len, is_signed);
      uint8_t last[2];
      k.unpack4(1, p + r * half + pairs, last, is_signed);  // the pad nibble is dropped
      o[r * len + len - 1] = last[0];
    }
  });
  return true;
}

}  // namespace lucid::cpu
