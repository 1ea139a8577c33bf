"""Shape ops on both streams against numpy: reshape/view, squeeze/unsqueeze,
flatten, transpose/permute, expand, cat/stack/split/chunk, flip, pad; CPU
views share memory; gradients; errors."""
import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from conftest import check, make, to_np

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32"]


# ----- reshape / view ------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_every_dtype(device, rng, dtype):
    x, a = make(rng, (2, 3, 4), dtype, device)
    check(x.reshape(4, -1), a.reshape(4, -1))
    check(lucid.reshape(x, (24,)), a.reshape(24))
    check(x.view(2, 12), a.reshape(2, 12))


@pytest.mark.parametrize("shape,new", [((2, 3, 4), (6, 4)), ((2, 3, 4), (2, 1, 12, 1)), ((1,), ()),
                                       ((), (1, 1)), ((0, 3), (3, 0)), ((4,), (2, 2))])
def test_reshape_shapes(device, rng, shape, new):
    x, a = make(rng, shape, device=device)
    check(x.reshape(new), a.reshape(new))


def test_reshape_of_transposed_copies_and_view_raises():
    x = lucid.arange(6).reshape(2, 3)
    t = x.T
    assert not t.is_contiguous()
    r = t.reshape(6)
    check(r, np.arange(6).reshape(2, 3).T.reshape(6))
    assert not r._impl._same_storage(x._impl)
    with pytest.raises(ValueError, match="view"):
        t.view(6)
    # Splitting / merging within a contiguous run is still a view.
    v = t.view(3, 2, 1)
    assert v._impl._same_storage(x._impl)


def test_view_of_slices_keeps_storage():
    x = lucid.arange(24).reshape(2, 3, 4)
    s = x[:, 1:, ::2]
    v = s.unsqueeze(1).squeeze(1)
    assert v._impl._same_storage(x._impl)
    x2 = lucid.arange(24).reshape(4, 6)[:, :3]  # rows of 3 inside rows of 6
    w = x2.view(2, 2, 3)
    assert w._impl._same_storage(x2._impl)
    check(w, np.arange(24).reshape(4, 6)[:, :3].reshape(2, 2, 3))
    with pytest.raises(ValueError):
        x2.view(12)


def test_view_possible_exactly_when_numpy_avoids_a_copy(rng):
    """Random strided inputs: view() succeeds iff numpy reshapes without copying."""
    base = np.arange(2 * 3 * 4 * 6).reshape(2, 3, 4, 6)
    targets = [(-1,), (2, -1), (6, -1), (-1, 6), (4, 36), (2, 3, 24), (1, 2, 1, -1, 1), (3, 2, -1)]
    for trial in range(60):
        perm = rng.permutation(4)
        sl = tuple(slice(0, int(rng.integers(1, n + 1)), int(rng.integers(1, 3))) for n in base.shape)
        a = base[sl].transpose(perm)
        x = lucid.tensor(base)[sl].permute(*perm.tolist())
        for shape in targets:
            try:
                ref = np.reshape(a, shape, copy=False)
            except ValueError:
                ref = None
            if ref is None:
                with pytest.raises(ValueError):
                    x.view(shape)
                try:
                    want = a.reshape(shape)
                except ValueError:  # element counts differ: both refuse
                    with pytest.raises(ValueError):
                        x.reshape(shape)
                    continue
                copied = x.reshape(shape)
                assert not copied._impl._same_storage(x._impl)
                check(copied, want)
            else:
                v = x.view(shape)
                assert v._impl._same_storage(x._impl)
                check(v, ref)


def test_cpu_views_write_through():
    x = lucid.zeros(3, 4)
    views = [x.view(12), x.reshape(2, 6), x.T, x.permute(1, 0), x.unsqueeze(0), x[1], x[:, 1:3], x.flatten(),
             x.transpose(0, 1)[::2]]
    for k, v in enumerate(views):
        assert v._impl._same_storage(x._impl)
    views[1][1, 0] = 5.0  # element (1, 2)
    views[2][3, 2] = 7.0  # element (2, 3)
    views[5][0] = 9.0  # element (1, 0)
    expected = np.zeros((3, 4), np.float32)
    expected[1, 2], expected[2, 3], expected[1, 0] = 5, 7, 9
    check(x, expected)
    check(views[6], expected[:, 1:3])  # reads see the writes too


