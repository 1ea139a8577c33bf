"""Writes grad_refs.py: PyTorch's gradients for every case in grad_cases.py.

Run with an interpreter that has torch and numpy (lucid is not needed):

    python tests/autograd_refs/make_grad_refs.py   (a Python with torch and numpy)

For each case: the inputs (seeded by the case name, float32-representable
values), a fixed random upstream gradient per output, and torch's gradient of
``sum(output * upstream)`` for each input, computed in float64 (float32 for the
fake-quant ops, which torch defines in float32 only). All as plain literals, so
the test needs no torch.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grad_cases as C  # noqa: E402


def _lit(a):
    return "[" + ", ".join(repr(float(v)) for v in np.asarray(a, dtype=np.float64).reshape(-1)) + "]"


def main(path=os.path.join(HERE, "grad_refs.py")):
    import torch

    torch.use_deterministic_algorithms(True, warn_only=True)  # max_unpool has no flagged deterministic path (its indices here are unique)
    lines = [
        '"""PyTorch %s gradients for tests/autograd_refs/grad_cases.py (make_grad_refs.py writes this file).' % torch.__version__,
        "",
        "REFS[name]: inputs (flat, with shapes), upstream gradients per output (flat, with",
        "shapes) and torch's gradient per input with grad=True (None where torch gives none).",
        '"""',
        "REFS = {",
    ]
    failed = []
    for case in C.CASES:
        values = C.make_inputs(case)
        L = C.TorchLib(case.torch_dtype)
        try:
            outs, _ = C.run_case(L, case, values)
            shapes = [tuple(o.shape) for o in outs]
            ups = C.upstream_for(case, shapes)
            _, grads = C.run_case(L, case, values, ups)
        except Exception as e:  # report every broken case at once
            failed.append(f"{case.name}: {type(e).__name__}: {e}")
            continue
        lines.append(f"    {case.name!r}: {{")
        lines.append(f"        'dtype': {case.torch_dtype!r},")
        lines.append(f"        'input_shapes': {[tuple(v.shape) for v in values]!r},")
        lines.append("        'inputs': [" + ", ".join(_lit(v) for v in values) + "],")
        lines.append(f"        'out_shapes': {shapes!r},")
        lines.append("        'upstream': [" + ", ".join(_lit(u) for u in ups) + "],")
        lines.append("        'grads': [" + ", ".join("None" if g is None else _lit(g) for g in grads) + "],")
        lines.append("    },")
    lines.append("}")
    if failed:
        sys.exit("cases torch cannot run:\n" + "\n".join(failed))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(C.CASES)} cases -> {path} ({os.path.getsize(path) / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
