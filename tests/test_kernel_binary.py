"""Builds and runs the standalone microkernel test + bench binary
(tests/kernels, CMake target lucid_kernel_tests) when cmake and a C++
compiler are present: every kernel variant this CPU supports must equal the
scalar reference bit for bit. The build goes to build/kernel-tests (reused,
incremental; ccache when installed)."""
import os
import pathlib
import platform
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "kernel-tests"


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []


def _tools():
    cmake = shutil.which("cmake")
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    return cmake, cxx


@pytest.fixture(scope="module")
def binary():
    cmake, cxx = _tools()
    if not cmake or not cxx:
        pytest.skip("cmake or a C++ compiler is not installed")
    args = [cmake, "-S", str(ROOT / "tests" / "kernels"), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"] if not (BUILD / "CMakeCache.txt").exists() else []
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    subprocess.run(args, check=True, capture_output=True, text=True)
    subprocess.run([cmake, "--build", str(BUILD), "-j", "2"], check=True, capture_output=True, text=True)
    return BUILD / "lucid_kernel_tests"


def test_every_supported_kernel_equals_scalar_reference(binary):
    r = subprocess.run([str(binary), "--quick"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    out = r.stdout
    assert "0 failures" in out
    assert "[test ] qgemm/qu8-qs8-gemm-2x4c1-scalar" in out
    # Each test case ends with "ok"; a kernel the CPU lacks says so explicitly.
    blocks = out.split("[bench]")[0].split("[test ] ")[1:]
    assert blocks and all(b.rstrip().splitlines()[-1].strip() == "ok" for b in blocks)
    assert "GOP/s" in out and "peak" in out
    # int4 weights x int8 activations: the scalar reference against the formula, the vector kernels against it.
    assert "[test ] qb4w-gemv/qd8-f32-qb4w-gemv-1x8-scalar" in out
    if platform.machine() in ("x86_64", "AMD64") and "avx2" in _cpu_flags():
        block = out.split("[test ] qb4w-gemv/qd8-f32-qb4w-gemv-1x8-avx2\n")[1].split("[")[0]
        assert "problems equal the scalar reference" in block and block.rstrip().endswith("ok"), block


def test_vnni_kernels_native_where_this_cpu_has_them(binary):
    """AVX-512 VNNI (and AVX-VNNI, AMX) kernels run natively on a CPU that has them:
    their blocks must say "ok", not "skipped"."""
    r = subprocess.run([str(binary), "--no-bench", "--filter", "qgemm"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    flags = set(_cpu_flags())
    ran = []
    for name, flag in (("qu8-qs8-gemm-8x32c4-avx512vnni", "avx512_vnni"), ("qu8-qs8-gemm-6x16c4-avxvnni", "avx_vnni"),
                       ("qu8-qs8-gemm-32x32c4-amx", "amx_int8")):
        block = r.stdout.split(f"[test ] qgemm/{name}\n")[1].split("[test ]")[0]
        if flag in flags:
            assert block.strip() == "ok", block
            ran.append(name)
        else:
            assert "skipped: this CPU lacks" in block, block
    block = r.stdout.split("[test ] qgemm/self-check\n")[1].split("[test ]")[0]
    assert block.rstrip().endswith("ok") and "FAILED" not in block, block
    assert "reference    verified" in block


def test_vnni_kernels_under_simde():
    """The AVX-512 VNNI and AVX-VNNI GEMM kernels on SIMDe's emulation of their
    instructions (any x86-64 CPU with AVX2): every tile tail (rows 1..MR, K tails),
    every product shape with M / N / K tails and zero points at both grid ends,
    against the scalar reference."""
    cmake = shutil.which("cmake")
    if platform.machine() not in ("x86_64", "AMD64") or "avx2" not in _cpu_flags():
        pytest.skip("needs an x86-64 CPU with AVX2")
    if not cmake or not pathlib.Path("/usr/include/simde/x86/avx512.h").exists():
        pytest.skip("needs cmake and SIMDe's headers (Debian: libsimde-dev)")
    build = ROOT / "build" / "kernel-tests-simde"
    args = [cmake, "-S", str(ROOT / "tests" / "kernels"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DLUCID_KERNELS_SIMDE=ON"]
    if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
        args += ["-G", "Ninja"]
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    subprocess.run(args, check=True, capture_output=True, text=True)
    subprocess.run([cmake, "--build", str(build), "-j", "2"], check=True, capture_output=True, text=True)
    r = subprocess.run([str(build / "lucid_kernel_tests"), "--no-bench", "--filter", "qgemm"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 failures" in r.stdout
    for name in ("qu8-qs8-gemm-8x32c4-avx512vnni", "qu8-qs8-gemm-6x16c4-avxvnni"):
        block = r.stdout.split(f"[test ] qgemm/{name}\n")[1].split("[test ]")[0]
        assert block.strip() == "ok", block  # run (emulated), not skipped
    block = r.stdout.split("[test ] qgemm/self-check\n")[1].split("[test ]")[0]
    assert "avxvnni      verified" in block and "avx512vnni   verified" in block, block


def test_ctest_registration(binary):
    ctest = shutil.which("ctest")
    if not ctest:
        pytest.skip("ctest is not installed")
    r = subprocess.run([ctest, "--test-dir", str(BUILD), "--output-on-failure"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout[-4000:]
    assert "100% tests passed" in r.stdout


def test_arm64_kernels_under_qemu():
    """The NEON dot-product and i8mm kernels (Apple silicon, arm64 Linux),
    cross-compiled and run under qemu-user with every feature on (-cpu max)."""
    cmake = shutil.which("cmake")
    cxx = shutil.which("aarch64-linux-gnu-g++")
    qemu = shutil.which("qemu-aarch64")
    if not (cmake and cxx and qemu):
        pytest.skip("needs cmake, g++-aarch64-linux-gnu and qemu-user")
    build = ROOT / "build" / "kernel-tests-arm64"
    args = [cmake, "-S", str(ROOT / "tests" / "kernels"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_SYSTEM_NAME=Linux", "-DCMAKE_SYSTEM_PROCESSOR=aarch64", f"-DCMAKE_CXX_COMPILER={cxx}"]
    if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
        args += ["-G", "Ninja"]
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    subprocess.run(args, check=True, capture_output=True, text=True)
    subprocess.run([cmake, "--build", str(build), "-j", "2"], check=True, capture_output=True, text=True)
    sysroot = "/usr/aarch64-linux-gnu"
    r = subprocess.run([qemu, "-L", sysroot, "-cpu", "max", str(build / "lucid_kernel_tests"), "--no-bench"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    for name in ("qu8-qs8-gemm-4x16c4-neondot", "qu8-qs8-gemm-4x16c8-neoni8mm"):
        block = r.stdout.split(f"[test ] qgemm/{name}\n")[1].split("[test ]")[0]
        assert block.strip() == "ok", block  # run, not skipped
    block = r.stdout.split("[test ] qb4w-gemv/qd8-f32-qb4w-gemv-1x8-neondot\n")[1].split("[test ]")[0]
    assert "problems equal the scalar reference" in block and block.rstrip().endswith("ok"), block
