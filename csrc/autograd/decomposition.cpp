// inv, solve, det, cholesky, eigvalsh, svdvals and solve_triangular recorded
// in C++; see decomposition.h.
#include "autograd/decomposition.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/decomposition.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/reduction.h"
#include "ops/scalar.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {


bool recording(py::handle a) { return tensor_object(a.ptr())->requires_grad && grad_enabled(); }

// ----- the helpers of lucid/linalg/decomposition.py, nothing recorded ---------------------------
// The arithmetic is the Python formulas' ops:: calls in their order. tril / triu,
// diagonal and diag_embed only select values (and write +0), so they are built
// from a host mask or a strided slice rather than Python's compositions
// (aranges compared, index_select, cat with zeros): the same values, bit for bit.

// _mT: the last two axes swapped (a permuted view, as shape.transpose gives).
Tensor mT(const Tensor& t) {
  std::vector<int64_t> order(static_cast<size_t>(t.ndim()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::swap(order[order.size() - 1], order[order.size() - 2]);
  return ops::permute(t, order);
}

// x with a new axis of size 1 at `axis` (negative: counted from the end of the result).
Tensor unsqueeze(const Tensor& x, int axis) {
  Shape s = x.shape();
  int at = axis < 0 ? static_cast<int>(s.size()) + 1 + axis : axis;
  s.insert(s.begin() + at, 1);
  return ops::reshape(x, s);
}

// x without its last axis, of size 1 (shape.squeeze(x, -1)).
Tensor squeeze_last(const Tensor& x) {
  Shape s = x.shape();
  s.pop_back();
  return ops::reshape(x, s);
}

Tensor number(double v, const Tensor& like) { return ops::scalar_tensor(v, ops::ScalarKind::Real, like); }

// The (rows, cols) mask col - row <= diagonal (lower) or >= diagonal, on `device`
// (what shape._triangle compares from two aranges; eye(n) > 0 is the case
// rows = cols, diagonal 0, both bounds).
Tensor band_mask(int64_t rows, int64_t cols, int64_t diagonal, bool lower, bool upper, Device device) {
  Tensor m = Tensor::empty_cpu({rows, cols}, DType::Bool);
  bool* p = m.data<bool>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t off = c - r;
      p[r * cols + c] = (!lower || off <= diagonal) && (!upper || off >= diagonal);
    }
  return ops::to_device(m, device);
}

Tensor eye_mask(int64_t n, Device device) { return band_mask(n, n, 0, true, true, device); }

// shape.tril / shape.triu: where(mask, x, 0-d zero of x's dtype).
Tensor triangle(const Tensor& x, int64_t diagonal, bool lower) {
  const Shape& s = x.shape();
  Tensor mask = band_mask(s[s.size() - 2], s[s.size() - 1], diagonal, lower, !lower, x.device());
  return ops::where(mask, x, ops::full({}, 0.0, x.dtype(), x.device()));
}

// diagonal(x, 0, -2, -1) of square matrices (…, n, n) -> (…, n): every (n + 1)-th
// element of each matrix read flat (the elements _ops.diagonals.diagonal selects).
Tensor diagonal(const Tensor& x) {
  Shape flat(x.shape().begin(), x.shape().end() - 1);
  int64_t n = flat.back();
  flat.back() = n * n;
  Tensor f = ops::reshape(x, flat);
  std::vector<int64_t> starts(flat.size(), 0), steps(flat.size(), 1);
  steps.back() = n + 1;
  Shape lengths = flat;
  lengths.back() = n;
  return ops::slice(f, starts, steps, lengths);
}

// diag_embed(v): (…, n) -> (…, n, n) with v on the diagonal and +0 elsewhere.
Tensor diag_embed(const Tensor& v) {
  return ops::where(eye_mask(v.shape().back(), v.device()), unsqueeze(v, -1),
                    ops::full({}, 0.0, v.dtype(), v.device()));
}

// _scale_matrices: c (…) times each matrix of m (…, n, n).
Tensor scale_matrices(const Tensor& c, const Tensor& m) { return ops::mul(unsqueeze(unsqueeze(c, -1), -1), m); }

// _phi: the lower triangle of x with its diagonal halved.
Tensor phi(const Tensor& x) {
  return ops::sub(triangle(x, 0, true), ops::mul(number(0.5, x), diag_embed(diagonal(x))));
}

// ----- first-order formulas: each Python backward's path without grad mode ---------------------

// `_Inv.backward`: -A^-T G A^-T; saved: (A^-1).
InputGrads inv_backward(const CppNode& n, const Tensor& g) {
  Tensor yt = mT(n.saved_handles[0]);
  InputGrads r(1);
  r.grad[0] = ops::neg(ops::matmul(ops::matmul(yt, g), yt));
  return r;
}

// `_Solve.backward`; saved: (A, X); params: (left, vector B); input_shape: B's shape.
InputGrads solve_backward(const CppNode& n, const Tensor& grad) {
  const Tensor& a = n.saved_handles[0];
  Tensor x = n.saved_handles[1], g = grad;
  bool left = n.params[0] != 0, vector = n.params[1] != 0;
  if (vector) {
    x = unsqueeze(x, -1);
    g = unsqueeze(g, -1);
  }
  Tensor gb = ops::solve(mT(a), g, left);
  InputGrads r(2);
  if (needs(n, 0))
    r.grad[0] = sum_to_shape(ops::neg(left ? ops::matmul(gb, mT(x)) : ops::matmul(mT(x), gb)), a.shape());
  if (vector) gb = squeeze_last(gb);
  if (needs(n, 1)) r.grad[1] = sum_to_shape(gb, n.input_shape);
  return r;
}

// `_Det.backward`: g det(A) A^-T, or the SVD's cofactors when A^-1 raises; saved: (A, det A).
InputGrads det_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &d = n.saved_handles[1];
  InputGrads r(1);
  Tensor gd = ops::mul(g, d);
  std::optional<Tensor> inverse;
  try {
    inverse = ops::inv(a);
  } catch (const LinAlgError&) {
  }
  if (inverse) {
    r.grad[0] = scale_matrices(gd, mT(*inverse));
    return r;
  }
  std::vector<Tensor> usv = ops::svd(a, false, true);
  const Tensor &u = usv[0], &s = usv[1], &vh = usv[2];
  Tensor spread = ops::where(eye_mask(s.shape().back(), s.device()), number(1.0, s), unsqueeze(s, -2));
  Tensor others = ops::prod(spread, std::vector<int64_t>{spread.ndim() - 1}, false, std::nullopt);  // prod_{j != i} s_j
  Tensor signs = ops::mul(ops::det(u), ops::det(vh));
  r.grad[0] = scale_matrices(ops::mul(g, signs), ops::matmul(ops::mul(u, unsqueeze(others, -2)), vh));
  return r;
}

