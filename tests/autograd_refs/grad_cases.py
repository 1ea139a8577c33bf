"""Gradient cases shared by the reference generator (PyTorch) and the test (lucid).

Each case is a function ``fn(L, *inputs)`` written once against a small adapter
``L`` that both frameworks provide: ``L.T`` (the top-level module: ``torch`` or
``lucid``, with the few names that differ mapped), ``L.F`` (``nn.functional``),
``L.Q`` (lucid.quantization's fake-quant functions; on torch the matching
``fake_quantize_*`` ops), ``L.nn`` (layers), ``L.idx`` / ``L.mask`` / ``L.const``
(index, boolean and float constants on the case's device and dtype),
``L.call_module(m, params, *args)`` (runs a layer with the given tensors as its
parameters, so their gradients are the inputs' gradients) and ``L.is_torch``.

Inputs are drawn from a numpy generator seeded by the case name and rounded to
float32, so the float64 references are exact gradients at the very values the
float32 run sees. Kinds: ``n`` normal, kept 0.03 away from 0 and +-1 (the kinks
of relu, abs, hardtanh ...); ``pos`` in [0.5, 2]; ``unit`` in +-[0.05, 0.8];
``prob`` in [0.1, 0.9]; ``dist`` rows on the last axis summing to 1;
``logdist`` their logs. An input with ``grad=False`` is a constant (targets).

This module imports numpy only: the generator runs where lucid is absent, the
test where torch usually is.
"""
from __future__ import annotations

import zlib

import numpy as np


class Case:
    def __init__(self, name, inputs, fn, *, f64=True, gradcheck=True, rtol=1e-4, f64_rtol=1e-10,
                 torch_dtype="float64", note=""):
        self.name = name
        self.inputs = [(tuple(s[0]), s[1] if len(s) > 1 else "n", s[2] if len(s) > 2 else True) for s in inputs]
        self.fn = fn
        self.f64 = f64  # True: lucid computes this op in float64 on the CPU stream; else why not
        self.gradcheck = gradcheck  # True, or a string: why finite differences do not apply
        self.rtol = rtol  # float32: max |lucid - ref| <= rtol * max |ref| (+ a tiny floor)
        self.f64_rtol = f64_rtol  # the same in float64 (CPU stream)
        self.torch_dtype = torch_dtype  # the reference's dtype (float32 where torch only has that)
        self.note = note


def make_inputs(case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    out = []
    for shape, kind, _ in case.inputs:
        if kind == "n":
            a = rng.normal(size=shape)
            for k in (0.0, 1.0, -1.0):  # keep away from kinks
                near = np.abs(a - k) < 0.03
                a[near] = k + np.where(a[near] >= k, 0.03, -0.03) + 0.01 * rng.random(near.sum())
        elif kind == "pos":
            a = rng.uniform(0.5, 2.0, size=shape)
        elif kind == "unit":
            a = rng.uniform(0.05, 0.8, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        elif kind == "prob":
            a = rng.uniform(0.1, 0.9, size=shape)
        elif kind == "same":  # the previous input's values: ties between two inputs
            a = out[-1].copy()
        elif kind == "kinks":  # the points where subgradients are a choice, then ordinary values
            pts = [0.0, 1.0, -1.0, 6.0, -0.0, 0.5, -2.0, 3.0, -3.0, 2.5, -0.25, 7.0]
            a = np.resize(np.array(pts), shape)
        elif kind in ("dist", "logdist"):
            e = rng.uniform(0.2, 1.0, size=shape)
            a = e / e.sum(-1, keepdims=True)
            if kind == "logdist":
                a = np.log(a)
        else:
            raise ValueError(kind)
        out.append(np.asarray(a, dtype=np.float32).astype(np.float64))
    return out


def flat_outputs(out):
    """A case's result as a flat list of tensors (tuples and lists are flattened)."""
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flat_outputs(o))
        return res
    return [out]


def upstream_for(case, out_shapes):
    rng = np.random.default_rng(zlib.crc32(("up:" + case.name).encode()))
    return [np.asarray(rng.normal(size=s), dtype=np.float32).astype(np.float64) for s in out_shapes]


CASES: list = []


def case(name, inputs, **kw):
    def deco(fn):
        CASES.append(Case(name, inputs, fn, **kw))
        return fn
    return deco


A = (3, 4)
_Q = "fake quantization computes in float32 (docs/numerics.md)"
_STE = "straight-through estimator: not the derivative of the piecewise-constant forward"
_PIECEWISE = "piecewise constant: zero gradient, finite differences are zero too but need no check"

# ----- elementwise binary, with broadcasting -----------------------------------------------
case("add_broadcast", [((2, 3, 4),), ((3, 1),)])(lambda L, a, b: L.T.add(a, b, alpha=2.0) + a)
case("add_operator", [(A,), ((4,),)])(lambda L, a, b: a + b + 1.5)
case("sub_broadcast", [(A,), ((3, 1),)])(lambda L, a, b: L.T.sub(a, b, alpha=0.5) - (b - a) - (2.0 - a))
case("mul_broadcast", [((2, 3, 4),), ((3, 1),)])(lambda L, a, b: L.T.mul(a, b) * 3.0)
case("div_broadcast", [(A,), ((4,), "pos")])(lambda L, a, b: L.T.div(a, b) + 2.0 / b + a / 3.0)
case("true_divide", [(A,), (A, "pos")])(lambda L, a, b: L.T.true_divide(a, b))
case("pow_tensor", [(A, "pos"), ((4,),)])(lambda L, a, b: L.T.pow(a, b))
case("pow_scalar", [(A,), ((4,), "pos")])(lambda L, a, b: a ** 3 + 2.0 ** a + b ** 0.5 + a ** 2)
case("maximum_minimum", [(A,), ((4,),)])(lambda L, a, b: L.T.maximum(a, b) * 2 + L.T.minimum(a, b))
# torch defines no derivative for floor_divide (it raises); its reference is floor(a / b), gradient 0 too
case("floor_divide", [(A, "pos"), ((4,), "pos")])(
    lambda L, a, b: (L.T.floor(a * 3.0 / b) if L.is_torch else L.T.floor_divide(a * 3.0, b)) * a)
case("remainder", [(A,), ((4,), "pos")])(lambda L, a, b: L.T.remainder(a * 3.0, b))
case("fmod", [(A,), ((4,), "pos")])(lambda L, a, b: L.T.fmod(a * 3.0, b))
case("atan2", [(A,), ((3, 1),)])(lambda L, a, b: L.T.atan2(a, b) + L.T.arctan2(b, a))
case("where", [(A,), ((4,),)])(lambda L, a, b: L.T.where(L.mask([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]), a, b))
case("where_scalar", [(A,)])(lambda L, a: L.T.where(a > 0, a, 0.5) * a)
case("clamp", [(A,)])(lambda L, a: L.T.clamp(a, -0.5, 0.7) + L.T.clip(a, min=0.2) + L.T.clamp(a, max=-0.1))
case("clamp_tensor_bounds", [(A,), ((4,), "unit"), ((4,), "pos")])(
    lambda L, a, lo, hi: L.T.clamp(a, lo - 0.5, hi))
case("lerp", [(A,), ((4,),), (A, "prob")])(lambda L, a, b, w: L.T.lerp(a, b, w) + L.T.lerp(a, b, 0.3))
case("addcmul_addcdiv", [(A,), ((4,),), (A, "pos")])(
    lambda L, a, b, c: L.T.addcmul(a, b, c, value=0.5) + L.T.addcdiv(a, b, c, value=2.0))

# ----- elementwise unary --------------------------------------------------------------------
for _n, _k in [("neg", "n"), ("negative", "n"), ("abs", "n"), ("absolute", "n"), ("sign", "n"), ("relu", "n"),
               ("exp", "n"), ("log", "pos"), ("sqrt", "pos"), ("rsqrt", "pos"), ("sin", "n"), ("cos", "n"),
               ("tanh", "n"), ("sigmoid", "n"), ("erf", "n"), ("floor", "n"), ("ceil", "n"), ("round", "n"),
               ("log1p", "unit"), ("expm1", "n"), ("log2", "pos"), ("square", "n"), ("reciprocal", "pos")]:
    case("unary_" + _n, [(A, _k)])(lambda L, a, _n=_n: getattr(L.T, _n)(a))
case("gelu_erf", [(A,)])(lambda L, a: L.T.gelu(a) + L.F.gelu(a * 2.0, approximate="none"))
case("gelu_tanh", [(A,)])(lambda L, a: L.F.gelu(a, approximate="tanh"))
case("round_decimals", [(A,)])(lambda L, a: L.T.round(a, decimals=1) * a)

# ----- reductions ---------------------------------------------------------------------------
R = (2, 3, 4)
case("sum", [(R,)])(lambda L, a: (L.T.sum(a), L.T.sum(a, 1), L.T.sum(a, (0, 2), keepdim=True), a.sum(-1)))
case("mean", [(R,)])(lambda L, a: (L.T.mean(a), L.T.mean(a, 2, keepdim=True), L.T.mean(a, (0, 1))))
case("var_std", [(R,)])(lambda L, a: (L.T.var(a), L.T.var(a, 1, keepdim=True), L.T.std(a, 2),
                                      L.T.var(a, (0, 2), correction=0), L.T.std(a, unbiased=False)))
case("amax_amin", [(R,)])(lambda L, a: (L.T.amax(a, 1), L.T.amin(a, (0, 2), keepdim=True), L.T.amax(a)))
case("max_min", [(R,)])(lambda L, a: (L.T.max(a), L.T.min(a), L.T.max(a, 1)[0], L.T.min(a, 2, keepdim=True)[0]))
case("aminmax", [(R,)])(lambda L, a: tuple(L.T.aminmax(a, dim=1)) + tuple(L.T.aminmax(a)))
case("prod", [(R, "pos")])(lambda L, a: (L.T.prod(a), L.T.prod(a, 1), L.T.prod(a * -1.0, 2, keepdim=True)))
case("logsumexp", [(R,)])(lambda L, a: (L.T.logsumexp(a, 1), L.T.logsumexp(a, (0, 2), keepdim=True)))
case("norm", [(R,)])(lambda L, a: (L.T.norm(a), L.T.norm(a, p=1, dim=2), L.T.norm(a, p=3, dim=(0, 1), keepdim=True)))
case("vector_norm", [(R,)])(lambda L, a: (L.T.vector_norm(a), L.T.vector_norm(a, ord=1, dim=1),
                                          L.T.vector_norm(a, ord=float("inf"), dim=2)))
case("matrix_norm_linalg_norm", [(R,)])(lambda L, a: (L.T.matrix_norm(a), L.T.linalg_norm(a[0]),
                                                      L.T.linalg_norm(a, dim=2)))
case("median", [((3, 5),)])(lambda L, a: (L.T.median(a), L.T.median(a, 1)[0], L.T.median(a, 0, keepdim=True)[0]))
case("cumsum", [(R,)])(lambda L, a: (L.T.cumsum(a, 1), L.T.cumsum(a, -1)))
case("cumprod", [(R, "unit")])(lambda L, a: (L.T.cumprod(a, 2), L.T.cumprod(a, 0)))
case("sort", [(R,)])(lambda L, a: (L.T.sort(a, 1)[0], L.T.sort(a, -1, descending=True)[0], L.T.msort(a)))
case("topk", [(R,)])(lambda L, a: (L.T.topk(a, 2, 2)[0], L.T.topk(a, 2, 1, largest=False)[0]))

# ----- shape --------------------------------------------------------------------------------
case("reshape_view", [(R,)])(lambda L, a: (L.T.reshape(a, (4, 6)), L.T.view(a, 6, 4) * 2, a.reshape(-1),
                                           L.T.reshape_as(a, L.const(np.zeros((3, 8)))),
                                           L.T.view_as(a, L.const(np.zeros((8, 3))))))
case("permute_transpose", [(R,)])(lambda L, a: (L.T.permute(a, (2, 0, 1)), L.T.transpose(a, 0, 2),
                                                L.T.swapaxes(a, 1, 2), L.T.t(a[0]), a[1].T,
                                                L.T.movedim(a, 0, 2), L.T.moveaxis(a, 2, 0)))
case("expand", [((3, 1),), ((4,),)])(lambda L, a, b: (L.T.expand(a, 2, 3, 4), L.T.broadcast_to(b, (3, 4)),
                                                      L.T.expand_as(b, L.const(np.zeros((2, 4))))))
case("broadcast_tensors", [((3, 1),), ((4,),)])(lambda L, a, b: tuple(L.T.broadcast_tensors(a, b)))
case("cat_stack", [(A,), ((2, 4),)])(lambda L, a, b: (L.T.cat([a, b]), L.T.concat([a, b * 2], 0),
                                                      L.T.concatenate([a.T, b.T], 1), L.T.stack([a[:2], b], 1)))
case("split_chunk_unbind", [((6, 4),)])(lambda L, a: tuple(L.T.split(a, 2)) + tuple(L.T.split(a, [1, 3], dim=1))
                                        + tuple(L.T.chunk(a, 3)) + tuple(L.T.unbind(a, 1)))
case("squeeze_unsqueeze_flatten", [((3, 1, 4),)])(
    lambda L, a: (L.T.squeeze(a), L.T.squeeze(a, 1), L.T.unsqueeze(a, 0), L.T.flatten(a),
                  L.T.unflatten(a, 2, (2, 2)), L.F.flatten(a, 1)))
case("flip_roll", [(R,)])(lambda L, a: (L.T.flip(a, (0, 2)), L.T.roll(a, 2, 2), L.T.roll(a, (1, -1), (0, 1))))
case("tile_repeat", [((2, 3),)])(lambda L, a: (L.T.tile(a, (2, 1, 2)), L.T.repeat(a, 2, 3),
                                               L.T.repeat_interleave(a, 2, dim=1), L.T.repeat_interleave(a, 3)))
case("narrow_select", [(R,)])(lambda L, a: (L.T.narrow(a, 2, 1, 2), L.T.select(a, 1, 2), L.T.select(a, 2, -1)))
case("diag_diagonal_tril", [((4, 4),), ((3,),)])(
    lambda L, a, v: (L.T.diag(a), L.T.diag(a, 1), L.T.diag(v), L.T.diagonal(a, -1), L.T.tril(a), L.T.triu(a, 1)))
case("clone_contiguous", [(R,)])(lambda L, a: (L.T.clone(a) * 2, L.T.contiguous(L.T.transpose(a, 0, 1))))
case("unfold_tensor", [((2, 7),)])(lambda L, a: L.T.unfold(a, 1, 3, 2))
case("pad_constant", [((2, 3, 4),)])(lambda L, a: (L.T.pad(a, (1, 2)), L.F.pad(a, (0, 1, 2, 0), value=0.5)))
case("pad_modes", [((1, 2, 3, 4),)])(lambda L, a: (L.F.pad(a, (1, 2, 2, 1), mode="reflect"),
                                                   L.F.pad(a, (2, 1, 0, 2), mode="replicate"),
                                                   L.F.pad(a, (1, 1, 1, 1), mode="circular")))
case("tensor_casts_detach", [(A,)], gradcheck="rounds through float16 / bfloat16 (steps of 1e-6 vanish in the "
     "rounding), and detach() cuts a dependence by definition")(
    lambda L, a: (a.float() * a, a.half().float() * 2.0, a.bfloat16().float() * 3.0, a.type(L.T.float32) * a,
                  a.detach() * a))
case("tensor_T_cpu", [(A,)])(  # lucid: to the CPU stream and back to the case's (identity gradient both ways)
    lambda L, a: (a.T * 2.0, (a.cpu() if L.is_torch else a.cpu().to(device=L.device)) * a))
case("tensor_mT", [((2, 3, 4),)])(lambda L, a: (a.mT * 2.0, a.mH[1] * a[0].mT))
case("to_dtype", [(A,)], gradcheck="rounds through float32: steps of 1e-6 vanish in the rounding")(lambda L, a: (L.T.to(a, dtype=L.T.float32) * a, L.T.type_as(a, a) * 2))

# ----- indexing -----------------------------------------------------------------------------
case("getitem_basic", [(R,)])(lambda L, a: (a[1], a[:, 1:3], a[..., ::2], a[0, None, 1:, -1], L.T.getitem(a, (1, 2))))
case("getitem_advanced", [(R,)])(lambda L, a: (a[L.idx([1, 0, 1])], a[:, L.idx([2, 0, 2])], a[L.idx([0, 1]), :, L.idx([3, 3])],
                                               a[a > 0.2]))
case("setitem", [(R,), ((4,),)])(lambda L, a, v: _setitem(L, a, v))
case("gather_take_along", [(R,)])(
    lambda L, a: (L.T.gather(a, 2, L.idx([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 2], [1, 0]]])),
                  L.T.take_along_dim(a, L.idx([[[1, 0, 2, 1]], [[2, 2, 0, 1]]]), 1)))
