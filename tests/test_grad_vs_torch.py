"""Gradients of every differentiable op against PyTorch, on both streams.

The cases live in tests/autograd_refs/grad_cases.py, written once against an adapter
that both lucid and torch provide; tests/autograd_refs/grad_refs.py holds
torch's gradients for them (float64, written by make_grad_refs.py), so no torch
is needed here. Per case and stream:

* lucid's gradients in float32 against the references: max |lucid - torch| within
  ``rtol * max |torch|`` per input (rtol 1e-4 unless the case says otherwise);
* on the CPU stream, where lucid computes the op in float64, the same in float64
  within 1e-10 relative, and ``lucid.autograd.gradcheck`` (central differences,
  float64) on the same inputs;
* when torch imports, the references are recomputed live and compared too.

Completeness: every built-in autograd Function (and every unary op of ``_Unary``)
must occur in the graph of some case, and every public differentiable function
of ``lucid``, ``lucid.nn.functional`` and the fake-quant ops must be called by a
case, or be listed below as not differentiable or excluded, with the reason.
"""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
import lucid.nn.utils as nn_utils
import lucid.nn.utils.rnn as rnn_utils
import lucid.quantization as Q
from conftest import builtin_functions

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd_refs"))
import grad_cases as C  # noqa: E402
from grad_refs import REFS  # noqa: E402

CASES = {c.name: c for c in C.CASES}

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


class _Recorder:
    """A module whose attribute reads are remembered: the public functions a case calls."""

    def __init__(self, module, seen):
        self._m, self._seen = module, seen

    def __getattr__(self, name):
        value = getattr(self._m, name)
        self._seen.add((self._m.__name__, name))
        return value


class _LucidNN:
    def __init__(self, device, dtype):
        self._device, self._dtype = device, dtype

    def __getattr__(self, name):
        cls = getattr(lucid.nn, name)
        return lambda *a, **k: cls(*a, **k).to(device=self._device, dtype=self._dtype)


class LucidLib:
    """The adapter ``L`` of grad_cases.py over lucid, on one stream and dtype."""

    is_torch = False

    def __init__(self, device, dtype, seen=None):
        self.device, self.dtype = device, dtype
        seen = set() if seen is None else seen
        self.T, self.F, self.Q = _Recorder(lucid, seen), _Recorder(F, seen), _Recorder(Q, seen)
        self.nn = _LucidNN(device, dtype)
        self.rnn = _Recorder(rnn_utils, seen)
        self.linalg = _Recorder(lucid.linalg, seen)

    def leaf(self, v, requires_grad):
        return lucid.tensor(np.asarray(v, dtype=self.dtype), device=self.device, requires_grad=bool(requires_grad))

    def const(self, v):
        return lucid.tensor(np.asarray(v, dtype=self.dtype), device=self.device)

    def idx(self, v):
        return lucid.tensor(np.asarray(v, dtype=np.int64), device=self.device)

    def mask(self, v):
        return lucid.tensor(np.asarray(v, dtype=bool), device=self.device)

    def call_module(self, m, params, *args):
        for name, t in params.items():  # the inputs become the layer's parameters, graph and all
            assert name in m._parameters, name
            m._parameters[name] = t
        return m(*args)

    def grad(self, outs, wrt, ups):
        live = [(o, u) for o, u in zip(outs, ups) if o.requires_grad]
        gs = lucid.autograd.grad(tuple(o for o, _ in live), wrt, grad_outputs=tuple(u for _, u in live),
                                 allow_unused=True)
        return [None if g is None else g.to("cpu").numpy().astype(np.float64) for g in gs]


def _ref(name):
    r = REFS[name]
    inputs = [np.array(v, dtype=np.float64).reshape(s) for v, s in zip(r["inputs"], r["input_shapes"])]
    ups = [np.array(v, dtype=np.float64).reshape(s) for v, s in zip(r["upstream"], r["out_shapes"])]
    return inputs, ups, r["grads"]


def _compare(name, got, want, rtol, floor):
    assert len(got) == len(want), name
    for k, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None or not np.any(g), f"{name}: input {k}: torch has no gradient, lucid {g}"
            continue
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        g = np.zeros(w.size) if g is None else np.asarray(g).reshape(-1)
        assert g.size == w.size, f"{name}: input {k}: {g.size} gradient elements, torch {w.size}"
        err, scale = float(np.abs(g - w).max(initial=0.0)), float(np.abs(w).max(initial=0.0))
        assert err <= rtol * scale + floor, (
            f"{name}: input {k}: max |lucid - torch| = {err:.3g}, gradient scale {scale:.3g} (rtol {rtol:g})")