// `_Cholesky.backward`: sym(L^-T phi(L^T gL) L^-1); saved: (the factor); params: (upper).
InputGrads cholesky_backward(const CppNode& n, const Tensor& g) {
  const Tensor& f = n.saved_handles[0];
  bool upper = n.params[0] != 0;
  Tensor low = upper ? mT(f) : f, gl = upper ? mT(g) : g;
  Tensor p = phi(ops::matmul(mT(low), gl));
  Tensor s = ops::solve_triangular(mT(low), p, true, true, false);
  s = ops::solve_triangular(low, s, false, false, false);
  InputGrads r(1);
  r.grad[0] = ops::mul(number(0.5, s), ops::add(s, mT(s)));
  return r;
}

// `_Eigvalsh.backward`: V diag(g) V^T; saved: (A, V).
InputGrads eigvalsh_backward(const CppNode& n, const Tensor& g) {
  const Tensor& v = n.saved_handles[1];
  InputGrads r(1);
  r.grad[0] = ops::matmul(ops::mul(v, unsqueeze(g, -2)), mT(v));
  return r;
}

// `_Svdvals.backward`: U diag(g) Vh; saved: (A, U, Vh).
InputGrads svdvals_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(1);
  r.grad[0] = ops::matmul(ops::mul(n.saved_handles[1], unsqueeze(g, -2)), n.saved_handles[2]);
  return r;
}

