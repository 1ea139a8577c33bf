"""The core op families, one module each. Those with a C++ family share its name
(csrc/ops/<family>.cpp: copy, elementwise, reduction, shape, indexing, linalg, scan,
special, bitwise, inplace, recurrent; sorting is sort.cpp's, nn runs conv / pool /
linear / embedding, and the kernels of math.cpp serve trig, special, gamma and
floating); the rest are composed from them.

  copy            to, clone, contiguous, assign_, copy_; type_as, new_zeros ... new_tensor
  elementwise     arithmetic, comparisons, where / clamp, the basic unary ops (exp log sqrt
                  sin cos tanh sigmoid erf gelu floor ...), lerp / addcmul / isclose ...,
                  PyTorch's aliases (subtract, clamp_min ...), heaviside, float_power, gcd, lcm
  trig            tan, sinh ... atanh (and the arc* spellings), sinc, hypot, atan2
  special         log1p, expm1, log2, exp2, log10, erfc, erfinv, logaddexp(2), xlogy, logit
  gamma           lgamma, digamma, polygamma, mvlgamma
  floating        trunc / fix, frac, signbit, isposinf / isneginf, nan_to_num, copysign,
                  fmax / fmin, nextafter, frexp, ldexp
  bitwise         bitwise_and ... bitwise_right_shift, bitwise_not; the & | ^ ~ << >> operators
  reduction       sum, mean, var, std, prod, max / min, amax / amin, argmax, all / any,
                  logsumexp, histc
  scan            cumsum, cumprod, cummax / cummin, logcumsumexp, diff
  sorting         sort, argsort, topk, median, unique(_consecutive), nonzero, bincount,
                  count_nonzero, masked_select, searchsorted / bucketize, isin
  shape           reshape / view, permute, expand, cat / stack / split, narrow, pad, flip,
                  roll, tril / triu, ravel, rot90 ..., squeeze_ / transpose_ ...
  stack_split     atleast_Nd, hstack / vstack / dstack / column_stack, tensor_split, h/v/dsplit
  indexing        x[idx], x[idx] = v, gather, scatter, index_select / add / copy,
                  masked_fill, take, select_scatter, slice_scatter, index_fill, their _ forms
  advanced_index  several index tensors in one expression; index_put(_)
  diagonals       diagonal, diag, diag_embed, diagflat, block_diag, trace
  windows         unfold (Tensor.unfold), im2col (nn.functional.unfold)
  creation        logspace, tril/triu_indices, unravel_index, meshgrid, cartesian_prod,
                  combinations, vander
  linalg          matmul, mm, bmm, addmm ..., outer, dot, mv, inner, kron, tensordot, cross
  norms           vector_norm, matrix_norm, norm; cdist, dist
  einsum          einsum
  nn              conv1d / conv2d (and transposed), pools, linear, embedding, softmax
  conv3d_compose  conv3d and conv_transpose3d, composed over conv2d
  recurrent       the LSTM / GRU layer kernels (lucid.nn's)
  random          Generator, randperm, multinomial, normal, uniform_, normal_
  sampling        bernoulli, poisson and the in-place draws (exponential_ ...)
  integrate       trapezoid / trapz, cumulative_trapezoid, gradient
  inplace         add_ ... and every other in-place form of elementwise's ops
  out             out= (takes_out, installed on the namespace)
  autocast        autocast's state and the @autocast_op decorator
  common          the helpers the families share (argument conversion, gradient shapes,
                  the QTensor registry)

Each family lists its public functions in ``__all__`` and, in ``TENSOR_METHODS``, those
that are also Tensor methods; lucid._namespace exports and installs them. The
decompositions and statistics are breadth packages above the core (lucid.linalg,
lucid.stats), which add their own names.
"""
from . import copy, elementwise, inplace, trig, special, gamma, floating, bitwise
from . import shape, indexing, advanced_index, scan, reduction, sorting, stack_split
from . import diagonals, windows, creation, linalg, norms, einsum as _einsum_module
from . import nn as _nn  # named apart: `nn` would shadow the public package lucid.nn
from . import conv3d_compose as _conv3d_module
from . import random, sampling, integrate

_FAMILIES = [copy, elementwise, trig, special, gamma, floating, bitwise, reduction, scan, sorting, shape,
             stack_split, indexing, advanced_index, diagonals, windows, creation, linalg, norms, _einsum_module,
             _nn, _conv3d_module, random, sampling, integrate]
_FAMILIES.append(inplace)  # last: its in-place forms replace random's fill_ / zero_
for _m in _FAMILIES:
    globals().update({k: getattr(_m, k) for k in _m.__all__})

__all__ = [name for m in _FAMILIES for name in m.__all__]
TENSOR_METHODS = [name for m in _FAMILIES for name in getattr(m, "TENSOR_METHODS", [])]
