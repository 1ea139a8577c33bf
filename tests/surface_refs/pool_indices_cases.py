"""The pool cases of tests/test_pool_indices.py, defined once for lucid and for the
generator (make_pool_indices_refs.py): ``cases(F)`` with F lucid's or torch's
nn.functional gives ``(indexed, lp)``, each {name: (numpy input, call of F)}."""
import numpy as np


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


X5 = det(2, 2, 5, 6, 7, k=0.37)
X4 = det(3, 4, 5, 7, k=0.53)
X3 = det(2, 3, 11, k=0.71)
TIES = np.round(det(1, 2, 4, 5, 6, k=0.9), 0)
POS = np.abs(det(2, 2, 5, 6, 7, k=0.29)) + 0.1


def cases(F):
    indexed = {
        "mp3d": (X5, lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), return_indices=True)),
        "mp3d_ceil_dil": (X5, lambda x: F.max_pool3d(x, 2, 2, 0, (2, 1, 1), True, return_indices=True)),
        "mp3d_ties": (TIES, lambda x: F.max_pool3d(x, 2, 1, 1, return_indices=True)),
        "mp3d_unbatched": (X5[0], lambda x: F.max_pool3d(x, 3, 2, 1, return_indices=True)),
        "amp3d": (X5, lambda x: F.adaptive_max_pool3d(x, (3, 4, 5), return_indices=True)),
        "amp3d_ties": (TIES, lambda x: F.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True)),
        "amp2d": (X4, lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True)),
        "amp2d_uniform_unbatched": (X4[0], lambda x: F.adaptive_max_pool2d(x, (5, 7), return_indices=True)),
        "amp1d": (X3, lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True)),
        "amp1d_unbatched": (X3[1], lambda x: F.adaptive_max_pool1d(x, 3, return_indices=True)),
    }
    lp = {
        "lp3d": (POS, lambda x: F.lp_pool3d(x, 2.0, (2, 3, 2), (1, 2, 2))),
        "lp3d_p3_ceil_unbatched": (POS[0], lambda x: F.lp_pool3d(x, 3.0, 2, ceil_mode=True)),
    }
    return indexed, lp