// `_SolveTriangular.backward`; saved: (A, X); params: (upper, left, unitriangular);
// input_shape: B's shape.
InputGrads solve_triangular_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &x = n.saved_handles[1];
  bool upper = n.params[0] != 0, left = n.params[1] != 0, unit = n.params[2] != 0;
  Tensor gb = ops::solve_triangular(mT(a), g, !upper, left, unit);
  InputGrads r(2);
  if (needs(n, 0)) {
    Tensor ga = ops::neg(left ? ops::matmul(gb, mT(x)) : ops::matmul(mT(x), gb));
    ga = upper ? triangle(ga, unit ? 1 : 0, false) : triangle(ga, unit ? -1 : 0, true);
    r.grad[0] = sum_to_shape(ga, a.shape());
  }
  if (needs(n, 1)) r.grad[1] = sum_to_shape(gb, n.input_shape);
  return r;
}

enum DecompositionKind { kInv, kSolve, kDet, kCholesky, kEigvalsh, kSvdvals, kSolveTriangular };

NodeKind decomposition_kinds[] = {{"InvBackward", "inv", nullptr, inv_backward},
                    {"SolveBackward", "solve", nullptr, solve_backward},
                    {"DetBackward", "det", nullptr, det_backward},
                    {"CholeskyBackward", "cholesky", nullptr, cholesky_backward},
                    {"EigvalshBackward", "eigvalsh", nullptr, eigvalsh_backward},
                    {"SvdvalsBackward", "svdvals", nullptr, svdvals_backward},
                    {"SolveTriangularBackward", "solve_triangular", nullptr, solve_triangular_backward}};

// ----- entry points: the ops:: routine, then (when recording) the node -------------------------

// One input A, its result saved (inv, cholesky) or (A, result) (det).
py::object one_input(py::handle a, const char* fn, DecompositionKind kind, Tensor (*run)(const Tensor&), bool save_input) {
  py::object out = wrapped(run(tensor_arg(a.ptr(), fn, "A")));
  if (recording(a)) {
    PyObject* in = a.ptr();
    PyObject* saved[2] = {save_input ? a.ptr() : out.ptr(), out.ptr()};
    record_node(decomposition_kinds[kind], &in, 1, saved, save_input ? 2 : 1, out.ptr());
  }
  return out;
}

// solve / solve_triangular: inputs (A, B), saved (A, X), B's shape kept.
CppNode* record_two(DecompositionKind kind, py::handle a, py::handle b, const py::object& out) {
  if (!((tensor_object(a.ptr())->requires_grad || tensor_object(b.ptr())->requires_grad) && grad_enabled()))
    return nullptr;
  PyObject* inputs[2] = {a.ptr(), b.ptr()};
  PyObject* saved[2] = {a.ptr(), out.ptr()};
  CppNode& n = record_node(decomposition_kinds[kind], inputs, 2, saved, 2, out.ptr());
  n.input_shape = handle_of(b.ptr()).shape();
  return &n;
}

py::object solve(py::handle a, py::handle b, bool left) {
  const Tensor& ha = tensor_arg(a.ptr(), "linalg.solve", "A");
  const Tensor& hb = tensor_arg(b.ptr(), "linalg.solve", "B");
  // _vector_case: B is a column (…, n) when 1-D or shaped as A without its last axis.
  bool vector = hb.ndim() == 1 || (hb.ndim() == ha.ndim() - 1 &&
                                   Shape(ha.shape().begin(), ha.shape().end() - 1) == hb.shape());
  py::object out = wrapped(ops::solve(ha, hb, left));
  if (CppNode* n = record_two(kSolve, a, b, out)) n->params = {left ? 1 : 0, vector ? 1 : 0};
  return out;
}

py::object solve_triangular(py::handle a, py::handle b, bool upper, bool left, bool unit) {
  const char* fn = "linalg.solve_triangular";
  py::object out =
      wrapped(ops::solve_triangular(tensor_arg(a.ptr(), fn, "A"), tensor_arg(b.ptr(), fn, "B"), upper, left, unit));
  if (CppNode* n = record_two(kSolveTriangular, a, b, out)) n->params = {upper ? 1 : 0, left ? 1 : 0, unit ? 1 : 0};
  return out;
}

