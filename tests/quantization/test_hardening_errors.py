"""Bad input to the quantization workflow surfaces: each raises a clear error that names
the argument and what was expected (and, for ops, one rule: shape and device errors are
catchable as RuntimeError, as PyTorch users write ``except RuntimeError``)."""
import math

import pytest

import lucid
import lucid.nn.quantized as nnq
import lucid.quantization as Q
from lucid import nn


def test_per_channel_observer_state_of_mismatched_lengths():
    obs = Q.PerChannelMinMaxObserver()
    sd = obs.state_dict()
    sd["min_val"], sd["max_val"] = lucid.zeros(3), lucid.ones(4)
    with pytest.raises(RuntimeError, match=r"min_val / max_val.*\(3,\) and \(4,\)"):
        obs.load_state_dict(sd)
    assert obs.min_val.numel() == 0  # unchanged
    sd["max_val"] = lucid.ones(3)
    obs.load_state_dict(sd)
    assert obs.max_val.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("observer, match", [
    (nn.ReLU, r"argument 'observer' must build an observer.*got ReLU"),
    (3, r"argument 'observer' must be an observer class or factory.*got int"),
    (nn.ReLU.__call__, None),  # a plain callable is taken on trust (it fails on its own terms)
])
def test_fake_quantize_observer_argument(observer, match):
    if match is None:
        with pytest.raises(Exception):
            Q.FakeQuantize(observer=observer)
        return
    with pytest.raises(TypeError, match=match):
        Q.FakeQuantize(observer=observer)


def test_learnable_fake_quantize_observer_argument():
    with pytest.raises(TypeError, match="argument 'observer'"):
        Q.LearnableFakeQuantize(nn.ReLU)


@pytest.mark.parametrize("activation, weight, argument", [
    (3, 4, "activation"),
    (nn.ReLU, Q.default_weight_observer, "activation"),
    (Q.default_observer, nn.ReLU, "weight"),
    (Q.default_observer, "minmax", "weight"),
])
def test_qconfig_arguments(activation, weight, argument):
    with pytest.raises(TypeError, match=f"QConfig\\(\\): argument '{argument}'"):
        Q.QConfig(activation=activation, weight=weight)


def test_qconfig_accepts_identity_none_and_functions():
    assert Q.QConfig(activation=nn.Identity, weight=None).activation is nn.Identity
    assert Q.QConfig(activation=lambda: Q.MinMaxObserver(), weight=Q.default_weight_observer) is not None


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"scale": "a"}, TypeError, r"argument 'scale' must be a float, got str"),
    ({"zero_point": "a"}, TypeError, r"argument 'zero_point' must be a float, got str"),
    ({"scale": math.nan}, ValueError, r"argument 'scale' must be finite"),
    ({"scale": -1.0}, ValueError, r"argument 'scale' must be > 0"),
])
def test_learnable_fake_quantize_qparams(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, **kwargs)


@pytest.mark.parametrize("method", ["add_scalar", "mul_scalar"])
def test_qfunctional_scalar(method):
    f = nnq.QFunctional()
    x = Q.quantize_per_tensor(lucid.tensor([0.5, 1.0]), 0.1, 10, Q.quint8)
    with pytest.raises(TypeError, match=rf"QFunctional.{method}\(\): argument 'c' must be a real number, got str"):
        getattr(f, method)(x, "a")
    with pytest.raises(ValueError, match=r"argument 'c' must be finite"):
        getattr(f, method)(x, math.inf)
    assert getattr(f, method)(x, 2).dequantize().shape == (2,)


@pytest.mark.parametrize("d, match", [
    ({"object_type": [(nn.Linear, Q.default_qconfig, 1)]}, r"entry 0 of 'object_type'.*\(object_type, qconfig\).*3-tuple"),
    ({"module_name": [("fc",)]}, r"entry 0 of 'module_name'.*1-tuple"),
    ({"module_name_regex": ["fc.*"]}, r"entry 0 of 'module_name_regex'.*got str"),
    ({"module_name_object_type_order": [("", nn.Linear, Q.default_qconfig)]},
     r"\(module_name, object_type, index, qconfig\).*3-tuple"),
])
def test_qconfig_mapping_from_dict_entries(d, match):
    with pytest.raises(ValueError, match=match):
        Q.QConfigMapping.from_dict(d)


