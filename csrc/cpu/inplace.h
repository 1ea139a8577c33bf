// CPU-stream in-place kernels: they write into the destination's own buffer.
// The destination is contiguous and float32; ops/inplace.cpp
// routes every other case through an out-of-place result copied in.
#pragma once
#include <vector>

#include "core/elementwise_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// dst = op(dst, other); other has dst's dtype and is either contiguous of
// dst's shape or a single element. op is Add, Sub, Mul or Div.
void binary_(BinaryOp op, const Tensor& dst, const Tensor& other);
// dst = op(dst); op is Neg, Abs, Relu, Sqrt, Rsqrt, Exp, Log, Tanh or Sigmoid (same
// scalar functions as cpu::unary, so results are bit-identical to it).
void unary_(UnaryOp op, const Tensor& dst);
// dst = dst + value * t1 * t2 (op Mul, addcmul_) or dst + value * t1 / t2 (op Div, addcdiv_);
// t1, t2 contiguous of dst's shape and dtype.
void addc_(BinaryOp op, const Tensor& dst, const Tensor& t1, const Tensor& t2, double value);
// dst = lerp(dst, end, weight) (docs/numerics.md); end contiguous of dst's shape and dtype.
void lerp_(const Tensor& dst, const Tensor& end, double weight);

// Fused SGD over lists of contiguous tensors of one dtype (see ops/inplace.h).
void sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& bufs, const std::vector<bool>& fresh, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov, bool maximize);
// Fused Adam / AdamW (see ops/inplace.h); max_sqs empty unless amsgrad.
void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_sqs, const std::vector<double>& bias2_sqrt,
                const std::vector<double>& step_size, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool decoupled, bool maximize);

// Fused RMSprop (see ops/inplace.h); grad_avgs empty unless centered, bufs
// empty unless momentum > 0.
void rmsprop_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& bufs, double lr, double alpha, double eps, double weight_decay,
                   double momentum, bool maximize);

}  // namespace lucid::cpu