case("index_select", [(R,)])(lambda L, a: (L.T.index_select(a, 1, L.idx([2, 0, 2, 1])), L.T.index_select(a, 0, L.idx([1]))))
case("index_add_copy", [(R,), ((2, 2, 4),)])(
    lambda L, a, s: (L.T.index_add(a, 1, L.idx([2, 0]), s), L.T.index_copy(a, 1, L.idx([1, 2]), s * 2)))
case("index_put", [(A,), ((3,),)])(
    lambda L, a, v: (L.T.index_put(a, (L.idx([0, 2, 1]), L.idx([1, 3, 0])), v),
                     L.T.index_put(a, (L.idx([0, 0, 1]), L.idx([1, 1, 2])), v, accumulate=True)))
case("scatter", [(A,), ((3, 2),)])(lambda L, a, s: (L.T.scatter(a, 1, L.idx([[0, 3], [2, 1], [1, 0]]), s),
                                                    L.T.scatter_add(a, 1, L.idx([[0, 0], [2, 1], [3, 3]]), s)))
case("masked", [(A,)])(lambda L, a: (L.T.masked_fill(a, L.mask([[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 0, 1]]), 0.5),
                                     L.T.masked_select(a, L.mask([[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 0, 1]]))))


def _setitem(L, a, v):
    y = a * 1.0
    y[0, 1] = v
    y[1, :, 2] = a[0, :, 0] ** 2
    y[:, L.idx([0, 2]), 3] = v[0] * 2.0
    y[y > 1.5] = 0.25
    z = a * 2.0
    L.T.setitem(z, (1, 0), v)
    return y, z


# ----- linear algebra -----------------------------------------------------------------------
case("matmul", [((3, 4),), ((4, 2),), ((2, 1, 3, 4),), ((4,),)])(
    lambda L, a, b, c, v: (L.T.matmul(a, b), a @ b, L.T.matmul(c, b), L.T.matmul(a, v), L.T.matmul(v, b),
                           L.T.matmul(v, v)))
case("mm_bmm", [((3, 4),), ((4, 2),), ((2, 3, 4),), ((2, 4, 5),)])(
    lambda L, a, b, c, d: (L.T.mm(a, b), L.T.bmm(c, d)))
case("einsum", [((2, 3, 4),), ((4, 5),), ((3,),)])(
    lambda L, a, b, v: (L.T.einsum("bij,jk->bik", a, b), L.T.einsum("bij,i->bj", a, v), L.T.einsum("bii->b", a[:, :, :3])))
case("linear", [((2, 3, 4),), ((5, 4),), ((5,),)])(lambda L, x, w, b: (L.F.linear(x, w, b), L.F.linear(x[0], w)))

# ----- convolution and pooling -------------------------------------------------------------
case("conv1d", [((2, 4, 7),), ((6, 2, 3),), ((6,),)])(
    lambda L, x, w, b: (L.F.conv1d(x, w, b, stride=2, padding=1, groups=2), L.T.conv1d(x, w[:, :, :2].repeat(1, 2, 1))))
case("conv1d_same_dilation", [((1, 2, 8),), ((3, 2, 3),)])(
    lambda L, x, w: L.F.conv1d(x, w, padding="same", dilation=2))
case("conv2d", [((2, 2, 5, 6),), ((4, 2, 3, 2),), ((4,),)])(
    lambda L, x, w, b: (L.F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0)), L.T.conv2d(x, w, None, dilation=(1, 2))))
case("conv2d_groups", [((1, 4, 5, 5),), ((6, 2, 3, 3),), ((6,),)])(
    lambda L, x, w, b: L.F.conv2d(x, w, b, padding=1, groups=2, stride=2))
case("conv3d", [((1, 2, 4, 3, 4),), ((3, 2, 2, 2, 3),), ((3,),)])(
    lambda L, x, w, b: (L.F.conv3d(x, w, b, padding=(1, 0, 1)), L.T.conv3d(x, w, None, stride=2)))
case("conv_transpose1d", [((2, 4, 5),), ((4, 3, 3),), ((6,),)])(
    lambda L, x, w, b: L.F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, groups=2))
case("conv_transpose2d", [((1, 2, 3, 4),), ((2, 3, 3, 2),), ((3,),)])(
    lambda L, x, w, b: (L.F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0)),
                        L.T.conv_transpose2d(x, w, None, dilation=2)))
