// Shared by binding files: type conversions between Python and the engine.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "autograd/tensor_object.h"  // the type_caster for lucid::Tensor
#include "core/tensor.h"

namespace lucid::bindings {

namespace py = pybind11;

// Dtypes and devices cross the boundary as their names ("float32", "gpu").
inline DType dtype_arg(const std::string& name) { return dtype_from_name(name); }
inline Device device_arg(const std::string& name) { return device_from_name(name); }

// An absent optional tensor argument as an undefined Tensor, as ops:: takes it.
inline Tensor optional_tensor(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// One init function per op family; module.cpp calls them all.
void init_tensor(py::module_& m);
void init_copy(py::module_& m);
void init_elementwise(py::module_& m);
void init_reduction(py::module_& m);
void init_shape(py::module_& m);
void init_indexing(py::module_& m);
void init_linalg(py::module_& m);
void init_decomposition(py::module_& m);
void init_conv(py::module_& m);
void init_pool(py::module_& m);
void init_linear(py::module_& m);
void init_embedding(py::module_& m);
void init_quantize(py::module_& m);
void init_fake_quantize_learnable(py::module_& m);
void init_int4_pack(py::module_& m);
void init_int4_linear(py::module_& m);
void init_weight_gemv(py::module_& m);
void init_qmatmul(py::module_& m);
void init_qconv2d(py::module_& m);
void init_qelementwise(py::module_& m);
void init_group_quant(py::module_& m);
void init_histogram(py::module_& m);
void init_special(py::module_& m);
void init_math(py::module_& m);
void init_bitwise(py::module_& m);
void init_scan(py::module_& m);
void init_sort(py::module_& m);
void init_recurrent(py::module_& m);
void init_inplace(py::module_& m);
void init_autograd(py::module_& m);  // bindings/autograd.cpp: the backward walk

}  // namespace lucid::bindings
