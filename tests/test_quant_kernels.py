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


@pytest.mark.parametrize("zdtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("view", [False, True])
def test_per_group_and_per_channel_parameters_every_form(zdtype, view, rng):
    # int32 zero points and float32 scales with one value per slot are used in
    # place (no copy); other dtypes and strided views are converted first.
    # Every form gives numpy's codes, on long rows that reach the vector
    # bodies (NaN-free 32-blocks, blocks with NaN, grid ends, ties), and bad
    # values are reported at their first index either way.
    rows, cols, group = 6, 512, 128
    x = (rng.standard_normal((rows, cols)) * 2).astype(np.float32)
    x[1, ::37] = np.nan
    x[2, ::41] = -np.inf
    x[3, :64] = (np.arange(64, dtype=np.float32) - 32 + 0.5) * np.float32(0.0173)  # ties of x / s
    sg = (rng.random((rows, cols // group)) * 0.02 + 0.005).astype(np.float32)
    sg[3, 0] = np.float32(0.0173)
    zg = rng.integers(-128, 128, (rows, cols // group))
    zg[0, 0], zg[0, 1] = -128, 127
    sc = (rng.random(rows) * 0.02 + 0.005).astype(np.float32)
    zc = rng.integers(-128, 128, rows)

    def t(a, dtype):
        a = np.asarray(a).astype(dtype)
        if not view:
            return lucid.tensor(a)
        wide = np.repeat(a, 2, axis=-1)  # every other element: a strided view
        return lucid.tensor(wide)[..., ::2] if a.ndim > 1 else lucid.tensor(wide)[::2]

    got = Q.quantize(lucid.tensor(x), t(sg, np.float32), t(zg, zdtype), Q.qint8, group_size=group, axis=-1).numpy()
    want = ref_quantize(x, np.repeat(sg, group, axis=1), np.repeat(zg, group, axis=1).astype(np.float32), -128, 127)
    np.testing.assert_array_equal(got.astype(np.int64), want)
    got = Q.quantize(lucid.tensor(x), t(sc, np.float32), t(zc, zdtype), Q.qint8, ch_axis=0).numpy()
    want = ref_quantize(x, sc[:, None], zc[:, None].astype(np.float32), -128, 127)
    np.testing.assert_array_equal(got.astype(np.int64), want)
    bad_s, bad_z = sg.copy(), zg.copy()
    bad_s[4, 2], bad_z[5, 1] = np.float32(-1.0), 300
    with pytest.raises(ValueError, match="argument 'scale' must be finite and > 0, got -1.* at index 18$"):
        Q.quantize(lucid.tensor(x), t(bad_s, np.float32), t(zg, zdtype), Q.qint8, group_size=group, axis=-1)
    with pytest.raises(ValueError, match=r"argument 'zero_point' must lie in \[-128, 127\].*got 300 at index 21$"):
        Q.quantize(lucid.tensor(x), t(sg, np.float32), t(bad_z, zdtype), Q.qint8, group_size=group, axis=-1)


@pytest.mark.parametrize("qdtype,lo,hi", [("qint8", -128, 127), ("quint8", 0, 255)])
@pytest.mark.parametrize("mode", ["tensor", "channel", "group"])
def test_fast_quantize_equals_true_division_and_the_reference(qdtype, lo, hi, mode, rng):
    # The AVX2 byte path (NaN-free 32-blocks: float clamp above, byte clamp
    # below after saturating packs) against numpy's true division + rint and
    # the scalar reference kernel: exact ties k + 0.5, the floats next to
    # them, values far beyond the grid (below -2^31 too), -inf, -0, tiny.
    s = np.float32(0.00214854861)
    k = rng.integers(-300, 300, 4096).astype(np.float32)
    tie = (k + np.float32(0.5)) * s
    parts = [tie, np.nextafter(tie, np.float32(np.inf)), np.nextafter(tie, np.float32(-np.inf)),
             (rng.standard_normal(4096) * 100 * s).astype(np.float32),
             np.array([-np.inf, np.inf, -3e38, 3e38, -2147483904.0, -0.0, 0.0, 1e-45, -1e-40] * 8, np.float32)]
    x = np.concatenate(parts).astype(np.float32)
    x = x[: x.size // 256 * 256].reshape(-1, 256)
    rows = x.shape[0]
    z0 = 3 if lo < 0 else 131
    if mode == "tensor":
        sv, zv, kw = np.full((1, 1), s, np.float32), np.full((1, 1), z0, np.int32), {}
        st, zt = lucid.tensor(np.float32(s)), lucid.tensor(np.int32(z0))
    elif mode == "channel":
        sv = (np.full((rows, 1), s) * np.linspace(1, 1.5, rows)[:, None]).astype(np.float32)
        sv[::2] = s
        zv = rng.integers(lo, hi + 1, (rows, 1)).astype(np.int32)
        zv[0], zv[1] = lo, hi
        st, zt, kw = lucid.tensor(sv[:, 0]), lucid.tensor(zv[:, 0]), {"ch_axis": 0}
    else:
        sv = np.full((rows, 4), s, np.float32)
        sv[:, 1] *= np.float32(3.5)
        zv = rng.integers(lo, hi + 1, (rows, 4)).astype(np.int32)
        st, zt, kw = lucid.tensor(sv), lucid.tensor(zv), {"group_size": 64, "axis": -1}
    sfull = np.repeat(sv, 256 // sv.shape[1], axis=1)
    zfull = np.repeat(zv, 256 // zv.shape[1], axis=1).astype(np.float32)
    want = ref_quantize(x, sfull, zfull, lo, hi)
    args = (lucid.tensor(x)._impl, st._impl, zt._impl, qdtype, kw.get("ch_axis"), kw.get("group_size", 0),
            kw.get("axis", -1))
    fast = lucid.Tensor(lucid._C.quantize(*args)).numpy().astype(np.int64)
    ref = lucid.Tensor(lucid._C.quantize_reference(*args)).numpy().astype(np.int64)
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(fast, want)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape,axis", [((37, 3001), 0), ((5, 37, 901), 1)])
def test_per_channel_rows_in_one_call_and_split_across_tasks(threads, shape, axis, rng):
    # ch_axis 0 (no outer axis): whole runs of channel rows go to one kernel call, and
    # the thread pool's chunks start and end inside rows; ch_axis 1 with an outer axis
    # keeps the repeating parameter walk. Codes and values against numpy either way.
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    c = shape[axis]
    s = (rng.random(c) * 0.03 + 0.01).astype(np.float32)
    z = rng.integers(-100, 100, c)
    bshape = [1] * len(shape)
    bshape[axis] = c
    old = lucid.get_num_threads()
    lucid.set_num_threads(threads)
    try:
        q = Q.quantize(lucid.tensor(x), lucid.tensor(s), lucid.tensor(z.astype(np.int32)), Q.qint8, ch_axis=axis)
        d = Q.dequantize(q, lucid.tensor(s), lucid.tensor(z.astype(np.int32)), ch_axis=axis)
    finally:
        lucid.set_num_threads(old)
    want = ref_quantize(x, s.reshape(bshape), z.reshape(bshape).astype(np.float32), -128, 127)
    np.testing.assert_array_equal(q.numpy().astype(np.int64), want)
    np.testing.assert_array_equal(d.numpy(), ((want - z.reshape(bshape)).astype(np.float32) * s.reshape(bshape)))
