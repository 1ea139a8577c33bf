// The int4_pack family (ops/int4_pack.h).
#include "bindings/common.h"
#include "ops/int4_pack.h"

namespace lucid::bindings {

void init_int4_pack(py::module_& m) {
  m.def("pack_int4", &ops::pack_int4);
  m.def("unpack_int4", &ops::unpack_int4);
}

}  // namespace lucid::bindings
