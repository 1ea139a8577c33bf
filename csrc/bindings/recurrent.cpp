// Recurrent layers: a whole LSTM or GRU layer (one direction) forward and backward.
#include "bindings/common.h"
#include "ops/recurrent.h"

namespace lucid::bindings {

void init_recurrent(py::module_& m) {
  m.def("lstm_layer_forward", &ops::lstm_layer_forward, py::arg("gx"), py::arg("w_hh"), py::arg("h0"),
        py::arg("c0"), py::arg("reverse") = false);
  m.def("lstm_layer_backward", &ops::lstm_layer_backward, py::arg("d_out"), py::arg("d_h_n"), py::arg("d_c_n"),
        py::arg("w_hh"), py::arg("h0"), py::arg("c0"), py::arg("out"), py::arg("acts"), py::arg("cells"),
        py::arg("reverse") = false);
  m.def("gru_layer_forward", &ops::gru_layer_forward, py::arg("gx"), py::arg("w_hh"), py::arg("b_hh"), py::arg("h0"),
        py::arg("reverse") = false);
  m.def("gru_layer_backward", &ops::gru_layer_backward, py::arg("d_out"), py::arg("d_h_n"), py::arg("w_hh"),
        py::arg("has_bias"), py::arg("h0"), py::arg("out"), py::arg("acts"), py::arg("hn"), py::arg("reverse") = false);
}

}  // namespace lucid::bindings
