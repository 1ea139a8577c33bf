"""calculate_qparams against a numpy transcription of the formulas and, where
torch is installed, against PyTorch's observers (the behaviour we follow)."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from _qref import F32, to_np

# The grids with reduce_range=True, from docs/numerics.md ("halves an 8-bit grid"); 4-bit grids unchanged.
REDUCED = {"qint8": (-64, 63), "quint8": (0, 127), "qint4": (-8, 7), "quint4": (0, 15)}
RANGES = [(-1.0, 3.0), (0.0, 0.0), (-5.5, -0.25), (0.1, 7.3), (-3e-8, 2e-8), (-1e6, 1e-3), (-0.7, 0.7),
          (-0.00214854861, 1.3)]
SCHEMES = [Q.per_tensor_affine, Q.per_tensor_symmetric]


def ref(mn, mx, qmin, qmax, symmetric, signed, eps=F32(2**-23)):
    min_neg, max_pos = np.minimum(F32(mn), F32(0)), np.maximum(F32(mx), F32(0))
    if symmetric:
        s = np.maximum(np.maximum(-min_neg, max_pos) / F32((qmax - qmin) / 2), eps)
        return s, (0 if signed else (qmin + qmax + 1) // 2)
    s = np.maximum((max_pos - min_neg) / F32(qmax - qmin), eps)
    return s, int(np.clip(qmin - np.rint(min_neg / s), qmin, qmax))


@pytest.mark.parametrize("qd", [Q.qint8, Q.quint8, Q.qint4, Q.quint4], ids=lambda q: q.name)
@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@pytest.mark.parametrize("reduce_range", [False, True])
def test_per_tensor(device, qd, scheme, reduce_range):
    qmin, qmax = REDUCED[qd.name] if reduce_range else (qd.quant_min, qd.quant_max)
    for mn, mx in RANGES:
        p = Q.calculate_qparams(lucid.tensor(mn, device=device), lucid.tensor(mx, device=device), qd, scheme,
                                reduce_range=reduce_range)
        s, z = ref(mn, mx, qmin, qmax, scheme.is_symmetric, qd.signed)
        assert p.scale.device.type == device and p.scale.dtype == lucid.float32 and p.scale.shape == ()
        assert to_np(p.scale).tobytes() == np.asarray(s, F32).tobytes(), (mn, mx)
        assert to_np(p.zero_point).item() == z
        assert (p.qdtype, p.qscheme, p.ch_axis) == (qd, scheme, None)


def test_per_channel(device):
    mn = np.array([-1.0, 0.0, -2.5, 0.3], F32)
    mx = np.array([1.0, 4.0, -0.5, 0.9], F32)
    for scheme in (Q.per_channel_affine, Q.per_channel_symmetric):
        p = Q.calculate_qparams(lucid.tensor(mn, device=device), lucid.tensor(mx, device=device), Q.qint8, scheme)
        assert p.scale.shape == (4,) and p.ch_axis == 0
        for i in range(4):
            s, z = ref(mn[i], mx[i], -128, 127, scheme.is_symmetric, True)
            assert to_np(p.scale)[i] == s and to_np(p.zero_point)[i] == z


def test_numbers_accepted_and_quantize_with_result():
    p = Q.calculate_qparams(-1.0, 3.0, Q.quint8, Q.per_tensor_affine)
    q = Q.quantize(lucid.tensor([-1.0, 0.0, 3.0]), p.scale, p.zero_point, p.qdtype)
    assert q.tolist() == [0, 64, 255]


# PyTorch 2.14's MinMaxObserver(dtype, qscheme, reduce_range)._calculate_qparams over RANGES:
# (scale as float32 bits, zero point), generated once with torch and written here (CI has no torch).
TORCH_OBSERVERS = {
 ('qint8', 'per_tensor_affine', False): [('0x3c808081', -64), ('0x34000000', -128), ('0x3cb0b0b1', 127),
                                         ('0x3cea841e', -128), ('0x34000000', -128), ('0x45751919', 127),
                                         ('0x3bb3e71a', 0), ('0x3ba75421', -128)],
 ('qint8', 'per_tensor_affine', True): [('0x3d010204', -32), ('0x34000000', -64), ('0x3d3162c6', 63),
                                        ('0x3d6b707b', -64), ('0x34000000', -64), ('0x45f61020', 63),
                                        ('0x3c349c6c', 0), ('0x3c27fcc7', -64)],
 ('qint8', 'per_tensor_symmetric', False): [('0x3cc0c0c1', 0), ('0x34000000', 0), ('0x3d30b0b1', 0),
                                            ('0x3d6a841e', 0), ('0x34000000', 0), ('0x45f51919', 0),
                                            ('0x3bb3e71a', 0), ('0x3c270d73', 0)],
 ('qint8', 'per_tensor_symmetric', True): [('0x3d418306', 0), ('0x34000000', 0), ('0x3db162c6', 0),
                                           ('0x3deb707b', 0), ('0x34000000', 0), ('0x46761020', 0),
                                           ('0x3c349c6c', 0), ('0x3ca7b5d2', 0)],
 ('quint8', 'per_tensor_affine', False): [('0x3c808081', 64), ('0x34000000', 0), ('0x3cb0b0b1', 255),
                                          ('0x3cea841e', 0), ('0x34000000', 0), ('0x45751919', 255),
                                          ('0x3bb3e71a', 128), ('0x3ba75421', 0)],
 ('quint8', 'per_tensor_affine', True): [('0x3d010204', 32), ('0x34000000', 0), ('0x3d3162c6', 127),
                                         ('0x3d6b707b', 0), ('0x34000000', 0), ('0x45f61020', 127),
                                         ('0x3c349c6c', 64), ('0x3c27fcc7', 0)],
 ('quint8', 'per_tensor_symmetric', False): [('0x3cc0c0c1', 128), ('0x34000000', 128), ('0x3d30b0b1', 128),
                                             ('0x3d6a841e', 128), ('0x34000000', 128), ('0x45f51919', 128),
                                             ('0x3bb3e71a', 128), ('0x3c270d73', 128)]}


@pytest.mark.parametrize("key", list(TORCH_OBSERVERS), ids=lambda k: "-".join(map(str, k)))
def test_matches_pytorch_observers(device, key):
    qd_name, scheme_name, reduce_range = key
    for (mn, mx), (bits, zp) in zip(RANGES, TORCH_OBSERVERS[key]):
        p = Q.calculate_qparams(lucid.tensor(mn, device=device), lucid.tensor(mx, device=device),
                                getattr(Q, qd_name), getattr(Q, scheme_name), reduce_range=reduce_range)
        assert int(to_np(p.scale).view(np.uint32)) == int(bits, 16), (key, mn, mx)
        assert to_np(p.zero_point).item() == zp, (key, mn, mx)


def test_bad_ranges():
    with pytest.raises(ValueError, match="calculate_qparams.*min_val.*max_val"):
        Q.calculate_qparams(2.0, 1.0, Q.qint8, Q.per_tensor_affine)
    with pytest.raises(ValueError, match="finite"):
        Q.calculate_qparams(float("nan"), 1.0, Q.qint8, Q.per_tensor_affine)
    with pytest.raises(TypeError, match="qscheme"):
        Q.calculate_qparams(0.0, 1.0, Q.qint8, "per_row")
    with pytest.raises(ValueError, match="per-channel"):
        Q.calculate_qparams(0.0, 1.0, Q.qint8, Q.per_channel_affine)


def test_qdtype_and_qscheme_objects():
    assert repr(Q.qint8) == "lucid.quantization.qint8"
    assert Q.quint8.storage == "uint8" and Q.qint32.storage == "int32"
    assert Q.quint8.storage_dtype is lucid.uint8 and Q.qint32.storage_dtype is lucid.int32
    grids = (Q.qint8, Q.quint8, Q.qint4, Q.quint4)
    assert [q.reduced_range() for q in grids] == [REDUCED[q.name] for q in grids]
    assert [(q.quant_min, q.quant_max, q.bits, q.signed) for q in (Q.qint8, Q.quint8, Q.qint4, Q.quint4)] == [
        (-128, 127, 8, True), (0, 255, 8, False), (-8, 7, 4, True), (0, 15, 4, False)]
    assert (Q.qint32.quant_min, Q.qint32.quant_max) == (-(2**31), 2**31 - 1)
    with pytest.raises(Exception):
        Q.qint8.bits = 4
    assert len(Q.QScheme) == 4
    assert Q.per_channel_affine.is_per_channel and not Q.per_channel_affine.is_symmetric
    assert Q.per_tensor_symmetric.is_symmetric and not Q.per_tensor_symmetric.is_per_channel
    assert Q.QScheme.per_tensor_affine is Q.per_tensor_affine