case("conv_transpose3d", [((1, 2, 2, 3, 2),), ((2, 2, 2, 2, 2),), ((2,),)])(
    lambda L, x, w, b: (L.F.conv_transpose3d(x, w, b, stride=2, padding=(0, 1, 0)), L.T.conv_transpose3d(x, w)))
case("unfold_fold", [((1, 2, 4, 5),), ((1, 8, 12),)])(
    lambda L, x, c: (L.F.unfold(x, (2, 2), padding=1, stride=2), L.T.im2col(x, 3, dilation=1, padding=0, stride=1),
                     L.F.fold(c, (4, 5), (2, 2), stride=(2, 1), padding=(0, 1))))
case("max_pool2d", [((2, 2, 5, 6),)])(
    lambda L, x: (L.F.max_pool2d(x, 2), L.T.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                  L.F.max_pool2d(x, (2, 3), stride=1, dilation=(2, 1))))
case("avg_pool2d", [((2, 2, 5, 6),)])(
    lambda L, x: (L.F.avg_pool2d(x, 2), L.T.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
                  L.F.avg_pool2d(x, (2, 3), stride=1, padding=1, ceil_mode=True),
                  L.F.avg_pool2d(x, 2, divisor_override=3)))
case("adaptive_pools", [((2, 2, 5, 7),)])(
    lambda L, x: (L.F.adaptive_avg_pool2d(x, (2, 3)), L.T.adaptive_avg_pool2d(x, 1), L.F.adaptive_max_pool2d(x, (3, 2))))
case("pools_1d", [((2, 3, 9),)])(
    lambda L, x: (L.F.max_pool1d(x, 3, 2, 1), L.F.max_pool1d(x, 2, 3, 0, 2, True), L.F.avg_pool1d(x, 4, 2, 2),
                  L.F.avg_pool1d(x, 3, count_include_pad=False, padding=1), L.F.adaptive_avg_pool1d(x, 4),
                  L.F.adaptive_max_pool1d(x, 4)))
case("pixel_channel_shuffle", [((1, 8, 3, 4),)])(
    lambda L, x: (L.F.pixel_shuffle(x, 2), L.F.pixel_unshuffle(x[:, :, :2, :], 2), L.F.channel_shuffle(x, 4)))
case("shrink_threshold", [((3, 7),)])(
    lambda L, x: (L.F.hardshrink(x, 0.7), L.F.softshrink(x, 0.7), L.F.tanhshrink(x), L.F.threshold(x, 0.3, -2.0),
                  L.F.softmin(x, dim=1)))
case("dropout_nd_eval", [((2, 3, 4),)])(
    lambda L, x: (L.F.dropout1d(x, 0.5, training=False), L.F.dropout3d(x.reshape(2, 3, 1, 2, 2), 0.3, training=False)))
case("pools_3d", [((1, 2, 4, 5, 6),)])(
    lambda L, x: (L.F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0)), L.F.avg_pool3d(x, 3, 2, 1, True, False),
                  L.F.avg_pool3d(x, 2, divisor_override=3), L.F.adaptive_avg_pool3d(x, (2, 3, 4)),
                  L.F.adaptive_max_pool3d(x, (3, 2, 4))))
case("lp_pools", [((2, 3, 6, 7), "pos")])(
    lambda L, x: (L.F.lp_pool2d(x, 2.0, (2, 3), (2, 2)), L.F.lp_pool1d(x[0], 3.0, 3, 2)))
case("lp_pool3d_and_pools_with_indices", [((1, 2, 4, 5, 6), "pos")])(
    lambda L, x: (L.F.lp_pool3d(x, 2.0, (2, 3, 2), (1, 2, 2)), L.F.lp_pool3d(x[0], 3.0, 2, ceil_mode=True),
                  L.F.max_pool3d(x, 2, 1, 1, return_indices=True)[0],
                  L.F.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True)[0],
                  L.F.adaptive_max_pool2d(x[0, 0], (3, 4), return_indices=True)[0],
                  L.F.adaptive_max_pool1d(x[0, :, 0], 4, return_indices=True)[0]))
case("local_response_norm", [((2, 5, 3, 4),)])(
    lambda L, x: (L.F.local_response_norm(x, 3, 1e-2, 0.7, 2.0), L.F.local_response_norm(x[:, :, 0], 2)))
case("embedding_bag", [((6, 3),), ((9,), "n")])(
    lambda L, w, psw: (L.F.embedding_bag(L.idx([1, 4, 4, 0, 2, 3, 5, 1, 1]), w, L.idx([0, 3, 3, 7]), mode="sum"),
                       L.F.embedding_bag(L.idx([1, 4, 4, 0, 2, 3, 5, 1, 1]), w, L.idx([0, 3, 3, 7]), mode="mean"),
                       L.F.embedding_bag(L.idx([1, 4, 4, 0, 2, 3, 5, 1, 1]), w, L.idx([0, 3, 3, 7]), mode="max"),
                       L.F.embedding_bag(L.idx([[1, 4, 0], [2, 2, 5], [3, 0, 3]]), w, mode="mean", padding_idx=3),
                       L.F.embedding_bag(L.idx([1, 4, 4, 0, 2, 3, 5, 1, 1]), w, L.idx([0, 4, 9]), mode="sum",
                                         per_sample_weights=psw, include_last_offset=True)))
case("alpha_dropout_eval", [((2, 3, 4),)])(
    lambda L, x: (L.F.alpha_dropout(x, 0.5, training=False), L.F.feature_alpha_dropout(x, 0.3, training=False)))
case("affine_grid_sample", [((2, 2, 3), "unit"), ((2, 3, 4, 5),), ((2, 3, 4, 2), "unit")])(
    lambda L, th, x, g: (L.F.affine_grid(th, (2, 3, 4, 5), align_corners=False),
                         L.F.grid_sample(x, g, mode="bilinear", padding_mode="zeros", align_corners=False),
                         L.F.grid_sample(x, g * 1.3, mode="bilinear", padding_mode="border", align_corners=True),
                         L.F.grid_sample(x, g, mode="nearest", padding_mode="zeros", align_corners=True)))
case("rrelu_eval", [((3, 5),)])(lambda L, x: L.F.rrelu(x, 0.1, 0.3, training=False))
case("max_unpool", [((2, 3, 5, 6),), ((2, 3, 9),), ((1, 1, 2, 2, 2),)])(
    lambda L, x, x1, x3: (L.F.max_unpool2d(*L.F.max_pool2d(x, 2, 2, 1, return_indices=True), 2, 2, 1,
                                           output_size=(5, 6)),
                          L.F.max_unpool1d(*L.F.max_pool1d(x1, 3, 3, 0, return_indices=True), 3, 3, 0),
                          L.F.max_unpool3d(x3, L.idx([[[[[0, 9], [20, 31]], [[40, 57], [62, 7]]]]]), 2, 2, 0,
                                           output_size=(4, 4, 4))))
case("multilabel_margin_loss", [((3, 5),)])(
    lambda L, x: (L.F.multilabel_margin_loss(x, L.idx([[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]])),
                  L.F.multilabel_margin_loss(x, L.idx([[2, -1, 0, 0, 0], [0, 4, -1, 1, 1], [1, 3, 2, -1, 0]]),
                                             reduction="none")))
case("ctc_loss", [((7, 3, 5),)])(
    lambda L, x: (L.F.ctc_loss(L.F.log_softmax(x, 2), L.idx([[1, 2, 2], [3, 1, 4], [4, 4, 0]]), L.idx([7, 5, 6]),
                               L.idx([3, 2, 1]), reduction="none"),
                  L.F.ctc_loss(L.F.log_softmax(x, 2), L.idx([[1, 2, 2], [3, 1, 4], [4, 4, 0]]), L.idx([7, 5, 6]),
                               L.idx([3, 2, 1]))))
case("interpolate", [((1, 2, 3, 4),)])(
    lambda L, x: (L.F.interpolate(x, scale_factor=2, mode="nearest"),
                  L.F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False),
                  L.F.interpolate(x, size=(4, 6), mode="bilinear", align_corners=True),
                  L.F.upsample(x, size=(6, 5), mode="nearest")))

# ----- normalization ------------------------------------------------------------------------
case("batch_norm_train", [((4, 3, 2, 2),), ((3,),), ((3,),)])(
    lambda L, x, w, b: (L.F.batch_norm(x, L.const(np.zeros(3)), L.const(np.ones(3)), w, b, training=True),
                        L.F.batch_norm(x[:, :, 0, 0], None, None, None, b, training=True, eps=1e-3)))
# SyncBatchNorm in one process is BatchNorm over the batch (its statistics all-reduced over a
# group of one): against torch's BatchNorm2d in training mode
case("sync_batch_norm_train", [((4, 3, 2, 2),), ((3,),), ((3,),)])(
    lambda L, x, w, b: L.call_module(L.nn.BatchNorm2d(3) if L.is_torch else L.nn.SyncBatchNorm(3),
                                     {"weight": w, "bias": b}, x))
case("batch_norm_eval", [((4, 3, 2),), ((3,),), ((3,),), ((3,), "n", False), ((3,), "pos", False)])(
    lambda L, x, w, b, rm, rv: L.F.batch_norm(x, rm, rv, w, b, training=False))
case("layer_norm", [((2, 3, 4),), ((3, 4),), ((3, 4),)])(
    lambda L, x, w, b: (L.F.layer_norm(x, (3, 4), w, b), L.F.layer_norm(x, (4,), eps=1e-3)))
case("group_norm", [((2, 4, 3),), ((4,),), ((4,),)])(
    lambda L, x, w, b: (L.F.group_norm(x, 2, w, b), L.F.group_norm(x, 4), L.F.group_norm(x, 1, w)))
case("instance_norm", [((2, 3, 5),), ((3,),), ((3,),)])(
    lambda L, x, w, b: (L.F.instance_norm(x, weight=w, bias=b), L.F.instance_norm(x * 2.0)))
case("rms_norm", [((2, 3, 4),), ((4,),)])(
    lambda L, x, w: (L.F.rms_norm(x, (4,), w), L.F.rms_norm(x, (3, 4), eps=1e-4)))
case("normalize", [((3, 4),)])(lambda L, x: (L.F.normalize(x), L.F.normalize(x, p=1.0, dim=0)))
case("channel_affine", [((2, 3, 4),), ((3,),), ((3,),)])(
    lambda L, y, w, b: (L.F.channel_affine(y, w, b, (1, 3, 1)), L.F.channel_affine(y, None, b, (1, 3, 1)))
    if not L.is_torch else (y * w.reshape(1, 3, 1) + b.reshape(1, 3, 1), y + b.reshape(1, 3, 1)))