py::object cholesky(py::handle a, bool upper) {
  py::object out = wrapped(ops::cholesky(tensor_arg(a.ptr(), "linalg.cholesky", "A"), upper));
  if (recording(a)) {
    PyObject* in = a.ptr();
    PyObject* saved = out.ptr();
    record_node(decomposition_kinds[kCholesky], &in, 1, &saved, 1, out.ptr()).params = {upper ? 1 : 0};
  }
  return out;
}

// Recording, the eigenvectors are computed too (saved for the formula; errors
// then name linalg.eigh, as the Python Function's forward did).
py::object eigvalsh(py::handle a, const std::string& uplo) {
  const Tensor& h = tensor_arg(a.ptr(), "linalg.eigvalsh", "A");
  if (!recording(a)) return wrapped(ops::eigh(h, uplo, false).first);
  auto [w, v] = ops::eigh(h, uplo, true);
  py::object out = wrapped(std::move(w)), vectors = wrapped(std::move(v));
  PyObject* in = a.ptr();
  PyObject* saved[2] = {a.ptr(), vectors.ptr()};
  record_node(decomposition_kinds[kEigvalsh], &in, 1, saved, 2, out.ptr()).params = {uplo == "U" ? 1 : 0};
  return out;
}

py::object svdvals(py::handle a) {
  const Tensor& h = tensor_arg(a.ptr(), "linalg.svdvals", "A");
  if (!recording(a)) return wrapped(std::move(ops::svd(h, false, false)[0]));
  std::vector<Tensor> usv = ops::svd(h, false, true);
  py::object out = wrapped(std::move(usv[1])), u = wrapped(std::move(usv[0])), vh = wrapped(std::move(usv[2]));
  PyObject* in = a.ptr();
  PyObject* saved[3] = {a.ptr(), u.ptr(), vh.ptr()};
  record_node(decomposition_kinds[kSvdvals], &in, 1, saved, 3, out.ptr());
  return out;
}

// ---- The decompositions of several results: eigh, slogdet, svd, qr, lu_factor.
// Recorded in C++ (record_outputs), their formula is the Python Function's
// (lucid/linalg/decomposition.py) at every order: long closed forms in lucid ops
// (with data-dependent checks), dominated by the O(n^3) kernels they call.
// What the formulas read beyond the saved tensors: svd's full_matrices
// (params[0]); qr's mode (params[0]: 0 reduced, 1 complete, 2 r) and input
// shape (input_shape).

NodeKind eigh_kind = {"EighBackward", "eigh", nullptr, nullptr};
NodeKind slogdet_kind = {"SlogdetBackward", "slogdet", nullptr, nullptr};
NodeKind svd_kind = {"SVDBackward", "svd", nullptr, nullptr};
NodeKind qr_kind = {"QRBackward", "qr", nullptr, nullptr};
NodeKind lu_factor_kind = {"LUFactorBackward", "lu_factor", nullptr, nullptr};

py::tuple eigh_entry(py::handle a, const std::string& uplo) {
  auto [w, v] = ops::eigh(tensor_arg(a.ptr(), "linalg.eigh", "A"), uplo, true);
  py::object ow = wrapped(std::move(w)), ov = wrapped(std::move(v));
  if (recording(a)) {
    PyObject* input = a.ptr();
    PyObject* outs[2] = {ow.ptr(), ov.ptr()};
    record_outputs(eigh_kind, &input, 1, outs, 2, outs, 2);
  }
  return py::make_tuple(ow, ov);
}

py::tuple slogdet_entry(py::handle a) {
  auto [sign, logabs] = ops::slogdet(tensor_arg(a.ptr(), "linalg.slogdet", "A"));
  py::object os = wrapped(std::move(sign)), ol = wrapped(std::move(logabs));
  if (recording(a)) {
    PyObject* input = a.ptr();
    PyObject* outs[2] = {nullptr, ol.ptr()};  // the sign is piecewise constant: no gradient
    record_outputs(slogdet_kind, &input, 1, &input, 1, outs, 2);
  }
  return py::make_tuple(os, ol);
}

