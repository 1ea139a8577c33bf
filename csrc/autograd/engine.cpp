// The backward walk; see engine.h. Its steps mirror, one for one, the Python
// walk it replaced (same node order, same order of sums), so every gradient
// has the bits it had before.
#include "autograd/engine.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/tensor.h"

namespace lucid::autograd {

namespace {

// Attribute names, interned once. Raw pointers on purpose: they live as long
// as the interpreter, and no destructor may run after it has finalized.
struct Names {
  PyObject *edges, *inputs, *num_outputs, *function, *ctx, *backward, *grad_fn, *output_nr, *requires_grad,
      *retain_grad, *grad, *impl, *detach, *to, *dtype, *shape, *released, *saved, *once_differentiable, *name,
      *hooks, *node_hooks, *leaf_hooks, *run_hooks, *check_grads, *hold, *backward_refusing;
};

const Names& names() {
  static const Names n = [] {
    auto s = [](const char* text) { return PyUnicode_InternFromString(text); };
    return Names{s("edges"), s("inputs"), s("num_outputs"), s("function"), s("ctx"), s("backward"), s("grad_fn"),
                 s("_output_nr"), s("_requires_grad"), s("_retain_grad"), s("grad"), s("_impl"), s("detach"),
                 s("to"), s("dtype"), s("shape"), s("_released"), s("_saved"), s("once_differentiable"),
                 s("name"), s("_hooks"), s("node_hooks"), s("leaf_hooks"), s("run_hooks"), s("check_grads"),
                 s("_hold"), s("_backward_refusing")};
  }();
  return n;
}

py::object get(py::handle o, PyObject* name) { return steal(PyObject_GetAttr(o.ptr(), name)); }

void set(py::handle o, PyObject* name, py::handle value) {
  if (PyObject_SetAttr(o.ptr(), name, value.ptr()) < 0) throw py::error_already_set();
}

bool truthy(py::handle o) {
  int r = PyObject_IsTrue(o.ptr());
  if (r < 0) throw py::error_already_set();
  return r == 1;
}

py::object add(py::handle a, py::handle b) { return steal(PyNumber_Add(a.ptr(), b.ptr())); }

// id(t), the key Python's dicts of tensors use.
py::object id_of(py::handle t) { return steal(PyLong_FromVoidPtr(t.ptr())); }

bool in_dict(py::handle dict, py::handle key) {
  int r = PyDict_Contains(dict.ptr(), key.ptr());
  if (r < 0) throw py::error_already_set();
  return r == 1;
}

// `method(*args)` on a Python object.
template <class... Args>
py::object call(py::handle owner, PyObject* method, Args&&... args) {
  return get(owner, method)(std::forward<Args>(args)...);
}

std::string name_of(py::handle node) { return py::str(call(node, names().name)); }

// One pass's state: gradients waiting per node output, in the order the sums
// happen (a later gradient is added to the earlier total, as before).
class Walk {
 public:
  explicit Walk(const WalkArgs& a) : a_(a), has_wanted_(!a.wanted.is_none()) {}

  void run() {
    const Names& n = names();
    std::vector<py::object> roots;
    size_t count = py::len(a_.outputs);
    if (py::len(a_.grad_outputs) < count) count = py::len(a_.grad_outputs);
    for (size_t i = 0; i < count; ++i) {
      py::object out = a_.outputs[i], g = a_.grad_outputs[i];
      if (!truthy(get(out, n.requires_grad)))
        throw RuntimeError("backward(): a tensor that does not require grad has no graph to walk");
      py::object fn = get(out, n.grad_fn);
      if (fn.is_none()) {
        if (a_.hooked && has_leaf_hooks(out))
          hold(out, g);
        else
          deliver(out, g, true);
      } else {
        accumulate(fn, py::cast<size_t>(get(out, n.output_nr)), g);
      }
      roots.push_back(fn);
    }
    for (const py::object& node : topological_order(roots)) visit(node);
  }

 private:
  const WalkArgs& a_;
  bool has_wanted_;
  std::unordered_map<PyObject*, std::vector<py::object>> waiting_;  // node -> gradient per output

  // Depth-first from the roots; a node comes after every node that feeds it
  // a gradient. Reversed post-order, exactly as the Python walk built it.
  std::vector<py::object> topological_order(const std::vector<py::object>& roots) {
    const Names& n = names();
    std::vector<py::object> order;
    std::unordered_set<PyObject*> seen;
    std::vector<std::pair<py::object, bool>> stack;
    for (const py::object& r : roots)
      if (!r.is_none()) stack.emplace_back(r, false);
    while (!stack.empty()) {
      auto [node, processed] = std::move(stack.back());
      stack.pop_back();
      if (processed) {
        order.push_back(std::move(node));
        continue;
      }
      if (!seen.insert(node.ptr()).second) continue;
      py::object edges = get(node, n.edges);
      stack.emplace_back(node, true);
      for (py::handle edge : edges) {
        if (edge.is_none()) continue;
        py::object fn = py::reinterpret_borrow<py::tuple>(edge)[0];
        if (!fn.is_none() && !seen.count(fn.ptr())) stack.emplace_back(fn, false);
      }
    }
    return {order.rbegin(), order.rend()};
  }

  void accumulate(const py::object& fn, size_t nr, const py::object& g) {
    std::vector<py::object>& slots = waiting_[fn.ptr()];
    if (slots.size() <= nr) slots.resize(nr + 1);
    slots[nr] = slots[nr] ? add(slots[nr], g) : g;
  }

