"""Pool strides far past the input (2^40, 2^62, int64's max) give the one window a
stride equal to the padded extent gives, on both streams (the GPU stream's int32
slice steps once took a stride of 2^40 as 0 and died with SIGFPE); kernel,
padding and dilation past int32 are refused by name."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

from conftest import to_np

HUGE = [2**31, 2**40, 2**62, 2**63 - 1]


def x_of(shape, device):
    return lucid.tensor(np.sin(np.arange(np.prod(shape)) * 0.7).astype(np.float32).reshape(shape), device=device)


POOLS = {  # name -> (input shape, call with a stride)
    "max_pool1d": ((1, 2, 7), lambda x, s: F.max_pool1d(x, 2, s)),
    "max_pool2d": ((1, 2, 5, 6), lambda x, s: F.max_pool2d(x, 2, s)),
    "max_pool2d_ceil": ((1, 2, 5, 6), lambda x, s: F.max_pool2d(x, 2, s, ceil_mode=True)),
    "max_pool3d": ((1, 2, 3, 4, 5), lambda x, s: F.max_pool3d(x, 2, s)),
    "avg_pool1d": ((1, 2, 7), lambda x, s: F.avg_pool1d(x, 2, s)),
    "avg_pool2d": ((1, 2, 5, 6), lambda x, s: F.avg_pool2d(x, 3, s, padding=1)),
    "avg_pool3d": ((1, 2, 3, 4, 5), lambda x, s: F.avg_pool3d(x, 2, s)),
    "lp_pool2d": ((1, 2, 5, 6), lambda x, s: F.lp_pool2d(x, 2.0, 2, s)),
}


@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("stride", HUGE)
def test_huge_stride_is_one_window(device, name, stride):
    shape, call = POOLS[name]
    x = x_of(shape, device)
    np.testing.assert_allclose(to_np(call(x, stride)), to_np(call(x, 64)), rtol=1e-6)


@pytest.mark.parametrize("arg", ["kernel_size", "padding", "dilation"])
def test_window_arguments_past_int32_are_refused(device, arg):
    x = x_of((1, 2, 5, 6), device)
    kwargs = {"kernel_size": 2, arg: 2**40}
    with pytest.raises(ValueError, match=f"argument '{arg}' must be at most 2147483647"):
        F.max_pool2d(x, **kwargs)
