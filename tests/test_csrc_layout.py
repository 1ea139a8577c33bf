"""The C++ layout of csrc/ (docs/architecture.md): one family name per op in
every layer, the two streams apart, MLX's headers only in gpu/, and
ops/ops.h listing every family with each op commented."""
import pathlib
import re
import shutil
import subprocess

import pytest

CSRC = pathlib.Path(__file__).resolve().parents[1] / "csrc"

# Files of a layer that are not an op family: the layer's own machinery and
# the internal helpers its families share.
NOT_FAMILIES = {
    "ops": {"ops", "nn_common", "qparams"},
    "cpu": {"blas", "lapack", "elementwise_functors", "elementwise_loops", "elementwise_math", "qgemm",
            "quantize_loop", "quantize_simd", "reduce_run"},
    "gpu": {"array", "device_info", "transfer"},
    # unary / arithmetic: the table-driven nodes of the elementwise ops (elementwise, math, special);
    # basic_index: x[idx]; loss, norms: ops composed in C++ from ops:: calls.
    "autograd": {"arithmetic", "basic_index", "engine", "grad_mode", "loss", "node", "norms", "tensor_object",
                 "unary"},
    "bindings": {"autograd", "common", "module", "tensor"},
}


def _stems(layer, suffixes=(".h", ".cpp")):
    return {p.stem for p in (CSRC / layer).iterdir() if p.suffix in suffixes}


def _families():
    return _stems("ops", (".h",)) - NOT_FAMILIES["ops"]


def _includes(path):
    return re.findall(r'^\s*#\s*include\s*[<"]([^">]+)[">]', path.read_text(), flags=re.M)


@pytest.mark.parametrize("layer", ["cpu", "gpu", "autograd", "bindings"])
def test_every_file_of_a_layer_is_named_by_an_ops_family(layer):
    files = _stems(layer)
    if layer == "cpu":  # a family's kernels may span files named for their op (cpu/dequantize.cpp)
        files = _stems(layer, (".h",))
    stray = sorted(files - _families() - NOT_FAMILIES[layer])
    assert not stray, f"csrc/{layer}: {stray} name no ops/ family (ops/<name>.h)"


def test_the_streams_do_not_include_each_other():
    bad = []
    for layer, other in (("cpu", "gpu/"), ("gpu", "cpu/")):
        for p in (CSRC / layer).rglob("*"):
            if p.suffix in (".h", ".cpp"):
                bad += [f"{p.relative_to(CSRC)} -> {inc}" for inc in _includes(p) if inc.startswith(other)]
    assert not bad, bad


def test_mlx_headers_only_in_gpu():
    bad = []
    for p in CSRC.rglob("*"):
        if p.suffix in (".h", ".cpp") and p.relative_to(CSRC).parts[0] != "gpu":
            bad += [f"{p.relative_to(CSRC)} -> {inc}" for inc in _includes(p) if inc.startswith("mlx/")]
    assert not bad, bad


def test_umbrella_header_includes_every_family():
    included = {inc[len("ops/"):-len(".h")] for inc in _includes(CSRC / "ops" / "ops.h")}
    assert included == _families()


def test_every_op_in_a_family_header_has_a_comment():
    # A declaration at namespace scope (column 0, a return type, then a name and "(").
    decl = re.compile(r"^(?!//|#|namespace|struct|using|template|enum|}|\s)[\w:<>, ]+?[ &*](\w+)\(")
    missing = []
    for family in sorted(_families()):
        lines = (CSRC / "ops" / f"{family}.h").read_text().splitlines()
        for i, line in enumerate(lines):
            m = decl.match(line)
            if m and not lines[i - 1].lstrip().startswith("//"):
                missing.append(f"ops/{family}.h:{i + 1}: {m.group(1)}")
    assert not missing, missing


def test_umbrella_header_compiles_without_mlx_or_pybind11():
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        pytest.skip("no C++ compiler")
    r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", f"-I{CSRC}", "-x", "c++", "-"],
                       input='#include "ops/ops.h"\n', capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