  bool has_leaf_hooks(py::handle t) {
    return truthy(call(get(a_.engine, names().hooks), names().leaf_hooks, t));
  }

  void hold(py::handle t, py::handle g) { call(a_.engine, names().hold, a_.held, t, g); }

  // A gradient reaches a tensor the caller asked about (autograd.grad) or a
  // leaf (its .grad; with create_graph the gradient keeps its graph).
  void deliver(py::handle t, const py::object& g, bool leaf) {
    if (has_wanted_) {
      py::object key = id_of(t);
      if (in_dict(a_.wanted, key)) {
        PyObject* prev = PyDict_GetItemWithError(a_.results.ptr(), key.ptr());
        if (!prev && PyErr_Occurred()) throw py::error_already_set();
        a_.results[key] = prev ? add(prev, g) : g;
      }
      return;
    }
    if (!leaf) return;
    const Names& n = names();
    py::object current = get(t, n.grad);
    set(t, n.grad, current.is_none() ? (a_.create_graph ? g : call(g, n.detach)) : add(current, g));
  }

  void visit(const py::object& node) {
    const Names& n = names();
    auto found = waiting_.find(node.ptr());
    if (found == waiting_.end()) return;  // nothing reached this node
    std::vector<py::object> grads = std::move(found->second);
    waiting_.erase(found);
    size_t num_outputs = py::cast<size_t>(get(node, n.num_outputs));
    grads.resize(num_outputs);
    bool any = false;
    for (const py::object& g : grads) any = any || static_cast<bool>(g);
    if (!any) return;

    py::tuple grad_args(num_outputs);
    for (size_t i = 0; i < num_outputs; ++i) {
      py::object g = grads[i] ? grads[i] : py::none();
      if (a_.hooked && grads[i]) {
        py::object hooks = call(get(a_.engine, n.hooks), n.node_hooks, node, i);
        if (truthy(hooks)) g = call(get(a_.engine, n.hooks), n.run_hooks, hooks, g);
      }
      grad_args[i] = g;
    }
    py::object returned;
    if (!a_.create_graph && has_cpp_formula(node.ptr())) {
      returned = cpp_backward(node.ptr(), grad_args);  // recorded in C++: the formula against ops::
    } else {
      py::object ctx = get(node, n.ctx), function = get(node, n.function);
      if (function.is_none())  // a CppNode whose op's Python module was never imported (a direct `_C` call)
        throw RuntimeError(name_of(node) + ": its Python formula is not registered; import the lucid module "
                           "that defines the op (e.g. lucid.quantization) before differentiating through it");
      if (a_.create_graph && truthy(steal(PyObject_GetAttr(function.ptr(), n.once_differentiable))))
        returned = call(a_.engine, n.backward_refusing, node, grad_args);
      else
        returned = get(function, n.backward)(ctx, *grad_args);
    }
    py::tuple in_grads = py::isinstance<py::tuple>(returned) ? py::reinterpret_borrow<py::tuple>(returned)
                                                             : py::make_tuple(returned);
    if (a_.anomaly) call(get(a_.engine, n.hooks), n.check_grads, node, in_grads);

    py::tuple inputs = get(node, n.inputs), edges = get(node, n.edges);
    if (in_grads.size() < inputs.size())
      throw RuntimeError(name_of(node) + ": backward returned " + std::to_string(in_grads.size()) +
                         " gradients for " + std::to_string(inputs.size()) + " forward arguments");
    size_t m = std::min({inputs.size(), edges.size(), in_grads.size()});
    for (size_t j = 0; j < m; ++j) {
      py::object t = inputs[j], g = in_grads[j];
      if (t.is_none() || g.is_none()) continue;
      py::tuple edge = edges[j];
      py::object fn = edge[0];
      g = fit(node, t, g);
      if (fn.is_none() ? false : truthy(get(t, n.retain_grad))) {
        py::object current = get(t, n.grad);
        set(t, n.grad, current.is_none() ? g : add(current, g));
      }
      if (fn.is_none() && a_.hooked && has_leaf_hooks(t))
        hold(t, g);
      else if (fn.is_none() || (has_wanted_ && in_dict(a_.wanted, id_of(t))))
        deliver(t, g, fn.is_none());
      if (!fn.is_none()) accumulate(fn, py::cast<size_t>(edge[1]), g);
    }
    if (!a_.retain_graph) {
      py::object ctx = get(node, n.ctx);
      set(ctx, n.released, py::bool_(true));
      set(ctx, n.saved, py::tuple());
    }
  }

  // Each gradient must have its input's shape, and takes its input's dtype
  // (as in PyTorch's engine), so that backward formulas need not cast.
  py::object fit(py::handle node, py::handle t, const py::object& g) {
    const Names& n = names();
    const Tensor gi = py::cast<Tensor>(get(g, n.impl));
    const Tensor ti = py::cast<Tensor>(get(t, n.impl));
    if (gi.shape() != ti.shape())
      throw RuntimeError(name_of(node) + ": gradient of shape " + std::string(py::str(get(g, n.shape))) +
                         " for an input of shape " + std::string(py::str(get(t, n.shape))));
    if (gi.dtype() == ti.dtype()) return g;
    return call(g, n.to, get(t, n.dtype));
  }
};

}  // namespace

void walk(const WalkArgs& args) { Walk(args).run(); }

}  // namespace lucid::autograd
