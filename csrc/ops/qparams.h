// The quantization parameters the quantize ops (ops/quantize.cpp) and the
// integer products (ops/qmatmul.cpp, ops/qconv2d.cpp) read and check the same
// way: grids by name, scales and zero points from tensors, and the host-side
// constants of an integer product. Internal to ops/.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "cpu/quantize.h"

namespace lucid::ops::quant_detail {

// An integer grid: its bounds, the dtype its codes are stored in, its name.
struct Grid {
  int64_t qmin, qmax;
  DType storage;
  std::string name;
};

// The integer grid named `name` (qint8, quint8, qint4, quint4, qint2, quint2,
// qint16, quint16, qint32); TypeError otherwise.
Grid grid_of(const std::string& name, const char* fn);
// v with 9 significant digits, for messages.
std::string fmt(double v);
// "fn(): argument 'name'", the start of an argument's error message.
std::string arg(const char* fn, const char* name);
// A small tensor's values on the host, as float32 (floats) or int64 (integers).
Tensor host_values(const Tensor& t, DType as);
// v as a 1-d tensor of `dt` on the CPU stream, or on the GPU stream.
template <class T>
Tensor host_tensor(const std::vector<T>& v, DType dt);
template <class T>
Tensor gpu_tensor(const std::vector<T>& v, DType dt);

// One parameter's `count` values: the caller's own tensor when it already is
// contiguous CPU data of the kernels' type with one value per slot (used in
// place: per-group parameters can number 1/32 of the input, and copying them
// cost a tenth of a 16M-element per-group quantize), else a checked copy.
template <class T>
struct ParamValues {
  Tensor held;
  std::vector<T> owned;
  const T* data() const { return held.defined() ? static_cast<const T*>(held.raw_data()) : owned.data(); }
  T operator[](int64_t i) const { return data()[i]; }
  std::vector<T> vec(int64_t count) const { return std::vector<T>(data(), data() + count); }
};

// The n float32 scales at v, checked (finite, >= 2^-126), as `count` values
// (one value broadcast).
std::vector<float> checked_scales(const char* fn, const char* name, const float* v, int64_t n, int64_t count);
// A scale tensor's `count` values, checked.
ParamValues<float> read_scale(const char* fn, const char* name, const Tensor& s, int64_t count);
// ValueError: zero point v (at index i of n) outside [qmin, qmax] of `grid`.
[[noreturn]] void zero_point_range_error(const char* fn, const char* name, int64_t qmin, int64_t qmax,
                                         std::string_view grid, int64_t v, int64_t i, int64_t n);
// A zero-point tensor's `count` values, checked to be integers in [qmin, qmax].
ParamValues<int32_t> read_zero_point(const char* fn, const char* name, const Tensor& z, int64_t count, int64_t qmin,
                                     int64_t qmax, std::string_view grid);

// Everything qmatmul and qconv2d share: the validated quantization
// parameters of the activation, the weight (n output channels) and the
// output, and the host-side constants of docs/numerics.md (sxw[n] =
// fl(sx * sw[n]), bias_q[n], M[n]) computed once so both streams use the same
// bits.
struct QProduct {
  int32_t zx = 0, zy = 0;
  std::vector<int32_t> zw, bias_q;
  std::vector<float> sxw, mult;
  bool quantized_out = false;
  Grid og;
  cpu::QBounds ob;
  DType out_dtype() const { return quantized_out ? og.storage : DType::Float32; }
  const float* scale() const { return quantized_out ? mult.data() : sxw.data(); }
  const int32_t* bias() const { return bias_q.empty() ? nullptr : bias_q.data(); }
};

// The QProduct of an integer product with N output channels; `out_scale`
// undefined means a float32 output.
QProduct product_params(const char* fn, const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, int64_t N,
                        const Tensor& w_scale, const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale,
                        const Tensor& out_zp, const std::string& out_qdtype);

// |x - zx| <= 255 and |w - zw| <= 255, so K terms stay below 2^31 when
// K * 255 * 255 < 2^31: ValueError for a larger K.
void check_k(const char* fn, int64_t K);

// TypeError unless xq holds uint8 / int8 codes and wq int8 codes.
void check_codes(const char* fn, const Tensor& xq, const Tensor& wq);

// DeviceError unless the optional bias, out_scale and out_zp are on xq's device.
void common_params_device(const char* fn, const Tensor& xq, const Tensor& bias, const Tensor& out_scale,
                          const Tensor& out_zp);

}  // namespace lucid::ops::quant_detail