def test_gpu_views_are_values():
    x = lucid.zeros(2, 2, device="gpu")
    v = x.reshape(4)
    x[0, 0] = 1.0
    assert to_np(v).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert to_np(x).tolist() == [[1.0, 0.0], [0.0, 0.0]]


def test_reshape_errors(device):
    x = lucid.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match=r"reshape\(\).*invalid for input of size 6"):
        x.reshape(4, 2)
    with pytest.raises(ValueError, match="only one -1"):
        x.reshape(-1, -1)
    with pytest.raises(ValueError, match="negative"):
        x.reshape(-2, -3)
    with pytest.raises(TypeError, match="must be an int"):
        x.reshape(2.0, 3)
    with pytest.raises(ValueError, match="invalid"):
        lucid.zeros(0, 3, device=device).reshape(-1, 0)


# ----- squeeze / unsqueeze / flatten ------------------------------------------

def test_squeeze_unsqueeze(device, rng):
    x, a = make(rng, (1, 3, 1, 2), device=device)
    check(x.squeeze(), a.squeeze())
    check(x.squeeze(0), a.squeeze(0))
    check(x.squeeze(-2), a.squeeze(-2))
    check(x.squeeze((0, 2)), a.squeeze((0, 2)))
    check(x.squeeze(1), a)  # size 3: left alone, as in PyTorch
    check(x.unsqueeze(0), a[None])
    check(x.unsqueeze(-1), a[..., None])
    check(x.unsqueeze(4), a[..., None])
    s, b = make(rng, (), device=device)
    check(s.unsqueeze(0), b[None])
    check(s.squeeze(), b)
    with pytest.raises(IndexError, match=r"unsqueeze\(\).*'dim' is out of range"):
        x.unsqueeze(5)
    with pytest.raises(IndexError, match=r"squeeze\(\)"):
        x.squeeze(4)


def test_flatten_unflatten(device, rng):
    x, a = make(rng, (2, 3, 4, 5), device=device)
    check(x.flatten(), a.reshape(-1))
    check(x.flatten(1), a.reshape(2, -1))
    check(x.flatten(1, 2), a.reshape(2, 12, 5))
    check(x.flatten(-2), a.reshape(2, 3, 20))
    check(x.permute(3, 1, 0, 2).flatten(0, 1), a.transpose(3, 1, 0, 2).reshape(15, 2, 4))
    check(lucid.tensor(3.0, device=device).flatten(), np.array([3.0], np.float32))
    check(x.unflatten(2, (2, -1)), a.reshape(2, 3, 2, 2, 5))
    with pytest.raises(ValueError, match="start_dim"):
        x.flatten(2, 1)
    with pytest.raises(ValueError, match="unflatten"):
        x.unflatten(1, (2, 2))


# ----- transpose / permute / movedim -----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_permute_every_dtype(device, rng, dtype):
    x, a = make(rng, (2, 3, 4), dtype, device)
    check(x.permute(2, 0, 1), a.transpose(2, 0, 1))
    check(x.permute((1, -1, 0)), a.transpose(1, 2, 0))
    check(x.transpose(0, -1), a.swapaxes(0, 2))
    check(x.T, a.T)
    check(lucid.swapaxes(x, 1, 2), a.swapaxes(1, 2))
    check(x.movedim(0, -1), np.moveaxis(a, 0, -1))


def test_permute_errors(device):
    x = lucid.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match=r"permute\(\).*2 axes"):
        x.permute(0)
    with pytest.raises(ValueError, match="repeats"):
        x.permute(1, 1)
    with pytest.raises(IndexError, match=r"permute\(\).*'dims' is out of range"):
        x.permute(0, 2)
    with pytest.raises(IndexError, match=r"transpose\(\).*'dim1'"):
        x.transpose(0, 3)
    # Errors come from csrc/ops as well (direct _C calls).
    with pytest.raises(ValueError, match="repeats axis"):
        lucid._C.permute(x._impl, [0, 0])


def test_noncontiguous_inputs_to_other_ops(device, rng):
    x, a = make(rng, (3, 4), device=device)
    y, b = make(rng, (4, 3), device=device)
    np.testing.assert_allclose(to_np(lucid.add(x.T, y)), a.T + b, rtol=1e-6)
    np.testing.assert_allclose(to_np(x[:, ::2] * y.T[:, 1::2]), a[:, ::2] * b.T[:, 1::2], rtol=1e-6)
    np.testing.assert_allclose(to_np(lucid.exp(x.T[::-1])), np.exp(a.T[::-1]), rtol=1e-5)
    e, c = make(rng, (3, 1), device=device)
    np.testing.assert_allclose(to_np(e.expand(3, 4) + x), np.broadcast_to(c, (3, 4)) + a, rtol=1e-6)
    check(x.T.contiguous(), np.ascontiguousarray(a.T))
    check(x.T.to(dtype="float16").to(dtype="float32"), a.T.astype(np.float16).astype(np.float32))


