#include "ops/group_quant.h"

#include <cmath>
#include <string>

#include "core/errors.h"
#include "cpu/group_quant.h"
#include "gpu/group_quant.h"
#include "gpu/transfer.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

std::string arg(const char* fn, const char* name) { return std::string(fn) + "(): argument '" + name + "'"; }

void check_format(const char* fn, int64_t group_size, int64_t bits) {
  check(group_size == 32 || group_size == 64 || group_size == 128,
        arg(fn, "group_size") + " must be 32, 64 or 128, got " + std::to_string(group_size));
  check(bits >= 2 && bits <= 8 && bits != 7,
        arg(fn, "bits") + " must be 2, 3, 4, 5, 6 or 8, got " + std::to_string(bits));
}

// words / scales / biases of one (N, K) weight: checks and returns K.
int64_t check_packed(const char* fn, const Tensor& words, const Tensor& scales, const Tensor& biases,
                     int64_t group_size, int64_t bits) {
  check<TypeError>(words.dtype() == DType::Int32, arg(fn, "words") + " must be int32 (the uint32 words of "
                                                                      "group_quantize), got " +
                                                      dtype_name(words.dtype()));
  check(words.ndim() == 2, arg(fn, "words") + " must have shape (N, K * bits / 32), got " + shape_str(words.shape()));
  const int64_t N = words.size(0), K = words.size(1) * 32 / bits;
  check(K > 0 && K % group_size == 0, arg(fn, "words") + " of shape " + shape_str(words.shape()) + " holds K = " +
                                          std::to_string(K) + " codes per row at bits = " + std::to_string(bits) +
                                          ", which group_size = " + std::to_string(group_size) + " must divide");
  const Shape pshape{N, K / group_size};
  for (auto [t, name] : {std::pair{&scales, "scales"}, std::pair{&biases, "biases"}}) {
    check<TypeError>(t->dtype() == DType::Float32, arg(fn, name) + " must be float32, got " + dtype_name(t->dtype()));
    check(t->shape() == pshape, arg(fn, name) + " must have shape " + shape_str(pshape) + " (N, K / group_size), got " +
                                    shape_str(t->shape()));
  }
  return K;
}

}  // namespace

std::vector<Tensor> group_quantize(const Tensor& w, int64_t group_size, int64_t bits) {
  const char* fn = "group_quantize";
  check_format(fn, group_size, bits);
  check<TypeError>(w.dtype() == DType::Float32, arg(fn, "w") + " must be float32, got " + dtype_name(w.dtype()));
  check(w.ndim() == 2, arg(fn, "w") + " must have shape (N, K), got " + shape_str(w.shape()));
  const int64_t N = w.size(0), K = w.size(1);
  check(K > 0 && K % group_size == 0, arg(fn, "group_size") + " (" + std::to_string(group_size) +
                                          ") must divide K = " + std::to_string(K) + " (the last dimension of 'w')");
  // Every weight finite (an inf edge has no finite scale): the same ValueError on both streams. The CPU
  // kernel tests finiteness as it reads the weight (one pass instead of two); the first bad index is only
  // searched for when it reports one.
  auto throw_not_finite = [&](const Tensor& hw) {
    const float* p = hw.data<float>();
    for (int64_t i = 0; i < N * K; ++i)
      if (!std::isfinite(p[i]))
        throw ValueError(arg(fn, "w") + " must be finite, got " + std::to_string(p[i]) + " at flat index " +
                         std::to_string(i));
  };
  if (w.device() == Device::GPU) {
    throw_not_finite(contiguous(to_device(w, Device::CPU)));
    return gpu::group_quantize(w, static_cast<int>(group_size), static_cast<int>(bits));
  }
  Tensor hw = contiguous(w);
  Tensor words = Tensor::empty_cpu({N, K * bits / 32}, DType::Int32);
  Tensor scales = Tensor::empty_cpu({N, K / group_size}, DType::Float32);
  Tensor biases = Tensor::empty_cpu({N, K / group_size}, DType::Float32);
  if (!cpu::group_quantize(hw.data<float>(), N, K, static_cast<int>(group_size), static_cast<int>(bits),
                           words.data<uint32_t>(), scales.data<float>(), biases.data<float>()))
    throw_not_finite(hw);
  return {words, scales, biases};
}

Tensor group_dequantize(const Tensor& words, const Tensor& scales, const Tensor& biases, int64_t group_size,
                        int64_t bits) {
  const char* fn = "group_dequantize";
  check_format(fn, group_size, bits);
  common_device(fn, {&words, &scales, &biases});
  const int64_t K = check_packed(fn, words, scales, biases, group_size, bits), N = words.size(0);
  if (words.device() == Device::GPU)
    return gpu::group_dequantize(contiguous(words), contiguous(scales), contiguous(biases),
                                 static_cast<int>(group_size), static_cast<int>(bits));
  Tensor wc = contiguous(words), sc = contiguous(scales), bc = contiguous(biases);
  Tensor out = Tensor::empty_cpu({N, K}, DType::Float32);
  cpu::group_dequantize(wc.data<uint32_t>(), sc.data<float>(), bc.data<float>(), N, K, static_cast<int>(group_size),
                        static_cast<int>(bits), out.data<float>());
  return out;
}

namespace {

minifloat::BlockMode block_mode(const char* fn, const std::string& mode) {
  if (mode == "mxfp8") return minifloat::BlockMode::Mxfp8;
  if (mode == "mxfp4") return minifloat::BlockMode::Mxfp4;
  if (mode == "nvfp4") return minifloat::BlockMode::Nvfp4;
  throw ValueError(arg(fn, "mode") + " must be 'affine', 'mxfp8', 'mxfp4' or 'nvfp4', got '" + mode + "'");
}

}  // namespace

