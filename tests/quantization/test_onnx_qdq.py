"""ONNX's own QuantizeLinear / DequantizeLinear node tests, run through
lucid.quantization on both streams.

The cases come from the ``onnx`` package's backend test generators
(``onnx.backend.test.case.node.quantizelinear`` / ``dequantizelinear``: the
same models and input / output tensors that ONNX writes to its
``test_data_set_0/*.pb`` files; the wheel does not ship the .pb files). Every
case the installed ``onnx`` defines runs (27 in onnx 1.23: 13 QuantizeLinear,
14 DequantizeLinear, including FLOAT8E4M3FN / E5M2, FLOAT4E2M1, INT16 / UINT16,
INT4 / UINT4, INT2 / UINT2 and the blocked forms). Skips only without onnx.
"""
import warnings

import numpy as np
import pytest

import lucid
import lucid.quantization as Q

onnx = pytest.importorskip("onnx")
pytest.importorskip("ml_dtypes")
from onnx import TensorProto, numpy_helper  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import onnx.backend.test.case.node as _node  # noqa: E402
    from onnx.backend.test.case.node import dequantizelinear as _dq, quantizelinear as _q  # noqa: E402,F401

_CASES = [c for c in _node._NodeTestCases if c.model.graph.node[0].op_type in ("QuantizeLinear", "DequantizeLinear")]

_GRIDS = {TensorProto.UINT8: Q.quint8, TensorProto.INT8: Q.qint8, TensorProto.UINT16: Q.quint16,
          TensorProto.INT16: Q.qint16, TensorProto.UINT4: Q.quint4, TensorProto.INT4: Q.qint4,
          TensorProto.UINT2: Q.quint2, TensorProto.INT2: Q.qint2, TensorProto.INT32: Q.qint32,
          TensorProto.FLOAT8E4M3FN: Q.float8_e4m3fn, TensorProto.FLOAT8E5M2: Q.float8_e5m2,
          TensorProto.FLOAT4E2M1: Q.float4_e2m1fn}


def _elem_type(value_info):
    return value_info.type.tensor_type.elem_type


def _codes(value, onnx_type):
    """An ONNX integer / float8 / float4 tensor as the codes lucid stores."""
    a = numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)
    qd = _GRIDS[onnx_type]
    if qd.is_floating:
        return a.view(np.uint8) & (0xFF if qd.bits == 8 else 0x0F)
    return a.astype(np.int64).astype(qd.storage)


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _axes(x_ndim, scale, attrs):
    axis = attrs.get("axis", 1)
    if attrs.get("block_size", 0):
        return dict(group_size=attrs["block_size"], axis=axis)
    if np.ndim(scale) == 1 and np.size(scale) > 1:
        return dict(ch_axis=axis)
    return {}


def test_all_cases_found():
    names = {c.name for c in _CASES}
    assert len(_CASES) >= 26 and "test_quantizelinear_e4m3fn" in names and "test_dequantizelinear_int2" in names


@pytest.mark.parametrize("case", _CASES, ids=lambda c: c.name)
def test_onnx_node(case, device):
    graph = case.model.graph
    node = graph.node[0]
    attrs = _attrs(node)
    inputs, outputs = case.data_sets[0]
    if node.op_type == "QuantizeLinear":
        x = np.asarray(inputs[0], np.float32)
        scale = np.asarray(inputs[1], np.float32)
        out_type = _elem_type(graph.output[0])
        qd = _GRIDS[out_type]
        zp = 0 if len(inputs) < 3 else _codes(inputs[2], out_type)
        kw = _axes(x.ndim, scale, attrs)
        s = float(scale) if scale.ndim == 0 else lucid.tensor(scale, device=device)
        z = (0 if np.ndim(zp) == 0 and qd.is_floating else
             (int(zp) if np.ndim(zp) == 0 else lucid.tensor(np.asarray(zp).astype(np.int32), device=device)))
        if qd.is_floating:
            z = 0
            got = Q.quantize(lucid.tensor(x, device=device), s, z, qd, saturate=bool(attrs.get("saturate", 1)), **kw)
        else:
            got = Q.quantize(lucid.tensor(x, device=device), s, z, qd, **kw)
        ref = _codes(outputs[0], out_type)
        np.testing.assert_array_equal(np.asarray(got.to("cpu").numpy()), ref)
    else:
        in_type = _elem_type(graph.input[0])
        qd = _GRIDS[in_type]
        codes = _codes(inputs[0], in_type)
        scale = np.asarray(inputs[1])
        out_dtype = "float16" if scale.dtype == np.float16 else "float32"
        zp = 0 if len(inputs) < 3 or qd.is_floating else _codes(inputs[2], in_type)
        kw = _axes(codes.ndim, scale, attrs)
        s = float(scale) if scale.ndim == 0 else lucid.tensor(scale.astype(np.float32), device=device)
        z = int(np.asarray(zp).reshape(-1)[0]) if np.size(zp) == 1 else lucid.tensor(
            np.asarray(zp).astype(np.int32), device=device)
        q = lucid.tensor(codes, device=device)
        got = Q.dequantize(q, s, z, dtype=getattr(lucid, out_dtype), qdtype=qd if qd.is_floating else None, **kw)
        ref = np.asarray(outputs[0])
        assert str(ref.dtype) == out_dtype
        np.testing.assert_array_equal(np.asarray(got.to("cpu").numpy()), ref)