def test_qconfig_mapping_from_dict_list_type():
    with pytest.raises(TypeError, match="'object_type' must be a list"):
        Q.QConfigMapping.from_dict({"object_type": 3})


@pytest.mark.parametrize("zp", [math.nan, math.inf, -math.inf])
def test_qtensor_non_finite_zero_point(zp):
    with pytest.raises(TypeError, match=r"argument 'zero_point' must be an integer"):
        Q.QTensor(lucid.tensor([1, 2], dtype=lucid.uint8), 0.1, zp, Q.quint8)


def test_qtensor_per_channel_nan_zero_point():
    with pytest.raises(TypeError, match=r"argument 'zero_point' must hold integers"):
        Q.QTensor(lucid.tensor([[1, 2]], dtype=lucid.int8), lucid.tensor([0.1, 0.2]),
                  lucid.tensor([0.0, math.nan]), Q.qint8, axis=1)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_rnn_sequence_length_zero_same_message_float_and_dynamic(kind, batch_first):
    float_rnn = getattr(nn, kind)(4, 3, batch_first=batch_first)
    dyn = Q.quantize_dynamic(nn.Sequential(float_rnn))[0]
    x = lucid.randn(2, 0, 4) if batch_first else lucid.randn(0, 2, 4)
    messages = []
    for m in (float_rnn, dyn):
        with pytest.raises(ValueError, match=r"expected a sequence length larger than 0 in 'input'") as info:
            m(x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_dynamic_linear_range_overflowing_float32(device):
    q = Q.quantize_dynamic(nn.Sequential(nn.Linear(2, 2))).to(device)
    with pytest.raises(ValueError, match=r"argument 'input'.*overflows float32") as info:
        q(lucid.tensor([[3e38, -3e38]], device=device))
    assert "'scale'" not in str(info.value)
    # a wide range that fits still works
    assert q(lucid.tensor([[1e38, -1e38]], device=device)).shape == (1, 2)


# ----- one rule for the ops: shape and device errors are RuntimeErrors too -------------------------------
SHAPE_CASES = [
    ("matmul", lambda d: lucid.matmul(lucid.ones(2, 3, device=d), lucid.ones(4, 5, device=d))),
    ("matmul batch", lambda d: lucid.matmul(lucid.ones(2, 2, 3, device=d), lucid.ones(3, 3, 1, device=d))),
    ("cat", lambda d: lucid.cat([lucid.ones(2, 3, device=d), lucid.ones(4, 5, device=d)])),
    ("stack", lambda d: lucid.stack([lucid.ones(2, 3, device=d), lucid.ones(4, 5, device=d)])),
    ("add", lambda d: lucid.ones(2, 3, device=d) + lucid.ones(4, 5, device=d)),
    ("reshape", lambda d: lucid.ones(2, 3, device=d).reshape(7)),
    ("inner", lambda d: lucid.inner(lucid.ones(2, 3, device=d), lucid.ones(2, 4, device=d))),
    ("tensordot", lambda d: lucid.tensordot(lucid.ones(2, 3, device=d), lucid.ones(4, 5, device=d), dims=1)),
]
DEVICE_CASES = [
    ("matmul", lambda: lucid.matmul(lucid.ones(2, 3), lucid.ones(3, 5, device="gpu"))),
    ("cat", lambda: lucid.cat([lucid.ones(2, 3), lucid.ones(2, 3, device="gpu")])),
    ("add", lambda: lucid.ones(2, 3) + lucid.ones(2, 3, device="gpu")),
]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("name, op", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_errors_are_runtime_errors(name, op, device):
    with pytest.raises(RuntimeError) as info:
        op(device)
    assert isinstance(info.value, ValueError)  # `except ValueError` keeps working
    assert isinstance(info.value, lucid.ShapeError) or isinstance(info.value, lucid.OpError)


@pytest.mark.parametrize("name, op", DEVICE_CASES, ids=[c[0] for c in DEVICE_CASES])
def test_device_errors_are_runtime_errors(name, op):
    with pytest.raises(RuntimeError, match="gpu") as info:
        op()
    assert isinstance(info.value, lucid.DeviceError) and isinstance(info.value, ValueError)


def test_op_error_hierarchy():
    for cls in (lucid.ShapeError, lucid.DeviceError):
        assert issubclass(cls, lucid.OpError)
    assert issubclass(lucid.OpError, ValueError) and issubclass(lucid.OpError, RuntimeError)
