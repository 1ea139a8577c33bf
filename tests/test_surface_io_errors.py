"""Files and errors of PyTorch's surface (issue 12): save / load through file
objects, load_state_dict fed PyTorch-style tensors, and shape / view / device
errors that are both ValueError (lucid's contract) and RuntimeError (PyTorch's)."""
import io

import numpy as np
import pytest

import lucid
from lucid import nn

from conftest import to_np


def test_save_load_file_objects(device, tmp_path):
    obj = {"w": lucid.tensor([1.0, 2.0], device=device), "meta": {"step": 3, "name": "run"},
           "ids": lucid.tensor([4, 5])}
    buf = io.BytesIO()
    lucid.save(obj, buf)
    assert buf.tell() > 0
    buf.seek(0)
    back = lucid.load(buf, map_location=device)
    assert to_np(back["w"]).tolist() == [1.0, 2.0] and back["w"].device == obj["w"].device
    assert back["meta"] == {"step": 3, "name": "run"} and back["ids"].dtype == lucid.int64
    path = tmp_path / "ckpt.safetensors"
    with open(path, "wb") as f:
        lucid.save(obj, f)
    with open(path, "rb") as f:
        assert to_np(lucid.load(f)["w"]).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="binary mode"):
        lucid.load(io.StringIO("x"))


class _ForeignTensor:
    """Stands in for a torch.Tensor: detach().cpu().numpy() and __array__."""

    def __init__(self, arr, convertible=True):
        self.arr, self.convertible = arr, convertible

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        if not self.convertible:
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.arr

    def __array__(self, dtype=None):
        return self.numpy()


def test_load_state_dict_accepts_foreign_and_numpy_arrays(device):
    layer = nn.Linear(3, 2, device=device)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    layer.load_state_dict({"weight": _ForeignTensor(w), "bias": np.float64([0.5, -0.5])})
    assert to_np(layer.weight).tolist() == w.tolist() and to_np(layer.bias).tolist() == [0.5, -0.5]
    assert layer.weight.device.type == device and layer.bias.dtype == lucid.float32
    before = to_np(layer.weight).copy()
    with pytest.raises(RuntimeError, match=r"could not convert.*lucid\.from_numpy"):
        layer.load_state_dict({"weight": _ForeignTensor(w * 2, convertible=False), "bias": np.zeros(2)})
    assert to_np(layer.weight).tolist() == before.tolist()  # nothing written
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        layer.load_state_dict({"weight": np.zeros((3, 3)), "bias": np.zeros(2)})


def test_shape_and_device_errors_are_value_and_runtime_errors(device):
    cases = [
        (lambda: lucid.ones(2, 3, device=device).view(4), lucid.ShapeError, "view"),
        (lambda: lucid.ones(2, device=device) + lucid.ones(3, device=device), lucid.ShapeError, "broadcast"),
        (lambda: lucid.ones(2, 3, device=device).expand(4, 3), lucid.ShapeError, "expand"),
        (lambda: lucid.ones(2, 3, device=device).reshape(-1, 4), lucid.ShapeError, "reshape"),
        (lambda: lucid.ones(2, device="cpu") + lucid.ones(2, device="gpu"), lucid.DeviceError, "one device"),
    ]
    for fn, cls, words in cases:
        for catch in (RuntimeError, ValueError, cls):
            with pytest.raises(catch, match=words):
                fn()
    assert issubclass(lucid.ShapeError, ValueError) and issubclass(lucid.ShapeError, RuntimeError)
