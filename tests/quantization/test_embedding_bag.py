"""nn.quantized.EmbeddingBag against a numpy reference written from docs/numerics.md
("EmbeddingBag"): per-row dequantization in float32, then per bag a left-to-right
float32 sum (times the per-sample weights), divided by the bag size for "mean";
both streams byte for byte."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

F32 = np.float32


@pytest.fixture(params=["cpu", "gpu"])
def device(request):
    return request.param


def make_bag(mode, include_last_offset=False, seed=0):
    lucid.manual_seed(seed)
    emb = nn.Embedding(12, 5)
    emb.qconfig = Q.default_per_channel_qconfig
    return nn.quantized.EmbeddingBag.from_float(emb, mode=mode, include_last_offset=include_last_offset)


def ref(bag, flat, starts, ends, mode, psw=None):
    codes = bag.weight_int8.numpy().astype(np.int64)
    s = bag.weight_scale.numpy().astype(F32)
    z = bag.weight_zero_point.numpy().astype(np.int64)
    rows = ((codes[flat] - z[flat, None]).astype(F32) * s[flat, None]).astype(F32)
    if psw is not None:
        rows = (rows * np.asarray(psw, F32)[:, None]).astype(F32)
    out = np.zeros((len(starts), codes.shape[1]), F32)
    for b, (a, e) in enumerate(zip(starts, ends)):
        acc = np.zeros(codes.shape[1], F32)
        for k in range(a, e):
            acc = (acc + rows[k]).astype(F32)
        if mode == "mean" and e > a:
            acc = (acc / F32(e - a)).astype(F32)
        out[b] = acc
    return out


def same_bits(a, b):
    a, b = np.ascontiguousarray(a, F32), np.ascontiguousarray(b, F32)
    assert a.shape == b.shape and a.tobytes() == b.tobytes(), (a, b)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_offsets_with_empty_bag(device, mode):
    bag = make_bag(mode).to(device)
    flat = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int64)
    offsets = np.array([0, 3, 3, 7], np.int64)  # bag 1 is empty
    y = bag(lucid.tensor(flat, device=device), offsets=lucid.tensor(offsets, device=device))
    bag_cpu = bag.to("cpu")
    same_bits(y.numpy(), ref(bag_cpu, flat, offsets, [3, 3, 7, 8], mode))
    assert (y.numpy()[1] == 0).all()


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_2d_input_and_include_last_offset(device, mode):
    bag = make_bag(mode).to(device)
    idx = np.array([[0, 11, 5], [7, 7, 2]], np.int64)
    y = bag(lucid.tensor(idx, device=device))
    same_bits(y.numpy(), ref(bag.to("cpu"), idx.reshape(-1), [0, 3], [3, 6], mode))
    last = make_bag(mode, include_last_offset=True).to(device)
    y = last(lucid.tensor(idx.reshape(-1), device=device), offsets=lucid.tensor([0, 2, 6], device=device))
    same_bits(y.numpy(), ref(last.to("cpu"), idx.reshape(-1), [0, 2], [2, 6], mode))


def test_per_sample_weights(device):
    bag = make_bag("sum").to(device)
    flat = np.array([2, 8, 8, 0], np.int64)
    w = np.array([0.5, -1.25, 3.0, 0.1], F32)
    y = bag(lucid.tensor(flat, device=device), offsets=lucid.tensor([0, 1], device=device),
            per_sample_weights=lucid.tensor(w, device=device))
    same_bits(y.numpy(), ref(bag.to("cpu"), flat, [0, 1], [1, 4], "sum", w))


def test_matches_float_embedding_sum_closely():
    lucid.manual_seed(3)
    emb = nn.Embedding(12, 5)
    emb.qconfig = Q.default_per_channel_qconfig
    bag = nn.quantized.EmbeddingBag.from_float(emb)
    idx = lucid.tensor([[1, 2, 3]])
    expect = emb.weight.detach().numpy()[[1, 2, 3]].sum(axis=0)
    scale = float(bag.weight_scale.numpy().max())
    assert np.abs(bag(idx).numpy()[0] - expect).max() <= 3 * scale / 2 + 1e-6


def test_errors():
    bag = make_bag("sum")
    with pytest.raises(ValueError, match="offsets"):
        bag(lucid.tensor([1, 2]), offsets=lucid.tensor([1]))
    with pytest.raises(TypeError, match="offsets"):
        bag(lucid.tensor([1, 2]))
    with pytest.raises(ValueError, match="offsets"):
        bag(lucid.tensor([[1, 2]]), offsets=lucid.tensor([0]))
    with pytest.raises(IndexError):
        bag(lucid.tensor([1, 12]), offsets=lucid.tensor([0]))
    with pytest.raises(TypeError, match="input"):
        bag(lucid.tensor([1.0]), offsets=lucid.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        make_bag("mean")(lucid.tensor([1]), offsets=lucid.tensor([0]), per_sample_weights=lucid.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="max"):
        nn.quantized.EmbeddingBag(4, 2, mode="max")