# Cases where lucid disagrees with torch beyond tolerance: name -> measured discrepancy.
KNOWN_BUGS: dict = {}


def _params(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[n])) if n in KNOWN_BUGS else n
            for n in names]


def _run_lucid(case, device, dtype, seen=None):
    inputs, ups, _ = _ref(case.name)
    return C.run_case(LucidLib(device, dtype, seen), case, inputs, ups)


@pytest.mark.parametrize("name", _params(sorted(CASES)))
def test_float32_gradient_matches_torch(device, name):
    case = CASES[name]
    outs, got = _run_lucid(case, device, "float32")
    assert [tuple(o.shape) for o in outs] == [tuple(s) for s in REFS[name]["out_shapes"]], name
    _compare(name, got, REFS[name]["grads"], case.rtol, 1e-7)


F64 = sorted(n for n, c in CASES.items() if c.f64 is True)


@pytest.mark.parametrize("name", _params(F64))
def test_float64_gradient_matches_torch_cpu(name):
    case = CASES[name]
    assert REFS[name]["dtype"] == "float64"
    _, got = _run_lucid(case, "cpu", "float64")
    _compare(name, got, REFS[name]["grads"], case.f64_rtol, 1e-13)


GRADCHECK = sorted(n for n, c in CASES.items() if c.f64 is True and c.gradcheck is True)


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck_float64_cpu(name):
    case = CASES[name]
    inputs, _, _ = _ref(name)
    L = LucidLib("cpu", "float64")
    xs = [L.leaf(v, g) for v, (_, _, g) in zip(inputs, case.inputs)]
    assert lucid.autograd.gradcheck(lambda *a: tuple(C.flat_outputs(case.fn(L, *a))), xs)


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed: the literals in grad_refs.py are the reference")
def test_live_torch_agrees_with_literals_and_lucid():
    """One test over every case (not one per case), so a host without torch reports a single skip."""
    failures = []
    for name in sorted(CASES):
        if name in KNOWN_BUGS:
            continue
        case = CASES[name]
        inputs, ups, want = _ref(name)
        try:
            _, live = C.run_case(C.TorchLib(case.torch_dtype), case, inputs, ups)
            _compare(name, live, want, 1e-12, 1e-14)  # the stored references are current
            _, got = _run_lucid(case, "cpu", "float32")
            _compare(name, got, live, case.rtol, 1e-7)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_references_cover_every_case():
    assert sorted(REFS) == sorted(CASES), "regenerate grad_refs.py: make_grad_refs.py"
    for name, c in CASES.items():
        assert len(REFS[name]["grads"]) == sum(g for _, _, g in c.inputs), name


def test_every_exclusion_states_its_reason():
    """Cases left out of gradcheck, and float32-only cases, say why."""
    for c in CASES.values():
        assert c.gradcheck is True or (isinstance(c.gradcheck, str) and c.gradcheck), c.name
        assert c.f64 is True or (isinstance(c.f64, str) and c.f64), c.name


# ----- completeness ---------------------------------------------------------------------------

def _graph_nodes(outs):
    """(Function class, unary op name or None) of every node reachable from outs."""
    found, stack, visited = set(), [o.grad_fn for o in outs if o.grad_fn is not None], set()
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        fn = getattr(node, "function", None)
        if fn is not None:
            found.add((fn, getattr(node.ctx, "op", None) if fn.__name__ == "_Unary" else None))
        for e in getattr(node, "edges", ()) or ():
            if e is not None and e[0] is not None:
                stack.append(e[0])
    return found


@pytest.fixture(scope="module")
def coverage():
    """What the cases reach: graph nodes and public functions called (CPU stream, float64
    where the case runs in it: a cast to float32 then records a node)."""
    nodes, called = set(), set()
    for case in C.CASES:
        inputs, _, _ = _ref(case.name)
        outs, _ = C.run_case(LucidLib("cpu", "float64" if case.f64 is True else "float32", called), case, inputs)
        nodes |= _graph_nodes(outs)
    return nodes, called


