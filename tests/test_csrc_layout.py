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
            "quantize_loop", "quantize_simd", "float_grid_simd", "reduce_run"},
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


def _file_local_names(path):
    """Names a file defines in anonymous namespaces (or `static` at namespace
    scope): functions, variables, types and aliases, found by a brace walk
    over the source without comments and strings."""
    s = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(), flags=re.S)
    s = re.sub(r'"(?:\\.|[^"\\])*"', '""', s)
    names, stack, start = set(), [], 0
    for m in re.finditer(r"namespace\s*([\w:]+)?\s*\{|\{|\}|;", s):
        if all(k != "other" for k in stack):  # at namespace scope
            stmt = s[start:m.start()].strip()
            if stmt and ("anon" in stack or stmt.startswith("static ")) and not stmt.startswith(("using namespace", "#")):
                head = stmt.split("=")[0]
                found = (re.match(r"(?:template\s*<.*?>\s*)?(?:struct|class|enum\s+class|enum|union)\s+(\w+)", stmt, re.S)
                         or re.match(r"using\s+(\w+)\s*=", stmt)
                         or re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*(?:\(|$)", head.split("(")[0] + ("(" if "(" in head else "")))
                if found and (not stmt.startswith("using ") or re.match(r"using\s+\w+\s*=", stmt)):
                    names.add(found.group(1))
        token = m.group(0)
        if token == "}":
            if stack:
                stack.pop()
        elif token.startswith("namespace"):
            stack.append("ns" if m.group(1) else "anon")
        elif token == "{":
            stack.append("other")
        start = m.end()
    return names


# What may repeat within one translation unit: an alias of the same type, static_assert.
REPEATABLE = {"Ints", "static_assert"}


@pytest.mark.parametrize("layer", ["gpu", "autograd", "bindings"])
def test_unity_built_layers_have_unique_file_local_names(layer):
    # Their files compile together (CMakeLists.txt, UNITY_BUILD): two files'
    # helpers of one name would be redefinitions, or overloads of each other.
    seen = {}
    for path in sorted((CSRC / layer).glob("*.cpp")):
        for name in _file_local_names(path) - REPEATABLE:
            seen.setdefault(name, []).append(path.name)
    assert {n: f for n, f in seen.items() if len(f) > 1} == {}