# ----- activations --------------------------------------------------------------------------
for _n, _kw in [("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.7}),
                ("celu", {"alpha": 1.3}), ("selu", {}), ("silu", {}), ("mish", {}), ("softsign", {}),
                ("hardtanh", {"min_val": -0.5, "max_val": 1.2}), ("hardsigmoid", {}), ("hardswish", {}),
                ("logsigmoid", {}), ("sigmoid", {}), ("tanh", {}), ("softplus", {"beta": 2.0, "threshold": 1.5})]:
    # torch's CPU kernels for these two hold float32 constants (hardsigmoid's 1.0f / 6.0f, celu's
    # 1 / alpha) also in float64: its float64 gradients are float32-accurate (checked against the
    # closed forms in numpy: the whole 6e-8 / 2e-8 difference is torch's), so float64 compares at 1e-7.
    _f64 = dict(f64_rtol=1e-7) if _n in ("hardsigmoid", "celu") else {}
    case("F_" + _n, [((3, 5),)], **_f64)(
        lambda L, x, _n=_n, _kw=_kw: getattr(L.F, _n)(x * 3.0, **_kw) + getattr(L.F, _n)(x))
case("relu_method_default_leaky", [((3, 5),)])(lambda L, x: (L.T.relu(x), L.F.leaky_relu(x), L.F.softplus(x * 30.0)))
case("prelu", [((2, 3, 4),), ((3,),), ((1,),)])(lambda L, x, w, w1: (L.F.prelu(x, w), L.F.prelu(x, w1)))
case("glu", [((2, 6),)])(lambda L, x: (L.F.glu(x), L.F.glu(x, dim=0)))
case("softmax", [((2, 3, 4),)])(lambda L, x: (L.F.softmax(x, dim=1), L.T.softmax(x, -1), L.F.softmax(x * 5.0, dim=0)))
case("log_softmax", [((2, 3, 4),)])(lambda L, x: (L.F.log_softmax(x, dim=2), L.T.log_softmax(x, 0)))

# ----- losses -------------------------------------------------------------------------------
for _r in ("mean", "sum", "none"):
    case("mse_" + _r, [(A,), (A,)])(lambda L, a, b, _r=_r: L.F.mse_loss(a, b, reduction=_r))
    case("l1_" + _r, [(A,), (A,)])(lambda L, a, b, _r=_r: L.F.l1_loss(a, b, reduction=_r))
case("smooth_l1", [(A,), (A,)])(lambda L, a, b: (L.F.smooth_l1_loss(a, b), L.F.smooth_l1_loss(a, b, beta=0.5, reduction="sum"),
                                                 L.F.smooth_l1_loss(a * 2, b, beta=0.3, reduction="none")))
case("huber", [(A,), (A,)])(lambda L, a, b: (L.F.huber_loss(a, b), L.F.huber_loss(a * 2, b, delta=0.4, reduction="sum")))
case("cross_entropy_index", [((4, 5),)])(
    lambda L, x: (L.F.cross_entropy(x, L.idx([0, 3, 1, 4])), L.F.cross_entropy(x, L.idx([2, 2, 0, 1]), reduction="sum")))
case("cross_entropy_index_options", [((4, 5),), ((5,), "pos", False)])(
    lambda L, x, w: (L.F.cross_entropy(x, L.idx([0, 3, -100, 4]), weight=w),
                     L.F.cross_entropy(x, L.idx([1, 3, 2, 4]), ignore_index=3, reduction="none"),
                     L.F.cross_entropy(x, L.idx([0, 3, 1, 4]), label_smoothing=0.2, weight=w)))
case("cross_entropy_nd", [((2, 4, 3),)])(lambda L, x: L.F.cross_entropy(x, L.idx([[0, 3, 1], [2, 2, 0]])))
case("cross_entropy_probs", [((4, 5),), ((4, 5), "dist")])(
    lambda L, x, t: (L.F.cross_entropy(x, t), L.F.cross_entropy(x, t, label_smoothing=0.1, reduction="sum")))
case("nll", [((4, 5), "logdist"), ((5,), "pos", False)])(
    lambda L, x, w: (L.F.nll_loss(x, L.idx([0, 3, 1, 4])), L.F.nll_loss(x, L.idx([2, 2, 0, 1]), weight=w),
                     L.F.nll_loss(x, L.idx([2, 1, 0, 1]), reduction="none")))
case("bce", [(A, "prob"), (A, "prob"), (A, "pos", False)])(
    lambda L, p, t, w: (L.F.binary_cross_entropy(p, t), L.F.binary_cross_entropy(p, t, weight=w, reduction="sum")))
case("bce_with_logits", [(A,), (A, "prob"), ((4,), "pos", False)])(
    lambda L, x, t, pw: (L.F.binary_cross_entropy_with_logits(x * 3.0, t),
                         L.F.binary_cross_entropy_with_logits(x, t, pos_weight=pw, reduction="none"),
                         L.F.binary_cross_entropy_with_logits(x, t, weight=pw, reduction="sum")))
case("kl_div", [((3, 4), "logdist"), ((3, 4), "dist"), ((3, 4), "logdist")])(
    lambda L, x, t, lt: (L.F.kl_div(x, t, reduction="batchmean"), L.F.kl_div(x, t, reduction="sum"),
                         L.F.kl_div(x, lt, reduction="mean", log_target=True), L.F.kl_div(x, t, reduction="none")))
case("cosine_pairwise", [((3, 4),), ((3, 4),)])(
    lambda L, a, b: (L.F.cosine_similarity(a, b), L.F.cosine_similarity(a, b, dim=0),
                     L.F.pairwise_distance(a, b), L.F.pairwise_distance(a, b, p=1.0, keepdim=True)))
_SIGNS = [[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, -1.0], [1.0, 1.0, -1.0, -1.0]]
_COUNTS = [[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 4.0], [2.0, 2.0, 0.0, 7.0]]
case("margin_ranking", [(A,), (A,)])(
    lambda L, a, b: (L.F.margin_ranking_loss(a, b, L.const(_SIGNS), margin=0.3),
                     L.F.margin_ranking_loss(a, b, L.const(_SIGNS), reduction="none")))
case("triplet_margin", [(A,), (A,), (A,)])(
    lambda L, a, p, n: (L.F.triplet_margin_loss(a, p, n, margin=2.0),
                        L.F.triplet_margin_loss(a, p, n, margin=3.0, p=1.0, swap=True, reduction="none")))
case("cosine_embedding", [(A,), (A,)])(
    lambda L, a, b: (L.F.cosine_embedding_loss(a, b, L.const([1.0, -1.0, -1.0]), margin=-0.5),
                     L.F.cosine_embedding_loss(a, b, L.const([-1.0, 1.0, -1.0]), reduction="sum")))
case("soft_margin_hinge_embedding", [(A,)])(
    lambda L, x: (L.F.soft_margin_loss(x, L.const(_SIGNS)),
                  L.F.hinge_embedding_loss(x, L.const(_SIGNS), margin=0.5, reduction="none")))
case("multilabel_soft_margin", [(A,), ((4,), "pos")])(
    lambda L, x, w: (L.F.multilabel_soft_margin_loss(x, L.const([[1.0, 0.0, 0.0, 1.0]] * 3)),
                     L.F.multilabel_soft_margin_loss(x, L.const([[0.0, 1.0, 1.0, 1.0]] * 3), weight=w,
                                                     reduction="none")))
case("poisson_nll", [(A,), (A, "pos")])(
    lambda L, x, rate: (L.F.poisson_nll_loss(x, L.const(_COUNTS)),
                        L.F.poisson_nll_loss(x, L.const(_COUNTS), full=True, reduction="sum"),
                        L.F.poisson_nll_loss(rate, L.const(_COUNTS), log_input=False, reduction="none")))
case("gaussian_nll", [(A,), (A,), (A, "pos"), ((3,), "pos")])(
    lambda L, x, t, v, v3: (L.F.gaussian_nll_loss(x, t, v), L.F.gaussian_nll_loss(x, t, v3, full=True,
                                                                                  reduction="sum")))
case("multi_margin", [((4, 5),), ((5,), "pos", False)])(
    lambda L, x, w: (L.F.multi_margin_loss(x, L.idx([0, 3, 1, 4])),
                     L.F.multi_margin_loss(x, L.idx([2, 3, 0, 4]), p=2, margin=0.5, weight=w, reduction="none")))
case("bilinear", [((3, 4),), ((3, 5),), ((2, 4, 5),), ((2,),)])(
    lambda L, a, b, w, bias: (L.F.bilinear(a, b, w, bias), L.F.bilinear(a, b, w)))

# ----- layers and the rest ------------------------------------------------------------------
case("embedding", [((5, 3),)])(
    lambda L, w: (L.F.embedding(L.idx([[0, 2], [4, 2]]), w), L.T.embedding(L.idx([1, 0, 1]), w)))
case("embedding_padding_idx", [((5, 3),)],
     gradcheck="padding_idx's row gets no gradient by definition (torch's too), though the output reads it")(
    lambda L, w: L.F.embedding(L.idx([3, 0, 3]), w, padding_idx=3))
case("dropout_eval", [((2, 3, 4),)])(
    lambda L, x: (L.F.dropout(x, 0.5, training=False), L.F.dropout2d(x.reshape(2, 3, 2, 2), 0.3, training=False),
                  L.F.dropout(x, 0.0, training=True)))
case("scaled_dot_product_attention", [((2, 3, 4),), ((2, 5, 4),), ((2, 5, 2),)])(
    lambda L, q, k, v: (L.F.scaled_dot_product_attention(q, k, v),
                        L.F.scaled_dot_product_attention(q, k, v, attn_mask=L.mask(np.tril(np.ones((3, 5)), 2)), scale=0.3),
                        L.F.scaled_dot_product_attention(q, k[:, :3], v[:, :3], is_causal=True)))
_H = 3


def _rnn_params(prefix, w):
    return dict(zip([f"weight_ih_{prefix}", f"weight_hh_{prefix}", f"bias_ih_{prefix}", f"bias_hh_{prefix}"], w))


def _with_backward_hooks(m):
    """``m`` with a full backward pre-hook (doubling grad_output) and a full backward
    hook (adding 1 to grad_input): both sides' gradients change accordingly."""
    m.register_full_backward_pre_hook(lambda mod, go: tuple(g * 2.0 for g in go))
    m.register_full_backward_hook(lambda mod, gi, go: tuple(None if g is None else g + 1.0 for g in gi))
    return m


case("module_backward_hooks", [((2, 3),), ((4, 3),), ((4,),)],
     gradcheck="the hooks change the gradients on purpose (grad_output doubled, grad_input + 1): not a derivative")(
    lambda L, x, w, b: L.call_module(_with_backward_hooks(L.nn.Linear(3, 4)), {"weight": w, "bias": b}, x))
case("checkpoint", [((2, 3),), ((3, 3),)])(
    lambda L, x, w: L.T.utils.checkpoint.checkpoint(lambda a, b: L.T.tanh(L.T.matmul(a, b)) * a, x, w,
                                                    use_reentrant=False))


case("lstm", [((4, 2, 2),), ((4 * _H, 2),), ((4 * _H, _H),), ((4 * _H,),), ((4 * _H,),), ((1, 2, _H),), ((1, 2, _H),)])(
    lambda L, x, wi, wh, bi, bh, h0, c0: L.call_module(
        L.nn.LSTM(2, _H), _rnn_params("l0", (wi, wh, bi, bh)), x, (h0, c0)))
case("lstm_bidirectional_batch_first", [((2, 3, 2),)] + [((4 * _H, 2),), ((4 * _H, _H),), ((4 * _H,),), ((4 * _H,),)] * 2)(
    lambda L, x, *w: L.call_module(L.nn.LSTM(2, _H, batch_first=True, bidirectional=True),
                                   {**_rnn_params("l0", w[:4]), **_rnn_params("l0_reverse", w[4:])}, x))
case("gru", [((4, 2, 2),), ((3 * _H, 2),), ((3 * _H, _H),), ((3 * _H,),), ((3 * _H,),), ((1, 2, _H),)])(
    lambda L, x, wi, wh, bi, bh, h0: L.call_module(L.nn.GRU(2, _H), _rnn_params("l0", (wi, wh, bi, bh)), x, h0))
case("gru_two_layers_no_bias", [((3, 1, 2),), ((3 * _H, 2),), ((3 * _H, _H),), ((3 * _H, _H),), ((3 * _H, _H),)])(
    lambda L, x, wi0, wh0, wi1, wh1: L.call_module(
        L.nn.GRU(2, _H, num_layers=2, bias=False),
        {"weight_ih_l0": wi0, "weight_hh_l0": wh0, "weight_ih_l1": wi1, "weight_hh_l1": wh1}, x))

# packed sequences: each sequence runs for its own length (lengths unsorted)
case("lstm_packed", [((4, 3, 2),)] + [((4 * _H, 2),), ((4 * _H, _H),), ((4 * _H,),), ((4 * _H,),)] * 2)(
    lambda L, x, *w: _packed_run(L, L.nn.LSTM(2, _H, bidirectional=True), x, [2, 4, 3],
                                 {**_rnn_params("l0", w[:4]), **_rnn_params("l0_reverse", w[4:])}))
case("gru_packed", [((4, 3, 2),), ((3 * _H, 2),), ((3 * _H, _H),), ((3 * _H,),), ((3 * _H,),), ((1, 3, _H),)])(
    lambda L, x, wi, wh, bi, bh, h0: _packed_run(L, L.nn.GRU(2, _H), x, [3, 1, 4],
                                                 _rnn_params("l0", (wi, wh, bi, bh)), h0))
case("sequence_utils", [((3, 2),), ((1, 2),), ((2, 2),)])(
    lambda L, a, b, c: _sequence_utils(L, a, b, c))


def _packed_run(L, m, x, lengths, params, *state):
    packed = L.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, hidden = L.call_module(m, params, packed, *state)
    padded, _ = L.rnn.pad_packed_sequence(out, total_length=4)
    return padded, hidden


def _sequence_utils(L, a, b, c):
    padded = L.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=0.5)
    packed = L.rnn.pack_sequence([a, c, b * 2.0], enforce_sorted=False)
    back = L.rnn.unpack_sequence(packed)
    parts = L.rnn.unpad_sequence(padded * 3.0, L.idx([3, 1, 2]), batch_first=True)
    return [padded, packed.data * 1.0] + [t * 1.0 for t in back] + [t * 1.0 for t in parts]


