"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against
PyTorch 2.14 (tests/surface_refs/make_transformer_decoder_refs.py writes the
literals: state dicts, inputs, masks, outputs, input and parameter gradients),
on both streams; argument and shape errors."""
import os
import sys

import numpy as np
import pytest

import lucid
from lucid import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from transformer_decoder_refs import E, FF, H, REFS  # noqa: E402


def t(a, device, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=requires_grad)


def close(x, ref, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(x.tolist()), np.asarray(ref), rtol=rtol, atol=atol)


def build(ref, device):
    kw = dict(ref["kw"])
    if kw.get("activation") == "tanh":
        kw["activation"] = lucid.tanh
    if ref["kind"] == "layer":
        return nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, device=device, **kw)
    if ref["kind"] == "decoder":
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, device=device, **kw), 2,
                                     norm=nn.LayerNorm(E, device=device))
    return nn.Transformer(E, H, 1, 1, FF, dropout=0.0, device=device, **kw)


@pytest.mark.parametrize("name", sorted(REFS))
def test_matches_torch(device, name):
    ref = REFS[name]
    m = build(ref, device)
    assert sorted(m.state_dict()) == sorted(ref["state"])  # PyTorch's submodule names, the same set
    m.load_state_dict({k: t(v, device) for k, v in ref["state"].items()})
    tgt, src = t(ref["tgt"], device, True), t(ref["src"], device, True)
    masks = {k: (lucid.tensor(np.asarray(v) != 0, device=device) if k in ref["bool_masks"] else t(v, device))
             for k, v in ref["masks"].items()}
    names = {"tgt_causal_float": "tgt_mask", "tgt_causal_bool": "tgt_mask", "tgt_kpm": "tgt_key_padding_mask",
             "mem_kpm": "memory_key_padding_mask", "mem_bool": "memory_mask", "src_kpm": "src_key_padding_mask",
             "src_bool": "src_mask"}
    fw = {names[k]: v for k, v in masks.items()}
    if ref["is_causal"]:
        fw["tgt_is_causal"] = True
    out = m(src, tgt, **fw) if ref["kind"] == "transformer" else m(tgt, src, **fw)
    close(out, ref["out"])
    (out * lucid.linspace(-1, 1, out.numel(), device=device).reshape(out.shape)).sum().backward()
    close(tgt.grad, ref["tgt_grad"], rtol=1e-4)
    close(src.grad, ref["src_grad"], rtol=1e-4)
    params = dict(m.named_parameters())
    assert ref["param_grads"]
    for k, g in ref["param_grads"].items():
        close(params[k].grad, g, rtol=1e-4)


def test_generate_square_subsequent_mask(device):
    m = nn.Transformer.generate_square_subsequent_mask(3, device=device)
    inf = float("-inf")
    assert m.tolist() == [[0.0, inf, inf], [0.0, 0.0, inf], [0.0, 0.0, 0.0]]
    assert m.dtype == lucid.float32 and m.device == device
    with pytest.raises(ValueError, match="'sz'"):
        nn.Transformer.generate_square_subsequent_mask(-1)


def test_is_causal_without_mask_masks_later_targets(device):
    """tgt_is_causal alone masks later positions: the result equals the explicit causal mask's."""
    lucid.manual_seed(0)
    layer = nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, batch_first=True, device=device)
    tgt, mem = lucid.randn(2, 3, E, device=device), lucid.randn(2, 4, E, device=device)
    a = layer(tgt, mem, tgt_is_causal=True)
    b = layer(tgt, mem, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3, device=device))
    close(a, b.tolist(), rtol=1e-6, atol=1e-6)


def test_structure_and_init(device):
    m = nn.Transformer(E, H, 2, 3, FF, dropout=0.0, device=device)
    assert len(m.encoder.layers) == 2 and len(m.decoder.layers) == 3
    assert isinstance(m.encoder.norm, nn.LayerNorm) and isinstance(m.decoder.norm, nn.LayerNorm)
    # the layers are deep copies, re-initialised independently with xavier_uniform_
    w0 = np.asarray(m.decoder.layers[0].linear1.weight.tolist())
    w1 = np.asarray(m.decoder.layers[1].linear1.weight.tolist())
    assert not np.array_equal(w0, w1)
    bound = np.sqrt(6.0 / (E + FF))  # xavier_uniform_ on the (FF, E) weight
    assert np.abs(w0).max() <= bound
    assert m.decoder.layers[0].norm1.weight.tolist() == [1.0] * E  # 1-D parameters keep their init
    custom = nn.Transformer(E, H, custom_encoder=nn.Identity(), custom_decoder=nn.Identity(), device=device)
    assert sorted(custom.state_dict()) == []


def test_errors(device):
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerDecoderLayer(E, H, activation="swish")
    with pytest.raises(TypeError, match="activation"):
        nn.TransformerDecoderLayer(E, H, activation=3)
    with pytest.raises(TypeError, match="decoder_layer"):
        nn.TransformerDecoder("layer", 2)
    with pytest.raises(ValueError, match="num_layers"):
        nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H), -1)
    with pytest.raises(ValueError, match="divisible"):
        nn.TransformerDecoderLayer(E, 4)
    m = nn.Transformer(E, H, 1, 1, FF, dropout=0.0, batch_first=True, device=device)
    with pytest.raises(ValueError, match="batch number"):
        m(lucid.ones(2, 4, E, device=device), lucid.ones(3, 3, E, device=device))
    with pytest.raises(ValueError, match="d_model"):
        m(lucid.ones(2, 4, E, device=device), lucid.ones(2, 3, E + 1, device=device))
    with pytest.raises(ValueError, match="batched"):
        m(lucid.ones(2, 4, E, device=device), lucid.ones(3, E, device=device))
    layer = nn.TransformerDecoderLayer(E, H, FF, batch_first=True, device=device)
    with pytest.raises(ValueError, match="memory"):
        layer(lucid.ones(2, 3, E, device=device), lucid.ones(4, E, device=device))
    with pytest.raises(ValueError, match="key_padding_mask"):
        layer(lucid.ones(2, 3, E, device=device), lucid.ones(2, 4, E, device=device),
              memory_key_padding_mask=lucid.zeros(2, 3, dtype=lucid.bool_, device=device))
