"""Bad input raises the documented exception, with the same message on both streams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

nan, inf = float("nan"), float("inf")


def t(data, device, dtype=None):
    return lucid.tensor(data, dtype=dtype, device=device)


CASES = {
    "scale zero": (ValueError, "quantize\\(\\): argument 'scale' must be finite and > 0",
                   lambda d: Q.quantize(t([1.0], d), 0.0, 0, Q.qint8)),
    "scale negative": (ValueError, "argument 'scale' must be finite and > 0",
                       lambda d: Q.quantize(t([1.0], d), -0.5, 0, Q.qint8)),
    "scale nan": (ValueError, "argument 'scale' must be finite and > 0, got nan",
                  lambda d: Q.quantize(t([1.0], d), nan, 0, Q.qint8)),
    "scale inf tensor": (ValueError, "argument 'scale' must be finite and > 0, got inf at index 1",
                         lambda d: Q.quantize(t([[1.0, 2.0]], d), t([0.1, inf], d), 0, Q.qint8, ch_axis=1)),
    "zp non-integral": (ValueError, "argument 'zero_point' must hold integer values, got 0.5",
                        lambda d: Q.quantize(t([1.0], d), 0.1, 0.5, Q.qint8)),
    "zp off grid": (ValueError, "argument 'zero_point' must lie in \\[0, 255\\] \\(quint8\\), got 256",
                    lambda d: Q.quantize(t([1.0], d), 0.1, 256, Q.quint8)),
    "zp off qint4 grid": (ValueError, "argument 'zero_point' must lie in \\[-8, 7\\]",
                          lambda d: Q.quantize(t([1.0, 2.0], d), 0.1, t([0, 8], d), Q.qint4, ch_axis=0)),
    "per-channel length": (ValueError, "argument 'scale' must have shape \\(4,\\) for per-channel",
                           lambda d: Q.quantize(t(np.zeros((4, 2), np.float32), d), t([0.1, 0.2, 0.3], d), 0,
                                                Q.qint8, ch_axis=0)),
    "per-channel zp length": (ValueError, "argument 'zero_point' must have shape \\(2,\\)",
                              lambda d: Q.quantize(t(np.zeros((4, 2), np.float32), d), 0.1, t([0, 0, 0], d),
                                                   Q.qint8, ch_axis=1)),
    "per-tensor vector": (ValueError, "one-element tensor for per-tensor",
                          lambda d: Q.quantize(t([1.0, 2.0], d), t([0.1, 0.2], d), 0, Q.qint8)),
    "ch_axis range": (ValueError, "argument 'ch_axis' is out of range for a 2-d input",
                      lambda d: Q.quantize(t(np.zeros((4, 2), np.float32), d), 0.1, 0, Q.qint8, ch_axis=2)),
    "group does not divide": (ValueError, "argument 'group_size' \\(3\\) must divide the size of axis 1 \\(8\\)",
                              lambda d: Q.quantize(t(np.zeros((2, 8), np.float32), d), 0.1, 0, Q.qint8,
                                                   group_size=3)),
    "group shape": (ValueError, "must have shape \\(2, 2\\) for per-group",
                    lambda d: Q.quantize(t(np.zeros((2, 8), np.float32), d), t([0.1, 0.2], d), 0, Q.qint8,
                                         group_size=4)),
    "group and ch_axis": (ValueError, "not both",
                          lambda d: Q.quantize(t(np.zeros((2, 8), np.float32), d), 0.1, 0, Q.qint8, ch_axis=0,
                                               group_size=4)),
    "integer quantize": (TypeError, "quantize\\(\\): argument 'x' must be a floating tensor",
                         lambda d: Q.quantize(t([1, 2], d), 0.1, 0, Q.qint8)),
    "integer fake_quantize": (TypeError, "fake_quantize\\(\\): argument 'x' must be a floating tensor",
                              lambda d: Q.fake_quantize(t([1, 2], d), 0.1, 0, 0, 255)),
    "float dequantize": (TypeError, "dequantize\\(\\): argument 'q' must hold integer codes",
                         lambda d: Q.dequantize(t([1.0], d), 0.1, 0)),
    "float unpack": (TypeError, "unpack_int4\\(\\): argument 'packed' must be a uint8 tensor",
                     lambda d: Q.unpack_int4(t([1.0], d), 2, True)),
    "unpack length": (ValueError, "unpack_int4\\(\\): argument 'length' must be 3 or 4",
                      lambda d: Q.unpack_int4(t([1, 2], d, lucid.uint8), 5, True)),
    "float pack": (TypeError, "pack_int4\\(\\): argument 'codes' must hold int8",
                   lambda d: Q.pack_int4(t([1.0], d))),
    "quant_min > quant_max": (ValueError, "argument 'quant_min' \\(5\\) must be <= 'quant_max' \\(3\\)",
                              lambda d: Q.fake_quantize(t([1.0], d), 0.1, 4, 5, 3)),
    "fake zp off grid": (ValueError, "fake_quantize\\(\\): argument 'zero_point' must lie in \\[0, 15\\]",
                         lambda d: Q.fake_quantize(t([1.0], d), 0.1, 20, 0, 15)),
    "qmatmul K mismatch": (ValueError, "qmatmul\\(\\): shapes do not match",
                           lambda d: Q.qmatmul(t([[1, 2]], d, lucid.uint8), 0.1, 0, t([[1, 2, 3]], d, lucid.int8),
                                               0.1, 0)),
    "qmatmul K too large": (ValueError, "K = 33026 is too large for exact int32 accumulation",
                            lambda d: Q.qmatmul(t(np.zeros((1, 33026), np.uint8), d), 0.1, 0,
                                                t(np.zeros((1, 33026), np.int8), d), 0.1, 0)),
    "qmatmul weight dtype": (TypeError, "argument 'wq' must hold int8",
                             lambda d: Q.qmatmul(t([[1]], d, lucid.uint8), 0.1, 0, t([[1]], d, lucid.uint8), 0.1, 0)),
    "qmatmul activation dtype": (TypeError, "argument 'xq' must hold uint8",
                                 lambda d: Q.qmatmul(t([[1.0]], d), 0.1, 0, t([[1]], d, lucid.int8), 0.1, 0)),
    "qmatmul w_scale length": (ValueError, "argument 'w_scale' must be a number or have shape \\(2,\\)",
                               lambda d: Q.qmatmul(t([[1]], d, lucid.uint8), 0.1, 0, t([[1], [2]], d, lucid.int8),
                                                   t([0.1, 0.2, 0.3], d), 0)),
    "qmatmul bias shape": (ValueError, "argument 'bias' must have shape \\(2,\\)",
                           lambda d: Q.qmatmul(t([[1]], d, lucid.uint8), 0.1, 0, t([[1], [2]], d, lucid.int8),
                                               0.1, 0, bias=t([0.0], d))),
    "qmatmul x_zp off grid": (ValueError, "argument 'x_zp' must lie in \\[0, 255\\]",
                              lambda d: Q.qmatmul(t([[1]], d, lucid.uint8), 0.1, -1, t([[1]], d, lucid.int8), 0.1, 0)),
    "bad qdtype": (TypeError, "argument 'qdtype' must be a lucid.quantization QDtype",
                   lambda d: Q.quantize(t([1.0], d), 0.1, 0, lucid.int8)),
    "scale type": (TypeError, "argument 'scale' must be a number or a tensor",
                   lambda d: Q.quantize(t([1.0], d), "0.1", 0, Q.qint8)),
    "x type": (TypeError, "argument 'x' must be a lucid.Tensor",
               lambda d: Q.quantize([1.0], 0.1, 0, Q.qint8)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_same_message_on_both_streams(name):
    exc, pattern, call = CASES[name]
    messages = []
    for device in ("cpu", "gpu"):
        with pytest.raises(exc, match=pattern) as info:
            call(device)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_failed_call_leaves_inputs_alone():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError):
        Q.fake_quantize(x, 0.0, 0, 0, 255)
    assert x.grad is None and x.tolist() == [1.0, 2.0]
