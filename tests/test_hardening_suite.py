"""Issue 7, Python half: optimizer steps that fail change nothing, losses and
softmax at inf / size-0 edges (PyTorch-generated literals), hostile checkpoint
files, and the seed specification's spellings (QDtype.storage as a name,
calculate_qparams(min, max, qscheme, qdtype), float zero points)."""
import json
import struct

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
import lucid.quantization as Q
from lucid import nn, optim
from conftest import to_np

INF = float("inf")


# ----- optimizers: validate every gradient, then update -----------------------------------

OPTIMIZERS = [
    (optim.SGD, dict(lr=0.1)),
    (optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    (optim.Adam, dict(lr=0.1)),
    (optim.Adam, dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
    (optim.AdamW, dict(lr=0.1)),
]


def _snapshot(opt, params):
    values = [to_np(p).copy() for p in params]
    state = {i: {k: (to_np(v).copy() if isinstance(v, lucid.Tensor) else v) for k, v in opt.state[p].items()}
             for i, p in enumerate(params) if p in opt.state}
    return values, state


def _assert_same(a, b):
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)
    assert a[1].keys() == b[1].keys()
    for i in a[1]:
        assert a[1][i].keys() == b[1][i].keys()
        for k in a[1][i]:
            np.testing.assert_array_equal(np.asarray(a[1][i][k]), np.asarray(b[1][i][k]))


@pytest.mark.parametrize("opt_cls, kw", OPTIMIZERS)
@pytest.mark.parametrize("bad", ["shape", "broadcastable_shape", "device", "integer"])
def test_failed_step_changes_nothing(device, opt_cls, kw, bad):
    p1 = nn.Parameter(lucid.tensor([1.0, -2.0, 3.0], device=device))
    p2 = nn.Parameter(lucid.tensor([[0.5, 0.25]], device=device))
    opt = opt_cls([p1, p2], **kw)
    p1.grad = lucid.tensor([0.1, 0.2, -0.3], device=device)
    p2.grad = lucid.tensor([[1.0, -1.0]], device=device)
    opt.step()  # a good step first, so there is state to protect
    before = _snapshot(opt, [p1, p2])
    other = "gpu" if device == "cpu" else "cpu"
    p1.grad = lucid.tensor([0.4, 0.5, 0.6], device=device)
    p2.grad = {"shape": lucid.tensor([1.0, 2.0, 3.0], device=device),
               "broadcastable_shape": lucid.tensor([1.0], device=device),
               "device": lucid.tensor([[1.0, 2.0]], device=other),
               "integer": lucid.tensor([[1, 2]], device=device)}[bad]
    with pytest.raises((ValueError, TypeError), match=r"step\(\): the gradient of parameter 1 of group 0"):
        opt.step()
    _assert_same(before, _snapshot(opt, [p1, p2]))
    # a corrected gradient then steps normally
    p2.grad = lucid.tensor([[1.0, -1.0]], device=device)
    opt.step()
    assert not np.array_equal(to_np(p1), before[0][0])


def _adam_numpy(x0, grads, lr, betas, eps, weight_decay=0.0, decoupled=False, amsgrad=False):
    """Adam / AdamW in float64, PyTorch's formulation (eps added AFTER bias-correcting v)."""
    b1, b2 = betas
    x = x0.astype(np.float64)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    vmax = np.zeros_like(x)
    for t, g in enumerate(grads, start=1):
        g = g.astype(np.float64)
        if decoupled:
            x = x * (1 - lr * weight_decay)
        elif weight_decay:
            g = g + weight_decay * x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - b2 ** t) + eps
        x = x - lr / (1 - b1 ** t) * m / denom
    return x


@pytest.mark.parametrize("cls, kw", [
    (optim.Adam, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8)),
    (optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, amsgrad=True)),
    (optim.AdamW, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)),
])
def test_adam_with_gradients_over_many_magnitudes(device, cls, kw):
    """Gradients from 1e-9 to 1e3 (not all near 1): at the small end eps is comparable to
    sqrt(v_hat), so where eps enters the formula (after bias correction) shows."""
    rng = np.random.default_rng(7)
    n, steps = 12, 5
    x0 = rng.standard_normal(n).astype(np.float32)
    mags = np.float32(10.0) ** np.linspace(-9, 3, n).astype(np.float32)
    grads = [(rng.standard_normal(n).astype(np.float32) * mags).astype(np.float32) for _ in range(steps)]
    p = nn.Parameter(lucid.tensor(x0, device=device))
    opt = cls([p], **kw)
    for g in grads:
        p.grad = lucid.tensor(g, device=device)
        opt.step()
    ref = _adam_numpy(x0, grads, kw["lr"], kw["betas"], kw["eps"], kw.get("weight_decay", 0.0),
                      decoupled=cls is optim.AdamW, amsgrad=kw.get("amsgrad", False))
    # compare the displacement, so a wrong small update is not hidden by |x0|
    np.testing.assert_allclose(to_np(p).astype(np.float64) - x0, ref - x0, rtol=2e-4, atol=1e-7)


