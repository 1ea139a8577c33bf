// In-place ops: validation, then the CPU stream writes into the destination's
// buffer and the GPU stream (MLX arrays are values) replaces the destination's
// array with the new value. On the CPU stream a contiguous
// destination whose operands have its dtype and shape (or are one element) is
// written by cpu/inplace.cpp directly; any other destination (strided,
// half-precision, integer) gets the out-of-place result copied into its own
// memory, so views of it see the change either way.
// Errors (before anything is written): ValueError when the result's shape is
// not the destination's, TypeError when a floating result would go into an
// integer or bool destination, ValueError for mixed devices.
#pragma once
#include <string>
#include <vector>

#include "core/elementwise_kind.h"
#include "core/tensor.h"

namespace lucid::ops {

// dst += other (broadcast to dst), in place.
void add_(const Tensor& dst, const Tensor& other);
// dst -= other, in place.
void sub_(const Tensor& dst, const Tensor& other);
// dst *= other, in place.
void mul_(const Tensor& dst, const Tensor& other);
// dst /= other, in place.
void div_(const Tensor& dst, const Tensor& other);
// dst = op(dst) for op in neg, abs, relu, sqrt, rsqrt, exp, log, tanh, sigmoid.
void unary_(const std::string& name, const Tensor& dst);
// dst += value * t1 * t2, in place.
void addcmul_(const Tensor& dst, const Tensor& t1, const Tensor& t2, double value);
// dst += value * t1 / t2, in place.
void addcdiv_(const Tensor& dst, const Tensor& t1, const Tensor& t2, double value);
// dst += weight * (end - dst), in place (docs/numerics.md).
void lerp_(const Tensor& dst, const Tensor& end, double weight);

// Multi-tensor ("foreach") optimizer steps over contiguous float32 CPU
// tensors, one call per parameter group; formulas in
// python/lucid/optim/sgd.py and adam.py, each scalar rounded to the
// parameter's dtype as the per-op path does, so both paths agree bit for bit.
// Every list is checked (length, device, dtype, shape, contiguity) before
// any tensor is written.

// One SGD step for every parameter of a group, in place; `fresh[k]`: bufs[k]
// is new, the first step copies g.
void sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& bufs, const std::vector<bool>& fresh, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov, bool maximize);
// One Adam / AdamW step for every parameter of a group, in place;
// bias2_sqrt[k] = sqrt(1 - beta2^t), step_size[k] = lr / (1 - beta1^t) for
// parameter k's step t; max_sqs is empty unless amsgrad.
void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_sqs, const std::vector<double>& bias2_sqrt,
                const std::vector<double>& step_size, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool decoupled, bool maximize);

// One RMSprop step (python/lucid/optim/rmsprop.py) for every parameter of a
// group, in place; grad_avgs empty unless centered,
// bufs empty unless momentum > 0.
void rmsprop_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& bufs, double lr, double alpha, double eps, double weight_decay,
                   double momentum, bool maximize);

}  // namespace lucid::ops