# fake quantization: the codes rint(x / s) + z are kept off the .5 ties by the inputs' spread
case("fake_quantize_per_tensor", [((3, 5),)], f64=_Q, gradcheck=_STE, torch_dtype="float32")(
    lambda L, x: (L.Q.fake_quantize(x, 0.05, 3, -20, 25), L.Q.fake_quantize(x, 0.3, 0, -128, 127)))
# onto FP8 E4M3FN (scale 0.01: |x / s| up to ~300 of 448 here; 0.002 pushes some past 448,
# where the straight-through gradient stops): torch's reference is its own float8 cast with
# the gradient written as the straight-through mask (its cast's backward would round the
# gradient itself to float8)
def _fq_float8(L, x, s):
    if not L.is_torch:
        return L.Q.fake_quantize(x, s, 0, -448, 448, qdtype="float8_e4m3fn")
    t = (x / s).clamp(-448.0, 448.0)
    fq = t.to(L.torch.float8_e4m3fn).to(x.dtype) * s
    return fq.detach() + (x - x.detach()) * ((x / s).abs() <= 448.0).to(x.dtype)


case("fake_quantize_float8", [((3, 5),)], f64=_Q, gradcheck=_STE, torch_dtype="float32")(
    lambda L, x: (_fq_float8(L, x, 0.01), _fq_float8(L, x, 0.002)))
case("fake_quantize_per_channel", [((3, 5),)], f64=_Q, gradcheck=_STE, torch_dtype="float32")(
    lambda L, x: L.Q.fake_quantize(x, [0.05, 0.1, 0.02], [0, -2, 5], -16, 15, ch_axis=0))
case("fake_quantize_per_group", [((3, 8),)], f64=_Q, gradcheck=_STE, torch_dtype="float32")(
    # torch has no per-group form: its reference is per-channel over rows of group_size
    lambda L, x: L.Q.fake_quantize(x, [[0.05, 0.1], [0.02, 0.2], [0.1, 0.04]], [[0, -2], [5, 1], [0, 3]], -16, 15,
                                   group_size=4))
case("fake_quantize_learnable_per_tensor", [((3, 5),), ((1,), "prob"), ((1,),)], f64=_Q,
     gradcheck=_STE, torch_dtype="float32")(
    lambda L, x, s, z: L.Q.fake_quantize_learnable(x * 3.0, s * 0.3, z * 2.0, -8, 7, grad_factor=0.5))
case("fake_quantize_learnable_per_channel", [((3, 5),), ((5,), "prob"), ((5,),)], f64=_Q,
     gradcheck=_STE, torch_dtype="float32")(
    lambda L, x, s, z: L.Q.fake_quantize_learnable(x * 2.0, s * 0.2, z * 3.0, 0, 15, ch_axis=1))

# ----- more options ----------------------------------------------------------------------
case("div_rounding_mode", [(A,), ((4,), "pos")])(  # piecewise constant: zero gradient in both
    lambda L, a, b: (L.T.div(a * 3.0, b, rounding_mode="floor") * a, L.T.div(a * 3.0, b, rounding_mode="trunc") * b))
case("pow_negative_base", [(A,)])(lambda L, a: (a ** 2, a ** -1, a ** 3.0, L.T.pow(a, 4)))
case("matmul_broadcast_batch", [((2, 1, 3, 4),), ((3, 4, 2),), ((4,),), ((2, 4, 3),)])(
    lambda L, a, b, v, c: (L.T.matmul(a, b), L.T.matmul(v, c), L.T.matmul(c.transpose(1, 2), v)))
case("einsum_more", [((3,),), ((4,),), ((3, 3),), ((2, 3, 4),)])(
    lambda L, u, v, m, t: (L.T.einsum("i,j->ij", u, v), L.T.einsum("ii->", m), L.T.einsum("ij->ji", m),
                           L.T.einsum("bij,bik->jk", t, t), L.T.einsum("bij->", t)))
case("interpolate_linear_1d", [((1, 2, 5),)])(
    lambda L, x: (L.F.interpolate(x, size=8, mode="linear", align_corners=False),
                  L.F.interpolate(x, scale_factor=2, mode="linear", align_corners=True),
                  L.F.interpolate(x, size=3, mode="nearest")))
case("conv2d_padding_strings", [((1, 2, 5, 6),), ((3, 2, 3, 2),)])(
    lambda L, x, w: (L.F.conv2d(x, w, padding="same", dilation=(1, 2)), L.F.conv2d(x, w, padding="valid")))
case("pools_return_indices", [((1, 2, 5, 6),)])(
    lambda L, x: (L.F.max_pool2d(x, 2, return_indices=True)[0], L.F.max_pool2d(x, (3, 2), 1, 1, return_indices=True)[0]))
case("cross_entropy_probs_weight", [((4, 5),), ((4, 5), "dist"), ((5,), "pos", False)])(
    lambda L, x, t, w: (L.F.cross_entropy(x, t, weight=w), L.F.cross_entropy(x, t, weight=w, reduction="none")))
case("nll_nd_ignore_index", [((2, 4, 3), "logdist"), ((4,), "pos", False)])(
    lambda L, x, w: (L.F.nll_loss(x, L.idx([[0, 3, -100], [2, 2, 0]])),
                     L.F.nll_loss(x, L.idx([[0, 3, 1], [2, 1, 0]]), weight=w, ignore_index=1, reduction="sum")))
case("bce_none", [(A, "prob"), (A, "prob")])(lambda L, p, t: L.F.binary_cross_entropy(p, t, reduction="none"))
case("softmax_1d_2d", [((5,),), ((3, 4),)])(
    lambda L, v, x: (L.F.softmax(v, dim=0), L.F.log_softmax(v, dim=0), L.F.softmax(x, dim=0), L.F.log_softmax(x, dim=1)))
case("repeat_interleave_tensor", [((3, 2),)])(
    lambda L, a: (L.T.repeat_interleave(a, L.idx([1, 0, 2]), dim=0), L.T.repeat_interleave(a, 2, dim=0)))
case("norm_more", [((3, 4),)])(
    lambda L, a: (L.T.norm(a, p=float("inf")), L.T.norm(a, p="fro", dim=1), L.T.norm(a, p=0.5, dim=0),
                  L.T.vector_norm(a, ord=-float("inf"), dim=1), L.T.vector_norm(a, ord=3, dim=(0, 1), keepdim=True)))
case("var_std_more", [((3, 5),)])(
    lambda L, a: (L.T.var(a, 1, unbiased=True), L.T.std(a, correction=2), L.T.std(a, 0, keepdim=True, unbiased=False)))
case("index_put_bool_mask", [(A,), ((5,),)])(
    lambda L, a, v: L.T.index_put(a, (L.mask([[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 0, 1]]),), v))
case("sdpa_float_mask", [((2, 3, 4),), ((2, 5, 4),), ((2, 5, 2),), ((3, 5),)])(
    lambda L, q, k, v, m: L.F.scaled_dot_product_attention(q, k, v, attn_mask=m))
