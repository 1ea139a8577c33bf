#include "ops/inplace.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/shape.h"
#include "cpu/inplace.h"
#include "ops/copy.h"
#include "ops/elementwise.h"

namespace lucid::ops {

namespace {

bool float_kernel_dtype(DType t) { return t == DType::Float32; }

// Whether cpu/inplace.cpp can write `dst` straight from `others`: same dtype,
// contiguous, dst's shape (or one element when `scalar_ok`), and no operand
// that overlaps dst at a different offset (it would read its own output).
bool direct(const Tensor& dst, std::initializer_list<const Tensor*> others, bool scalar_ok) {
  if (dst.device() != Device::CPU || !float_kernel_dtype(dst.dtype()) || !dst.is_contiguous()) return false;
  for (const Tensor* o : others) {
    if (o->dtype() != dst.dtype() || !o->is_contiguous()) return false;
    bool scalar = scalar_ok && o->numel() == 1;
    if (!scalar && o->shape() != dst.shape()) return false;
    if (o->impl().storage == dst.impl().storage && (scalar || o->impl().offset != dst.impl().offset)) return false;
  }
  return true;
}

// The checks every in-place op makes before writing: the result (of `dtype`
// and `shape`) must fit the destination as it is.
void check_result(const char* fn, const Tensor& dst, DType dtype, const Shape& shape) {
  check(shape == dst.shape(), std::string(fn) + "(): the result of shape " + shape_str(shape) +
                                  " does not match the destination's shape " + shape_str(dst.shape()));
  check<TypeError>(!is_floating(dtype) || is_floating(dst.dtype()),
                   std::string(fn) + "(): result type " + dtype_name(dtype) + " cannot be cast to the destination's " +
                       dtype_name(dst.dtype()));
}

void binary_inplace(BinaryOp op, const char* fn, Tensor (*outofplace)(const Tensor&, const Tensor&),
                    const Tensor& dst, const Tensor& other) {
  common_device(fn, {&dst, &other});
  DType dt = promote_types(dst.dtype(), other.dtype());
  if (op == BinaryOp::Div && !is_floating(dt)) dt = DType::Float32;
  check_result(fn, dst, dt, broadcast_shapes(dst.shape(), other.shape(), fn));
  if (direct(dst, {&other}, true)) return cpu::binary_(op, dst, other);
  copy_(dst, outofplace(dst, other));
}

}  // namespace

void add_(const Tensor& dst, const Tensor& other) { binary_inplace(BinaryOp::Add, "add_", &add, dst, other); }
void sub_(const Tensor& dst, const Tensor& other) { binary_inplace(BinaryOp::Sub, "sub_", &sub, dst, other); }
void mul_(const Tensor& dst, const Tensor& other) { binary_inplace(BinaryOp::Mul, "mul_", &mul, dst, other); }
void div_(const Tensor& dst, const Tensor& other) { binary_inplace(BinaryOp::Div, "div_", &div, dst, other); }

void unary_(const std::string& name, const Tensor& dst) {
  static const std::pair<const char*, std::pair<UnaryOp, Tensor (*)(const Tensor&)>> table[] = {
      {"neg", {UnaryOp::Neg, &neg}},       {"abs", {UnaryOp::Abs, &abs}},     {"relu", {UnaryOp::Relu, &relu}},
      {"sqrt", {UnaryOp::Sqrt, &sqrt}},    {"rsqrt", {UnaryOp::Rsqrt, &rsqrt}}, {"exp", {UnaryOp::Exp, &exp}},
      {"log", {UnaryOp::Log, &log}},       {"tanh", {UnaryOp::Tanh, &tanh}},  {"sigmoid", {UnaryOp::Sigmoid, &sigmoid}}};
  for (const auto& [n, entry] : table) {
    if (name != n) continue;
    std::string fn = name + "_";
    common_device(fn.c_str(), {&dst});
    bool keeps_dtype = entry.first == UnaryOp::Neg || entry.first == UnaryOp::Abs || entry.first == UnaryOp::Relu;
    check_result(fn.c_str(), dst, keeps_dtype ? dst.dtype() : DType::Float32, dst.shape());
    if (direct(dst, {}, false)) return cpu::unary_(entry.first, dst);
    return copy_(dst, entry.second(dst));
  }
  throw ValueError("unary_(): no in-place form of '" + name + "'");
}

namespace {

void addc(BinaryOp op, const char* fn, const Tensor& dst, const Tensor& t1, const Tensor& t2, double value) {
  common_device(fn, {&dst, &t1, &t2});
  DType dt = promote_types(promote_types(dst.dtype(), t1.dtype()), t2.dtype());
  if (op == BinaryOp::Div && !is_floating(dt)) dt = DType::Float32;
  Shape s = broadcast_shapes(broadcast_shapes(dst.shape(), t1.shape(), fn), t2.shape(), fn);
  check_result(fn, dst, dt, s);
  if (direct(dst, {&t1, &t2}, false)) return cpu::addc_(op, dst, t1, t2, value);
  // Same order as the kernel: (value * t1) op t2, then added to dst.
  Tensor scaled = mul(full({}, value, dt, dst.device()), t1);
  copy_(dst, add(dst, op == BinaryOp::Div ? div(scaled, t2) : mul(scaled, t2)));
}

}  // namespace

void addcmul_(const Tensor& dst, const Tensor& t1, const Tensor& t2, double value) {
  addc(BinaryOp::Mul, "addcmul_", dst, t1, t2, value);
}
void addcdiv_(const Tensor& dst, const Tensor& t1, const Tensor& t2, double value) {
  addc(BinaryOp::Div, "addcdiv_", dst, t1, t2, value);
}

void lerp_(const Tensor& dst, const Tensor& end, double weight) {
  common_device("lerp_", {&dst, &end});
  check<TypeError>(is_floating(dst.dtype()) && is_floating(end.dtype()),
                   "lerp_(): expected floating-point 'input' and 'end'");
  check_result("lerp_", dst, promote_types(dst.dtype(), end.dtype()),
               broadcast_shapes(dst.shape(), end.shape(), "lerp_"));
  if (direct(dst, {&end}, false)) return cpu::lerp_(dst, end, weight);
  DType dt = dst.dtype();
  Tensor diff = sub(end, dst);
  if (std::abs(weight) < 0.5)
    return copy_(dst, add(dst, mul(full({}, weight, dt, dst.device()), diff)));
  copy_(dst, sub(end, mul(diff, full({}, 1.0 - weight, dt, dst.device()))));
}

namespace {

// Checks one list of a foreach call against the parameters.
void check_list(const char* fn, const char* name, const std::vector<Tensor>& params, const std::vector<Tensor>& xs) {
  check(xs.size() == params.size(), std::string(fn) + "(): '" + name + "' has " + std::to_string(xs.size()) +
                                        " tensors, 'params' has " + std::to_string(params.size()));
  for (size_t k = 0; k < xs.size(); ++k) {
    const Tensor& p = params[k];
    const Tensor& x = xs[k];
    std::string where = std::string(fn) + "(): " + name + "[" + std::to_string(k) + "]";
    check(x.device() == Device::CPU, where + " must be on the CPU stream");
    check<TypeError>(float_kernel_dtype(x.dtype()) && x.dtype() == p.dtype(),
                     where + " must be float32, of the parameter's dtype");
    check(x.shape() == p.shape(), where + " has shape " + shape_str(x.shape()) + "; expected " +
                                      shape_str(p.shape()));
    check(x.is_contiguous(), where + " must be contiguous");
  }
}

}  // namespace

void sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& bufs, const std::vector<bool>& fresh, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov, bool maximize) {
  check_list("sgd_step_", "params", params, params);
  check_list("sgd_step_", "grads", params, grads);
  if (momentum != 0) {
    check_list("sgd_step_", "bufs", params, bufs);
    check(fresh.size() == params.size(), "sgd_step_(): 'fresh' must have one flag per parameter");
  }
  cpu::sgd_step_(params, grads, bufs, fresh, lr, momentum, dampening, weight_decay, nesterov, maximize);
}

