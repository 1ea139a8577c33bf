"""lucid.save / lucid.load: safetensors files, structure round trips, cross-stream loads."""
import json
import os
from collections import OrderedDict

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from conftest import to_np


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(lucid.randn(3, 2))
        self.b = nn.Parameter(lucid.randn(2))
        self.register_buffer("steps", lucid.tensor(7))

    def forward(self, x):
        return x


ALL_DTYPES = ["float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_round_trips_bit_exact(tmp_path, device, dtype):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        data = rng.random((3, 4)) > 0.5
    elif dtype in ("float32", "float16", "bfloat16"):
        data = (rng.standard_normal((3, 4)) * 100).astype(np.float32)
        data[0, :3] = [np.inf, -np.inf, -0.0]
    else:
        data = rng.integers(0, 100, (3, 4))
    t = lucid.tensor(data, device=device).to(getattr(lucid, dtype if dtype != "bool" else "bool_"))
    path = tmp_path / "t.safetensors"
    lucid.save({"t": t}, path)
    back = lucid.load(path, device=device)["t"]
    assert back.dtype == t.dtype and back.shape == t.shape and back.device.type == device
    np.testing.assert_array_equal(to_np(back), to_np(t))


def test_bfloat16_bits_are_stored_as_uint16(tmp_path):
    from safetensors.numpy import load_file

    t = lucid.tensor([1.0, -2.5, 3.140625], dtype=lucid.bfloat16)
    lucid.save({"x": t}, tmp_path / "b.safetensors")
    raw = load_file(str(tmp_path / "b.safetensors"))["x"]
    assert raw.dtype == np.uint16
    # bf16 is the top half of the float32 pattern
    expected = (np.array([1.0, -2.5, 3.140625], np.float32).view(np.uint32) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(raw, expected)


def test_module_state_dict_cpu_to_gpu(tmp_path):
    lucid.manual_seed(0)
    src = Small()
    path = tmp_path / "m.safetensors"
    lucid.save(src.state_dict(), path)
    dst = Small().to("gpu")
    sd = lucid.load(path, device="gpu")
    assert isinstance(sd, OrderedDict) and list(sd) == ["w", "b", "steps"]
    assert all(v.device.type == "gpu" for v in sd.values())
    dst.load_state_dict(sd)
    for k, v in src.state_dict().items():
        np.testing.assert_array_equal(to_np(dst.state_dict()[k]), to_np(v))
        assert dst.state_dict()[k].device.type == "gpu"


def test_gpu_checkpoint_loads_on_cpu(tmp_path):
    t = lucid.arange(6, dtype=lucid.float32, device="gpu")
    lucid.save({"a": {"b": t}}, tmp_path / "g.safetensors")
    back = lucid.load(tmp_path / "g.safetensors")
    assert back["a"]["b"].device.type == "cpu"
    np.testing.assert_array_equal(to_np(back["a"]["b"]), np.arange(6))


def test_file_is_plain_safetensors_with_dotted_names(tmp_path):
    from safetensors import safe_open

    lucid.save({"enc": {"weight": lucid.ones(2)}, "head.bias": lucid.zeros(1)}, tmp_path / "f.safetensors")
    with safe_open(str(tmp_path / "f.safetensors"), framework="numpy") as f:
        assert sorted(f.keys()) == ["enc.weight", "head.bias"]
        meta = f.metadata()
    assert meta["format"] == "lucid"
    json.loads(meta["lucid.structure"])  # the structure is JSON, not pickle


def test_nested_structure_and_optimizer_state(tmp_path):
    p = nn.Parameter(lucid.tensor([1.0, 2.0]))
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    p.grad = lucid.tensor([1.0, -1.0])
    opt.step()
    obj = {"model": {"p": p.detach()}, "optim": opt.state_dict(), "epoch": 3, "best": 0.25,
           "tags": ["a", None, True], "shape": (2, 3), 5: "int key", "nan": float("nan")}
    lucid.save(obj, tmp_path / "ckpt.safetensors")
    back = lucid.load(tmp_path / "ckpt.safetensors")
    assert back["epoch"] == 3 and back["best"] == 0.25 and back["tags"] == ["a", None, True]
    assert back["shape"] == (2, 3) and back[5] == "int key" and np.isnan(back["nan"])
    groups = back["optim"]["param_groups"]
    assert groups == [{"lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.0, "nesterov": True,
                       "maximize": False, "params": [0]}]
    assert list(back["optim"]["state"]) == [0]  # int keys survive
    buf = back["optim"]["state"][0]["momentum_buffer"]
    np.testing.assert_array_equal(to_np(buf), [1.0, -1.0])
    q = nn.Parameter(lucid.tensor([1.0, 2.0], device="gpu"))
    opt2 = optim.SGD([q], lr=0.5)
    opt2.load_state_dict(back["optim"])
    assert opt2.param_groups[0]["nesterov"] and opt2.state[q]["momentum_buffer"].device.type == "gpu"


def test_colliding_names_and_single_tensor(tmp_path):
    obj = {"a.b": lucid.ones(1), "a": {"b": lucid.zeros(1)}}
    lucid.save(obj, tmp_path / "c.safetensors")
    back = lucid.load(tmp_path / "c.safetensors")
    assert to_np(back["a.b"]).tolist() == [1.0] and to_np(back["a"]["b"]).tolist() == [0.0]
    lucid.save(lucid.tensor([[1, 2]]), tmp_path / "t.safetensors")
    t = lucid.load(tmp_path / "t.safetensors")
    assert t.dtype == lucid.int64 and to_np(t).tolist() == [[1, 2]]
    lucid.save({"e": lucid.zeros(0, 3), "s": lucid.tensor(2.5)}, tmp_path / "e.safetensors")
    back = lucid.load(tmp_path / "e.safetensors", device="gpu")
    assert back["e"].shape == (0, 3) and back["s"].shape == () and back["s"].item() == 2.5


def test_non_contiguous_tensor(tmp_path):
    t = lucid.arange(6, dtype=lucid.float32).reshape(2, 3).transpose(0, 1)
    lucid.save({"t": t}, tmp_path / "nc.safetensors")
    np.testing.assert_array_equal(to_np(lucid.load(tmp_path / "nc.safetensors")["t"]), to_np(t))


def test_foreign_safetensors_file_loads_flat(tmp_path):
    from safetensors.numpy import save_file

    save_file({"x": np.arange(3, dtype=np.int32), "y": np.ones((2,), np.float64)}, str(tmp_path / "o.st"))
    back = lucid.load(tmp_path / "o.st")
    assert back["x"].dtype == lucid.int32 and back["y"].dtype == lucid.float32


def test_errors_and_atomic_write(tmp_path):
    path = tmp_path / "x.safetensors"
    lucid.save({"ok": lucid.ones(1)}, path)
    with pytest.raises(TypeError, match=r"save\(\): cannot store a object at 'bad'"):
        lucid.save({"bad": object()}, path)
    with pytest.raises(TypeError, match=r"cannot store a Small at '<root>'.*save its state_dict\(\) instead"):
        lucid.save(Small(), path)
    with pytest.raises(TypeError, match="dict keys"):
        lucid.save({(1, 2): 3}, path)
    # the failed saves left the earlier file intact, and no temporary files behind
    assert to_np(lucid.load(path)["ok"]).tolist() == [1.0]
    assert os.listdir(tmp_path) == ["x.safetensors"]
    with pytest.raises(FileNotFoundError):
        lucid.load(tmp_path / "missing.safetensors")
    (tmp_path / "junk").write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        lucid.load(tmp_path / "junk")
    with pytest.raises(TypeError, match="path"):
        lucid.save({}, 3)
    with pytest.raises(ValueError, match="device"):
        lucid.load(path, device="tpu")
    assert lucid.load(path, map_location="gpu")["ok"].device.type == "gpu"
    with pytest.raises(TypeError, match="not both"):
        lucid.load(path, device="cpu", map_location="gpu")


def test_scheduler_state_round_trips(tmp_path):
    from lucid.optim import lr_scheduler

    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    sched = lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    for _ in range(3):
        sched.step()
    lucid.save(sched.state_dict(), tmp_path / "s.safetensors")
    opt2 = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    sched2 = lr_scheduler.MultiStepLR(opt2, milestones=[9], gamma=0.1)
    sched2.load_state_dict(lucid.load(tmp_path / "s.safetensors"))
    sched2.step()  # epoch 4: both milestones passed
    assert sched2.get_last_lr() == [0.25] and opt2.param_groups[0]["lr"] == 0.25