case("norms_4d", [((2, 4, 3, 2),), ((4,),), ((4,),), ((4,), "n", False), ((4,), "pos", False)])(
    lambda L, x, w, b, rm, rv: (L.F.group_norm(x, 2, w, b, eps=1e-3), L.F.instance_norm(x, weight=w, bias=b),
                                L.F.batch_norm(x, rm, rv, w, b, training=False),
                                L.F.layer_norm(x, (3, 2), None, None)))
case("dropout_p1_training", [(A,)])(lambda L, x: (L.F.dropout(x, 1.0, training=True) + x,))
case("embedding_3d_index", [((6, 2),)])(lambda L, w: L.F.embedding(L.idx([[[0, 5], [5, 5]], [[1, 2], [0, 0]]]), w))
case("where_broadcast_cond", [((3, 1),), ((4,),)])(
    lambda L, a, b: (L.T.where(L.mask([[1], [0], [1]]), a, b), L.T.where(L.mask([1, 0, 0, 1]), 2.0, b)))

# Ties between inputs and the kinks of piecewise ops, where the gradient is a convention; these
# are PyTorch's conventions and lucid follows them (ties share: half each; relu, abs at 0: 0 ...).
# Where the conventions differ (measured against torch 2.14), the points are left out here and
# every other case keeps its inputs 0.03 away from them:
# - clamp with number bounds (and hardtanh, relu6, hardsigmoid built on it): torch passes the
#   gradient only strictly inside (min < x < max), lucid also at x == min or x == max;
# - clamp with tensor bounds at x == bound: torch gives half to x and half to the bound (as
#   maximum / minimum), lucid all to x;
# - hardswish at x == 3 and x == -3: torch 1 and 0 (the outer pieces), lucid 1.5 and -0.5.
_KINKS = "non-differentiable points by construction: the convention is what is compared"
case("ties", [(A,), (A, "same")], gradcheck=_KINKS)(
    lambda L, a, b: (L.T.maximum(a, b), L.T.minimum(a, b), L.T.amax(L.T.stack([a, b]), 0),
                     L.T.amin(L.T.stack([a, b]), (0, 2)), L.T.max(L.T.cat([a, b])), L.T.min(L.T.cat([a, b]))))
case("kinks", [((2, 12), "kinks")], gradcheck=_KINKS)(
    lambda L, x: (L.T.relu(x), L.T.abs(x), L.T.sign(x), L.F.leaky_relu(x, 0.1),
                  L.F.elu(x), L.F.softplus(x, threshold=0.5), L.F.celu(x), L.F.selu(x),
                  L.F.smooth_l1_loss(x, L.const(np.zeros((2, 12))), reduction="none"),
                  L.F.huber_loss(x, L.const(np.ones((2, 12))), reduction="none"),
                  L.F.l1_loss(x, L.const(np.zeros((2, 12))), reduction="none"), L.T.sqrt(L.T.abs(x) + 1.0)))

# ----- in-place ops on a non-leaf (the recorded route) --------------------------------------
_INPLACE_UNARY = [("neg_", "n"), ("abs_", "n"), ("sign_", "n"), ("relu_", "n"), ("exp_", "n"), ("log_", "pos"),
                  ("sqrt_", "pos"), ("rsqrt_", "pos"), ("sin_", "n"), ("cos_", "n"), ("tanh_", "n"),
                  ("sigmoid_", "n"), ("floor_", "n"), ("ceil_", "n"), ("round_", "n")]
for _n, _k in _INPLACE_UNARY:
    case("inplace_" + _n, [(A, _k)])(lambda L, a, _n=_n: _inplace(L, _n, a))
for _n, _k in [("add_", "n"), ("sub_", "n"), ("mul_", "n"), ("div_", "pos"), ("pow_", "unit"),
               ("floor_divide_", "pos"), ("remainder_", "pos"), ("fmod_", "pos")]:
    case("inplace_" + _n, [(A, "pos"), ((4,), _k)])(lambda L, a, b, _n=_n: _inplace(L, _n, a * 2.0, b))
case("inplace_clamp_", [(A,)])(lambda L, a: (_inplace(L, "clamp_", a, -0.4, 0.6), _inplace(L, "clip_", a, min=0.1)))
case("inplace_addcmul_addcdiv_lerp_", [(A,), ((4,),), (A, "pos")])(
    lambda L, a, b, c: (_inplace(L, "addcmul_", a, b, c, value=0.5), _inplace(L, "addcdiv_", a, b, c, value=2.0),
                        _inplace(L, "lerp_", a, b, 0.3)))
case("inplace_copy_fill_zero_", [(A,), ((4,),)])(
    lambda L, a, b: (_inplace(L, "copy_", a, b * 2.0), L.T.copy_(L.const(np.zeros((2, 4))), b * 3.0) * a[:2],
                     _inplace(L, "fill_", a, 0.7) * a,
                     _inplace(L, "zero_", a) + a, _inplace(L, "index_put_", a, (L.idx([0, 2]), L.idx([1, 3])), b[:2])))

_MASK = [[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 0, 1]]
case("inplace_indexing_", [(A,), ((3, 2),)])(
    lambda L, a, s: (_inplace(L, "masked_fill_", a, L.mask(_MASK), 0.5),
                     _inplace(L, "index_fill_", a, 1, L.idx([3, 0]), -0.25),
                     _inplace(L, "scatter_", a, 1, L.idx([[0, 3], [2, 1], [1, 0]]), s),
                     _inplace(L, "scatter_add_", a, 1, L.idx([[0, 0], [2, 1], [3, 3]]), s),
                     _inplace(L, "index_add_", a, 1, L.idx([2, 0]), s * 2.0),
                     _inplace(L, "index_copy_", a, 1, L.idx([1, 3]), s * 3.0)))
case("index_fill", [(R,)])(lambda L, a: (L.T.index_fill(a, 1, L.idx([2, 0]), 1.5),
                                         L.T.index_fill(a, 2, L.idx([3]), -1.0)))
case("inplace_shape_", [(R,)])(
    lambda L, a: (_inplace(L, "unsqueeze_", a, 1), _inplace(L, "transpose_", a, 0, 2),
                  _inplace(L, "squeeze_", L.T.unsqueeze(a, 0)), _inplace(L, "t_", a[0])))


def _inplace(L, name, a, *args, **kw):
    y = a * 1.0  # a non-leaf: in-place on it is recorded
    if L.is_torch and name == "floor_divide_":  # see the floor_divide case
        y, name, args = y.div_(*args), "floor_", ()
    r = getattr(L.T, name)(y, *args, **kw)
    return r * 1.0


# ----- running a case -----------------------------------------------------------------------

def run_case(L, case, values, upstream=None):
    """Inputs from ``values`` (numpy), the case's outputs, and (with ``upstream``) the
    gradients of ``sum(output * upstream)`` for every input with grad=True.
    Returns (outputs, gradients)."""
    xs = [L.leaf(v, g) for v, (_, _, g) in zip(values, case.inputs)]
    outs = flat_outputs(case.fn(L, *xs))
    if upstream is None:
        return outs, None
    wrt = [x for x, (_, _, g) in zip(xs, case.inputs) if g]
    return outs, L.grad(outs, wrt, [L.leaf(u, False) for u in upstream])


class TorchLib:
    """The adapter ``L`` over PyTorch (imported here only when used)."""

    is_torch = True

    def __init__(self, dtype="float64"):
        import torch
        import torch.nn.functional as F

        self.torch, self.dtype = torch, getattr(torch, dtype)
        self.F = _TorchF(F)
        self.T = _TorchTop(torch, F)
        self.Q = _TorchQ(torch, self.dtype)
        self.nn = _TorchNN(torch, self.dtype)
        self.rnn = torch.nn.utils.rnn
        self.linalg = torch.linalg

    def leaf(self, v, requires_grad):
        return self.torch.tensor(np.asarray(v), dtype=self.dtype, requires_grad=bool(requires_grad))

    def const(self, v):
        return self.torch.tensor(np.asarray(v), dtype=self.dtype)

    def idx(self, v):
        return self.torch.tensor(np.asarray(v), dtype=self.torch.int64)

    def mask(self, v):
        return self.torch.tensor(np.asarray(v, dtype=bool))

    def call_module(self, m, params, *args):
        return self.torch.func.functional_call(m, params, args)

    def grad(self, outs, wrt, ups):
        live = [(o, u) for o, u in zip(outs, ups) if o.requires_grad]
        gs = self.torch.autograd.grad([o for o, _ in live], wrt, [u for _, u in live], allow_unused=True)
        return [None if g is None else g.detach().numpy() for g in gs]


class _TorchTop:
    def __init__(self, torch, F):
        self._t = torch
        linalg = torch.linalg
        self._alias = {
            "vector_norm": linalg.vector_norm, "matrix_norm": linalg.matrix_norm, "linalg_norm": linalg.norm,
            "im2col": lambda x, k, dilation=1, padding=0, stride=1: F.unfold(x, k, dilation, padding, stride),
            "getitem": lambda x, i: x[i], "setitem": _torch_setitem, "embedding": F.embedding, "pad": F.pad,
            "gelu": F.gelu, "max_pool2d": F.max_pool2d, "avg_pool2d": F.avg_pool2d,
            "adaptive_avg_pool2d": F.adaptive_avg_pool2d, "conv1d": F.conv1d, "conv2d": F.conv2d,
            "conv3d": F.conv3d, "conv_transpose1d": F.conv_transpose1d, "conv_transpose2d": F.conv_transpose2d,
            "conv_transpose3d": F.conv_transpose3d, "softmax": F.softmax, "log_softmax": F.log_softmax,
            # removed from torch's top level (2.x); lucid keeps the alias of linalg.cholesky
            "cholesky": lambda a, upper=False: linalg.cholesky(a, upper=upper),
        }

    def __getattr__(self, name):
        if name in self._alias:
            return self._alias[name]
        if not name.endswith("_") and hasattr(self._t, name):
            return getattr(self._t, name)
        return lambda x, *a, **k: getattr(x, name)(*a, **k)  # a Tensor method


def _torch_setitem(x, i, v):
    x[i] = v


class _TorchF:
    def __init__(self, F):
        self._F = F

    def __getattr__(self, name):
        if name == "flatten":  # lucid also offers it in nn.functional
            import torch
            return torch.flatten
        return getattr(self._F, name)


class _TorchNN:
    def __init__(self, torch, dtype):
        self._nn, self._dtype = torch.nn, dtype

    def __getattr__(self, name):
        cls = getattr(self._nn, name)
        return lambda *a, **k: cls(*a, **k).to(self._dtype)


