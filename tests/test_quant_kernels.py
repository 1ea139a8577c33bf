"""The quantization microkernels (csrc/cpu/kernels/) against their scalar
references: the standalone C++ driver natively (every ISA this CPU runs),
where the tools exist for aarch64 under qemu (the NEON kernels) and with
AVX-512 emulated by SIMDe (the AVX-512 kernels on an AVX2-only CPU); and
through lucid, long rows that reach the vector bodies, against numpy."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import lucid
import lucid.quantization as Q

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "check-arm64")


def _run(args, tmp_path):
    env = dict(os.environ, LUCID_KERNEL_TEST_DIR=str(tmp_path))
    r = subprocess.run([SCRIPT, *args], capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
    return r.stdout


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "g++")) is None, reason="no C++ compiler")
def test_kernel_driver_native(tmp_path):
    out = _run([], tmp_path)
    assert "mismatches" in out or "only the scalar reference" in out


@pytest.mark.skipif(shutil.which("aarch64-linux-gnu-g++") is None or shutil.which("qemu-aarch64") is None,
                    reason="needs g++-aarch64-linux-gnu and qemu-user")
def test_kernel_driver_arm64_under_qemu(tmp_path):
    out = _run(["--arm64"], tmp_path)
    assert "neon: " in out and "qb4w-gemv neon" in out


@pytest.mark.skipif(not os.path.isdir("/usr/include/simde") or os.uname().machine != "x86_64"
                    or shutil.which(os.environ.get("CXX", "g++")) is None,
                    reason="needs x86-64, g++ and SIMDe (libsimde-dev)")
def test_kernel_driver_avx512_emulated(tmp_path):
    out = _run(["--avx512-simde"], tmp_path)
    assert "avx512: " in out and "0 mismatches" in out.split("avx512: ")[1].splitlines()[0]


def ref_quantize(x, s, z, lo, hi):
    with np.errstate(all="ignore"):
        t = x / s
        c = np.clip(np.rint(t) + np.float32(z), lo, hi)
        return np.where(np.isnan(t), z, np.nan_to_num(c)).astype(np.int64)


@pytest.mark.parametrize("n", [31, 32, 33, 64, 1000, 4099])
def test_long_rows_reach_vector_bodies(n, rng):
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[::17] = np.nan
    x[5::23] = np.inf
    s, z = np.float32(0.0173), 3
    q = Q.quantize(lucid.tensor(x), float(s), z, Q.qint8).numpy()
    np.testing.assert_array_equal(q.astype(np.int64), ref_quantize(x, s, z, -128, 127))
    y = Q.dequantize(lucid.tensor(q), float(s), z).numpy()
    expected = ((q.astype(np.int32) - z).astype(np.float32) * s).astype(np.float32)
    assert y.tobytes() == expected.tobytes()
    fq = Q.fake_quantize(lucid.tensor(x), float(s), z, -128, 127).numpy()
    want = np.where(np.isnan(x), np.float32(np.nan), expected)
    assert fq.view(np.uint32)[np.isnan(x)].tolist() == [0x7FC00000] * int(np.isnan(x).sum())
    np.testing.assert_array_equal(fq[~np.isnan(x)], want[~np.isnan(x)])


@pytest.mark.parametrize("shape", [(3, 130), (2, 257), (1, 4096)])
@pytest.mark.parametrize("signed", [True, False])
def test_pack_unpack_long_rows(shape, signed, rng):
    lo, hi = (-8, 7) if signed else (0, 15)
    codes = rng.integers(lo, hi + 1, shape).astype(np.int8 if signed else np.uint8)
    c = codes.astype(np.uint8) & 0x0F
    if shape[-1] % 2:
        c = np.concatenate([c, np.zeros(shape[:-1] + (1,), np.uint8)], -1)
    want = (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)
    packed = Q.pack_int4(lucid.tensor(codes))
    assert packed.numpy().tobytes() == want.tobytes()
    assert Q.unpack_int4(packed, shape[-1], signed).numpy().tobytes() == codes.tobytes()
