"""Writes transformer_decoder_refs.py: PyTorch 2.14 TransformerDecoderLayer,
TransformerDecoder and Transformer references (state dicts, inputs, masks,
outputs, and the gradients of sum(out * linspace(-1, 1)) for the inputs and
every parameter) for tests/test_transformer_decoder.py. Run with a Python that
has torch:

    python make_transformer_decoder_refs.py > transformer_decoder_refs.py   (a Python with torch and numpy)
"""
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")  # enable_nested_tensor notes about the fast path

E, H, FF = 6, 2, 8


def r(a):
    return np.round(np.asarray(a.detach() if torch.is_tensor(a) else a, dtype=np.float64), 6).tolist()


def bool_mask(shape, seed):
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(shape, generator=g) < 0.3
    m[..., 0] = False  # every query keeps one key
    return m


# kind, constructor kwargs, forward spec. "batched": 3-D inputs; masks named per case.
CASES = {
    "layer_post_relu_bf": dict(kind="layer", kw=dict(batch_first=True), masks=("tgt_causal_float", "tgt_kpm",
                                                                            "mem_kpm")),
    "layer_pre_gelu_seq_first": dict(kind="layer", kw=dict(norm_first=True, activation="gelu"),
                                     masks=("mem_bool",)),
    "layer_is_causal_hint": dict(kind="layer", kw=dict(batch_first=True), masks=("tgt_causal_bool", "is_causal")),
    "layer_unbatched": dict(kind="layer", kw=dict(norm_first=True), masks=("tgt_causal_float",), batched=False),
    "layer_callable_act_no_bias": dict(kind="layer", kw=dict(batch_first=True, activation="tanh", bias=False),
                                       masks=()),
    "decoder_two_layers_norm": dict(kind="decoder", kw=dict(batch_first=True), masks=("tgt_causal_float", "mem_kpm")),
    "transformer_seq_first": dict(kind="transformer", kw=dict(), masks=("tgt_causal_float", "src_kpm", "mem_kpm")),
    "transformer_pre_norm_bf": dict(kind="transformer", kw=dict(batch_first=True, norm_first=True,
                                                                activation="gelu"), masks=("src_bool",)),
}
N, T, S = 2, 3, 4
# The parameters whose gradients are stored (a sample, to keep the file small, that touches
# every block: both attentions, the feed-forward and the norms, in every layer).
GRAD_KEYS = ("self_attn.in_proj_weight", "multihead_attn.in_proj_weight", "multihead_attn.out_proj.bias",
             "linear1.weight", "linear2.bias", "norm1.weight", "norm3.bias", "decoder.norm.weight",
             "encoder.norm.bias")

print('"""PyTorch 2.14 Transformer decoder references, written by make_transformer_decoder_refs.py."""')
print("inf = float('inf')")
print(f"E, H, FF, N, T, S = {E}, {H}, {FF}, {N}, {T}, {S}")
print("REFS = {")
for name, spec in CASES.items():
    torch.manual_seed(sum(map(ord, name)))
    kw = dict(spec["kw"])
    if kw.get("activation") == "tanh":
        kw["activation"] = torch.tanh
    if spec["kind"] == "layer":
        m = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, **kw)
    elif spec["kind"] == "decoder":
        m = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, **kw), 2,
                                        norm=torch.nn.LayerNorm(E))
    else:
        m = torch.nn.Transformer(E, H, 1, 1, FF, dropout=0.0, **kw)
    with torch.no_grad():  # parameters exactly as stored (6 decimals), so the literals are exact inputs
        for p in m.parameters():
            p.copy_(torch.round(p, decimals=6))
    bf = kw.get("batch_first", False)
    batched = spec.get("batched", True)

    def shape(L):
        if not batched:
            return (L, E)
        return (N, L, E) if bf else (L, N, E)

    tgt = torch.round(torch.randn(shape(T)), decimals=6).requires_grad_()
    src = torch.round(torch.randn(shape(S)), decimals=6).requires_grad_()  # memory for a layer / decoder, src for a Transformer
    masks = {}
    fw = {}
    for mk in spec["masks"]:
        if mk == "tgt_causal_float":
            masks[mk] = fw["tgt_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(T)
        elif mk == "tgt_causal_bool":
            masks[mk] = fw["tgt_mask"] = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        elif mk == "is_causal":
            fw["tgt_is_causal"] = True
        elif mk == "tgt_kpm":
            masks[mk] = fw["tgt_key_padding_mask"] = torch.tensor([[False, False, True], [False, False, False]])
        elif mk == "mem_kpm":
            masks[mk] = fw["memory_key_padding_mask"] = torch.tensor([[False, True, False, False],
                                                                     [False, False, False, True]])
        elif mk == "mem_bool":
            masks[mk] = fw["memory_mask"] = bool_mask((T, S), 7)
        elif mk == "src_kpm":
            masks[mk] = fw["src_key_padding_mask"] = torch.tensor([[False, False, True, False],
                                                                  [False, False, False, False]])
        elif mk == "src_bool":
            masks[mk] = fw["src_mask"] = bool_mask((S, S), 11)
    if spec["kind"] == "transformer":
        out = m(src, tgt, **fw)
    else:
        out = m(tgt, src, **fw)
    (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
    state = {k: r(v) for k, v in m.state_dict().items()}
    grads = {k: r(p.grad) for k, p in m.named_parameters() if k.endswith(GRAD_KEYS)}
    print(f"    {name!r}: dict(kind={spec['kind']!r}, kw={spec['kw']!r}, batched={batched!r}, "
          f"masks={ {k: r(v.to(torch.float64) if v.dtype == torch.bool else v) for k, v in masks.items()}!r}, "
          f"bool_masks={sorted(k for k, v in masks.items() if v.dtype == torch.bool)!r}, "
          f"is_causal={'is_causal' in spec['masks']!r},")
    print(f"        state={state!r},")
    print(f"        tgt={r(tgt)!r}, src={r(src)!r}, out={r(out)!r},")
    print(f"        tgt_grad={r(tgt.grad)!r}, src_grad={r(src.grad)!r}, param_grads={grads!r}),")
print("}")