py::tuple svd_entry(py::handle a, bool full_matrices) {
  std::vector<Tensor> usv = ops::svd(tensor_arg(a.ptr(), "linalg.svd", "A"), full_matrices, true);
  py::object ou = wrapped(usv[0]), os = wrapped(usv[1]), ov = wrapped(usv[2]);
  if (recording(a)) {
    PyObject* input = a.ptr();
    PyObject* outs[3] = {ou.ptr(), os.ptr(), ov.ptr()};
    record_outputs(svd_kind, &input, 1, outs, 3, outs, 3).params = {full_matrices ? 1 : 0};
  }
  return py::make_tuple(ou, os, ov);
}

py::tuple qr_entry(py::handle a, const std::string& mode) {
  const Tensor& h = tensor_arg(a.ptr(), "linalg.qr", "A");
  auto [q, r] = ops::qr(h, mode);
  py::object oq = wrapped(std::move(q)), orr = wrapped(std::move(r));
  if (recording(a)) {
    PyObject* input = a.ptr();
    PyObject* outs[2] = {oq.ptr(), orr.ptr()};
    CppNode& n = record_outputs(qr_kind, &input, 1, outs, 2, outs, 2);
    n.params = {mode == "reduced" ? 0 : mode == "complete" ? 1 : 2};
    n.input_shape = h.shape();
  }
  return py::make_tuple(oq, orr);
}

py::tuple lu_factor_entry(py::handle a, bool check) {
  auto [lu, piv] = ops::lu_factor(tensor_arg(a.ptr(), "linalg.lu_factor", "A"), check);
  py::object olu = wrapped(std::move(lu)), opiv = wrapped(std::move(piv));
  if (recording(a)) {
    PyObject* input = a.ptr();
    PyObject* outs[2] = {olu.ptr(), opiv.ptr()};  // the pivots are integers: no gradient
    record_outputs(lu_factor_kind, &input, 1, outs, 2, outs, 2);
  }
  return py::make_tuple(olu, opiv);
}

}  // namespace

void init_decomposition(py::module_& m) {
  m.def("autograd_inv", [](py::handle a) { return one_input(a, "linalg.inv", kInv, &ops::inv, false); });
  m.def("autograd_det", [](py::handle a) { return one_input(a, "linalg.det", kDet, &ops::det, true); });
  m.def("autograd_solve", &solve);
  m.def("autograd_cholesky", &cholesky);
  m.def("autograd_eigvalsh", &eigvalsh);
  m.def("autograd_svdvals", &svdvals);
  m.def("autograd_solve_triangular", &solve_triangular);
  // lucid/linalg/decomposition.py, at import: the Functions whose recorded
  // formulas serve create_graph, in the order of `DecompositionKind`.
  m.def("_register_decomposition", [](py::args functions) {
    if (functions.size() != sizeof(decomposition_kinds) / sizeof(decomposition_kinds[0]))
      throw TypeError("_register_decomposition: expected one Function per op recorded in C++");
    for (size_t i = 0; i < functions.size(); ++i) decomposition_kinds[i].function = py::object(functions[i]).release().ptr();
  });
  m.def("autograd_eigh", &eigh_entry);
  m.def("autograd_slogdet", &slogdet_entry);
  m.def("autograd_svd", &svd_entry);
  m.def("autograd_qr", &qr_entry);
  m.def("autograd_lu_factor", &lu_factor_entry);
  // lucid/linalg/decomposition.py, at import: their Functions, whose formulas serve every order.
  m.def("_register_decomposition_results", [](py::object eigh, py::object slogdet, py::object svd, py::object qr,
                                              py::object lu_factor) {
    eigh_kind.function = eigh.release().ptr();
    slogdet_kind.function = slogdet.release().ptr();
    svd_kind.function = svd.release().ptr();
    qr_kind.function = qr.release().ptr();
    lu_factor_kind.function = lu_factor.release().ptr();
  });
}

}  // namespace lucid::autograd