void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_sqs, const std::vector<double>& bias2_sqrt,
                const std::vector<double>& step_size, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool decoupled, bool maximize) {
  check_list("adam_step_", "params", params, params);
  check_list("adam_step_", "grads", params, grads);
  check_list("adam_step_", "exp_avgs", params, exp_avgs);
  check_list("adam_step_", "exp_avg_sqs", params, exp_avg_sqs);
  if (!max_sqs.empty()) check_list("adam_step_", "max_exp_avg_sqs", params, max_sqs);
  check(bias2_sqrt.size() == params.size() && step_size.size() == params.size(),
        "adam_step_(): 'bias2_sqrt' and 'step_size' must have one value per parameter");
  cpu::adam_step_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, bias2_sqrt, step_size, lr, beta1, beta2, eps,
                  weight_decay, decoupled, maximize);
}

void rmsprop_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& bufs, double lr, double alpha, double eps, double weight_decay,
                   double momentum, bool maximize) {
  check_list("rmsprop_step_", "params", params, params);
  check_list("rmsprop_step_", "grads", params, grads);
  check_list("rmsprop_step_", "square_avgs", params, square_avgs);
  if (!grad_avgs.empty()) check_list("rmsprop_step_", "grad_avgs", params, grad_avgs);
  if (!bufs.empty()) check_list("rmsprop_step_", "momentum_buffers", params, bufs);
  cpu::rmsprop_step_(params, grads, square_avgs, grad_avgs, bufs, lr, alpha, eps, weight_decay, momentum, maximize);
}

}  // namespace lucid::ops