# Functions that no first-order graph contains: the recorded forms of backward kernels, which
# only a create_graph=True pass puts in a graph (tests/test_higher_order_grad.py checks them).
SECOND_ORDER_ONLY = {
    "_SliceScatter": "basic indexing's backward under create_graph (a raw slice scatter otherwise)",
    "_PoolGrad": "max / avg / adaptive pools' backward under create_graph (the raw routing otherwise)",
}
# Functions that run only across several processes; the test named checks their gradients.
MULTI_PROCESS_ONLY = {
    "_AllReduceSum": "SyncBatchNorm's statistics over 2+ ranks (one process runs BatchNorm itself): "
                     "tests/distributed/test_quantization_distributed.py checks its input gradients against "
                     "numpy batch norm of the whole batch",
}


def test_every_builtin_function_is_reached(coverage):
    nodes, _ = coverage
    reached = {fn for fn, _ in nodes}
    missing = sorted(c.__module__ + "." + c.__name__ for c in builtin_functions()
                     if c not in reached and c.__name__ not in SECOND_ORDER_ONLY
                     and c.__name__ not in MULTI_PROCESS_ONLY)
    assert not missing, f"autograd Functions no case in tests/autograd_refs/grad_cases.py reaches: {missing}"
    assert not {c.__name__ for c in reached} & set(SECOND_ORDER_ONLY), "a first-order graph reaches one: unlist it"


def test_every_unary_op_is_reached(coverage):
    from lucid._ops import elementwise

    nodes, _ = coverage
    reached = {name for fn, name in nodes if name is not None}
    table = set(elementwise._DERIVATIVE) | set(elementwise._GRADIENT)
    assert table - reached == set(), f"unary ops no case reaches: {sorted(table - reached)}"


# Public functions that are not differentiable: their outputs are integers, booleans or
# fresh values with no input to differentiate, or they only mutate a leaf / buffer.
NOT_DIFFERENTIABLE = {
    "comparison or predicate (bool output)": [
        "eq", "ne", "lt", "le", "gt", "ge", "equal", "allclose", "isclose", "isnan", "isinf", "isfinite", "all",
        "any", "logical_and", "logical_or", "logical_xor", "logical_not", "is_floating_point", "is_tensor",
        "is_grad_enabled", "is_inference_mode_enabled"],
    "integer output (indices, counts)": [
        "argmax", "argmin", "argsort", "nonzero", "count_nonzero", "bincount", "histc", "unique", "multinomial",
        "one_hot"],
    "creation or random (no input tensor to differentiate)": [
        "arange", "linspace", "eye", "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
        "full_like", "tensor", "as_tensor", "from_numpy", "rand", "rand_like", "randn", "randn_like", "randint",
        "randperm", "normal", "meshgrid", "new_empty", "new_full", "new_ones", "new_zeros", "new_tensor",
        "manual_seed"],
    "autocast state queries (no tensor)": ["is_autocast_enabled", "get_autocast_dtype"],
    "random draws parameterized by a tensor (as in torch: no gradient flows through a sample)": [
        "bernoulli", "poisson"],
    "random in-place fill of a tensor (overwrites, as in torch: no gradient to the old value)": [
        "normal_", "uniform_", "bernoulli_", "exponential_", "geometric_", "log_normal_", "cauchy_", "random_"],
    "writes a leaf without recording (parameter assignment)": ["assign_"],
    "works on .grad or parameters outside the graph (nn.utils)": [
        "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector", "vector_to_parameters"],
    "dtypes, shapes, I/O, lazy evaluation, threads": [
        "promote_types", "broadcast_shapes", "save", "load", "eval", "get_num_threads", "set_num_threads"],
    "composed functions with integer / bool / Python outputs, creation, or generator state (lucid/_info.py)": [
        "isin", "searchsorted", "bucketize", "unravel_index", "tril_indices", "triu_indices", "logspace", "numel",
        "is_nonzero", "is_complex", "result_type", "seed", "initial_seed", "get_rng_state", "set_rng_state",
        "unique_consecutive", "histogram", "get_default_dtype", "set_default_dtype",
        "set_printoptions"],
    "extra math: bool predicates, integer bitwise ops, representation steps and steps (lucid._ops.floating, bitwise)": [
        "signbit", "isposinf", "isneginf", "not_equal", "nextafter", "heaviside", "bitwise_and", "bitwise_or",
        "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "bitwise_and_", "bitwise_or_",
        "bitwise_xor_", "bitwise_not_", "bitwise_left_shift_", "bitwise_right_shift_"],
    "integer-only number theory (lucid._ops.elementwise)": ["gcd", "lcm"],
}
# Differentiable public functions without a torch case, and why.
EXCLUDED = {
    "gumbel_softmax": "a random sample: tests/test_pool3d_lp_embedding_bag.py checks its distribution, one-hot form and "
                      "straight-through gradient",
    "float_power": "a float64 result, which only the CPU stream holds; its gradient is pow's (case pow_tensor), "
                   "checked in float64 in tests/test_elementwise_math.py",
    "acosh_": "torch defines no derivative for in-place acosh; the gradient is acosh's (case unary_acosh)",
    "arccosh_": "torch defines no derivative for in-place acosh; the gradient is acosh's (case unary_acosh)",
    "asinh_": "torch defines no derivative for in-place asinh; the gradient is asinh's (case unary_asinh)",
    "arcsinh_": "torch defines no derivative for in-place asinh; the gradient is asinh's (case unary_asinh)",
    "atanh_": "torch defines no derivative for in-place atanh; the gradient is atanh's (case unary_atanh)",
    "arctanh_": "torch defines no derivative for in-place atanh; the gradient is atanh's (case unary_atanh)",
}


