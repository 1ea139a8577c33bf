// Typed exceptions thrown anywhere in the engine; bindings/module.cpp maps
// them onto Python's ValueError / TypeError / IndexError / RuntimeError /
// MemoryError (ShapeError / DeviceError onto lucid.ShapeError /
// lucid.DeviceError, both subclasses of ValueError and RuntimeError).
#pragma once
#include <stdexcept>
#include <string>

namespace lucid {

struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
// Shapes that do not fit (broadcast, reshape / view, expand) and tensors on
// different devices: a ValueError that Python also lets catch as RuntimeError,
// as PyTorch raises these.
struct ShapeError : ValueError { using ValueError::ValueError; };
struct DeviceError : ValueError { using ValueError::ValueError; };
// A matrix whose value a linear-algebra routine cannot take (singular for
// inv / solve, not positive-definite for cholesky, no convergence): Python's
// lucid.linalg.LinAlgError, a ValueError and a RuntimeError (PyTorch's
// torch.linalg.LinAlgError is a RuntimeError).
struct LinAlgError : ValueError { using ValueError::ValueError; };
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
// Environment problems: no GPU, MLX failures.
struct RuntimeError : std::runtime_error { using std::runtime_error::runtime_error; };
// An allocation that cannot be satisfied (Python's MemoryError), on both streams.
struct MemoryError : std::runtime_error { using std::runtime_error::runtime_error; };

// check(cond, "add(): argument 'other' ...") — the message names the function
// and the argument, so both streams raise the same words.
template <class E = ValueError>
inline void check(bool cond, const std::string& msg) {
  if (!cond) throw E(msg);
}

}  // namespace lucid
