"""The nn half of PyTorch's surface (issue 12): activations, normalisation,
losses, resampling, attention, recurrent layers. References are literals
generated with PyTorch 2.x from the deterministic inputs ``det(...)`` below
(written here, so the suite runs without torch), or numpy written in the
test. Every case runs on both streams; gradients where differentiable."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn

from conftest import to_np


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


def T(a, device, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=requires_grad)


def close(t, ref, tol=2e-5):
    np.testing.assert_allclose(to_np(t), np.asarray(ref, dtype=np.float32), rtol=tol, atol=tol)


# torch: y = f(X) and d(sum(y * [1..7]))/dX
X = [1.917702, 3.895391, 0.166323, -3.806408, -2.202742, 2.627946, 3.608687]
ACTIVATIONS = {
    'silu': ([1.67201, 3.817755, 0.090061, -0.082769, -0.219183, 2.450924, 3.513516],
             [1.086097, 2.112316, 1.748338, -0.236897, -0.489343, 6.586417, 7.464022]),
    'elu': ([1.917702, 3.895391, 0.166323, -0.68444, -0.62265, 2.627946, 3.608687],
            [1.0, 2.0, 3.0, 0.062238, 0.386749, 6.0, 7.0]),
    'selu': ([2.014932, 4.092891, 0.174755, -1.71902, -1.56383, 2.761186, 3.791651],
             [1.050701, 2.101402, 3.152103, 0.156315, 0.971348, 6.304206, 7.354907]),
    'celu': ([1.917702, 3.895391, 0.166323, -1.381417, -1.154592, 2.627946, 3.608687],
             [1.0, 2.0, 3.0, 0.316222, 1.151359, 6.0, 7.0]),
    'softplus': ([1.917702, 3.895391, 0.436619, 0.000247, 0.006068, 2.627946, 3.608687],
                 [1.0, 2.0, 1.747209, 0.001975, 0.060315, 6.0, 7.0]),
    'mish': ([1.855764, 3.892297, 0.108537, -0.083668, -0.230028, 2.604205, 3.603671],
             [1.073964, 2.010534, 2.112837, -0.242991, -0.561823, 6.210298, 7.058599]),
    'gelu_tanh': ([1.86485, 3.895276, 0.094146, -0.000171, -0.030144, 2.617128, 3.608289],
                  [1.094916, 2.001051, 1.894453, -0.003036, -0.323201, 6.174017, 7.011443]),
    'logsigmoid': ([-0.137101, -0.020131, -0.61344, -3.828393, -2.307552, -0.069737, -0.026727],
                   [0.128118, 0.03986, 1.375545, 3.913022, 4.502477, 0.404168, 0.184611]),
}
FNS = {
    'silu': F.silu, 'elu': lambda x: F.elu(x, 0.7), 'selu': F.selu, 'celu': lambda x: F.celu(x, 1.5),
    'softplus': lambda x: F.softplus(x, 2.0, 3.0), 'mish': F.mish,
    'gelu_tanh': lambda x: F.gelu(x, approximate="tanh"), 'logsigmoid': F.logsigmoid,
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_forward_and_grad_match_torch(name, device):
    x = T(X, device, requires_grad=True)
    y = FNS[name](x)
    (y * T(np.arange(1, 8), device)).sum().backward()
    ref_y, ref_g = ACTIVATIONS[name]
    close(y, ref_y, 1e-5)
    close(x.grad, ref_g, 1e-5)


def test_activation_layers_and_extremes(device):
    x = T([-100.0, -1.0, 0.0, 1.0, 100.0], device)
    assert np.isfinite(to_np(nn.ELU()(x))).all() and np.isfinite(to_np(nn.Mish()(x))).all()
    close(nn.Softplus()(x), np.logaddexp(0, np.float64([-100, -1, 0, 1, 100])), 1e-6)
    close(nn.SiLU()(x), to_np(x) / (1 + np.exp(-to_np(x).astype(np.float64))))
    # softplus's gradient at 0 is exactly 1/2 (sigmoid), not the subgradient of |x|
    z = T([0.0], device, requires_grad=True)
    F.softplus(z).sum().backward()
    assert to_np(z.grad).tolist() == [0.5]
    # elu far on the positive side: the discarded exp branch leaves no NaN in the gradient
    big = T([200.0, -200.0], device, requires_grad=True)
    F.elu(big).sum().backward()
    assert to_np(big.grad).tolist() == [1.0, 0.0]


def test_prelu_per_channel_and_grad(device):
    p = nn.PReLU(3, init=0.1, device=device)
    xn = det(2, 3, 2, k=0.9)
    x = T(xn, device, requires_grad=True)
    y = p(x)
    w = np.float32([0.1, 0.1, 0.1]).reshape(1, 3, 1)
    close(y, np.where(xn > 0, xn, xn * w))
    y.sum().backward()
    close(p.weight.grad, np.where(xn > 0, 0, xn).sum(axis=(0, 2)))
    close(x.grad, np.where(xn > 0, 1.0, 0.1))
    with pytest.raises(ValueError, match="prelu"):
        nn.PReLU(2)(lucid.ones(2, 3, device=device))


def test_group_norm_and_layer_norm_match_torch(device):
    xn = det(2, 4, 3, k=0.7, s=3.0)
    w = det(4, k=0.3, s=1.0) + 1.5
    b = det(4, k=0.9, s=0.5)
    upstream = T(det(2, 4, 3, k=0.2), device)
    x = T(xn, device, requires_grad=True)
    y = F.group_norm(x, 2, T(w, device), T(b, device))
    (y * upstream).sum().backward()
    close(y, [[[0.737736, 2.211281, 2.257709], [1.182178, -1.273133, -3.457874], [-2.924407, -2.224137, -0.403467],
               [1.330843, 2.753159, 2.761908]],
              [[3.735355, 1.099923, -1.215562], [-2.152972, -1.11255, 1.494464], [1.111877, 2.792887, 2.75888],
               [0.649549, -2.070572, -4.430168]]], 1e-4)
    close(x.grad, [[[-0.715941, -0.094602, 0.215631], [0.431322, 0.215029, -0.05144], [-0.050956, -0.038255, 0.066399],
                    [0.200681, 0.093169, -0.271038]],
                   [[0.483155, 0.607991, 0.650928], [0.258866, -0.488168, -1.512773], [0.340548, 0.057194, -0.100253],
                    [-0.227307, -0.131976, 0.061794]]], 1e-4)
    x = T(xn, device, requires_grad=True)
    y = F.layer_norm(x, (3,), T(w[:3], device), T(b[:3], device))
    (y * upstream).sum().backward()
    close(y, [[[-2.558575, 1.987122, 2.141706], [2.709721, 0.387214, -2.49721], [-1.760618, -0.28666, 3.629806],
               [-2.559543, 2.046167, 2.0792]],
              [[2.714499, 0.375807, -2.490682], [-1.776425, -0.262015, 3.622325], [-2.559141, 2.108422, 2.01158],
               [2.719272, 0.364338, -2.484078]]], 1e-4)
    close(x.grad, [[[0.020121, -0.65974, 0.639619], [-0.017616, 0.037409, -0.019794], [-0.093713, 0.129755, -0.036042],
                    [-0.002939, 0.482992, -0.480053]],
                   [[-0.028633, 0.061227, -0.032594], [0.178593, -0.249855, 0.071263], [0.010681, 0.515832, -0.526514],
                    [0.029347, -0.063176, 0.033829]]], 1e-4)


def test_norm_layers_against_numpy(device):
    xn = det(2, 3, 4, 5, k=0.61, s=2.0)
    x = T(xn, device)
    ln = nn.LayerNorm((4, 5), device=device)
    assert sorted(dict(ln.named_parameters())) == ["bias", "weight"]
    mu = xn.mean(axis=(2, 3), keepdims=True)
    var = xn.var(axis=(2, 3), keepdims=True)
    close(ln(x), (xn - mu) / np.sqrt(var + 1e-5), 1e-4)
    close(nn.InstanceNorm2d(3)(x), (xn - mu) / np.sqrt(var + 1e-5), 1e-4)
    rms = nn.RMSNorm(5, eps=1e-6, device=device)
    close(rms(x), xn / np.sqrt((xn * xn).mean(axis=-1, keepdims=True) + 1e-6), 1e-4)
    gn = nn.GroupNorm(3, 3, device=device)  # one channel per group = instance norm
    close(gn(x), (xn - mu) / np.sqrt(var + 1e-5), 1e-4)
    inorm = nn.InstanceNorm2d(3, track_running_stats=True, device=device)
    inorm(x)
    close(inorm.running_mean, 0.9 * 0 + 0.1 * mu.reshape(2, 3).mean(0), 1e-5)
    with pytest.raises(ValueError, match="GroupNorm"):
        nn.GroupNorm(2, 3)
    with pytest.raises(ValueError, match="layer_norm"):
        F.layer_norm(x, (3,))


def test_normalize_cosine_similarity(device):
    a, b = det(3, 4, k=0.5), det(3, 4, k=0.9)
    close(F.cosine_similarity(T(a, device), T(b, device)), [0.793874, -0.596198, -0.595903], 1e-5)
    close(F.normalize(T(a, device), dim=1), a / np.linalg.norm(a, axis=1, keepdims=True), 1e-5)
    close(F.normalize(T(a, device), p=1, dim=0), a / np.abs(a).sum(axis=0, keepdims=True), 1e-5)


def test_losses_match_torch(device):
    p = T(1 / (1 + np.exp(-det(6, k=0.8, s=2))), device)
    t = T([0, 1, 1, 0, 0.3, 1.0], device)
    close(nn.BCELoss()(p, t), 0.8744432926177979, 1e-5)
    lg = T(det(6, k=0.8, s=3), device, requires_grad=True)
    loss = nn.BCEWithLogitsLoss(pos_weight=T(2.5, device))(lg, t)
    loss.backward()
    close(loss, 2.0008184909820557, 1e-5)
    close(lg.grad, [0.134698, -0.021924, -0.029087, 0.112018, -0.084049, -0.395598], 1e-5)
    close(nn.SmoothL1Loss(beta=0.5)(lg, t), 1.6597375869750977, 1e-5)
    close(nn.HuberLoss(delta=1.5)(lg, t), 1.7909170389175415, 1e-5)
    lp = F.log_softmax(T(det(2, 3, k=0.4), device), 1)
    tq = T([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]], device)
    close(nn.KLDivLoss(reduction="batchmean")(lp, tq), 0.22342197597026825, 1e-5)
    close(F.kl_div(lp, tq, reduction="sum"), 0.4468439519405365, 1e-5)
    close(F.binary_cross_entropy(T([0.0, 1.0], device), T([1.0, 1.0], device)), 50.0)  # log clamped at -100
    with pytest.raises(ValueError, match="binary_cross_entropy"):
        F.binary_cross_entropy(p, T([1.0], device))


def test_interpolate_matches_torch(device):
    x = T(det(1, 2, 3, 4, k=0.6), device, requires_grad=True)
    y = F.interpolate(x, size=(5, 3), mode="bilinear")
    close(y, [[[[1.096112, 1.882872, 1.573397], [0.770395, 0.662099, 0.168319], [0.281821, -1.16906, -1.939298],
                [-0.794315, -0.562878, -0.003726], [-1.511738, -0.158757, 1.286655]],
               [[1.947671, 1.403193, 0.041755], [0.624337, 0.077654, -0.514241], [-1.360663, -1.910654, -1.348235],
                [-0.508854, 0.084508, 0.628669], [0.059017, 1.414616, 1.946605]]]], 1e-5)
    y.sum().backward()  # the weights of each output cell sum to 1
    assert abs(float(to_np(x.grad).sum()) - 2 * 5 * 3) < 1e-3
    close(F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True)[0, 0, 1],
          [0.638616, 0.331303, 0.015156, -0.318656, -0.592394, -0.836094], 1e-5)
    near = nn.Upsample(size=(5, 7))(x)
    close(near[0, 1, 2], [-1.250141, -1.250141, -1.91327, -1.91327, -1.908038, -1.908038, -1.236274], 1e-6)
    close(near[0, 0, 4], [-1.664535, -1.664535, -0.747753, -0.747753, 0.43024, 0.43024, 1.457938], 1e-6)
    with pytest.raises(ValueError, match="exactly one"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="'mode' must be one of"):
        F.interpolate(x, scale_factor=2, mode="bicubical")


def test_adaptive_max_pool_one_hot_dropout2d_pad(device):
    y = nn.AdaptiveMaxPool2d((3, 4))(T(det(1, 1, 5, 7, k=2.1), device))
    close(y, [[[[1.031003, 1.046131, 1.074644, 1.074644], [1.158328, 1.185578, 1.185578, 1.212493],
                [1.158328, 1.239065, 1.265287, 1.265287]]]], 1e-6)
    assert F.one_hot(lucid.tensor([[1, 0], [2, 1]], device=device)).tolist() == \
        [[[0, 1, 0], [1, 0, 0]], [[0, 0, 1], [0, 1, 0]]]
    with pytest.raises(ValueError, match="one_hot"):
        F.one_hot(lucid.tensor([3], device=device), 3)
    # Non-uniform and overlapping bins (output larger than the input),
    # against a numpy loop over the bins; an impossible output raises at once.
    a = (np.arange(2 * 3 * 5).reshape(2, 3, 5) * np.array([1, -1, 1, -1, 1])).astype(np.float32)
    for oh, ow in ((2, 3), (4, 7), (3, 1)):
        ref = np.empty((2, oh, ow), np.float32)
        for i in range(oh):
            for j in range(ow):
                ref[:, i, j] = a[:, (i * 3) // oh:-((-(i + 1) * 3) // oh), (j * 5) // ow:-((-(j + 1) * 5) // ow)].max((1, 2))
        assert to_np(F.adaptive_max_pool2d(lucid.tensor(a, device=device), (oh, ow))).tolist() == ref.tolist()
    with pytest.raises((ValueError, MemoryError)):  # used to loop over 2^62 cells
        F.adaptive_max_pool2d(lucid.ones(2, 3, 4, device=device), 2**31)
    lucid.manual_seed(3)
    out = to_np(nn.Dropout2d(0.5)(lucid.ones(4, 8, 3, 3, device=device)))
    per_channel = out.reshape(32, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(1) == per_channel.max(1)).all()  # whole channels
    assert 0 < (per_channel[:, 0] == 0).sum() < 32
    close(F.pad(T([[1.0, 2.0, 3.0]], device), (2, 1), mode="reflect"), [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]])
    close(F.pad(T([[1.0, 2.0]], device), (1, 1), mode="replicate"), [[1.0, 1.0, 2.0, 2.0]])


Q, K, V = det(2, 3, 4, k=0.5), det(2, 5, 4, k=0.8), det(2, 5, 4, k=1.1)


def test_sdpa_matches_torch(device):
    q, k, v = T(Q, device), T(K, device), T(V, device)
    close(F.scaled_dot_product_attention(q, k, v, is_causal=True),
          [[[0.958851, 1.999147, 0.85476, -1.223716], [-0.555236, 0.674481, 1.16712, 0.384322],
            [-1.963703, -0.558455, 1.457077, 1.880304]],
           [[-0.974349, -1.998552, -0.838722, 1.23767], [1.90647, 0.494172, -1.458161, -1.817005],
            [-0.633214, -0.317361, 0.345306, 0.63062]]], 1e-5)
    mask = lucid.tensor([[True, False, True, True, False]] * 3, device=device)
    close(F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
          [[[0.639713, 0.355456, -0.317246, -0.643259], [0.847826, 0.271988, -0.601081, -0.817284],
            [1.811385, 1.575921, -0.381722, -1.922216]],
           [[-1.798741, -1.53767, 0.403779, 1.903975], [-1.788966, -1.535254, 0.396196, 1.89468],
            [-0.633575, -0.317574, 0.345474, 0.630986]]], 1e-5)
    qg = T(Q, device, requires_grad=True)
    F.scaled_dot_product_attention(qg, k, v).sum().backward()
    assert qg.grad is not None and tuple(qg.grad.shape) == Q.shape


def test_multihead_attention_state_dict_layout_matches_torch(device):
    mha = nn.MultiheadAttention(4, 2, batch_first=True, device=device)
    assert [(n, tuple(p.shape)) for n, p in mha.named_parameters()] == [
        ("in_proj_weight", (12, 4)), ("in_proj_bias", (12,)), ("out_proj.weight", (4, 4)), ("out_proj.bias", (4,))]
    mha.load_state_dict({"in_proj_weight": T(det(12, 4, k=0.37, s=0.5), device),
                         "in_proj_bias": T(det(12, k=0.21, s=0.1), device),
                         "out_proj.weight": T(det(4, 4, k=0.51, s=0.5), device),
                         "out_proj.bias": T(det(4, k=0.77, s=0.1), device)})
    pad = lucid.tensor([[False] * 4 + [True], [False] * 5], device=device)
    out, w = mha(T(Q, device), T(K, device), T(V, device), key_padding_mask=pad)
    close(out, [[[0.274186, -0.057617, 0.00143, 0.265051], [0.097459, 0.132873, 0.005887, 0.07053],
                 [0.072424, 0.420697, -0.229371, -0.004537]],
                [[0.22536, -0.261531, 0.234666, 0.258037], [0.156882, -0.178181, 0.227767, 0.180927],
                 [0.08672, -0.028272, 0.162358, 0.09017]]], 1e-5)
    close(w[1], [[0.000737, 0.586873, 0.001031, 0.409857, 0.001502], [0.027904, 0.466808, 0.0288, 0.446204, 0.030284],
                 [0.468897, 4.6e-05, 0.322223, 6.9e-05, 0.208764]], 1e-5)
    # sequence-first layout gives the same numbers transposed
    mha.batch_first = False
    out2, _ = mha(T(Q.transpose(1, 0, 2), device), T(K.transpose(1, 0, 2), device), T(V.transpose(1, 0, 2), device),
                  key_padding_mask=pad)
    close(out2.transpose(0, 1), to_np(out))


def test_transformer_encoder_layer_trains(device):
    lucid.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, device=device)
    names = [n for n, _ in layer.named_parameters()]
    assert names[:4] == ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                         "self_attn.out_proj.bias"] and "norm2.bias" in names
    x = lucid.randn(2, 5, 8, device=device)
    target = lucid.randn(2, 5, 8, device=device)
    opt = lucid.optim.Adam(layer.parameters(), lr=1e-2)
    first = None
    for _ in range(30):
        loss = F.mse_loss(layer(x, is_causal=True, src_mask=None), target)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first
    # causal: the output at position 0 does not depend on later positions
    x2 = x.clone()
    x2[:, 3] = 100.0
    mask = lucid.triu(lucid.ones(5, 5, dtype=lucid.bool_, device=device), diagonal=1)
    close(layer(x, src_mask=mask)[:, 0], to_np(layer(x2, src_mask=mask)[:, 0]), 1e-5)


def _load_det(module, device):
    for i, (name, p) in enumerate(module.named_parameters()):
        with lucid.no_grad():
            p.copy_(T(det(*p.shape, k=0.3 + 0.1 * i, s=0.6), device))


def test_lstm_matches_torch(device):
    lstm = nn.LSTM(3, 2, num_layers=2, batch_first=True, device=device)
    assert [n for n, _ in lstm.named_parameters()] == [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
        "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1"]
    _load_det(lstm, device)
    x = T(det(2, 4, 3, k=0.45), device, requires_grad=True)
    out, (h, c) = lstm(x)
    close(out, [[[-0.204078, -0.439295], [-0.367124, -0.609831], [-0.467804, -0.622134], [-0.531227, -0.627712]],
                [[-0.226326, -0.367867], [-0.380494, -0.598391], [-0.478228, -0.650716], [-0.535307, -0.637115]]],
          1e-5)
    close(c, [[[-0.071625, -0.794711], [-0.196867, -1.033807]], [[-1.340209, -1.191555], [-1.35656, -1.211942]]], 1e-5)
    close(h[1], to_np(out)[:, -1])
    (out * T(det(2, 4, 2, k=0.77), device)).sum().backward()
    close(x.grad, [[[-0.006006, -0.007754, -0.008808], [-0.002184, -0.000952, 0.000364],
                    [0.002975, 0.005763, 0.008037], [0.000394, 0.001435, 0.002347]],
                   [[-0.0547, -0.051265, -0.043251], [-0.004475, -0.004365, -0.003866],
                    [0.023707, 0.031771, 0.036996], [0.000997, 0.001916, 0.002664]]], 2e-6)
    close(lstm.weight_hh_l0.grad, [[3e-05, 0.000747], [0.000251, -0.000103], [-0.002383, -0.006466],
                                   [-0.002026, -0.005267], [0.002494, 0.007457], [0.002536, 0.007934],
                                   [-0.010032, -0.026294], [-0.013656, -0.034653]], 2e-6)
    close(lstm.bias_ih_l1.grad, [0.06568, 0.069299, 0.186266, 0.463511, 0.109747, 0.19276, 0.413015, 0.282554], 2e-6)
    # the final cell state alone also carries a gradient (dh = None inside the fused cell)
    x.grad = None
    lstm(x)[1][1].sum().backward()
    assert np.isfinite(to_np(x.grad)).all() and np.abs(to_np(x.grad)).sum() > 0


def test_gru_matches_torch(device):
    gru = nn.GRU(3, 2, device=device)
    _load_det(gru, device)
    x = T(det(2, 4, 3, k=0.45).transpose(1, 0, 2), device)
    out, h = gru(x)
    close(out, [[[-0.080028, -0.514592], [0.041488, -0.030687]], [[-0.149156, -0.695889], [-0.016117, -0.55331]],
                [[0.332929, -0.482558], [-0.063892, -0.608781]], [[0.746019, -0.322124], [0.545469, -0.443407]]],
          1e-5)
    close(h[0], to_np(out)[-1])
    with pytest.raises(ValueError, match="GRU"):
        gru(lucid.ones(4, 2, 5, device=device))
    with pytest.raises(ValueError, match="proj_size is only supported by LSTM"):
        nn.GRU(3, 2, proj_size=1)


def test_bidirectional_lstm_gru_match_torch(device):
    lstm = nn.LSTM(3, 2, num_layers=2, bidirectional=True, device=device)
    names = [n for n, _ in lstm.named_parameters()]
    assert names[4:8] == ["weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                          "bias_hh_l0_reverse"] and len(names) == 16
    assert tuple(lstm.weight_ih_l1.shape) == (8, 4)
    _load_det(lstm, device)
    x = T(det(4, 2, 3, k=0.45), device, requires_grad=True)
    out, (h, c) = lstm(x)
    assert tuple(out.shape) == (4, 2, 4) and tuple(h.shape) == (4, 2, 2)
    (out * T(det(4, 2, 4, k=0.66), device)).sum().backward()
    close(out[:, 1], [[-0.273, 0.141801, 0.105313, -0.047229], [-0.22517, 0.246895, 0.11603, 0.005626],
                      [-0.393898, 0.160568, 0.084341, -0.069542], [-0.264226, 0.268328, 0.101667, 0.059494]], 1e-5)
    close(h[:, 0], [[-0.089277, -0.312607], [-0.802048, -0.430635], [-0.505071, 0.214735], [0.117544, -0.062303]],
          1e-5)
    close(x.grad[:, 0], [[-0.014555, -0.026046, -0.03212], [0.131512, 0.075247, -0.018112],
                         [0.03266, -0.00635, -0.067029], [-0.024881, 0.068252, 0.124708]], 1e-5)
    gru = nn.GRU(3, 2, bidirectional=True, batch_first=True, device=device)
    _load_det(gru, device)
    out, h = gru(T(det(4, 2, 3, k=0.45).transpose(1, 0, 2), device))
    close(out[0], [[-0.080028, -0.514592, -0.719365, -0.479078], [0.34603, -0.325983, -0.347665, -0.427734],
                   [0.307684, -0.250351, -0.417342, -0.441767], [0.220647, -0.425011, -0.285655, -0.363136]], 1e-5)
    close(h[:, 1], [[0.779339, -0.479647], [-0.662725, 0.522123]], 1e-5)


def test_conv_transpose_matches_torch(device):
    x = T(det(2, 4, 3, 3, k=0.37), device, requires_grad=True)
    w = T(det(4, 3, 3, 2, k=0.53, s=0.7), device, requires_grad=True)
    b = T(det(6, k=0.3), device, requires_grad=True)
    y = F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)
    assert tuple(y.shape) == (2, 6, 6, 5)
    (y * T(det(2, 6, 6, 5, k=0.11), device)).sum().backward()
    close(y[1, 4], [[0.157641, -0.309721, 0.379418, 0.322509, 0.818277],
                    [2.066391, 1.647889, 2.942695, 2.502051, 3.689153],
                    [1.414821, 2.14533, 2.088309, 3.08921, 2.747589], [4.204736, 3.89365, 4.419662, 4.242741, 4.304842],
                    [3.30343, 4.420451, 3.680602, 4.627635, 3.828055],
                    [1.315338, 2.475045, 1.134569, 2.52231, 1.068675]],
          1e-5)
    close(x.grad[0, 1], [[-1.349717, -6.14007, -7.162094], [-6.321393, -13.834411, -13.090607],
                         [-3.961569, -4.599411, -1.611792]], 1e-4)
    close(w.grad[2], [[[-7.587369, -14.452655], [-24.361465, -36.495708], [-22.89143, -30.926682]],
                      [[9.084068, 15.903029], [24.697075, 35.982391], [21.142326, 27.482275]],
                      [[-10.353296, -16.955187], [-24.414257, -34.568066], [-18.86381, -23.349703]]], 1e-4)
    close(b.grad, [34.879704, -25.884768, 16.241661, -6.191866, -4.012991, 14.117348], 1e-4)
    x1 = T(det(1, 2, 5, k=0.41), device, requires_grad=True)
    w1 = T(det(2, 3, 3, k=0.29), device, requires_grad=True)
    y1 = F.conv_transpose1d(x1, w1, stride=3, padding=1, dilation=2)
    (y1 * T(det(1, 3, 15, k=0.21), device)).sum().backward()
    close(y1[0, 1], [0.0, -0.105908, 2.557414, -0.423415, 2.492617, 4.470471, 2.219655, 4.677969, 5.64251, 4.494799,
                     6.08791, 5.879256, 6.024893, 6.488728, 0.0], 1e-5)
    close(x1.grad, [[[1.725104, 3.09835, 2.938467, 1.650373, 0.243816],
                     [-1.748528, -2.857447, -2.583163, -1.317088, -0.11787]]], 1e-5)
    close(w1.grad[1], [[-3.414159, 0.40009, 1.819455], [3.371494, -0.464849, -1.851706],
                       [-3.32859, 0.529576, 1.883826]], 1e-5)
    layer = nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2, device=device)
    assert tuple(layer.weight.shape) == (4, 3, 3, 2) and tuple(layer(x).shape) == (2, 6, 6, 5)
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2, groups=2)


def test_attention_mask_forms_agree(device):
    lucid.manual_seed(2)
    mha = nn.MultiheadAttention(8, 2, batch_first=True, device=device)
    x = lucid.randn(2, 5, 8, device=device)
    banned = lucid.triu(lucid.ones(5, 5, dtype=lucid.bool_, device=device), diagonal=1)
    additive = lucid.masked_fill(lucid.zeros(5, 5, device=device), banned, float("-inf"))
    by_bool, w_bool = mha(x, x, x, attn_mask=banned)
    by_float, _ = mha(x, x, x, attn_mask=additive)
    by_flag, _ = mha(x, x, x, is_causal=True)
    close(by_float, to_np(by_bool), 1e-6)
    close(by_flag, to_np(by_bool), 1e-6)
    assert np.allclose(np.triu(to_np(w_bool)[0], 1), 0)  # no weight on later keys
    per_head = mha(x, x, x, attn_mask=banned.reshape(1, 5, 5).expand(4, 5, 5), average_attn_weights=False)[1]
    assert tuple(per_head.shape) == (2, 2, 5, 5)
    close(lucid.mean(per_head, dim=1), to_np(w_bool), 1e-6)
    # sdpa takes the opposite bool convention (True = may attend)
    q = x.reshape(2, 5, 2, 4).transpose(1, 2)
    close(F.scaled_dot_product_attention(q, q, q, attn_mask=lucid.logical_not(banned)),
          to_np(F.scaled_dot_product_attention(q, q, q, is_causal=True)), 1e-6)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, device=device), 2,
                                norm=nn.LayerNorm(8, device=device))
    names = list(enc.state_dict())
    assert "layers.1.self_attn.in_proj_weight" in names and "norm.weight" in names
    assert tuple(enc(x, src_key_padding_mask=lucid.tensor([[False] * 4 + [True]] * 2, device=device)).shape) == \
        (2, 5, 8)
    with pytest.raises(TypeError, match="'encoder_layer' must be a Module, got int"):  # before any copy is made
        nn.TransformerEncoder(2, 2**62)
    with pytest.raises(ValueError, match="'num_layers' must be a non-negative int"):
        nn.TransformerEncoder(nn.Linear(2, 2), -1)


def test_unfold_fold_match_torch(device):
    x = T(det(2, 3, 5, 6, k=0.31), device, requires_grad=True)
    u = F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    assert tuple(u.shape) == (2, 18, 12)
    (u * T(det(2, 18, 12, k=0.17), device)).sum().backward()
    close(u[1, 7], [0.0, 0.0, 0.0, 0.0, 1.650568, 1.227347, 0.687119, 0.081387, -0.764624, -0.164409, 0.451481,
                    1.024329], 1e-6)
    close(x.grad[0, 2], [[-0.290818, 2.024694, 2.282114, 0.595467, 0.151763, -1.641224],
                         [1.284237, 2.611668, 2.50884, -1.524567, -1.867214, -1.945089],
                         [1.018088, 2.639564, 2.608982, -1.154173, -1.539219, -1.994864],
                         [1.96266, 1.788507, 1.434211, -2.540644, -2.625357, -1.219788],
                         [1.874092, 2.080211, 1.775233, -2.390374, -2.545473, -1.461079]], 1e-5)
    cols = T(det(2, 12, 9, k=0.23), device, requires_grad=True)
    out = F.fold(cols, (5, 4), (2, 2), stride=2, padding=1)
    assert tuple(out.shape) == (2, 3, 5, 4)
    (out * T(det(2, 3, 5, 4, k=0.5), device)).sum().backward()
    close(out[1, 2], [[-1.667771, 1.507684, -1.875511, 1.168393], [1.25401, -1.835436, 1.576184, -1.605982],
                      [-1.988919, 0.326314, -1.888614, -0.132124], [1.958895, -0.909866, 1.999276, -0.479867],
                      [-1.400121, -1.004347, -1.037661, -1.372194]], 1e-6)
    close(cols.grad[0, 5], [0.0, 0.0, 0.0, -0.132644, 1.607569, 0.0, -1.423571, -1.951252, 0.0], 1e-6)
    with pytest.raises(ValueError, match="fold"):
        F.fold(cols, (5, 4), (2, 2), stride=2)


TEL_TORCH = {
    False: [[[0.555945, 0.493897, 0.389938, -0.089043], [0.607107, 0.395605, 0.300638, -0.095627],
             [0.300381, -0.257241, 0.792771, -0.133121]],
            [[0.597016, 0.397961, 0.333576, -0.094137], [0.619236, 0.451071, 0.206679, -0.098219],
             [0.299762, -0.248776, 0.80064, -0.132079]]],
    True: [[[2.651538, 2.981144, 2.982515, 1.362192], [2.001728, 0.342697, -0.744217, -1.982591],
            [-0.112707, 0.566093, 1.613102, 1.656771]],
           [[3.70383, 2.823992, 1.658062, -0.490696], [-0.073145, -0.946375, -0.783907, -0.715369],
            [1.745593, 2.347862, 3.013324, 1.996103]]],
}


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_matches_torch(norm_first, device):
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, batch_first=True, norm_first=norm_first,
                                       activation="gelu" if norm_first else "relu", device=device)
    for i, (_, p) in enumerate(layer.named_parameters()):
        with lucid.no_grad():
            p.copy_(T(det(*p.shape, k=0.2 + 0.07 * i, s=0.5), device))
    mask = lucid.triu(lucid.ones(3, 3, dtype=lucid.bool_, device=device), diagonal=1)
    close(layer(T(det(2, 3, 4, k=0.61), device), src_mask=mask), TEL_TORCH[norm_first], 1e-5)


def test_gru_gradients_match_torch(device):
    gru = nn.GRU(3, 2, num_layers=2, device=device)
    _load_det(gru, device)
    x = T(det(4, 2, 3, k=0.45), device, requires_grad=True)
    h0 = T(det(2, 2, 2, k=0.9, s=0.5), device, requires_grad=True)
    out, h = gru(x, h0)
    ((out * T(det(4, 2, 2, k=0.77), device)).sum() + (h * T(det(2, 2, 2, k=0.3), device)).sum()).backward()
    close(x.grad[:, 1], [[-0.00491, -0.032974, -0.058093], [-0.059885, -0.020968, 0.019822],
                         [0.009727, -0.055733, -0.116214], [-0.067328, 0.001764, 0.070698]], 2e-6)
    close(h0.grad, [[[0.264442, 0.15411], [0.184367, 0.381685]], [[1.149905, 0.68602], [0.892126, 0.190482]]], 2e-6)
    close(gru.weight_hh_l0.grad, [[0.002121, -0.001011], [-0.011029, 0.003769], [-0.046183, 0.149755],
                                  [0.194333, 0.170295], [0.09521, -0.033659], [0.16907, -0.056905]], 2e-6)
    close(gru.bias_hh_l1.grad, [-0.120401, -0.080503, 0.428649, 0.292388, 0.279036, 0.406453], 2e-6)
