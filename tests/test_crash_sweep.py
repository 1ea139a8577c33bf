"""Crash guard: hostile sizes, dtypes and arguments across the public API, run
in a subprocess under a 4 GiB address-space limit. Any exception is fine here
(other tests pin the types); a signal (SIGSEGV, SIGABRT, SIGBUS) or a hang
fails. The subprocess prints each case before running it, so a crash names
its case.
"""
import os
import subprocess
import sys
import textwrap

LIMIT = 4 << 30

SWEEP = r'''
import itertools, json, math, os, struct, sys, tempfile
import numpy as np
import lucid
import lucid.quantization as Q

DEVICES = ["cpu", "gpu"]
SIZES = [2**31, 2**32, 2**62, 2**63 - 1, -1, -2**62]
SHAPES = [(2**31, 2**31), (2**32, 2**32, 4), (2**40, 2**40), (0, 2**62, 2**62), (2**20, 2**20), (3, -1)]
DTYPES = [lucid.bool, lucid.uint8, lucid.int8, lucid.int16, lucid.int32, lucid.int64, lucid.float16,
          lucid.bfloat16, lucid.float32]
count = 0

def case(label, f):
    global count
    count += 1
    print(label, flush=True)
    try:
        f()
    except (Exception, MemoryError):
        pass

for dev in DEVICES:
    # creation
    for s in SIZES:
        for fn in (lucid.zeros, lucid.ones, lucid.empty):
            case(f"{fn.__name__}({s}) {dev}", lambda: fn(s, device=dev))
        case(f"full({s}) {dev}", lambda: lucid.full((s,), 2.0, device=dev))
        case(f"arange({s}) {dev}", lambda: lucid.arange(s, device=dev))
        case(f"eye({s}) {dev}", lambda: lucid.eye(s, device=dev))
        case(f"randn({s}) {dev}", lambda: lucid.randn(s, device=dev))
    for shape in SHAPES:
        for dt in DTYPES:
            case(f"zeros{shape} {dt} {dev}", lambda: lucid.zeros(shape, dtype=dt, device=dev).sum().item())
            case(f"empty{shape} {dt} {dev}", lambda: lucid.empty(*shape, dtype=dt, device=dev)[0])
    case(f"zeros(2**30,16).sum {dev}", lambda: lucid.zeros(2**30, 16, device=dev).sum().item())
    case(f"ones(2**61,int64) {dev}", lambda: lucid.ones(2**61, dtype=lucid.int64, device=dev))

    # reshape / view / expand / broadcasting
    x = lucid.arange(12, dtype=lucid.float32, device=dev).reshape(3, 4)
    for shape in SHAPES + [(2**62,), (-1, 2**62), (-1, -1), (2**31, -1), (-2, 6)]:
        case(f"reshape{shape} {dev}", lambda: x.reshape(*shape))
        case(f"view{shape} {dev}", lambda: x.view(*shape))
        case(f"expand{shape} {dev}", lambda: lucid.ones(1, 1, device=dev).expand(*shape).sum().item())
    case(f"broadcast add {dev}", lambda: (lucid.ones(2**20, 1, device=dev) + lucid.ones(1, 2**20, device=dev)).sum())
    case(f"expand contiguous {dev}", lambda: lucid.ones(1, 1, device=dev).expand(2**20, 2**20).contiguous())
    case(f"permute expand {dev}", lambda: lucid.ones(1, 1, device=dev).expand(2**20, 2**20).T.sum().item())

    # indexing with out-of-range and huge indices
    for i in [2**31, 2**62, -2**62, 2**63 - 1, 3, -4]:
        case(f"x[{i}] {dev}", lambda: x[i])
        case(f"x[:, {i}] {dev}", lambda: x[:, i])
        case(f"x[{i}:] {dev}", lambda: x[i:].sum().item())
        case(f"x[::{i}] {dev}", lambda: x[::i].sum().item())
        idx = lucid.tensor([i], device=dev)
        case(f"x[tensor {i}] {dev}", lambda: x[idx].sum().item())
        case(f"gather {i} {dev}", lambda: x.gather(1, lucid.tensor([[i]], device=dev)).item())
        case(f"index_select {i} {dev}", lambda: x.index_select(0, idx).sum().item())
        case(f"scatter_add {i} {dev}", lambda: x.scatter_add(1, lucid.tensor([[i]], device=dev), x[:1, :1]))
        case(f"index_add {i} {dev}", lambda: x.index_add(0, idx, x[:1]))
        case(f"setitem {i} {dev}", lambda: x.clone().__setitem__(idx, 1.0))
    case(f"x[::0] {dev}", lambda: x[::0])
    case(f"int64 scatter {dev}", lambda: lucid.zeros(2, dtype=lucid.int64, device=dev).scatter_add(
        0, lucid.tensor([1], device=dev), lucid.ones(1, dtype=lucid.int64, device=dev)))

    # quantization primitives
    xf = lucid.tensor([[0.5, -1.0, float("nan")], [float("inf"), 3.0, -0.0]], device=dev)
    scales = [0.0, -1.0, float("nan"), float("inf"), 1e-45, 1e-40, 1e38, 3.4e38, 2.0**-126]
    zps = [0, 2**31 - 1, -2**31, 2**31, -2**31 - 1, 2**62, 1.5, float("nan"), 128.0]
    for qd in [Q.qint8, Q.quint8, Q.qint4, Q.quint4, Q.qint32]:
        for s, z in itertools.product(scales, zps):
            case(f"quantize {qd} s={s} z={z} {dev}", lambda: Q.quantize(xf, s, z, qd).tolist())
            case(f"fake_quantize s={s} z={z} {dev}", lambda: Q.fake_quantize(xf, s, z, -2**31, 2**31 - 1).tolist())
        for kw in [dict(ch_axis=5), dict(ch_axis=-5), dict(ch_axis=2**62), dict(group_size=0), dict(group_size=-1),
                   dict(group_size=2**62), dict(group_size=2, axis=7), dict(ch_axis=0, group_size=3)]:
            case(f"quantize {qd} {kw} {dev}", lambda: Q.quantize(xf, 0.1, 0, qd, **kw))
            case(f"dequantize {kw} {dev}", lambda: Q.dequantize(lucid.ones(2, 3, dtype=lucid.int8, device=dev), 0.1, 0, **kw))
            case(f"fake_quantize {kw} {dev}", lambda: Q.fake_quantize(xf, 0.1, 0, -8, 7, **kw))
    for lo, hi in [(2**31, 0), (0, 2**31), (-2**62, 2**62), (5, 4), (-2**31, 2**31 - 1), (7, 7)]:
        case(f"fake_quantize range {lo},{hi} {dev}", lambda: Q.fake_quantize(xf, 1.0, 7 if lo == 7 else 0, lo, hi))
    for dt in [lucid.int64, lucid.int32, lucid.int16, lucid.uint8, lucid.float32, lucid.bool]:
        q = lucid.tensor([[-1, 0], [1, 2]], device=dev).to(dt)
        for s, z in itertools.product(scales[:6], zps[:6]):
            case(f"dequantize {dt} s={s} z={z} {dev}", lambda: Q.dequantize(q, s, z).tolist())
    q64 = lucid.tensor(np.array([2**63 - 1, -2**63], np.int64), device=dev)
    case(f"dequantize int64 limits {dev}", lambda: Q.dequantize(q64, 1.0, -2**31).tolist())
    xq = lucid.tensor([[1, 2, 3]], dtype=lucid.uint8, device=dev)
    wq = lucid.tensor([[1, 0, -1], [2, 2, 2]], dtype=lucid.int8, device=dev)
    for s, z in itertools.product(scales, zps[:6]):
        case(f"qmatmul s={s} z={z} {dev}", lambda: Q.qmatmul(xq, s, z, wq, s, z, out_scale=s, out_zp=z).tolist())
    case(f"qmatmul bias inf {dev}", lambda: Q.qmatmul(xq, 1.0, 0, wq, 1.0, 0, bias=lucid.tensor([float("inf"), 1e38], device=dev)))
    case(f"qmatmul big K {dev}", lambda: Q.qmatmul(lucid.zeros(1, 2**16, dtype=lucid.uint8, device=dev), 1.0, 0,
                                                 lucid.zeros(1, 2**16, dtype=lucid.int8, device=dev), 1.0, 0))
    case(f"qmatmul K mismatch {dev}", lambda: Q.qmatmul(xq, 1.0, 0, wq.T, 1.0, 0))
    case(f"qmatmul out_zp only {dev}", lambda: Q.qmatmul(xq, 1.0, 0, wq, 1.0, 0, out_zp=3))
    codes = lucid.tensor([[1, -2, 3]], dtype=lucid.int8, device=dev)
    for ax in [0, 1, 2, -3, 2**62]:
        case(f"pack_int4 axis={ax} {dev}", lambda: Q.pack_int4(codes, axis=ax))
        for length in [0, 1, 3, 4, -1, 2**62, 2**31]:
            case(f"unpack_int4 len={length} axis={ax} {dev}", lambda: Q.unpack_int4(
                lucid.tensor([[0x21, 0x03]], dtype=lucid.uint8, device=dev), length, True, axis=ax))
    case(f"pack_int4 0-d {dev}", lambda: Q.pack_int4(lucid.tensor(1, dtype=lucid.int8, device=dev)))
    bounds = [0.0, -1.0, 1.0, float("nan"), float("inf"), -float("inf"), 3e38, 2.0**62]
    for mn, mx in itertools.product(bounds, bounds):
        for qd, scheme in [(Q.qint8, Q.per_tensor_symmetric), (Q.quint8, Q.per_tensor_affine), (Q.qint32, Q.per_tensor_affine)]:
            case(f"calculate_qparams {mn},{mx} {qd} {dev}", lambda: Q.calculate_qparams(
                lucid.tensor(mn, device=dev), lucid.tensor(mx, device=dev), qd, scheme))
    for eps in [0.0, 1e-50, 1e-45, float("nan"), float("inf"), -1.0, 2**62]:
        case(f"calculate_qparams eps={eps} {dev}", lambda: Q.calculate_qparams(
            lucid.tensor(-1.0, device=dev), lucid.tensor(1.0, device=dev), Q.qint8, Q.per_tensor_affine, eps=eps))

# hostile safetensors files
tmp = tempfile.mkdtemp()
def write(name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p
def st(header, payload=b""):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + payload
good = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
files = {
    "empty": b"",
    "short": b"\x05\x00",
    "header_len_huge": struct.pack("<Q", 2**63) + b"{}",
    "header_len_past_end": struct.pack("<Q", 1000) + b"{}",
    "header_not_json": struct.pack("<Q", 4) + b"\xff\xfe{[",
    "header_list": st([1, 2]),
    "truncated_data": st(good, b"\x00" * 4),
    "offsets_past_end": st({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 2**40]}}, b"\x00" * 8),
    "offsets_reversed": st({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\x00" * 8),
    "offsets_negative": st({"w": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]}}, b"\x00" * 8),
    "shape_huge": st({"w": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}}, b"\x00" * 8),
    "shape_overflow": st({"w": {"dtype": "F32", "shape": [2**62, 2**62, 16], "data_offsets": [0, 0]}}),
    "shape_negative": st({"w": {"dtype": "F32", "shape": [-1, 2], "data_offsets": [0, 8]}}, b"\x00" * 8),
    "shape_mismatch": st({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\x00" * 8),
    "dtype_bogus": st({"w": {"dtype": "X99", "shape": [2], "data_offsets": [0, 8]}}, b"\x00" * 8),
    "dtype_u64": st({"w": {"dtype": "U64", "shape": [1], "data_offsets": [0, 8]}}, b"\xff" * 8),
    "entry_not_dict": st({"w": 5}),
    "metadata_bad": st({"__metadata__": {"format": "lucid", "lucid.structure": "[[[[" * 1000}, **good}, b"\x00" * 8),
    "metadata_deep": st({"__metadata__": {"format": "lucid", "lucid.structure": "[" * 100000 + "]" * 100000}}),
}
for name, data in files.items():
    p = write(name, data)
    for dev in DEVICES:
        case(f"load {name} {dev}", lambda: lucid.load(p, device=dev))
case("load directory", lambda: lucid.load(tmp))
print(f"DONE {count} cases", flush=True)
'''


def test_no_signal_across_hostile_api_calls():
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
    env = dict(os.environ)
    env.setdefault("LUCID_MLX_DEVICE", "cpu")
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(SWEEP)], capture_output=True, text=True,
                       timeout=300, env=env)
    lines = r.stdout.splitlines()
    last = lines[-1] if lines else "<nothing printed>"
    assert r.returncode >= 0, f"signal {-r.returncode} in case: {last}\n{r.stderr[-2000:]}"
    assert r.returncode == 0, f"sweep failed (returncode {r.returncode}) after: {last}\n{r.stderr[-2000:]}"
    assert last.startswith("DONE"), last
