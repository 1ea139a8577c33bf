"""Every float convolution validates its shapes and window arguments in one
place, csrc/ops/conv_geometry.cpp (issue 11: validation only in csrc/ops), so
conv1d/2d/3d and conv_transpose1d/2d/3d reject the same inputs with the same
words on both streams, and the padding / output sizes they compute match
PyTorch's formulas (written out here)."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

DIRECT = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
TRANSPOSED = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def ones(device, *shape):
    return lucid.ones(*shape, device=device)


def bad_calls(nd, device):
    """(call, message regex) pairs for a direct conv with nd spatial axes."""
    conv, name = DIRECT[nd], f"conv{nd}d"
    sp = (5,) * nd
    k = (3,) * nd
    x, w = ones(device, 2, 4, *sp), ones(device, 6, 2, *k)
    return [
        (lambda: conv(ones(device, *sp), w), rf"{name}\(\): expected a {nd + 1}-D \(unbatched\) or {nd + 2}-D"),
        (lambda: conv(x, ones(device, 6, 2)), rf"{name}\(\): expected a {nd + 2}-D weight"),
        (lambda: conv(x, w, groups=0), rf"{name}\(\): argument 'groups' must be a positive int, got 0"),
        (lambda: conv(x, w, groups=1.5), rf"{name}\(\): argument 'groups' must be a positive int, got 1.5"),
        (lambda: conv(x, w, groups=3), rf"{name}\(\): expected input with 6 channels"),  # the count first, as PyTorch
        (lambda: conv(x, w), rf"{name}\(\): expected input with 2 channels"),
        (lambda: conv(x, ones(device, 5, 2, *k), groups=2), rf"{name}\(\): out_channels \(5\) must be divisible"),
        (lambda: conv(x, w, ones(device, 5), groups=2), rf"{name}\(\): expected a bias of shape \(6,\)"),
        (lambda: conv(x, w, groups=2, stride=0), rf"{name}\(\): argument 'stride' must be positive"),
        (lambda: conv(x, w, groups=2, dilation=0), rf"{name}\(\): argument 'dilation' must be positive"),
        (lambda: conv(x, w, groups=2, padding=-1), rf"{name}\(\): argument 'padding' must be non-negative"),
        (lambda: conv(x, w, groups=2, padding="full"), rf"{name}\(\): argument 'padding' must be 'valid', 'same'"),
        (lambda: conv(x, w, groups=2, padding="same", stride=2), rf"{name}\(\): padding='same' is not supported"),
        (lambda: conv(x, w, groups=2, dilation=3), rf"{name}\(\): input of shape .* is smaller than the dilated "
                                                    rf"kernel \({', '.join(['7'] * nd)}{',' if nd == 1 else ''}\)"),
    ]


def bad_transposed_calls(nd, device):
    conv, name = TRANSPOSED[nd], f"conv_transpose{nd}d"
    sp, k = (3,) * nd, (2,) * nd
    x, w = ones(device, 1, 4, *sp), ones(device, 4, 3, *k)
    return [
        (lambda: conv(ones(device, 4), w), rf"{name}\(\): expected a {nd + 1}-D \(unbatched\) or {nd + 2}-D"),
        (lambda: conv(x, ones(device, 4, 3)), rf"{name}\(\): expected a {nd + 2}-D weight"),
        (lambda: conv(x, ones(device, 5, 3, *k)), rf"{name}\(\): expected input with 5 channels"),
        (lambda: conv(x, w, groups=3), rf"{name}\(\): in_channels \(4\) must be divisible by groups \(3\)"),
        (lambda: conv(x, w, ones(device, 3), groups=2), rf"{name}\(\): expected a bias of shape \(6,\)"),
        (lambda: conv(x, w, stride=2, output_padding=2), rf"{name}\(\): output_padding .* must be non-negative "
                                                         r"and smaller than either the stride"),
        (lambda: conv(x, w, output_padding=-1), rf"{name}\(\): output_padding"),
        (lambda: conv(x, w, padding=3), rf"{name}\(\): the output size .* is not positive"),
        (lambda: conv(x, w, padding=-1), rf"{name}\(\): argument 'padding' must be non-negative"),
    ]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("calls", [bad_calls, bad_transposed_calls], ids=["direct", "transposed"])
def test_convs_reject_bad_arguments_alike_on_both_streams(nd, calls):
    words = {}
    for device in ("cpu", "gpu"):
        for i, (call, pattern) in enumerate(calls(nd, device)):
            with pytest.raises(ValueError, match=pattern) as err:
                call()
            words.setdefault(i, set()).add(str(err.value))
    assert all(len(v) == 1 for v in words.values()), words  # one message per case, whatever the stream


def test_argument_types_are_parsed_before_any_shape_check(device):
    x, w = ones(device, 1, 2, 5, 5), ones(device, 3, 2, 3, 3)
    with pytest.raises(TypeError, match=r"conv2d\(\): argument 'stride' must be an int or a tuple of 2 ints"):
        F.conv2d(x, w, stride=(1, 2, 3))
    with pytest.raises(TypeError, match=r"conv_transpose2d\(\): argument 'padding' must be an int or a tuple"):
        F.conv_transpose2d(x, ones(device, 2, 3, 3, 3), padding="same")


def same_padding(k, d):
    total = d * (k - 1)
    return total // 2, total - total // 2  # PyTorch: the odd element after


@pytest.mark.parametrize("nd,k,d", [(1, 4, 1), (2, 4, 2), (3, 2, 3), (2, 5, 1)])
def test_same_padding_keeps_the_size_and_pads_the_odd_element_after(device, nd, k, d, rng):
    """padding='same' against a numpy correlation over the input padded as PyTorch pads it."""
    size = 7
    x = rng.standard_normal((1, 1) + (size,) * nd).astype(np.float32)
    w = rng.standard_normal((1, 1) + (k,) * nd).astype(np.float32)
    y = DIRECT[nd](lucid.tensor(x, device=device), lucid.tensor(w, device=device), padding="same", dilation=d)
    assert tuple(y.shape) == x.shape
    lo, hi = same_padding(k, d)
    xp = np.pad(x[0, 0].astype(np.float64), [(lo, hi)] * nd)
    ref = np.zeros((size,) * nd)
    for out in np.ndindex(*ref.shape):
        for tap in np.ndindex(*(k,) * nd):
            ref[out] += w[(0, 0) + tap] * xp[tuple(o + d * t for o, t in zip(out, tap))]
    np.testing.assert_allclose(np.asarray(y.tolist())[0, 0], ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_transposed_output_size_is_pytorchs_formula(device, nd):
    s, p, op, d, k, n = 2, 1, 1, 2, 3, 4
    y = TRANSPOSED[nd](ones(device, 1, 2, *(n,) * nd), ones(device, 2, 3, *(k,) * nd), stride=s, padding=p,
                       output_padding=op, dilation=d)
    assert tuple(y.shape) == (1, 3) + ((n - 1) * s - 2 * p + d * (k - 1) + op + 1,) * nd


def test_unbatched_inputs_keep_their_rank(device):
    assert tuple(F.conv1d(ones(device, 2, 6), ones(device, 3, 2, 3)).shape) == (3, 4)
    assert tuple(F.conv3d(ones(device, 2, 4, 4, 4), ones(device, 3, 2, 2, 2, 2)).shape) == (3, 3, 3, 3)
    assert tuple(F.conv_transpose2d(ones(device, 2, 3, 3), ones(device, 2, 1, 2, 2), stride=2).shape) == (1, 6, 6)


def test_conv_transpose_output_size_picks_the_output_padding(device):
    """forward(x, output_size=...) as PyTorch: the sizes with no output_padding are
    (4-1)*2 - 2 + 2 + 1 = 7 and (5-1)*3 - 2 + 2 + 1 = 13; each axis may add up to stride-1."""
    lucid.manual_seed(0)
    layer = lucid.nn.ConvTranspose2d(2, 3, 3, stride=(2, 3), padding=1, device=device)
    x = lucid.randn(1, 2, 4, 5, device=device)
    for size, op in (((8, 13), (1, 0)), ((7, 15), (0, 2)), ((1, 3, 8, 14), (1, 1))):
        got = layer(x, output_size=size)
        want = F.conv_transpose2d(x, layer.weight, layer.bias, (2, 3), 1, op)
        assert tuple(got.shape) == (1, 3) + tuple(size[-2:])
        assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match=r"output_size \(7, 12\) cannot be reached: axis 1 takes sizes 13 to 15"):
        layer(x, output_size=(7, 12))
    with pytest.raises(ValueError, match=r"'output_size' must hold 2 spatial sizes"):
        layer(x, output_size=(8,))
    one = lucid.nn.ConvTranspose1d(2, 2, 2, stride=3, device=device)
    assert tuple(one(lucid.ones(2, 4, device=device), output_size=(2, 12)).shape) == (2, 12)  # unbatched, led by C


def test_quantized_conv_transpose_output_size():
    import lucid.quantization as Q
    from lucid.nn import quantized as nnq

    lucid.manual_seed(0)
    layer = nnq.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = Q.quantize_per_tensor(lucid.randn(1, 2, 4, 4), 0.05, 128, Q.quint8)
    a, b = layer(x, output_size=(8, 8)), nnq.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    b.load_state_dict(layer.state_dict())
    assert a.int_repr().tolist() == b(x).int_repr().tolist() and tuple(a.shape) == (1, 3, 8, 8)
    with pytest.raises(ValueError, match="cannot be reached"):
        layer(x, output_size=(9, 8))