# ----- losses and softmax at the edges (reference values from PyTorch 2.14) -----------------

def test_cross_entropy_minus_inf_non_target_logit_is_zero(device):
    loss = F.cross_entropy(lucid.tensor([[0.0, -INF]], device=device), lucid.tensor([0], device=device))
    assert loss.item() == 0.0  # torch: 0.0
    x = lucid.tensor([[0.0, -INF, 1.0]], device=device, requires_grad=True)
    loss = F.cross_entropy(x, lucid.tensor([2], device=device))
    loss.backward()
    # torch: 0.31326165795326233, grad [[0.2689414322376251, 0.0, -0.26894140243530273]]
    np.testing.assert_allclose(loss.item(), 0.31326165795326233, rtol=1e-6)
    np.testing.assert_allclose(to_np(x.grad), [[0.2689414322376251, 0.0, -0.26894140243530273]], rtol=1e-5,
                               atol=1e-7)


def test_cross_entropy_ignored_row_with_inf_keeps_mean_finite(device):
    x = lucid.tensor([[1.0, 2.0, 0.5], [INF, 0.0, 1.0], [0.3, -1.0, 2.0]], device=device, requires_grad=True)
    loss = F.cross_entropy(x, lucid.tensor([1, -100, 2], device=device))
    loss.backward()
    # torch: loss 0.33669474720954895; grad rows 0 and 2 below (row 1, ignored, is NaN in torch too)
    np.testing.assert_allclose(loss.item(), 0.33669474720954895, rtol=1e-6)
    g = to_np(x.grad)
    np.testing.assert_allclose(g[0], [0.11561194062232971, -0.18573415279388428, 0.07012218981981277], rtol=1e-5)
    np.testing.assert_allclose(g[2], [0.07411272823810577, 0.020198078826069832, -0.09431079030036926], rtol=1e-5)
    for reduction in ("sum", "none"):
        out = to_np(F.cross_entropy(x.detach(), lucid.tensor([1, -100, 2], device=device), reduction=reduction))
        assert np.all(np.isfinite(out)), (reduction, out)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("shape, dim", [((3, 0), 1), ((0, 4), 0), ((0,), 0), ((2, 0, 3), -2), ((0, 4), 1)])
def test_softmax_over_size_zero_axis_is_empty(device, fn, shape, dim):
    x = lucid.zeros(*shape, device=device, requires_grad=True)
    y = fn(x, dim=dim)
    assert tuple(y.shape) == shape and y.device.type == device and y.dtype == lucid.float32
    y.sum().backward()
    assert tuple(x.grad.shape) == shape


# ----- hostile checkpoint files --------------------------------------------------------------