class _TorchQ:
    """lucid.quantization's fake-quant signatures over torch's ops."""

    def __init__(self, torch, dtype):
        self._t, self._dtype = torch, dtype

    def fake_quantize(self, x, scale, zero_point, quant_min, quant_max, ch_axis=None, group_size=None):
        t = self._t
        if group_size is not None:  # along the last axis: per-channel over rows of group_size
            rows = x.reshape(-1, group_size)
            flat = np.asarray(scale).reshape(-1).tolist(), np.asarray(zero_point).reshape(-1).tolist()
            return self.fake_quantize(rows, flat[0], flat[1], quant_min, quant_max, ch_axis=0).reshape(x.shape)
        if ch_axis is None:
            return t.fake_quantize_per_tensor_affine(x, float(scale), int(zero_point), quant_min, quant_max)
        return t.fake_quantize_per_channel_affine(x, t.tensor(scale, dtype=t.float32), t.tensor(zero_point, dtype=t.int32),
                                                  ch_axis, quant_min, quant_max)

    def fake_quantize_learnable(self, x, scale, zero_point, quant_min, quant_max, ch_axis=None, grad_factor=1.0):
        t = self._t
        if ch_axis is None:
            return t._fake_quantize_learnable_per_tensor_affine(x, scale, zero_point, quant_min, quant_max, grad_factor)
        return t._fake_quantize_learnable_per_channel_affine(x, scale, zero_point, ch_axis, quant_min, quant_max,
                                                             grad_factor)


# ----- composed PyTorch functions (lucid/linalg, lucid/_ops/creation.py, lucid/stats) ---------
case("composed_products", [((3, 5),), ((3, 4),), ((4, 5),), ((4,),)])(
    lambda L, c, a, b, v: (L.T.addmm(c, a, b, beta=0.5, alpha=2.0), L.T.addmm(c[0], a, b),
                           L.T.addmv(c[:, 0], a, v, alpha=3.0), L.T.mv(a, v),
                           L.T.chain_matmul(a, b, b.T), L.T.outer(c[0], v), L.T.ger(v, v), L.T.dot(v, v),
                           L.T.vdot(v, v * 2.0), L.T.inner(a, a), L.T.inner(a[0, 0], v), L.T.trace(a[:, :3])))
case("composed_batch_products", [((3, 5),), ((2, 3, 4),), ((2, 4, 5),)])(
    lambda L, c, x, y: (L.T.addbmm(c, x, y, beta=2.0), L.T.baddbmm(c, x, y, alpha=0.5)))
case("composed_kron_tensordot", [((2, 3),), ((3, 2),), ((2, 3, 4),)])(
    lambda L, a, b, x: (L.T.kron(a, b), L.T.kron(a[0], x), L.T.tensordot(x, x, dims=([1, 2], [1, 2])),
                        L.T.tensordot(a, x, dims=([0, 1], [0, 1])), L.T.tensordot(a, b, 1),
                        L.T.tensordot(a, b, dims=0)))
case("composed_cdist_dist", [((2, 4, 3),), ((2, 5, 3),)])(
    lambda L, x, y: (L.T.cdist(x, y), L.T.cdist(x, y, p=1.0), L.T.cdist(x, y, p=float("inf")),
                     L.T.cdist(x, y, p=3.0), L.T.dist(x, y[:, :1]), L.T.dist(x[0], y[0, :4], 1)))
case("composed_cross_builders", [((2, 3),), ((2, 3),), ((3,),)])(
    lambda L, a, b, v: (L.T.cross(a, b, dim=1), L.T.cross(a.T, b[0].reshape(3, 1), dim=0),
                        L.T.block_diag(a, v, v[0]), L.T.diag_embed(a, 1), L.T.diag_embed(a, -1, 0, 2),
                        L.T.diagflat(a),
                        L.T.cartesian_prod(v, v[:2]), L.T.combinations(v),
                        L.T.combinations(v, 2, with_replacement=True)))
# torch.vander's backward fails (an in-place write it saved for); its reference is the powers stacked
case("composed_vander", [((3,),)])(
    lambda L, v: (L.T.stack([v ** k for k in (2, 1, 0)], 1), L.T.stack([v ** k for k in range(4)], 1)) if L.is_torch
    else (L.T.vander(v), L.T.vander(v, 4, increasing=True)))
case("composed_stacks", [((3,),), ((2, 3),)])(
    lambda L, a, b: (L.T.hstack([a, a * 2.0]), L.T.vstack([a, b]), L.T.row_stack((b, a)), L.T.dstack([b, b]),
                     L.T.column_stack([a, b.T]), L.T.atleast_1d(a[0]), L.T.atleast_2d(a), L.T.atleast_3d(b),
                     L.T.atleast_3d(a)))
case("composed_splits", [((4, 6, 4),)])(
    lambda L, x: tuple(L.T.tensor_split(x, 3, 1)) + tuple(L.T.tensor_split(x, [1, 3], 2))
    + tuple(L.T.hsplit(x, 2)) + tuple(L.T.vsplit(x, [1])) + tuple(L.T.dsplit(x, 2)))
case("composed_rearrange", [((2, 3, 4),)])(
    lambda L, x: (L.T.ravel(x), L.T.swapdims(x, 0, 2), L.T.rot90(x, 1, [1, 2]), L.T.rot90(x, 2, [0, 2]),
                  L.T.rot90(x, 3), L.T.fliplr(x), L.T.flipud(x), L.T.take(x, L.idx([[0, -1], [5, 5]]))))
case("composed_scatters", [((2, 3, 4),), ((2, 4),), ((2, 3, 2),)])(
    lambda L, x, s, t: (L.T.select_scatter(x, s, 1, 1), L.T.slice_scatter(x, t, 2, 1, None, 2),
                        L.T.slice_scatter(x, t.transpose(1, 2)[:, :, :1].expand(2, 2, 4) * 1.0, 1, 0, 2)))
case("composed_diff", [((3, 5),), ((3, 1),)])(
    lambda L, x, p: (L.T.diff(x), L.T.diff(x, 2, 0), L.T.diff(x, 1, -1, prepend=p, append=p * 2.0)))
_NANS = [[0, 1, 0, 0], [1, 1, 1, 1], [0, 0, 1, 0]]


def _with_nans(L, a):
    return L.T.where(L.mask(_NANS), L.const(np.full((3, 4), np.nan)), a)


case("composed_nan_reductions", [((3, 4),)])(
    lambda L, a: (L.T.nansum(_with_nans(L, a)), L.T.nansum(_with_nans(L, a), 1),
                  L.T.nanmean(_with_nans(L, a)[::2], 1), L.T.nanmean(a, 0, keepdim=True),
                  L.T.nan_to_num(_with_nans(L, a), 1.5)))
case("composed_var_std_mean", [((3, 4),)])(
    lambda L, a: L.T.var_mean(a, 1) + L.T.std_mean(a, 0, correction=0) + L.T.std_mean(a) + (
        L.T.var_mean(a, 1, keepdim=True)))
case("composed_cum", [((3, 5),)])(
    lambda L, a: (L.T.cummax(a, 1)[0], L.T.cummin(a, 0)[0], L.T.cummax(a[0], 0)[0], L.T.logcumsumexp(a, 1),
                  L.T.logcumsumexp(a, 0)))
case("composed_order_stats", [((3, 5),)])(
    lambda L, a: (L.T.kthvalue(a, 2, 1)[0], L.T.kthvalue(a, 3, 0, keepdim=True)[0], L.T.mode(a, 1)[0],
                  L.T.nanmedian(a), L.T.nanmedian(a, 1)[0], L.T.nanmedian(_with_nans(L, a[:, :4]), 1)[0]))
for _m in ("linear", "lower", "higher", "midpoint", "nearest"):
    case("composed_quantile_" + _m, [((3, 5),)])(
        lambda L, a, _m=_m: (L.T.quantile(a, 0.3, 1, interpolation=_m),
                             L.T.quantile(a, L.const([0.25, 0.5, 0.9]), 0, keepdim=True, interpolation=_m),
                             L.T.quantile(a, 0.7, interpolation=_m),
                             L.T.nanquantile(_with_nans(L, a[:, :4]), L.const([0.2, 0.6]), 1, interpolation=_m)))
# ----- extra elementwise math (lucid._ops.floating, trig, special) --------------------------
for _n, _k in [("tan", "unit"), ("sinh", "n"), ("cosh", "n"), ("asin", "unit"), ("acos", "unit"), ("atan", "n"),
               ("asinh", "n"), ("atanh", "unit"), ("trunc", "n"), ("frac", "n"), ("log10", "pos"), ("exp2", "n"),
               ("erfc", "n"), ("erfinv", "unit"), ("lgamma", "pos"), ("sinc", "n"), ("positive", "n")]:
    case("unary_" + _n, [(A, _k)])(lambda L, a, _n=_n: getattr(L.T, _n)(a))
case("unary_sgn", [(A,)])(lambda L, a: L.T.sgn(a) * a)  # sgn's own gradient is 0 (torch: a ZeroTensor)
case("unary_acosh", [(A, "pos")])(lambda L, a: L.T.acosh(a + 1.5) + L.T.arccosh(a * 2.0 + 1.1))
case("unary_aliases_arc_fix", [(A, "unit")])(
    lambda L, a: L.T.arcsin(a) + L.T.arccos(a * 0.9) + L.T.arctan(a) + L.T.arcsinh(a) + L.T.arctanh(a)
    + L.T.fix(a * 3.0) * a)
case("lgamma_small_and_negative", [(A, "unit")])(lambda L, a: L.T.lgamma(a * 3.0 + 0.01))
_TRIGAMMA_NOTE = "torch's float64 trigamma is accurate to ~5e-10 (lucid's to 1e-13 against mpmath: tests/test_special.py)"
case("digamma_polygamma", [(A, "pos"), (A, "unit")], f64_rtol=3e-9, note=_TRIGAMMA_NOTE)(
    lambda L, a, b: (L.T.digamma(a), L.T.digamma(b * 0.5 - 1.5), L.T.polygamma(1, a), L.T.polygamma(2, a * 3.0),
                     L.T.polygamma(3, b * 0.5 - 1.5), L.T.polygamma(0, a), a.polygamma(1),
                     _inplace(L, "digamma_", a * 1.5)))
case("mvlgamma", [(A, "pos")])(lambda L, a: (L.T.mvlgamma(a + 1.0, 3), L.T.special.multigammaln(a, 1)))
case("special_composed", [(A, "n"), (A, "prob"), (A, "pos")])(
    lambda L, a, p, q: (L.T.special.ndtr(a), L.T.special.log_ndtr(a * 8.0), L.T.special.log_ndtr(a - 11.0),
                        L.T.special.ndtri(p), L.T.special.ndtri(p * 1e-3), L.T.special.entr(q),
                        L.T.special.xlog1py(a, q), L.T.special.i0(a * 4.0), L.T.special.i1(a * 4.0),
                        L.T.special.i0e(a * 10.0), L.T.special.i1e(a * 10.0), L.T.special.i1e(q * 15.0 - 40.0)))
