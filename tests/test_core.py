"""Tensor core: dtypes, devices, creation, conversion, copies."""
import numpy as np
import pytest

import lucid
from conftest import to_np


def test_dtype_promotion_matches_numpy():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32"]
    for a in names:
        for b in names:
            expected = np.promote_types(a, b).name.replace("float64", "float32")  # lucid has no float64
            got = lucid.promote_types(getattr(lucid, a if a != "bool" else "bool_"),
                                      getattr(lucid, b if b != "bool" else "bool_")).name
            assert got == expected, (a, b)
    assert lucid.promote_types(lucid.float16, lucid.bfloat16) is lucid.float32


def test_device_aliases_and_errors():
    assert lucid.device("cuda") == lucid.device("metal") == "gpu"
    with pytest.raises(ValueError, match="device"):
        lucid.zeros(2, device="tpu")
    assert lucid.gpu.backend() in ("metal", "cuda", "mlx-cpu")


def test_gpu_missing_raises_clearly(monkeypatch):
    monkeypatch.setattr(lucid.gpu, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="LUCID_MLX_DEVICE=cpu"):
        lucid.zeros(2, device="gpu")


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32"])
def test_roundtrip_numpy_and_devices(device, dtype, rng):
    a = (rng.standard_normal((3, 5)) * 50).astype(dtype)
    t = lucid.tensor(a, device=device)
    assert t.shape == (3, 5) and t.dtype.name == dtype and t.device == device
    np.testing.assert_array_equal(to_np(t), a)
    np.testing.assert_array_equal(np.asarray(t.to("cpu")), a)


def test_from_numpy_shares_memory_and_copies_when_needed():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = lucid.from_numpy(a)
    a[0, 0] = 42
    assert t.tolist()[0][0] == 42
    rev = lucid.from_numpy(a[:, ::-1])  # negative strides: copied
    np.testing.assert_array_equal(rev.numpy(), a[:, ::-1])
    with pytest.raises(TypeError, match="float64|unsupported"):
        lucid.from_numpy(np.zeros(2, dtype=np.complex64))


def test_bfloat16_and_float16_conversion_round_to_nearest_even(device, rng):
    x = np.concatenate([rng.standard_normal(1000).astype(np.float32) * 1000,
                        np.array([65504, 65520, 65519.99, 1e-8, 6e-8, -0.0, np.inf, -np.inf], np.float32)])
    t = lucid.tensor(x, device=device)
    np.testing.assert_array_equal(to_np(t.to(lucid.float16)), x.astype(np.float16))
    # bfloat16 reference: round the float32 bit pattern to its top 16 bits, ties to even.
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(to_np(t.to(lucid.bfloat16)), rounded)


def test_float_to_int_cast_truncates_saturates_and_maps_nan(device):
    x = lucid.tensor([1e10, -1e10, float("nan"), 3.7, -3.7, 127.9, -128.9], device=device)
    assert x.to(lucid.int32).tolist() == [2**31 - 1, -(2**31), 0, 3, -3, 127, -128]
    assert x.to(lucid.int8).tolist() == [127, -128, 0, 3, -3, 127, -128]
    assert x.to(lucid.uint8).tolist() == [255, 0, 0, 3, 0, 127, 0]


def test_creation_functions(device):
    assert lucid.zeros(2, 3, device=device).tolist() == [[0.0] * 3] * 2
    assert lucid.ones((2,), dtype=lucid.int8, device=device).tolist() == [1, 1]
    assert lucid.full((2,), 7, device=device).dtype is lucid.int64
    assert lucid.arange(1, 7, 2, device=device).tolist() == [1, 3, 5]
    np.testing.assert_allclose(to_np(lucid.linspace(0, 1, 5, device=device)), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(to_np(lucid.eye(3, 2, device=device)), np.eye(3, 2))
    assert lucid.empty(0, 4, device=device).shape == (0, 4)
    with pytest.raises(ValueError, match="size"):
        lucid.zeros(-1)


def test_random_is_identical_on_both_streams():
    lucid.manual_seed(7)
    a = lucid.randn(4, 5)
    lucid.manual_seed(7)
    b = lucid.randn(4, 5, device="gpu")
    np.testing.assert_array_equal(to_np(a), to_np(b))
    lucid.manual_seed(7)
    r = lucid.randint(0, 10, (100,))
    assert r.dtype is lucid.int64 and 0 <= r.numpy().min() and r.numpy().max() < 10
    u = lucid.rand(1000).numpy()
    assert 0 <= u.min() and u.max() < 1


def test_scalar_conversions_and_repr(device):
    t = lucid.tensor([2.5], device=device)
    assert float(t) == 2.5 and int(t) == 2 and bool(t)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(lucid.ones(2))
    assert "tensor([2.5" in repr(t)
    assert len(lucid.zeros(3, 2)) == 3


def test_threads():
    n = lucid.get_num_threads()
    lucid.set_num_threads(1)
    assert lucid.get_num_threads() == 1
    lucid.set_num_threads(n)
    with pytest.raises(ValueError, match="'n'"):
        lucid.set_num_threads(0)


def test_dlpack_export():
    t = lucid.arange(4, dtype=lucid.float32)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(4, dtype=np.float32))


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc/self/statm")
@pytest.mark.parametrize("keep", ["1", "0"])
def test_freed_large_buffers_are_kept_unless_disabled(keep):
    """Idle 32 MiB+ buffers stay resident for reuse; LUCID_KEEP_FREED_MEMORY=0 returns them."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import os, lucid\n"
        "page = os.sysconf('SC_PAGE_SIZE')\n"
        "rss = lambda: int(open('/proc/self/statm').read().split()[1]) * page\n"
        "before = rss()\n"
        "t = lucid.full((64 << 20,), 1.0)\n"  # 256 MiB, touched by the fill
        "assert t[-1].item() == 1.0\n"
        "del t\n"
        "print((rss() - before) >> 20)\n"
    )
    env = dict(os.environ, LUCID_KEEP_FREED_MEMORY=keep, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    held_mib = int(out.stdout.strip())
    if keep == "1":
        assert held_mib >= 200
    else:
        assert held_mib < 50
