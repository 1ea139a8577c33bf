"""``lucid.nn.functional``: the stateless forms of the layers and the losses,
with PyTorch's names, arguments and defaults.

Convolution, linear, embedding and the 2-D pools run on dedicated kernels
(``lucid._ops.nn``); softmax, batch_norm, layer_norm and cross_entropy run and
record in C++; the rest are compositions of lucid ops, so autograd
differentiates them on whichever stream holds the data. One module per family:

- ``activation``: relu ... softmax, log_softmax, softmin, gumbel_softmax, silu, elu, softplus ...
- ``normalization``: batch_norm, layer_norm, rms_norm, group_norm, instance_norm, local_response_norm, normalize
- ``loss``: cross_entropy, nll_loss, the binary cross-entropies, kl_div, the regression and likelihood losses, ctc_loss
- ``margin_loss``: the margin, ranking and embedding losses
- ``pooling``: max / average / adaptive / LP pools in 1-3 dimensions, max_unpool
- ``dropouts``: dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout
- ``embeddings``: embedding, embedding_bag, one_hot
- ``attention``: scaled_dot_product_attention (and nn.MultiheadAttention's forward)
- ``distance``: cosine_similarity, pairwise_distance, pdist
- ``sampling``: interpolate, upsample, affine_grid, grid_sample
- ``shape``: pad, flatten, pixel / channel shuffles, unfold, fold
- ``linear_maps``: bilinear

>>> import lucid
>>> import lucid.nn.functional as F
>>> F.softmax(lucid.tensor([0.0, 0.0]), dim=0).tolist()
[0.5, 0.5]
"""
from ..._ops.nn import conv1d, conv2d, conv_transpose1d, conv_transpose2d, linear  # noqa: F401
from ..._ops.conv3d_compose import conv3d, conv_transpose3d  # noqa: F401
from . import activation, attention, distance, dropouts, embeddings, linear_maps, loss, margin_loss
from . import normalization, pooling, sampling, shape
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropouts import *  # noqa: F401,F403
from .embeddings import *  # noqa: F401,F403
from .linear_maps import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .margin_loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
# Helpers other modules reach as ``F._name`` (the loss layers, tests of the fused nodes).
from ._inplace import _maybe_inplace  # noqa: F401
from .activation import _Softmax  # noqa: F401
from .loss import (_REDUCTIONS, _CrossEntropyIndex, _CrossEntropyTargets, _check_reduction, _class_layout,  # noqa: F401
                   _nll_from_log_probs, _nll_parts, _one_hot, _pointwise_loss, _reduce)
from .normalization import _BatchNormTrain, channel_affine  # noqa: F401

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear"]
__all__ += [name for family in (activation, normalization, loss, margin_loss, pooling, dropouts, embeddings, attention,
                                distance, sampling, shape, linear_maps) for name in family.__all__]