case("special_bessel_large", [(A, "pos")])(  # its own case: large values would drown the others' differences
    lambda L, q: (L.T.special.i0(q * 4.0 + 18.0), L.T.special.i1(q * -4.0 - 18.0)))
case("ldexp_frexp", [(A,), (A,)])(
    lambda L, a, b: (L.T.ldexp(a, L.idx([[3, -1, 0, 2]])), L.T.ldexp(a, b), L.T.frexp(a * 5.0)[0]))
case("trapezoid_family", [((3, 5),), ((5,), "pos"), ((3, 5), "pos")])(
    lambda L, y, dx, x: (L.T.trapezoid(y), L.T.trapezoid(y, dx=0.3, dim=0), L.T.trapezoid(y, L.T.cumsum(dx, 0)),
                         L.T.trapezoid(y, L.T.cumsum(x, 1), dim=1), L.T.trapz(y, dim=0),
                         L.T.cumulative_trapezoid(y), L.T.cumulative_trapezoid(y, L.T.cumsum(dx, 0)),
                         L.T.cumulative_trapezoid(y, dx=2.0, dim=0)))
case("gradient_estimate", [((3, 5),), ((3,), "pos", False)])(
    lambda L, f, h: (*L.T.gradient(f), *L.T.gradient(f, spacing=2.0, dim=1),
                     *L.T.gradient(f, spacing=[L.T.cumsum(h, 0), L.const([0.0, 0.5, 1.5, 1.75, 3.0])]),
                     *L.T.gradient(f, spacing=[0.5, 3.0]),
                     *L.T.gradient(f[:, :2], dim=[1])))
case("cov_corrcoef", [((3, 6),), ((6,), "pos")])(
    lambda L, x, aw: (L.T.cov(x), L.T.cov(x, correction=0), L.T.cov(x[0]), L.T.corrcoef(x),
                      L.T.cov(x, fweights=L.idx([1, 2, 0, 3, 1, 1]), aweights=aw),
                      L.T.cov(x, aweights=aw, correction=2)))
case("pdist", [((5, 3),)])(
    lambda L, x: (L.F.pdist(x), L.F.pdist(x, 1.0), L.F.pdist(x, 3.0), L.F.pdist(x[:2], float("inf"))))
case("triplet_margin_with_distance_loss", [((4, 3),), ((4, 3),), ((4, 3),)])(
    lambda L, a, p, n: (L.F.triplet_margin_with_distance_loss(a, p, n),
                        L.F.triplet_margin_with_distance_loss(a, p, n, margin=2.0, swap=True, reduction="none"),
                        L.F.triplet_margin_with_distance_loss(
                            a, p, n, distance_function=lambda x, y: (x - y).abs().sum(-1), margin=3.0,
                            reduction="sum")))
case("sinc_at_zero", [(A, "kinks")])(lambda L, a: L.T.sinc(a * 0.5))
case("logit", [(A, "prob")])(lambda L, a: L.T.logit(a) + L.T.logit(a * 1.1 - 0.05, eps=0.1))
case("hypot", [(A,), ((4,),)])(lambda L, a, b: L.T.hypot(a, b))
case("logaddexp", [(A,), ((3, 1),)])(lambda L, a, b: L.T.logaddexp(a, b * 2.0) + L.T.logaddexp2(b, a))
case("xlogy", [(A,), ((4,), "pos")])(lambda L, a, b: L.T.xlogy(a, b) + L.T.xlogy(2.0, b))
case("copysign", [(A,), ((4,),)])(lambda L, a, b: L.T.copysign(a, b) + L.T.copysign(b, -1.0))
case("fmax_fmin", [(A,), ((4,),)])(lambda L, a, b: L.T.fmax(a, b) * 2.0 + L.T.fmin(a, b))
case("clamp_min_max", [(A,)])(lambda L, a: L.T.clamp_min(a, -0.3) + L.T.clamp_max(a, 0.4))
case("inplace_math_extra_", [(A, "unit"), ((4,), "pos")])(lambda L, a, b: tuple(
    [_inplace(L, n + "_", a) for n in ("tan", "sinh", "cosh", "asin", "acos", "atan", "trunc",
                                       "frac", "exp2", "erfc", "erfinv", "sinc", "arcsin", "arccos", "arctan",
                                       "fix", "sgn")]
    + [_inplace(L, n + "_", b) for n in ("log10", "lgamma")]
    + [_inplace(L, "logit_", a * 0.5 + 0.5),
       _inplace(L, "hypot_", a, b), _inplace(L, "xlogy_", a, b), _inplace(L, "copysign_", a, b - 1.0),
       _inplace(L, "clamp_min_", a, -0.2), _inplace(L, "clamp_max_", a, 0.3)]))


# ----- decompositions and solvers (lucid/linalg/decomposition.py) -------------------
# Inputs are made well conditioned inside each case (M + 3 I, M M^T + 3 I, M + M^T with distinct
# eigenvalues), so the leaf is unconstrained and finite differences see the same symmetric map.
# Eigen / singular vectors are compared only through sign-invariant outputs (v * v, U @ Vh).
_I3 = np.eye(3)


def _spd(L, m):
    return m @ m.transpose(-1, -2) + L.const(3.0 * _I3)


case("linalg_inv", [((2, 3, 3),)])(
    lambda L, m: (L.linalg.inv(m + L.const(3.0 * _I3)), L.T.inverse(m[0] + L.const(3.0 * _I3)),
                  (m[1] - L.const(3.0 * _I3)).inverse()))
case("linalg_solve", [((2, 3, 3),), ((2, 3, 2),), ((3,),)])(
    lambda L, m, b, v: (L.linalg.solve(m + L.const(3.0 * _I3), b), L.linalg.solve(m + L.const(3.0 * _I3), v),
                        L.linalg.solve(m[0] + L.const(3.0 * _I3), b.transpose(-1, -2), left=False)))
case("linalg_det_slogdet", [((2, 3, 3),)])(
    lambda L, m: (L.linalg.det(m + L.const(3.0 * _I3)), L.T.det(m[0] - L.const(3.0 * _I3)),
                  (m[1] + L.const(2.0 * _I3)).det(), L.linalg.slogdet(m - L.const(3.0 * _I3))[1],
                  L.T.slogdet(m[0] + L.const(3.0 * _I3))[1], L.T.logdet(_spd(L, m)), _spd(L, m[1]).logdet()))
case("linalg_cholesky", [((2, 3, 3),)])(
    lambda L, m: (L.linalg.cholesky(_spd(L, m)), L.linalg.cholesky(_spd(L, m), upper=True),
                  L.T.cholesky(_spd(L, m[0])), L.T.cholesky(_spd(L, m[1]), upper=True)))
case("linalg_eigh", [((2, 3, 3),)], rtol=1e-3)(
    lambda L, m: (lambda w, v: (w, v * v))(*L.linalg.eigh(m + m.transpose(-1, -2))) + (
        L.linalg.eigh(m[0] + m[0].transpose(-1, -2), UPLO="U")[1] ** 2,
        L.linalg.eigvalsh(m + m.transpose(-1, -2)), L.linalg.eigvalsh(m[1] + m[1].T, UPLO="U")))
case("linalg_svd", [((2, 4, 3),)], rtol=1e-3)(
    lambda L, a: (lambda u, s, vh: (s, u @ vh, u * u, vh * vh))(*L.linalg.svd(a, full_matrices=False)) + (
        L.linalg.svdvals(a), L.linalg.svd(a[0].T, full_matrices=False)[0] ** 2,
        (lambda u, s, vh: (s, u @ vh))(*L.linalg.svd(a[:, :3], full_matrices=True))))
case("linalg_qr", [((2, 4, 3),)], rtol=1e-3)(
    lambda L, a: (lambda q, r: (q * q, r * r, q @ q.transpose(-1, -2)))(*L.linalg.qr(a)) + (
        L.linalg.qr(a[0, :3], mode="complete")[1] ** 2,))
case("linalg_solve_triangular", [((2, 3, 3),), ((2, 3, 2),)])(
    lambda L, m, b: (L.linalg.solve_triangular(m + L.const(3.0 * _I3), b, upper=True),
                     L.linalg.solve_triangular(m[0] + L.const(3.0 * _I3), b, upper=False),
                     L.linalg.solve_triangular(m, b.transpose(-1, -2), upper=False, left=False, unitriangular=True),
                     L.linalg.solve_triangular(m[1] - L.const(3.0 * _I3), b.transpose(-1, -2), upper=True,
                                               left=False)))
case("linalg_pinv_power_multi_dot", [((4, 3),), ((3, 3),), ((3,),)], rtol=1e-3)(
    lambda L, a, m, v: (L.linalg.pinv(a), L.linalg.pinv(a.T @ a, hermitian=True),
                        L.linalg.matrix_power(m, 3), L.T.matrix_power(m + L.const(3.0 * _I3), -2),
                        L.linalg.matrix_power(m, 1), m.matrix_power(2),
                        L.linalg.multi_dot([v, m, a.T, a, v]), L.linalg.multi_dot([a, m, m])))
# (torch 2.14's cond with p='fro' fails in its own backward: an in-place write; the norm forms are
# checked numerically in tests/test_linalg_decompositions.py)
case("linalg_composed", [((2, 3, 3),), ((2, 4, 3),)], rtol=1e-3)(
    lambda L, m, a: (L.linalg.cond(a), L.linalg.cond(m + L.const(3.0 * _I3), -2), L.linalg.matrix_exp(m * 0.5),
                     L.linalg.matrix_exp(m[0] * 2.0), L.linalg.vecdot(a, a[0, 0]), L.linalg.cross(m, m[1:]),
                     L.linalg.diagonal(a), L.linalg.matrix_norm(a, "nuc"), L.linalg.matrix_norm(a, 2),
                     L.linalg.matrix_norm(a, -2, dim=(0, 2))))
case("linalg_lu", [((2, 3, 3),), ((2, 3, 2),)], rtol=1e-3)(
    lambda L, m, b: (L.linalg.lu_factor(m + L.const(3.0 * _I3))[0], L.linalg.lu(m[0] - L.const(2.0 * _I3))[1:],
                     L.linalg.lu_solve(*L.linalg.lu_factor(m + L.const(3.0 * _I3)), b),
                     L.linalg.lu_solve(*L.linalg.lu_factor(m[1] + L.const(3.0 * _I3)), b.transpose(-1, -2), left=False,
                                       adjoint=True)))