def _write_safetensors(path, entries, metadata=None):
    """A safetensors file written by hand: entries = {name: (dtype tag, shape, raw bytes)}."""
    header, offset, blobs = {}, 0, []
    for name, (tag, shape, raw) in entries.items():
        header[name] = {"dtype": tag, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def _lucid_file(path, structure, entries=None):
    entries = entries if entries is not None else {"w": ("F32", (2,), np.float32([1, 2]).tobytes())}
    _write_safetensors(path, entries, {"format": "lucid", "lucid.structure": json.dumps(structure)})


def _expect(path, *parts):
    with pytest.raises(lucid.SerializationError) as info:
        lucid.load(path)
    msg = str(info.value)
    assert str(path) in msg or repr(str(path)) in msg, msg
    for part in parts:
        assert part in msg, (part, msg)
    assert isinstance(info.value, ValueError)


def test_serialization_error_is_a_value_error():
    assert issubclass(lucid.SerializationError, ValueError)


def test_load_a_directory(tmp_path):
    _expect(tmp_path, "not a file")


def test_foreign_file_with_unsupported_entry_types(tmp_path):
    path = tmp_path / "u64.safetensors"
    _write_safetensors(path, {"ok": ("I32", (1,), np.int32([5]).tobytes()),
                              "big": ("U64", (1,), np.uint64([2**64 - 1]).tobytes())})
    _expect(path, "'big'", "uint64")
    path = tmp_path / "u16.safetensors"
    _write_safetensors(path, {"h": ("U16", (1,), np.uint16([7]).tobytes())})
    _expect(path, "'h'", "uint16")
    path = tmp_path / "u32.safetensors"
    _write_safetensors(path, {"c": ("U32", (1,), np.uint32([7]).tobytes())})
    _expect(path, "'c'", "uint32")


def test_truncated_and_bad_header_files(tmp_path):
    good = tmp_path / "good.safetensors"
    lucid.save({"w": lucid.arange(64).float()}, good)
    raw = good.read_bytes()
    for n in (0, 3, 8, 20, len(raw) - 1):
        bad = tmp_path / f"cut{n}.safetensors"
        bad.write_bytes(raw[:n])
        _expect(bad)
    huge = tmp_path / "huge_header.safetensors"
    huge.write_bytes(struct.pack("<Q", 2**62) + b"{}")
    _expect(huge)
    notjson = tmp_path / "notjson.safetensors"
    notjson.write_bytes(struct.pack("<Q", 8) + b"{{{{{{{{")
    _expect(notjson)
    past_end = tmp_path / "past_end.safetensors"
    text = json.dumps({"x": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}).encode()
    past_end.write_bytes(struct.pack("<Q", len(text)) + text + b"\0" * 16)
    _expect(past_end)


@pytest.mark.parametrize("structure, parts", [
    ({"list": 5}, ["list"]),
    ({"dict": [[{"value": "a"}]]}, ["pair"]),
    ({"dict": [5]}, ["pair"]),
    ({"dict": {"a": 1}}, ["dict"]),
    ({"tensor": 3, "dtype": "float32"}, ["tensor leaf"]),
    ({"tensor": "w", "dtype": "complex64"}, ["tensor leaf"]),
    ({"tensor": "w"}, ["malformed"]),
    ({"tensor": "nope", "dtype": "float32"}, ["'nope'"]),
    ({"tensor": "w", "dtype": "int32"}, ["'w'", "float32"]),
    ({"value": [1, 2]}, ["value"]),
    ({"value": {"x": 1}}, ["value"]),
    ({"what": 1}, ["unknown"]),
    ([1, 2], ["malformed"]),
    ("text", ["malformed"]),
    (None, ["malformed"]),
    ({"list": [{"value": 1}], "tuple": []}, ["malformed"]),
    ({"dict": [[{"tensor": "w", "dtype": "float32"}, {"value": 1}]]}, ["dict key 0"]),  # tensor as a dict key
    ({"dict": [[{"list": []}, {"value": 1}]]}, ["dict key 0"]),
    ({"dict": [[{"value": "a"}, {"list": [{"value": 1}, {"bad": 0}]}]]}, ["'a.1'"]),  # names the entry path
])
def test_malformed_structure_metadata(tmp_path, structure, parts):
    path = tmp_path / "m.safetensors"
    _lucid_file(path, structure)
    _expect(path, *parts)


def test_deeply_nested_structure_is_rejected_without_recursion_error(tmp_path):
    path = tmp_path / "deep.safetensors"
    text = '{"list": [' * 300 + '{"value": 1}' + "]}" * 300  # within json's limit, over lucid's
    _write_safetensors(path, {}, {"format": "lucid", "lucid.structure": text})
    _expect(path, "deeper")
    path = tmp_path / "deep_json.safetensors"  # too deep even for json to parse
    _write_safetensors(path, {}, {"format": "lucid", "lucid.structure": "[" * 200000 + "]" * 200000})
    _expect(path)


def test_structure_metadata_not_json(tmp_path):
    path = tmp_path / "j.safetensors"
    _write_safetensors(path, {}, {"format": "lucid", "lucid.structure": "{not json"})
    _expect(path, "JSON")


def test_bfloat16_leaf_must_be_uint16_bits(tmp_path):
    path = tmp_path / "bf.safetensors"
    _lucid_file(path, {"tensor": "w", "dtype": "bfloat16"})
    _expect(path, "'w'", "uint16")


def test_good_files_still_load(tmp_path, device):
    path = tmp_path / "ok.safetensors"
    obj = {"a": [lucid.tensor([1.0, 2.0]).to(lucid.bfloat16), (3, "x", None)],
           7: {"b": lucid.tensor([1], dtype=lucid.int64)}}
    lucid.save(obj, path)
    back = lucid.load(path, device=device)
    assert to_np(back["a"][0]).tolist() == [1.0, 2.0] and back["a"][1] == (3, "x", None)
    assert back[7]["b"].dtype == lucid.int64 and back["a"][0].device.type == device


# ----- seed specification spellings ----------------------------------------------------------

@pytest.mark.parametrize("qd, name, np_dtype", [(Q.qint8, "int8", np.int8), (Q.quint8, "uint8", np.uint8),
                                                (Q.qint4, "int8", np.int8), (Q.quint4, "uint8", np.uint8),
                                                (Q.qint32, "int32", np.int32)])
def test_qdtype_storage_is_the_dtype_name(qd, name, np_dtype):
    assert qd.storage == name and isinstance(qd.storage, str)
    assert isinstance(getattr(lucid, qd.storage), lucid.dtype)
    assert getattr(lucid, qd.storage) is qd.storage_dtype
    assert np.dtype(qd.storage) == np_dtype
    assert np.dtype(getattr(lucid, qd.storage)) == np_dtype
    codes = Q.quantize(lucid.tensor([0.5, -1.0]), 0.1, 0 if qd.signed else qd.quant_min + 3, qd)
    assert codes.dtype is getattr(lucid, qd.storage) and codes.dtype == qd.storage


def test_numpy_dtype_of_every_lucid_dtype():
    for d, ref in [(lucid.bool, np.bool_), (lucid.uint8, np.uint8), (lucid.int8, np.int8), (lucid.int16, np.int16),
                   (lucid.int32, np.int32), (lucid.int64, np.int64), (lucid.float16, np.float16),
                   (lucid.float32, np.float32)]:
        assert np.dtype(d) == ref and np.dtype(d.name) == ref
        assert np.zeros(2, dtype=d).dtype == ref
    assert lucid.int8 == "int8" and lucid.int8 != "uint8" and lucid.int8 != lucid.uint8
    assert len({lucid.float32, lucid.float, lucid.float32}) == 1


@pytest.mark.parametrize("qd, qs", [(Q.quint8, Q.per_tensor_affine), (Q.qint8, Q.per_tensor_symmetric),
                                    (Q.quint8, Q.per_tensor_symmetric), (Q.qint4, Q.per_tensor_affine)])
def test_calculate_qparams_accepts_the_seed_order(device, qd, qs):
    mn, mx = lucid.tensor(-1.5, device=device), lucid.tensor(2.25, device=device)
    ours = Q.calculate_qparams(mn, mx, qd, qs)
    seed = Q.calculate_qparams(mn, mx, qs, qd)
    assert seed.qdtype is qd and seed.qscheme is qs
    assert to_np(seed.scale).tobytes() == to_np(ours.scale).tobytes()
    assert to_np(seed.zero_point).tolist() == to_np(ours.zero_point).tolist()
    with pytest.raises(TypeError, match="qscheme"):
        Q.calculate_qparams(mn, mx, qd, qd)


def test_float_zero_points_everywhere(device):
    x = lucid.tensor([0.5, -0.25, 3.0], device=device)
    for zf, zi, qd in [(128.0, 128, Q.quint8), (np.float32(-3.0), -3, Q.qint8), (2147483647.0, 2**31 - 1, Q.qint32),
                       (-2147483648.0, -2**31, Q.qint32), (np.float64(7.0), 7, Q.quint4)]:
        a, b = Q.quantize(x, 0.1, zf, qd), Q.quantize(x, 0.1, zi, qd)
        assert to_np(a).tolist() == to_np(b).tolist(), (zf, qd)
        assert to_np(Q.dequantize(b, 0.1, zf)).tobytes() == to_np(Q.dequantize(b, 0.1, zi)).tobytes()
        assert (to_np(Q.fake_quantize(x, 0.1, zf, qd.quant_min, qd.quant_max)).tobytes()
                == to_np(Q.fake_quantize(x, 0.1, zi, qd.quant_min, qd.quant_max)).tobytes())
    xq = lucid.tensor([[130, 120, 128]], dtype=lucid.uint8, device=device)
    w = lucid.tensor([[1, 2, 3], [-1, 0, 5]], dtype=lucid.int8, device=device)
    for kw_f, kw_i in [(dict(x_zp=128.0, w_zp=0.0), dict(x_zp=128, w_zp=0)),
                       (dict(x_zp=128.0, w_zp=1.0, out_zp=5.0), dict(x_zp=128, w_zp=1, out_zp=5))]:
        out = {} if "out_zp" not in kw_f else dict(out_scale=0.25)
        a = Q.qmatmul(xq, 0.5, kw_f["x_zp"], w, 0.25, kw_f["w_zp"], out_zp=kw_f.get("out_zp"), **out)
        b = Q.qmatmul(xq, 0.5, kw_i["x_zp"], w, 0.25, kw_i["w_zp"], out_zp=kw_i.get("out_zp"), **out)
        assert to_np(a).tobytes() == to_np(b).tobytes()
    with pytest.raises(ValueError, match="zero_point"):
        Q.quantize(x, 0.1, 128.5, Q.quint8)