# ----- expand ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_expand(device, rng, dtype):
    x, a = make(rng, (3, 1), dtype, device)
    check(x.expand(3, 4), np.broadcast_to(a, (3, 4)))
    check(x.expand(2, -1, 5), np.broadcast_to(a, (2, 3, 5)))
    check(lucid.broadcast_to(x, (3, 0)), np.broadcast_to(a, (3, 0)))
    s, b = make(rng, (), dtype, device)
    check(s.expand(2, 2), np.broadcast_to(b, (2, 2)))
    check(x.expand_as(lucid.zeros(3, 2)), np.broadcast_to(a, (3, 2)))


def test_expand_is_a_stride0_view():
    x = lucid.tensor([[1.0], [2.0]])
    e = x.expand(2, 3)
    assert e._impl._same_storage(x._impl)
    assert e._impl._strides() == (1, 0)


def test_expand_errors(device):
    x = lucid.zeros(3, 2, device=device)
    with pytest.raises(ValueError, match=r"expand\(\).*cannot expand shape \(3, 2\)"):
        x.expand(3, 4)
    with pytest.raises(ValueError, match="fewer"):
        x.expand(6)
    with pytest.raises(ValueError, match="leading"):
        x.expand(-1, 3, 2)


# ----- cat / stack / split / chunk / unbind ---------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_stack(device, rng, dtype):
    x, a = make(rng, (2, 3), dtype, device)
    y, b = make(rng, (2, 1), dtype, device)
    z, c = make(rng, (2, 0), dtype, device)
    check(lucid.cat([x, y, z], 1), np.concatenate([a, b, c], 1))
    check(lucid.cat((x, x), -2), np.concatenate([a, a], 0))
    check(lucid.cat([x.T, y.T]), np.concatenate([a.T, b.T]))  # non-contiguous inputs
    check(lucid.stack([x, x, x], 1), np.stack([a, a, a], 1))
    check(lucid.stack([x, x], -1), np.stack([a, a], -1))
    s, d = make(rng, (), dtype, device)
    check(lucid.stack([s, s]), np.stack([d, d]))
    check(lucid.concat([x], 0), a)


def test_cat_errors(device):
    x = lucid.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match=r"cat\(\).*item 1 has shape \(3, 3\)"):
        lucid.cat([x, lucid.zeros(3, 3, device=device)], 1)
    with pytest.raises(ValueError, match=r"cat\(\).*item 1 has dtype int64"):
        lucid.cat([x, lucid.zeros(2, 3, dtype=lucid.int64, device=device)])
    with pytest.raises(ValueError, match=r"cat\(\).*item 1 has 1 dims"):
        lucid.cat([x, lucid.zeros(3, device=device)])
    other = "cpu" if device == "gpu" else "gpu"
    with pytest.raises(ValueError, match=r"cat\(\).*item 1 is on"):
        lucid.cat([x, lucid.zeros(2, 3, device=other)])
    with pytest.raises(ValueError, match="non-empty"):
        lucid.cat([])
    with pytest.raises(ValueError, match="0-d"):
        lucid.cat([lucid.tensor(1.0, device=device)])
    with pytest.raises(TypeError, match="list or tuple"):
        lucid.cat(x)
    with pytest.raises(TypeError, match="item 1 must be a tensor"):
        lucid.cat([x, 3])
    with pytest.raises(IndexError, match=r"cat\(\)"):
        lucid.cat([x, x], 2)
    with pytest.raises(ValueError, match=r"stack\(\).*equal shapes"):
        lucid.stack([x, lucid.zeros(3, 2, device=device)])


