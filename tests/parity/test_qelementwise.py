"""QFunctional's fused add / add_relu / mul / cat (lucid.quantization.qelementwise) on both
streams against a numpy reference written here, one float32 operation at a time in the
order docs/numerics.md gives ("Quantized modules", QFunctional): dequantize each input
(q - z) * s, the float op, relu as max with 0, quantize x / s -> rint -> + z -> clamp
(NaN -> z). Also: the scalar twin against the vectorized kernel, the CPU stream against
the GPU stream byte for byte, QFunctional's fused and composite routes, bad input."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C
from lucid.nn.quantized import QFunctional
from lucid.quantization.qelementwise import qadd, qcat, qmul
from _qref import assert_bytes_equal, to_np

F32 = np.float32
GRIDS = {"quint8": (0, 255, np.uint8), "qint8": (-128, 127, np.int8)}


def deq(q, s, z):
    with np.errstate(over="ignore"):  # scales near float32's max overflow to inf on purpose
        return (q.astype(np.int32) - np.int32(z)).astype(F32) * F32(s)


def requant(v, s, z, grid):
    qmin, qmax, storage = GRIDS[grid]
    v = np.asarray(v, F32)
    with np.errstate(all="ignore"):
        t = v / F32(s)
        r = np.rint(t) + F32(z)
        c = np.minimum(np.maximum(r, F32(qmin)), F32(qmax))
    c = np.where(np.isnan(t), F32(qmin), c)
    return np.where(np.isnan(t), z, c.astype(np.int64)).astype(storage)


def ref(op, a, pa, b, pb, po, grid):
    x, y = deq(a, *pa), deq(b, *pb)
    with np.errstate(all="ignore"):
        v = x * y if op == "mul" else x + y
    if op == "add_relu":
        v = np.where(v <= 0, F32(0), v)  # relu(NaN) stays NaN: NaN <= 0 is false
    return requant(v, *po, grid)


def codes(rng, grid, shape):
    qmin, qmax, storage = GRIDS[grid]
    return rng.integers(qmin, qmax + 1, shape).astype(storage)


def run(op, a, pa, b, pb, po, grid, device, reference=False):
    ta, tb = lucid.tensor(a, device=device), lucid.tensor(b, device=device)
    if reference:
        f = _C.qmul if op == "mul" else _C.qadd
        args = (ta._impl, pa[0], pa[1], tb._impl, pb[0], pb[1], po[0], po[1], grid)
        out = f(*args, reference=True) if op == "mul" else f(*args, op == "add_relu", True)
        return np.asarray(lucid.Tensor(out).numpy())
    if op == "mul":
        return to_np(qmul(ta, *pa, tb, *pb, *po, grid))
    return to_np(qadd(ta, *pa, tb, *pb, *po, grid, relu=op == "add_relu"))


OPS = ["add", "add_relu", "mul"]


def params(rng, in_grid, out_grid):
    zs = [int(rng.integers(GRIDS[g][0], GRIDS[g][1] + 1)) for g in (in_grid, in_grid, out_grid)]
    ss = [float(F32(v)) for v in rng.uniform(1e-3, 0.2, 3)]
    return (ss[0], zs[0]), (ss[1], zs[1]), (ss[2], zs[2])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("in_grid", ["quint8", "qint8"])
@pytest.mark.parametrize("out_grid", ["quint8", "qint8"])
@pytest.mark.parametrize("n", [1, 7, 33, 1000, 3 * 65536 + 17])  # odd tails; several thread chunks
def test_random_against_numpy(device, rng, op, in_grid, out_grid, n):
    a, b = codes(rng, in_grid, (n,)), codes(rng, in_grid, (n,))
    pa, pb, po = params(rng, in_grid, out_grid)
    assert_bytes_equal(run(op, a, pa, b, pb, po, out_grid, device), ref(op, a, pa, b, pb, po, out_grid))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("grid", ["quint8", "qint8"])
def test_ties_round_half_to_even(device, op, grid):
    qmin, qmax, storage = GRIDS[grid]
    codes_all = np.arange(qmin, qmax + 1)
    z = 0 if grid == "qint8" else 128
    a = np.concatenate([codes_all, codes_all]).astype(storage)
    if op == "mul":  # (a - z) / 2 * (b - z): a tie whenever the product of the offsets is odd
        b = (np.arange(a.size) % 7 - 3 + z).astype(storage)
        pa, pb, po = (0.5, z), (1.0, z), (1.0, z)
    else:  # (a + b) / 2 with b a neighbour of a: odd sums (ties) and even ones
        b = np.concatenate([np.roll(codes_all, 1), np.roll(codes_all, 2)]).astype(storage)
        pa, pb, po = (0.5, z), (0.5, z), (1.0, 3 if grid == "qint8" else 7)
    got = run(op, a, pa, b, pb, po, grid, device)
    expect = ref(op, a, pa, b, pb, po, grid)
    assert_bytes_equal(got, expect)
    x, y = deq(a, *pa), deq(b, *pb)
    t = (x * y if op == "mul" else x + y) / F32(po[0])
    assert (np.abs(t % 1) == 0.5).sum() > 20  # the case holds many ties


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("grid", ["quint8", "qint8"])
def test_saturation_and_overflow(device, op, grid):
    qmin, qmax, storage = GRIDS[grid]
    z = 0 if grid == "qint8" else 128
    a = np.array([qmin, qmax, z, z + 2, z - 2, qmin, qmax, z], storage)
    b = np.array([qmin, qmax, z, z - 2, z + 2, qmax, qmin, qmax], storage)
    small = (1e-6, 3)  # tiny output scale: everything clamps to one end or the other
    assert_bytes_equal(run(op, a, (1.0, z), b, (1.0, z), small, grid, device),
                       ref(op, a, (1.0, z), b, (1.0, z), small, grid))
    # Scales near float32's max: (q - z) * s overflows to +-inf, inf + -inf and 0 * inf
    # are NaN, and NaN quantizes to the zero point (relu keeps it NaN).
    big = (3.0e38, z)
    got = run(op, a, big, b, big, (1.0, 5), grid, device)
    expect = ref(op, a, big, b, big, (1.0, 5), grid)
    assert_bytes_equal(got, expect)
    assert (expect == 5).any()


@pytest.mark.parametrize("op", OPS)
def test_scalar_twin_matches(rng, op):
    for in_grid, out_grid in [("quint8", "quint8"), ("qint8", "quint8"), ("quint8", "qint8")]:
        a, b = codes(rng, in_grid, (4099,)), codes(rng, in_grid, (4099,))
        pa, pb, po = params(rng, in_grid, out_grid)
        assert_bytes_equal(run(op, a, pa, b, pb, po, out_grid, "cpu"),
                           run(op, a, pa, b, pb, po, out_grid, "cpu", reference=True))


@pytest.mark.parametrize("op", OPS)
def test_streams_agree(rng, op):
    a, b = codes(rng, "quint8", (2, 16, 9, 11)), codes(rng, "quint8", (2, 16, 9, 11))
    pa, pb, po = params(rng, "quint8", "quint8")
    assert_bytes_equal(run(op, a, pa, b, pb, po, "quint8", "cpu"), run(op, a, pa, b, pb, po, "quint8", "gpu"))


def test_noncontiguous_inputs(device, rng):
    a, b = codes(rng, "quint8", (6, 5)), codes(rng, "quint8", (5, 6))
    pa, pb, po = params(rng, "quint8", "quint8")
    ta, tb = lucid.tensor(a, device=device), lucid.tensor(b, device=device).t()
    got = to_np(qadd(ta, *pa, tb, *pb, *po, "quint8"))
    assert_bytes_equal(got, ref("add", a, pa, np.ascontiguousarray(b.T), pb, po, "quint8"))


# ----- cat ---------------------------------------------------------------------------------

@pytest.mark.parametrize("grid", ["quint8", "qint8"])
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_cat_against_numpy(device, rng, grid, dim):
    shapes = [(2, 3, 5), (2, 4, 5), (2, 1, 5)] if dim == 1 else [(2, 3, 5)] * 3
    if dim in (-1, 2):
        shapes = [(2, 3, 5), (2, 3, 1), (2, 3, 7)]
    if dim == 0:
        shapes = [(2, 3, 5), (1, 3, 5), (3, 3, 5)]
    xs = [codes(rng, grid, sh) for sh in shapes]
    ps = [params(rng, grid, grid)[0] for _ in xs]
    po = params(rng, grid, grid)[2]
    got = to_np(qcat([lucid.tensor(x, device=device) for x in xs], [p[0] for p in ps], [p[1] for p in ps], dim,
                     *po, grid))
    expect = requant(np.concatenate([deq(x, *p) for x, p in zip(xs, ps)], axis=dim), *po, grid)
    assert_bytes_equal(got, expect)


def test_cat_scalar_twin_and_streams(rng):
    xs = [codes(rng, "qint8", (3, 40, 7)), codes(rng, "qint8", (3, 9, 7))]
    args = ([0.02, 0.05], [3, -7], 1, 0.03, 11, "quint8")
    fast = to_np(qcat([lucid.tensor(x) for x in xs], *args))
    twin = np.asarray(lucid.Tensor(_C.qcat([lucid.tensor(x)._impl for x in xs], *args, reference=True)).numpy())
    gpu = to_np(qcat([lucid.tensor(x, device="gpu") for x in xs], *args))
    assert_bytes_equal(fast, twin)
    assert_bytes_equal(fast, gpu)


# ----- QFunctional ---------------------------------------------------------------------------

def qt(rng, grid, shape, device, s, z):
    return Q.QTensor(lucid.tensor(codes(rng, grid, shape), device=device), s, z, getattr(Q, grid))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("grids", [("quint8", "quint8", "quint8"), ("qint8", "qint8", "quint8"),
                                   ("quint8", "qint8", "quint8"), ("quint8", "quint8", "qint8")])
def test_qfunctional(device, rng, op, grids):
    ga, gb, go = grids  # mixed input grids take the composite; the codes are the same formula
    x = qt(rng, ga, (2, 3, 5, 7), device, 0.037, 5 if ga == "quint8" else -3)
    y = qt(rng, gb, (2, 3, 5, 7), device, 0.021, 200 if gb == "quint8" else 9)
    m = QFunctional(scale=0.05, zero_point=17, dtype=go).to(device)
    out = getattr(m, op)(x, y)
    assert out.dtype is getattr(Q, go) and (out.q_scale(), out.q_zero_point()) == (float(F32(0.05)), 17)
    expect = ref(op, to_np(x.int_repr()), (0.037, x.q_zero_point()), to_np(y.int_repr()), (0.021, y.q_zero_point()),
                 (0.05, 17), go)
    assert_bytes_equal(to_np(out.int_repr()), expect)


def test_qfunctional_broadcast_takes_the_composite(device, rng):
    x = qt(rng, "quint8", (2, 3, 4), device, 0.1, 7)
    y = qt(rng, "quint8", (3, 1), device, 0.2, 100)
    out = QFunctional(0.15, 50).to(device).add_relu(x, y)
    expect = ref("add_relu", to_np(x.int_repr()), (0.1, 7), np.broadcast_to(to_np(y.int_repr()), (2, 3, 4)),
                 (0.2, 100), (0.15, 50), "quint8")
    assert_bytes_equal(to_np(out.int_repr()), expect)


def test_qfunctional_cat(device, rng):
    xs = [qt(rng, "quint8", (2, c, 3), device, s, z) for c, s, z in [(2, 0.1, 3), (5, 0.07, 200), (1, 0.3, 0)]]
    m = QFunctional(0.09, 31).to(device)
    out = m.cat(xs, dim=1)
    expect = requant(np.concatenate([deq(to_np(x.int_repr()), x.q_scale(), x.q_zero_point()) for x in xs], axis=1),
                     float(F32(0.09)), 31, "quint8")
    assert_bytes_equal(to_np(out.int_repr()), expect)
    assert (out.q_scale(), out.q_zero_point()) == (float(F32(0.09)), 31)


# ----- bad input ---------------------------------------------------------------------------

def test_errors(device):
    u = lucid.zeros((2, 3), dtype=lucid.uint8, device=device)
    i = lucid.zeros((2, 3), dtype=lucid.int8, device=device)
    with pytest.raises(ValueError, match=r"qadd\(\): arguments 'a' and 'b' must have one shape"):
        qadd(u, 0.1, 0, lucid.zeros((3, 2), dtype=lucid.uint8, device=device), 0.1, 0, 0.1, 0)
    with pytest.raises(TypeError, match="'a' and 'b' must hold codes of one dtype"):
        qmul(u, 0.1, 0, i, 0.1, 0, 0.1, 0)
    with pytest.raises(TypeError, match="argument 'a' must hold int8 or uint8 codes"):
        qadd(lucid.zeros((2, 3), device=device), 0.1, 0, u, 0.1, 0, 0.1, 0)
    with pytest.raises(TypeError, match="argument 'b' must be a lucid.Tensor"):
        qadd(u, 0.1, 0, np.zeros((2, 3), np.uint8), 0.1, 0, 0.1, 0)
    with pytest.raises(ValueError, match="'a_scale'"):
        qadd(u, -1.0, 0, u, 0.1, 0, 0.1, 0)
    with pytest.raises(ValueError, match="'scale'"):
        qadd(u, 0.1, 0, u, 0.1, 0, float("inf"), 0)
    with pytest.raises(ValueError, match="'b_zero_point' must lie in"):
        qadd(i, 0.1, 0, i, 0.1, 128, 0.1, 0, "qint8")
    with pytest.raises(ValueError, match="'zero_point' must lie in"):
        qadd(u, 0.1, 0, u, 0.1, 0, 0.1, 300)
    with pytest.raises(TypeError, match="stored in 8 bits"):
        qadd(u, 0.1, 0, u, 0.1, 0, 0.1, 0, "qint32")
    with pytest.raises(ValueError, match="qcat\\(\\): argument 'xs' must hold tensors of equal sizes"):
        qcat([u, lucid.zeros((3, 3), dtype=lucid.uint8, device=device)], [0.1, 0.1], [0, 0], 1, 0.1, 0)
    with pytest.raises(ValueError, match="'dim' is out of range"):
        qcat([u, u], [0.1, 0.1], [0, 0], 2, 0.1, 0)
    with pytest.raises(ValueError, match="at least one tensor"):
        qcat([], [], [], 0, 0.1, 0)
    with pytest.raises(TypeError, match="must hold codes of one dtype"):
        qcat([u, i], [0.1, 0.1], [0, 0], 0, 0.1, 0)
    m = QFunctional(0.1, 0).to(device)
    q = Q.QTensor(u, 0.1, 0, Q.quint8)
    with pytest.raises(TypeError, match="QFunctional.add"):
        m.add(q, lucid.zeros((2, 3), device=device))
    with pytest.raises(TypeError, match="QFunctional.cat"):
        m.cat([q, u])


def test_empty_and_zero_d(device):
    e = lucid.zeros((0, 3), dtype=lucid.uint8, device=device)
    assert tuple(qadd(e, 0.1, 0, e, 0.1, 0, 0.1, 0).shape) == (0, 3)
    assert tuple(qmul(e, 0.1, 0, e, 0.1, 0, 0.1, 0).shape) == (0, 3)
    assert tuple(qcat([e, e], [0.1, 0.1], [0, 0], 1, 0.1, 0).shape) == (0, 6)
    s = lucid.tensor(np.array(200, np.uint8), device=device)
    got = to_np(qadd(s, 0.5, 100, s, 0.25, 0, 1.0, 3))  # 50 + 50 -> 100 + 3
    assert got.shape == () and int(got) == 103
