"""int4_weight_only_linear(act_dtype="qint8"): activations quantized per row to
int8, exact integer group dots, float combination in a fixed order
(docs/numerics.md, "int4 weight-only linear with int8 activations"). Both
streams against a numpy reference written here, bit for bit; the fast CPU
kernels against the scalar ones; edge rows; argument errors."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C

NAN_BITS = 0x7FC00000


def pack(codes):
    c = codes.astype(np.uint8) & 0x0F
    return (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)


def ref_qd8(x, codes, s, z, group, bias=None):
    """The formula of docs/numerics.md in numpy: float32 steps, int64 dots."""
    m, k = x.shape
    n = codes.shape[0]
    groups = k // group
    d = codes.astype(np.int64) - np.repeat(z.astype(np.int64), group, axis=1)  # q - z, (N, K)
    out = np.empty((m, n), np.float32)
    for i in range(m):
        row = x[i]
        if not np.all(np.isfinite(row)):
            out[i] = np.array(NAN_BITS, np.uint32).view(np.float32)
            continue
        amax = np.abs(row).max() if k else np.float32(0)
        sa = max(np.float32(np.float32(amax) / np.float32(127)), np.float32(2.0 ** -126))
        xq = np.clip(np.rint(row / sa), -127, 127).astype(np.int64)
        a = (d * xq).reshape(n, groups, group).sum(-1)                  # exact group dots
        t = (a.astype(np.float32) * s).astype(np.float32)
        u = np.zeros(n, np.float32)
        for g in range(groups):                                          # left to right
            u = (u + t[:, g]).astype(np.float32)
        y = (u * sa).astype(np.float32)
        out[i] = y if bias is None else (y + bias).astype(np.float32)
    return out


def make(rng, n, k, group, signed, with_zp=True):
    lo, hi = (-8, 7) if signed else (0, 15)
    codes = rng.integers(lo, hi + 1, (n, k)).astype(np.int8 if signed else np.uint8)
    s = (rng.random((n, k // group)) * 0.05 + 1e-3).astype(np.float32)
    z = rng.integers(lo, hi + 1, (n, k // group)) if with_zp else np.zeros((n, k // group), np.int64)
    if with_zp:
        z[0, 0], z[-1, -1] = lo, hi  # grid ends
    return codes, s, z


def run(device, x, codes, s, z, group, signed, with_zp, bias=None, fn=None):
    t = lambda a: lucid.tensor(a, device=device)  # noqa: E731
    args = dict(group_size=group, qdtype=Q.qint4 if signed else Q.quint4, act_dtype="qint8",
                bias=None if bias is None else t(bias))
    zp = t(z.astype(np.int32)) if with_zp else None
    return Q.int4_weight_only_linear(t(x), t(pack(codes)), t(s), zp, **args).numpy()


def same_bits(a, b):
    assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
    bad = np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))
    assert bad.size == 0, (bad[:5], a.ravel()[bad[:5]], b.ravel()[bad[:5]])


@pytest.mark.parametrize("signed,with_zp", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("group,k", [(32, 96), (32, 256), (64, 192), (96, 288), (128, 512)])
@pytest.mark.parametrize("m", [1, 3, 20])
def test_matches_numpy_bit_for_bit(device, rng, signed, with_zp, group, k, m):
    n = 37  # not a multiple of the 8-column tile
    codes, s, z = make(rng, n, k, group, signed, with_zp)
    x = (rng.standard_normal((m, k)) * rng.choice([0.01, 1.0, 300.0], (m, 1))).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32) if m != 3 else None
    y = run(device, x, codes, s, z, group, signed, with_zp, bias)
    same_bits(y, ref_qd8(x, codes, s, z, group, bias))


def test_streams_agree_on_a_decoding_shape(rng):
    n, k, group = 200, 4096, 128
    codes, s, z = make(rng, n, k, group, True, False)
    x = rng.standard_normal((1, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    cpu = run("cpu", x, codes, s, z, group, True, False, bias)
    gpu = run("gpu", x, codes, s, z, group, True, False, bias)
    same_bits(cpu, gpu)
    same_bits(cpu, ref_qd8(x, codes, s, z, group, bias))


def test_hand_computed_codes_ties_and_grid_ends(device):
    # amax = 127 -> sa = 1: codes are rint(x), ties to even (0.5 -> 0, 1.5 -> 2,
    # 2.5 -> 2, -0.5 -> -0), and +-127 at the ends.
    k = 32
    x = np.zeros((1, k), np.float32)
    x[0, :6] = [127, 0.5, 1.5, 2.5, -0.5, -127]
    xq = np.zeros(k, np.int64)
    xq[:6] = [127, 0, 2, 2, 0, -127]
    codes = np.zeros((3, k), np.int8)
    codes[0, :] = 1                      # sum of the codes: 127 + 0 + 2 + 2 + 0 - 127 = 4
    codes[1, :6] = [7, -8, 3, 1, 5, -8]  # 889 + 0 + 6 + 2 + 0 + 1016 = 1913
    codes[2, :] = -8                     # -8 * 4 = -32
    s = np.array([[0.5], [0.25], [1.0]], np.float32)
    y = run(device, x, codes, s, np.zeros((3, 1), np.int64), 32, True, False)
    assert y.tolist() == [[2.0, 478.25, -32.0]]
    assert (codes.astype(np.int64) @ xq).tolist() == [4, 1913, -32]


@pytest.mark.parametrize("fill", ["zero", "fifteen"])
def test_weights_at_the_nibble_ends(device, rng, fill):
    # quint4 codes all 0 or all 15 with zero points at the other end; activations at +-127.
    n, k, group = 9, 160, 32
    codes = np.full((n, k), 0 if fill == "zero" else 15, np.uint8)
    z = np.full((n, k // group), 15 if fill == "zero" else 0, np.int64)
    s = (rng.random((n, k // group)) + 0.5).astype(np.float32)
    x = np.where(rng.random((2, k)) < 0.5, -3.0, 3.0).astype(np.float32)
    y = run(device, x, codes, s, z, group, False, True)
    same_bits(y, ref_qd8(x, codes, s, z, group))


def test_zero_rows_tiny_rows_and_non_finite_rows(device, rng):
    n, k, group = 11, 64, 32
    codes, s, z = make(rng, n, k, group, True)
    x = rng.standard_normal((6, k)).astype(np.float32)
    x[1] = 0.0                           # sa = 2^-126, codes 0: y = bias exactly
    x[2] = 1e-38                         # amax / 127 is subnormal: the 2^-126 floor
    x[3, 5] = np.nan
    x[4, 0] = -np.inf
    bias = rng.standard_normal(n).astype(np.float32)
    y = run(device, x, codes, s, z, group, True, True, bias)
    same_bits(y, ref_qd8(x, codes, s, z, group, bias))
    assert y[1].tolist() == bias.tolist()
    assert (y[3:5].view(np.uint32) == NAN_BITS).all()
    assert np.isfinite(y[[0, 2, 5]]).all()


def test_empty_shapes(device):
    x = lucid.zeros(2, 0, device=device)
    w = lucid.zeros(4, 0, dtype=lucid.uint8, device=device)
    s = lucid.ones(4, 0, device=device)
    b = lucid.tensor([1.0, -2.0, 0.5, 3.0], device=device)
    y = Q.int4_weight_only_linear(x, w, s, group_size=32, bias=b, act_dtype="qint8")
    assert y.numpy().tolist() == [[1.0, -2.0, 0.5, 3.0]] * 2
    y = Q.int4_weight_only_linear(lucid.zeros(0, 64, device=device), lucid.zeros(4, 32, dtype=lucid.uint8,
                                  device=device), lucid.ones(4, 2, device=device), group_size=32, act_dtype="qint8")
    assert y.shape == (0, 4)


def test_batched_leading_dims_and_qdtype_object(device, rng):
    n, k, group = 8, 128, 64
    codes, s, z = make(rng, n, k, group, True, False)
    x = rng.standard_normal((2, 3, k)).astype(np.float32)
    t = lambda a: lucid.tensor(a, device=device)  # noqa: E731
    y = Q.int4_weight_only_linear(t(x), t(pack(codes)), t(s), group_size=group, act_dtype=Q.qint8).numpy()
    assert y.shape == (2, 3, n)
    same_bits(y.reshape(6, n), ref_qd8(x.reshape(6, k), codes, s, z, group))


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("group,k", [(32, 4096), (96, 480), (128, 4096)])
def test_fast_kernels_equal_the_scalar_reference(rng, signed, group, k):
    n = 203
    codes, s, z = make(rng, n, k, group, signed, not signed or group == 96)
    x = rng.standard_normal((5, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    args = (lucid.tensor(x)._impl, lucid.tensor(pack(codes))._impl, lucid.tensor(s)._impl,
            lucid.tensor(z.astype(np.int32))._impl if (not signed or group == 96) else None)
    q = "qint4" if signed else "quint4"
    threads = lucid.get_num_threads()
    try:
        outs = []
        for nt in sorted({1, min(4, max(threads, 2))}):
            lucid.set_num_threads(nt)
            outs.append(lucid.Tensor(_C.int4_weight_only_linear(*args, group, q, lucid.tensor(bias)._impl,
                                                                "qint8")).numpy())
        ref = lucid.Tensor(_C.int4_weight_only_linear_reference(*args, group, q, lucid.tensor(bias)._impl,
                                                                "qint8")).numpy()
    finally:
        lucid.set_num_threads(threads)
    for o in outs:
        same_bits(o, ref)
    same_bits(ref, ref_qd8(x, codes, s, z if (not signed or group == 96) else np.zeros_like(z), group, bias))


def test_errors_are_the_same_on_both_streams(device):
    t = lambda a: lucid.tensor(a, device=device)  # noqa: E731
    x, w, s = t(np.ones((1, 64), np.float32)), t(np.zeros((2, 32), np.uint8)), t(np.ones((2, 2), np.float32))
    for bad in ["quint8", "int8", Q.qint4]:
        with pytest.raises(ValueError, match="act_dtype"):
            Q.int4_weight_only_linear(x, w, s, group_size=32, act_dtype=bad)
    with pytest.raises(ValueError, match="act_dtype"):
        _C.int4_weight_only_linear(x._impl, w._impl, s._impl, None, 32, "qint4", None, "float16")
    big = 1 << 21  # group_size above 2^20: the int32 group dots could overflow
    with pytest.raises(ValueError, match="at most 2\\^20"):
        Q.int4_weight_only_linear(lucid.zeros(1, big, device=device), lucid.zeros(1, big // 2, dtype=lucid.uint8,
                                  device=device), lucid.ones(1, 1, device=device), group_size=big, act_dtype="qint8")


def test_weight_only_int4_linear_module_passes_act_dtype(device, rng):
    from lucid.nn.quantized import dynamic as nnqd

    lin = lucid.nn.Linear(96, 13)
    m = nnqd.WeightOnlyInt4Linear.from_float(lin, group_size=32, act_dtype="qint8").to(device)
    assert m.act_dtype == "qint8" and "act_dtype=qint8" in repr(m)
    x = rng.standard_normal((4, 96)).astype(np.float32)
    y = m(lucid.tensor(x, device=device)).numpy()
    codes = Q.unpack_int4(m.weight_packed, 96, signed=True).to("cpu").numpy()
    s = m.weight_scale.to("cpu").numpy()
    same_bits(y, ref_qd8(x, codes, s, np.zeros_like(s, np.int64), 32, m.bias_float.to("cpu").numpy()))
    assert nnqd.WeightOnlyInt4Linear(96, 13, group_size=32).act_dtype is None
    with pytest.raises(ValueError, match="act_dtype"):
        nnqd.WeightOnlyInt4Linear(96, 13, group_size=32, act_dtype="quint8")


@pytest.mark.parametrize("group", [8224, 16384])  # above 8192: the GPU stream splits each group into exact blocks
def test_groups_longer_than_the_exact_float_block(device, rng, group):
    n, k = 5, 2 * group
    codes, s, z = make(rng, n, k, group, False)
    codes[0] = 15
    z[0] = 0                             # a row of maximal |q - z| with codes at +-127: |A| near 127 * 15 * G
    x = rng.standard_normal((2, k)).astype(np.float32)
    x[1] = np.where(np.arange(k) % 2, 4.0, -4.0)
    x[1, ::3] = 4.0
    y = run(device, x, codes, s, z, group, False, True)
    same_bits(y, ref_qd8(x, codes, s, z, group))


@pytest.mark.parametrize("where", [0, 5, 2500, -1])
@pytest.mark.parametrize("bad", [0.0, -0.0, -1.0, float("inf"), float("nan"), -float("inf")])
def test_a_bad_scale_is_reported_at_its_first_index_on_every_path(device, rng, where, bad):
    # The CPU qd8 path checks the scales chunk by chunk inside the kernel run
    # (threads may meet a later bad chunk first); the error must still name
    # the first bad flat index, as the float path and the GPU stream do.
    n, k, group = 1200, 256, 64  # 128 weight bytes a row: 512-row chunks, three of them
    codes, s, z = make(rng, n, k, group, True, False)
    flat = s.reshape(-1)
    idx = where % flat.size
    flat[idx] = bad
    flat[-1] = np.float32(np.nan)  # a later bad scale too (a different chunk)
    x = rng.standard_normal((2, k)).astype(np.float32)
    t = lambda a: lucid.tensor(a, device=device)  # noqa: E731
    threads = lucid.get_num_threads()
    try:
        for nt in sorted({1, min(4, max(threads, 2))}):
            lucid.set_num_threads(nt)
            for act in ("qint8", None):
                with pytest.raises(ValueError, match=f"argument 'scale' must be finite and > 0, got .* at flat "
                                                     f"index {idx}$"):
                    Q.int4_weight_only_linear(t(x), t(pack(codes)), t(s), group_size=group, act_dtype=act)
    finally:
        lucid.set_num_threads(threads)
    if device == "cpu":
        with pytest.raises(ValueError, match=f"at flat index {idx}$"):
            _C.int4_weight_only_linear_reference(t(x)._impl, t(pack(codes))._impl, t(s)._impl, None, group,
                                                 "qint4", None, "qint8")


def test_a_bad_scale_is_reported_before_later_argument_errors(device, rng):
    n, k, group = 16, 128, 32
    codes, s, z = make(rng, n, k, group, False, True)
    s[3, 1] = -2.0
    t = lambda a: lucid.tensor(a, device=device)  # noqa: E731
    x = t(rng.standard_normal((1, k)).astype(np.float32))
    bad_z = z.copy()
    bad_z[0, 0] = 99
    for zp, bias in [(bad_z, None), (None, None), (z, np.zeros(3, np.float32))]:
        with pytest.raises(ValueError, match="argument 'scale' must be finite and > 0, got -2.0+ at flat index 13$"):
            Q.int4_weight_only_linear(x, t(pack(codes)), t(s), None if zp is None else t(zp.astype(np.int32)),
                                      group_size=group, qdtype=Q.quint4, act_dtype="qint8",
                                      bias=None if bias is None else t(bias))
    # Empty x: no kernel runs, the scales are still checked.
    with pytest.raises(ValueError, match="at flat index 13$"):
        Q.int4_weight_only_linear(t(np.zeros((0, k), np.float32)), t(pack(codes)), t(s), t(z.astype(np.int32)),
                                  group_size=group, qdtype=Q.quint4, act_dtype="qint8")
