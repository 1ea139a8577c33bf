// Shapes, strides and broadcasting rules shared by both streams.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lucid {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements, not bytes

// Element count; ValueError when the product of the dimensions overflows
// int64 (a shape that large can never be allocated or indexed).
int64_t numel(const Shape& s);
// Row-major strides; ValueError when a stride overflows int64.
Strides contiguous_strides(const Shape& s);
std::string shape_str(const Shape& s);  // "(2, 3)"
// numpy broadcasting; ValueError naming `fn` when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* fn);
// Wraps a possibly negative axis into [0, ndim); IndexError naming `fn` and `arg`.
int normalize_axis(int64_t axis, int ndim, const char* fn, const char* arg = "dim");

}  // namespace lucid