def test_split_chunk_unbind(device, rng):
    x, a = make(rng, (5, 4), device=device)
    for got, ref in zip(x.split(2), np.split(a, [2, 4])):
        check(got, ref)
    for got, ref in zip(x.split([1, 0, 3, 0], 1), np.split(a, [1, 1, 4], 1)):
        check(got, ref)
    assert len(x.split([1, 0, 3, 0], 1)) == 4
    for got, ref in zip(lucid.chunk(x, 3), np.split(a, [2, 4])):
        check(got, ref)
    assert [p.shape for p in x.chunk(4, 1)] == [(5, 1)] * 4
    assert [p.shape for p in x.chunk(3, 1)] == [(5, 2), (5, 2)]  # PyTorch: fewer chunks when short
    for got, ref in zip(x.unbind(1), a.T):
        check(got, ref)
    assert [p.shape for p in lucid.zeros(0, 2, device=device).split(2)] == [(0, 2)]
    with pytest.raises(ValueError, match="add up"):
        x.split([2, 2])
    with pytest.raises(ValueError, match="positive"):
        x.split(0)
    with pytest.raises(ValueError, match="chunks"):
        x.chunk(0)


def test_split_pieces_are_views():
    x = lucid.zeros(4, 2)
    a, b = x.split(2)
    b[0, 0] = 3.0
    assert x[2, 0].item() == 3.0


# ----- narrow / select / repeat / tile / roll / t -----------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_narrow_select(device, rng, dtype):
    x, a = make(rng, (3, 4, 5), dtype, device)
    check(x.narrow(2, 1, 3), a[:, :, 1:4])
    check(x.narrow(0, -2, 2), a[1:])
    check(x.narrow(1, 4, 0), a[:, 4:4])
    check(x.select(1, -1), a[:, -1])
    check(lucid.select(x, 0, 2), a[2])
    with pytest.raises(ValueError, match="narrow"):
        x.narrow(0, 2, 2)
    with pytest.raises(IndexError, match="narrow"):
        x.narrow(0, 4, 0)
    with pytest.raises(IndexError, match="out of bounds for dimension 1"):
        x.select(1, 4)


def test_narrow_select_are_cpu_views():
    x = lucid.zeros(3, 4)
    x.narrow(1, 1, 2)[0, 0] = 1.0
    x.select(0, 2)[3] = 2.0
    assert x.tolist() == [[0.0, 1.0, 0.0, 0.0], [0.0] * 4, [0.0, 0.0, 0.0, 2.0]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_tile(device, rng, dtype):
    x, a = make(rng, (2, 3), dtype, device)
    check(x.repeat(2, 3), np.tile(a, (2, 3)))
    check(x.repeat(2, 1, 2), np.tile(a, (2, 1, 2)))
    check(x.repeat(1, 0), np.tile(a, (1, 0)))
    check(x.tile((3,)), np.tile(a, 3))
    check(x.tile((2, 1, 1)), np.tile(a, (2, 1, 1)))
    s, b = make(rng, (), dtype, device)
    check(s.repeat(3), np.tile(b, 3))
    r = x.repeat(1, 1)
    if device == "cpu":
        assert not r._impl._same_storage(x._impl)  # always a copy, as in PyTorch
    with pytest.raises(ValueError, match="fewer"):
        x.repeat(2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_roll(device, rng, dtype):
    x, a = make(rng, (3, 4), dtype, device)
    check(x.roll(1, 1), np.roll(a, 1, 1))
    check(x.roll(-5, 0), np.roll(a, -5, 0))
    check(x.roll((1, 2), (0, 1)), np.roll(a, (1, 2), (0, 1)))
    check(x.roll(7), np.roll(a, 7))
    check(lucid.zeros(0, 2, device=device).roll(1, 0), np.zeros((0, 2), np.float32))
    with pytest.raises(ValueError, match="differ in length"):
        x.roll((1, 2), 0)


def test_t(device, rng):
    x, a = make(rng, (2, 3), device=device)
    check(x.t(), a.T)
    check(x[0].t(), a[0])
    with pytest.raises(ValueError, match=r"t\(\)"):
        lucid.zeros(1, 2, 3, device=device).t()


def test_grad_repeat_roll_narrow(device, rng):
    x = lucid.tensor(rng.standard_normal((2, 3)).astype(np.float32), device=device, requires_grad=True)
    assert gradcheck(lambda t: t.repeat(2, 1, 2), (x,))
    assert gradcheck(lambda t: t.roll((1, -1), (0, 1)) * t, (x,))
    assert gradcheck(lambda t: t.narrow(1, 1, 2).select(0, 1), (x,))


# ----- flip / pad ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_flip(device, rng, dtype):
    x, a = make(rng, (2, 3, 4), dtype, device)
    check(x.flip(0), a[::-1])
    check(x.flip((0, 2)), a[::-1, :, ::-1])
    check(lucid.flip(x, -1), a[..., ::-1])
    s, b = make(rng, (), dtype, device)
    check(s.flip(()), b)


def _np_pad(a, pad, mode, value=0):
    width = [(0, 0)] * a.ndim
    for i in range(len(pad) // 2):
        width[a.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    np_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    if mode == "constant":
        return np.pad(a, width, constant_values=value)
    return np.pad(a, width, mode=np_mode)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 2), (0, 0, 2, 1), (2, 0, 1, 1, 1, 0), (3, 3)])
def test_pad_modes(device, rng, mode, pad):
    x, a = make(rng, (2, 3, 4), device=device)
    check(lucid.pad(x, pad, mode=mode), _np_pad(a, pad, mode))


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_constant_dtypes(device, rng, dtype):
    x, a = make(rng, (2, 3), dtype, device)
    check(lucid.pad(x, (1, 1, 0, 2), value=1), _np_pad(a, (1, 1, 0, 2), "constant", np.array(1).astype(a.dtype)))


def test_pad_negative_crops(device, rng):
    x, a = make(rng, (3, 5), device=device)
    check(lucid.pad(x, (-1, 2, 0, -2)), np.pad(a[:1, 1:], ((0, 0), (0, 2))))
    check(lucid.pad(x, (-5, 0)), a[:, 5:])


def test_pad_errors(device):
    x = lucid.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="even length"):
        lucid.pad(x, (1,))
    with pytest.raises(ValueError, match="more axes"):
        lucid.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="mode"):
        lucid.pad(x, (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="reflect padding"):
        lucid.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="negative size"):
        lucid.pad(x, (-2, -2))


