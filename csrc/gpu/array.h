// The GPU stream's view of a tensor: an MLX array plus the helpers every
// gpu/ kernel file needs. Only gpu/ translation units include this header.
#pragma once
#include <mlx/mlx.h>

#include "core/tensor.h"
#include "gpu/device_info.h"

namespace lucid {

namespace mx = mlx::core;

struct GpuArray {
  mx::array array;
};

namespace gpu {

// The MLX device the GPU stream runs on: the real GPU (Metal / CUDA), or
// MLX's CPU backend when LUCID_MLX_DEVICE=cpu. RuntimeError when neither.
mx::Device device();
mx::StreamOrDevice stream();  // pass to every MLX call

mx::Dtype to_mx(DType t);
DType from_mx(mx::Dtype t);
mx::Shape to_mx_shape(const Shape& s);

const mx::array& array_of(const Tensor& t);  // RuntimeError if t is not a GPU tensor
// A new GPU tensor holding `a`. MemoryError when `a` is larger than this
// process can allocate (checked before MLX evaluates it: MLX's CPU backend
// crashes on a failed allocation).
Tensor wrap(mx::array a);
// As wrap, for results that are views MLX never materialises by themselves
// (broadcasts): their logical size may exceed memory.
Tensor wrap_view(mx::array a);
// Replaces the array a GPU tensor holds (in-place ops rebind, MLX arrays are values).
void rebind(const Tensor& t, mx::array a);

// mx::matmul for operands of at least 2 axes, except that an operand with no
// elements gives zeros without calling MLX: MLX 0.32's CPU matmul returns early
// on an empty result while the contiguous copy it made of a strided operand is
// still being written on its stream thread, and frees that copy under it (a
// use-after-free found by the fuzzer, `qmatmul` with N = 0 and K > 256).
mx::array matmul_checked(const mx::array& a, const mx::array& b, mx::StreamOrDevice s);

}  // namespace gpu
}  // namespace lucid
