"""nn.init.dirac_ / sparse_ (numpy expectations written here, both streams) and
lucid.testing.assert_close (PyTorch's tolerances and messages, checked against what
torch.testing.assert_close 2.14 prints for the same inputs)."""
import math

import numpy as np
import pytest

import lucid
from lucid.nn import init
from lucid.testing import assert_close


def _dirac_numpy(shape, groups):
    w = np.zeros(shape, dtype=np.float32)
    per = shape[0] // groups
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for d in range(min(per, shape[1])):
            w[(g * per + d, d) + centre] = 1
    return w


@pytest.mark.parametrize("shape,groups", [((3, 3, 5), 1), ((4, 2, 3, 3), 2), ((6, 2, 3, 2, 4), 3), ((2, 5, 3), 1),
                                          ((5, 2, 1, 1), 1)])
def test_dirac_matches_numpy(shape, groups, device):
    w = init.dirac_(lucid.full(shape, 7.0, device=device), groups=groups)
    np.testing.assert_array_equal(w.numpy(), _dirac_numpy(shape, groups))
    assert w.device.type == lucid.device(device).type


def test_dirac_conv_is_identity(device):
    x = lucid.tensor(np.sin(np.arange(2 * 3 * 5 * 5)).reshape(2, 3, 5, 5).astype(np.float32), device=device)
    w = init.dirac_(lucid.empty(3, 3, 3, 3, device=device))
    np.testing.assert_allclose(lucid.nn.functional.conv2d(x, w, padding=1).numpy(), x.numpy(), atol=1e-6)


def test_dirac_errors():
    with pytest.raises(ValueError, match="3, 4 or 5 dimensions"):
        init.dirac_(lucid.empty(3, 3))
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(lucid.empty(3, 3, 3), groups=2)
    with pytest.raises(ValueError, match="groups"):
        init.dirac_(lucid.empty(3, 3, 3), groups=0)


def test_sparse_zero_count_scale_and_seed(device):
    lucid.manual_seed(3)
    w = init.sparse_(lucid.empty(40, 30, device=device), sparsity=0.3, std=0.5).numpy()
    zeros = (w == 0).sum(axis=0)
    assert (zeros == math.ceil(0.3 * 40)).all()
    assert abs(w[w != 0].std() - 0.5) < 0.05
    lucid.manual_seed(3)
    again = init.sparse_(lucid.empty(40, 30, device="cpu"), sparsity=0.3, std=0.5).numpy()
    np.testing.assert_array_equal(w, again)  # the same values on either stream
    g = lucid.Generator().manual_seed(9)
    a = init.sparse_(lucid.empty(5, 4), 0.5, generator=g).numpy()
    b = init.sparse_(lucid.empty(5, 4), 0.5, generator=lucid.Generator().manual_seed(9)).numpy()
    np.testing.assert_array_equal(a, b)
    for bad, word in ((dict(sparsity=1.5), "sparsity"), (dict(sparsity=0.1, std=-1.0), "std")):
        with pytest.raises(ValueError, match=word):
            init.sparse_(lucid.empty(3, 3), **bad)
    with pytest.raises(ValueError, match="2-D"):
        init.sparse_(lucid.empty(3), 0.1)


def _message(fn):
    with pytest.raises(AssertionError) as info:
        fn()
    return str(info.value)


def test_assert_close_passes_within_default_tolerances(device):
    t = lambda v, **kw: lucid.tensor(v, device=device, **kw)  # noqa: E731
    assert_close(t([1.0, 2.0]), t([1.0 + 1e-6, 2.0]))  # float32: atol 1e-5
    assert_close(t([1.0], dtype=lucid.float16), t([1.0005], dtype=lucid.float16))  # float16: rtol 1e-3
    f64 = lambda v: lucid.tensor(v, dtype=lucid.float64)  # noqa: E731  (float64 lives on the CPU stream)
    assert_close(f64([1.0]), f64([1.0 + 5e-8]))
    with pytest.raises(AssertionError):
        assert_close(f64([1.0]), f64([1.0 + 5e-7]))
    assert_close(t([1, 2]), t([1, 2]))
    assert_close(t([float("nan"), 1.0]), t([float("nan"), 1.0]), equal_nan=True)
    assert_close(t([float("inf")]), t([float("inf")]))
    assert_close(t([1.0]), t([1.0005], dtype=lucid.float16), check_dtype=False)  # float16's looser tolerance
    assert_close(t([1.0]), t([1.5]), rtol=0.0, atol=0.5)
    assert_close([t(1.0), {"k": 2.0}], [t(1.0), {"k": 2.0}])
    assert_close(t([1.0]), lucid.tensor([1.0], device="cpu"), check_device=False)


