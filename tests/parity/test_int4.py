"""pack_int4 / unpack_int4 on both streams against numpy, round trips and bytes across streams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from _qref import assert_bytes_equal, to_np


def ref_pack(codes, axis):
    c = np.moveaxis(codes.astype(np.uint8) & 0x0F, axis, -1)
    if c.shape[-1] % 2:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), np.uint8)], -1)
    out = c[..., 0::2] | (c[..., 1::2] << 4)
    return np.moveaxis(out.astype(np.uint8), -1, axis)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("shape,axis", [((7,), -1), ((8,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 5, 3), 1),
                                        ((4, 1), 1), ((0, 4), 1), ((1,), 0)])
def test_pack_unpack(device, signed, shape, axis, rng):
    lo, hi = (-8, 7) if signed else (0, 15)
    codes = rng.integers(lo, hi + 1, shape).astype(np.int8 if signed else np.uint8)
    packed = Q.pack_int4(lucid.tensor(codes, device=device), axis=axis)
    assert packed.dtype == lucid.uint8
    assert_bytes_equal(to_np(packed), ref_pack(codes, axis), "pack")
    back = Q.unpack_int4(packed, shape[axis], signed, axis=axis)
    assert_bytes_equal(to_np(back), codes, "unpack")


def test_low_nibble_first_and_padding(device):
    p = Q.pack_int4(lucid.tensor([1, -2, 7], dtype=lucid.int8, device=device))
    assert to_np(p).tolist() == [0xE1, 0x07]
    u = Q.unpack_int4(lucid.tensor([0xE1, 0x07], dtype=lucid.uint8, device=device), 4, signed=False)
    assert to_np(u).tolist() == [1, 14, 7, 0]


def test_streams_identical(rng):
    codes = rng.integers(-8, 8, (9, 17)).astype(np.int8)
    a = to_np(Q.pack_int4(lucid.tensor(codes), axis=1))
    b = to_np(Q.pack_int4(lucid.tensor(codes, device="gpu"), axis=1))
    assert_bytes_equal(a, b)
    ua = to_np(Q.unpack_int4(lucid.tensor(a), 17, True, axis=1))
    ub = to_np(Q.unpack_int4(lucid.tensor(a, device="gpu"), 17, True, axis=1))
    assert_bytes_equal(ua, ub)


def test_quantize_pack_roundtrip(device, rng):
    x = rng.standard_normal((4, 33)).astype(np.float32)
    q = Q.quantize(lucid.tensor(x, device=device), 0.3, 0, Q.qint4)
    back = Q.unpack_int4(Q.pack_int4(q), 33, True)
    assert_bytes_equal(to_np(back), to_np(q))