def _public_functions():
    import inspect

    out = {}
    for mod, names in ((lucid, dir(lucid)), (F, dir(F)), (Q, ["fake_quantize", "fake_quantize_learnable"]),
                       (rnn_utils, rnn_utils.__all__), (nn_utils, nn_utils.__all__)):
        for n in names:
            v = getattr(mod, n)
            if n.startswith("_") or inspect.isclass(v) or inspect.ismodule(v) or not callable(v):
                continue
            out[(mod.__name__, n)] = v
    return out


def test_every_public_differentiable_function_has_a_case(coverage):
    _, called = coverage
    public = _public_functions()
    covered = {id(public[k]) for k in called if k in public}
    classified = {n for group in NOT_DIFFERENTIABLE.values() for n in group} | set(EXCLUDED)
    missing = sorted(f"{m}.{n}" for (m, n), v in public.items() if id(v) not in covered and n not in classified)
    assert not missing, f"public functions with no gradient case and no exclusion: {missing}"
    stale = sorted(n for n in classified if not any(n == k[1] for k in public))
    assert not stale, f"exclusions naming no public function: {stale}"


# Tensor methods and properties with no public function of the same name (those are checked
# above through the function): each is differentiable and called by the case named, or not.
TENSOR_ONLY = {
    "T": "case tensor_T_cpu", "mT": "case tensor_mT", "mH": "case tensor_mT", "detach": "case tensor_casts_detach (no gradient by definition)",
    "cpu": "case tensor_T_cpu",
    "float": "case tensor_casts_detach", "half": "case tensor_casts_detach", "bfloat16": "case tensor_casts_detach",
    "type": "case tensor_casts_detach",
    "double": "the float64 cast (_To, reached by case to_dtype's float64 run); float64 is CPU-only, "
              "so a case shared by both streams cannot call it",
    "gpu": "a move between lucid's streams (_To); torch has no MLX stream to compare with",
    "bool": "bool output", "int": "integer output", "long": "integer output",
    "byte": "integer output", "char": "integer output", "short": "integer output",
    "data": "the values without the graph (tests/test_tensor_object.py)", "data_ptr": "metadata",
    "element_size": "metadata", "itemsize": "metadata", "nbytes": "metadata", "storage_offset": "metadata",
    "stride": "metadata",
    "detach_": "cuts the graph in place", "requires_grad_": "flags a leaf", "retain_grad": "flags a tensor",
    "register_hook": "hooks (tests/test_core.py)", "backward": "the engine itself",
    "dim": "metadata", "size": "metadata", "numel": "metadata", "is_contiguous": "metadata",
    "item": "a Python number", "tolist": "Python numbers", "numpy": "a numpy array",
    "shape": "metadata", "ndim": "metadata", "dtype": "metadata", "device": "metadata",
    "is_leaf": "metadata", "is_metal": "metadata", "requires_grad": "metadata", "grad": "the gradient slot", "grad_fn": "the graph node",
}


def test_every_tensor_only_method_is_classified():
    public = {n for (m, n) in _public_functions()}
    methods = {n for n in dir(lucid.Tensor) if not n.startswith("_")}
    missing = sorted(methods - public - set(TENSOR_ONLY))
    assert not missing, f"Tensor methods with no function of their name, no case and no reason: {missing}"
    assert not set(TENSOR_ONLY) - methods, f"TENSOR_ONLY names no Tensor attribute: {sorted(set(TENSOR_ONLY) - methods)}"
    for name, why in TENSOR_ONLY.items():
        if why.startswith("case "):
            assert why.split()[1] in CASES, (name, why)
