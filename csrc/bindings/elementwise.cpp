#include "bindings/common.h"
#include "ops/elementwise.h"

namespace lucid::bindings {

void init_elementwise(py::module_& m) {
  for (auto [name, f] : std::initializer_list<std::pair<const char*, Tensor (*)(const Tensor&)>>{
           {"neg", &ops::neg}, {"abs", &ops::abs}, {"sign", &ops::sign}, {"relu", &ops::relu},
           {"exp", &ops::exp}, {"log", &ops::log}, {"sqrt", &ops::sqrt}, {"rsqrt", &ops::rsqrt},
           {"sin", &ops::sin}, {"cos", &ops::cos}, {"tanh", &ops::tanh}, {"sigmoid", &ops::sigmoid},
           {"erf", &ops::erf}, {"floor", &ops::floor}, {"ceil", &ops::ceil}, {"round", &ops::round},
           {"isnan", &ops::isnan}, {"isinf", &ops::isinf}, {"isfinite", &ops::isfinite},
           {"logical_not", &ops::logical_not}})
    m.def(name, f);
  m.def("gelu", &ops::gelu);
  for (auto [name, f] : std::initializer_list<std::pair<const char*, Tensor (*)(const Tensor&, const Tensor&)>>{
           {"add", &ops::add}, {"sub", &ops::sub}, {"mul", &ops::mul}, {"div", &ops::div},
           {"pow", &ops::pow}, {"maximum", &ops::maximum}, {"minimum", &ops::minimum},
           {"floor_divide", &ops::floor_divide}, {"remainder", &ops::remainder}, {"fmod", &ops::fmod},
           {"eq", &ops::eq}, {"ne", &ops::ne}, {"lt", &ops::lt}, {"le", &ops::le}, {"gt", &ops::gt},
           {"ge", &ops::ge}, {"logical_and", &ops::logical_and}, {"logical_or", &ops::logical_or},
           {"logical_xor", &ops::logical_xor}})
    m.def(name, f);
  m.def("where", &ops::where);
}

}  // namespace lucid::bindings