# ----- streams agree --------------------------------------------------------------

def test_streams_agree(rng):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    results = []
    for dev in ("cpu", "gpu"):
        x = lucid.tensor(a, device=dev)
        results.append([to_np(t) for t in (
            x.permute(2, 0, 1).reshape(5, -1), x.expand(2, 3, 4, 5), lucid.cat([x, x.flip(1)], 1),
            lucid.pad(x, (1, 2, 3, 0), mode="reflect"), x[1:, ::-2, None], x.transpose(0, 2)[::2].flatten())])
    for c, g in zip(*results):
        np.testing.assert_array_equal(c, g)


# ----- gradients --------------------------------------------------------------------

def _leaf(rng, shape, device):
    return lucid.tensor(rng.standard_normal(shape).astype(np.float32), device=device, requires_grad=True)


def test_grad_reshape_permute_flatten(device, rng):
    x = _leaf(rng, (2, 3, 4), device)
    assert gradcheck(lambda t: t.permute(2, 0, 1).reshape(4, 6) * 2.0, (x,))
    assert gradcheck(lambda t: t.transpose(0, 2).flatten(1).unsqueeze(0).squeeze(0), (x,))
    assert gradcheck(lambda t: t.view(6, 4).movedim(0, 1), (x,))


def test_grad_expand(device, rng):
    x = _leaf(rng, (3, 1), device)
    assert gradcheck(lambda t: t.expand(2, 3, 4) * 1.5, (x,))


def test_grad_cat_stack_split(device, rng):
    x, y = _leaf(rng, (2, 3), device), _leaf(rng, (2, 2), device)
    assert gradcheck(lambda a, b: lucid.cat([a, b, a], 1), (x, y))
    assert gradcheck(lambda a: lucid.stack([a, a * 2.0], 1), (x,))
    assert gradcheck(lambda a: a.split([1, 2], 1)[1] * 3.0, (x,))
    assert gradcheck(lambda a: a.chunk(2)[0], (x,))
    assert gradcheck(lambda a: a.unbind(1)[2], (x,))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_grad_pad(device, rng, mode):
    x = _leaf(rng, (2, 3, 4), device)
    assert gradcheck(lambda t: lucid.pad(t, (2, 1, 1, 2), mode=mode), (x,))


def test_grad_flip(device, rng):
    x = _leaf(rng, (3, 4), device)
    assert gradcheck(lambda t: t.flip((0, 1)) * t, (x,))


def test_grad_pad_negative(device, rng):
    x = _leaf(rng, (3, 4), device)
    assert gradcheck(lambda t: lucid.pad(t, (-1, 2, 1, -1)), (x,))