std::vector<Tensor> block_quantize(const Tensor& w, const std::string& mode) {
  const char* fn = "quantize_mx";
  const minifloat::BlockMode m = block_mode(fn, mode);
  const int64_t G = minifloat::block_group(m), bits = minifloat::block_bits(m);
  check<TypeError>(w.dtype() == DType::Float32, arg(fn, "x") + " must be float32, got " + dtype_name(w.dtype()));
  check(w.ndim() == 2, arg(fn, "x") + " must have shape (N, K), got " + shape_str(w.shape()));
  const int64_t N = w.size(0), K = w.size(1);
  check(K > 0 && K % 32 == 0, arg(fn, "x") + ": the last dimension must be a positive multiple of 32 for '" + mode +
                                  "' (group size " + std::to_string(G) + "), got " + std::to_string(K));
  if (w.device() == Device::GPU) return gpu::block_quantize(w, m);
  Tensor wc = contiguous(w);
  Tensor words = Tensor::empty_cpu({N, K * bits / 32}, DType::Int32);
  Tensor scales = Tensor::empty_cpu({N, K / G}, DType::UInt8);
  cpu::block_quantize(wc.data<float>(), N, K, m, words.data<uint32_t>(), scales.data<uint8_t>());
  return {words, scales};
}

Tensor block_dequantize(const Tensor& words, const Tensor& scales, const std::string& mode) {
  const char* fn = "dequantize_mx";
  const minifloat::BlockMode m = block_mode(fn, mode);
  const int64_t G = minifloat::block_group(m), bits = minifloat::block_bits(m);
  common_device(fn, {&words, &scales});
  check<TypeError>(words.dtype() == DType::Int32, arg(fn, "words") + " must be int32 (MLX's uint32 words), got " +
                                                      dtype_name(words.dtype()));
  check<TypeError>(scales.dtype() == DType::UInt8, arg(fn, "scales") + " must be uint8 codes for '" + mode +
                                                       "', got " + dtype_name(scales.dtype()));
  check(words.ndim() == 2, arg(fn, "words") + " must have shape (N, K * " + std::to_string(bits) + " / 32), got " +
                               shape_str(words.shape()));
  const int64_t N = words.size(0), K = words.size(1) * 32 / bits;
  check(K > 0 && K % 32 == 0, arg(fn, "words") + " of shape " + shape_str(words.shape()) +
                                  " does not hold a positive multiple of 32 codes per row");
  const Shape pshape{N, K / G};
  check(scales.shape() == pshape, arg(fn, "scales") + " must have shape " + shape_str(pshape) + ", got " +
                                      shape_str(scales.shape()));
  if (words.device() == Device::GPU) return gpu::block_dequantize(words, scales, m);
  Tensor wc = contiguous(words), sc = contiguous(scales);
  Tensor out = Tensor::empty_cpu({N, K}, DType::Float32);
  cpu::block_dequantize(wc.data<uint32_t>(), sc.data<uint8_t>(), N, K, m, out.data<float>());
  return out;
}

Tensor group_quantized_linear(const Tensor& x, const Tensor& words, const Tensor& scales, const Tensor& biases,
                              int64_t group_size, int64_t bits, const Tensor& bias) {
  const char* fn = "group_quantized_linear";
  check_format(fn, group_size, bits);
  common_device(fn, {&x, &words, &scales, &biases});
  if (bias.defined()) common_device(fn, {&x, &bias});
  const int64_t K = check_packed(fn, words, scales, biases, group_size, bits), N = words.size(0);
  check<TypeError>(x.dtype() == DType::Float32, arg(fn, "x") + " must be float32, got " + dtype_name(x.dtype()));
  check(x.ndim() >= 1 && x.shape().back() == K, std::string(fn) + "(): shapes do not match: 'x' " +
                                                    shape_str(x.shape()) + " must end in K = " + std::to_string(K) +
                                                    " (the weights' in_features)");
  if (bias.defined()) {
    check<TypeError>(bias.dtype() == DType::Float32, arg(fn, "bias") + " must be float32, got " +
                                                         dtype_name(bias.dtype()));
    check(bias.ndim() == 1 && bias.size(0) == N,
          arg(fn, "bias") + " must have shape (" + std::to_string(N) + ",), got " + shape_str(bias.shape()));
  }
  Shape out_shape = x.shape();
  out_shape.back() = N;
  int64_t M = 1;
  for (int i = 0; i + 1 < x.ndim(); ++i) M *= x.size(i);
  if (x.device() == Device::GPU)
    return gpu::group_quantized_linear(contiguous(x), contiguous(words), contiguous(scales), contiguous(biases),
                                       static_cast<int>(group_size), static_cast<int>(bits),
                                       bias.defined() ? contiguous(bias) : Tensor(), out_shape);
  Tensor xc = contiguous(reshape(x, {M, K}));
  Tensor wc = contiguous(words), sc = contiguous(scales), bc = contiguous(biases);
  Tensor hb = bias.defined() ? contiguous(bias) : Tensor();
  Tensor out = Tensor::empty_cpu({M, N}, DType::Float32);
  if (M > 0 && N > 0)
    cpu::group_quantized_linear(xc.data<float>(), M, K, wc.data<uint32_t>(), sc.data<float>(), bc.data<float>(), N,
                                static_cast<int>(group_size), static_cast<int>(bits),
                                hb.defined() ? hb.data<float>() : nullptr, out.data<float>());
  return reshape(out, out_shape);
}

}  // namespace lucid::ops