def test_assert_close_messages_match_torch(device):
    t = lambda v, **kw: lucid.tensor(v, device=device, **kw)  # noqa: E731
    # Texts torch.testing.assert_close 2.14 prints for the same inputs (its relative difference is
    # computed in float32: 0.20000000298023224 there, 0.2 here).
    assert _message(lambda: assert_close(t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]))) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)")
    assert _message(lambda: assert_close(t([[1, 2], [3, 4]]), t([[1, 2], [3, 5]]))) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1 at index (1, 1)\nGreatest relative difference: 0.2 at index (1, 1)")
    assert _message(lambda: assert_close(1.0, 1.5)) == (
        "Scalars are not close!\n\nExpected 1.5 but got 1.0.\nAbsolute difference: 0.5 (up to 1e-07 allowed)\n"
        "Relative difference: 0.3333333333333333 (up to 1e-07 allowed)")
    assert _message(lambda: assert_close({"a": 1.0}, {"a": 3.0})).endswith("The failure occurred for item ['a']")
    assert _message(lambda: assert_close([1, 2], [1, 2, 3])) == "The length of the sequences mismatch: 2 != 3"
    assert "Greatest absolute difference: nan" in _message(lambda: assert_close(t([float("nan")]),
                                                                                 t([float("nan")])))
    assert "Mismatched elements: 1 / 1" in _message(lambda: assert_close(t([float("inf")]), t([-float("inf")])))
    assert "attribute 'shape'" in _message(lambda: assert_close(t([1.0, 2.0]), t([1.0, 2.0, 3.0])))
    assert "attribute 'dtype'" in _message(lambda: assert_close(t([1.0]), t([1.0], dtype=lucid.float16)))
    assert "Mismatched elements: 1 / 2 (50.0%)" in _message(lambda: assert_close(t([True, False]), t([True, True])))
    assert _message(lambda: assert_close(t([1.0]), t([3.0]), msg="custom")) == "custom"
    assert _message(lambda: assert_close(t([1.0]), t([3.0]), msg=lambda m: "wrapped: " + m)).startswith("wrapped: ")


def test_assert_close_argument_errors():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(lucid.ones(1), lucid.ones(1), rtol=0.1)
    with pytest.raises(ValueError, match="atol"):
        assert_close(lucid.ones(1), lucid.ones(1), rtol=0.1, atol=-1.0)
    with pytest.raises(TypeError, match="Tensor and float"):
        assert_close(lucid.ones(()), 1.0)
    assert_close(lucid.ones(2, 3), lucid.ones(2, 3), check_stride=True)
    with pytest.raises(AssertionError, match=r"'stride\(\)' do not match: \(1, 2\) != \(3, 1\)"):
        assert_close(lucid.ones(3, 2).T, lucid.ones(2, 3), check_stride=True)
    with pytest.raises(AssertionError, match="attribute 'device'"):
        assert_close(lucid.ones(1), lucid.ones(1, device="gpu"))


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_uniform_and_normal_are_the_generators_float32_draws_scaled(device):
    # numpy reference: the same Philox stream lucid.manual_seed(7) starts, scaled in float32
    ref = np.random.Generator(np.random.Philox(7))
    lucid.manual_seed(7)
    u = init.uniform_(lucid.empty(33, 5, device=device), -0.25, 0.5).numpy()
    want_u = ref.random((33, 5), dtype=np.float32) * np.float32(0.75) + np.float32(-0.25)
    n = init.normal_(lucid.empty(7, device=device), 0.1, 0.3).numpy()
    want_n = ref.standard_normal((7,), dtype=np.float32) * np.float32(0.3) + np.float32(0.1)
    assert np.array_equal(u.view(np.uint32), want_u.view(np.uint32))
    assert np.array_equal(n.view(np.uint32), want_n.view(np.uint32))
    # Larger than one fill chunk (the CPU stream draws 2^18 elements at a time): the
    # same values as one draw of the whole shape, and the stream goes on from the same place.
    big_u = init.uniform_(lucid.empty(601, 997, device=device), -1.0, 2.0).numpy()
    big_n = init.normal_(lucid.empty(300001, device=device), 0.0, 0.5).numpy()
    after = init.uniform_(lucid.empty(3, device=device)).numpy()
    want = ref.random((601, 997), dtype=np.float32) * np.float32(3.0) + np.float32(-1.0)
    assert np.array_equal(big_u.view(np.uint32), want.view(np.uint32))
    want = ref.standard_normal((300001,), dtype=np.float32) * np.float32(0.5) + np.float32(0.0)
    assert np.array_equal(big_n.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(after, ref.random((3,), dtype=np.float32))


def test_init_of_a_large_weight_needs_no_weight_sized_temporary():
    # A 16 MiB weight: the only temporary is a 1 MiB chunk of the draw (it was the whole
    # draw, and before that three copies: the draw, the product and the sum), which
    # bounds the peak of building a model layer by layer.
    import subprocess
    import sys
    code = """if True:
        import resource, lucid
        from lucid.nn import init
        w = lucid.zeros(4096, 1024)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        init.kaiming_uniform_(w, a=5 ** 0.5)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    grown_mb = float(out.stdout.split()[-1])
    assert grown_mb < 8, grown_mb  # a 1 MiB chunk (and the heap's rounding), not a 16 MiB draw
