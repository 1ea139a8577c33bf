"""What a dtype costs at the pybind11 boundary: a pybind11 enum against an
interned name string (how lucid passes dtypes to ``_C``), passed in, returned,
and used as a dict key (``Tensor.dtype`` maps the engine's answer to a
``lucid.dtype`` through a dict).

Issue 11 asked for dtypes as enums; this measures whether that would be
faster. It compiles a 20-line pybind11 extension into a temporary folder with
the C++ compiler and the pybind11 headers the build uses, then times each way
in the same process.

Usage: python bench/dtype_boundary.py [--calls N]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit

import pybind11

SOURCE = r"""
#include <pybind11/pybind11.h>
#include <string>
namespace py = pybind11;
enum class DType : uint8_t { Bool, Float32, Int64 };
static DType from_name(const std::string& s) {
  return s == "float32" ? DType::Float32 : s == "int64" ? DType::Int64 : DType::Bool;
}
PYBIND11_MODULE(dtype_boundary_ext, m) {
  py::enum_<DType>(m, "DType").value("bool", DType::Bool).value("float32", DType::Float32).value("int64", DType::Int64);
  m.def("take_enum", [](DType d) { return static_cast<int>(d); });
  m.def("take_name", [](const std::string& s) { return static_cast<int>(from_name(s)); });
  m.def("give_enum", []() { return DType::Float32; });
  m.def("give_name", []() { return std::string("float32"); });
}
"""


def build(folder: str):
    src = os.path.join(folder, "ext.cpp")
    with open(src, "w") as f:
        f.write(SOURCE)
    out = os.path.join(folder, "dtype_boundary_ext" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = [os.environ.get("CXX", "c++"), "-O2", "-shared", "-fPIC", "-std=c++17", "-I", pybind11.get_include(),
           "-I", sysconfig.get_paths()["include"], src, "-o", out]
    if sys.platform == "darwin":
        cmd[1:1] = ["-undefined", "dynamic_lookup"]
    subprocess.run(cmd, check=True)
    spec = importlib.util.spec_from_file_location("dtype_boundary_ext", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ext = build(folder)
        f32 = ext.DType.float32
        by_enum, by_name = {f32: 1}, {"float32": 1}
        cases = [("pass in", lambda: ext.take_enum(f32), lambda: ext.take_name("float32")),
                 ("return", ext.give_enum, ext.give_name),
                 ("dict key", lambda: by_enum[f32], lambda: by_name["float32"])]
        print(f"{'':10s} {'enum ns':>9s} {'name ns':>9s} {'enum/name':>10s}")
        for label, enum_call, name_call in cases:
            t = [min(timeit.repeat(fn, number=args.calls, repeat=5)) / args.calls * 1e9
                 for fn in (enum_call, name_call)]
            print(f"{label:10s} {t[0]:9.1f} {t[1]:9.1f} {t[0] / t[1]:9.2f}x")


if __name__ == "__main__":
    main()
