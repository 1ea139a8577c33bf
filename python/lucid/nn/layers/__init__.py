"""The layer classes of ``lucid.nn``, one module per family (containers live in
``nn.containers``; the lazy and transformer layers, breadth built on these, in
``nn.lazy`` and ``nn.transformer``)."""
from . import activation, attention, conv, conv_transpose, distance, dropout, embedding, linear, loss, margin_loss
from . import normalization, padding_reshape, pooling, recurrent, rnn_cell, upsampling
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .conv_transpose import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .margin_loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding_reshape import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .recurrent import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

__all__ = [name for family in (linear, conv, conv_transpose, activation, normalization, dropout, embedding, loss,
                               margin_loss, pooling, padding_reshape, upsampling, distance, attention, recurrent,
                               rnn_cell) for name in family.__all__]
