"""The layer classes of ``lucid.nn`` (containers live in ``nn.containers``)."""
from .activation import (GELU, Hardsigmoid, Hardswish, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, Softmax,
                         Tanh)
from .conv import Conv1d, Conv2d, Conv3d
from .dropout import Dropout
from .linear import Flatten, Identity, Linear
from .loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .pooling import *  # noqa: F401,F403
from . import pooling as _pooling
from .sparse import Embedding
from .activation_smooth import CELU, ELU, GLU, SELU, Hardtanh, LogSigmoid, Mish, PReLU, SiLU, Softplus, Softsign
from .layer_norm import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm, RMSNorm
from .resample import CosineSimilarity, Dropout2d, Fold, PairwiseDistance, Unfold, Upsample
from .loss_more import BCELoss, BCEWithLogitsLoss, HuberLoss, KLDivLoss, SmoothL1Loss
from .attention import MultiheadAttention
from .transformer import TransformerEncoder, TransformerEncoderLayer
from .recurrent import GRU, LSTM, RNN
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

__all__ = [
    "Linear", "Identity", "Flatten", "Conv1d", "Conv2d", "Conv3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid", "Softmax", "LogSoftmax",
    "Dropout", "Embedding",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss",
]
__all__ += [
    "SiLU", "ELU", "CELU", "SELU", "Softplus", "Mish", "PReLU", "LogSigmoid", "Softsign", "Hardtanh", "GLU",
    "LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "Upsample", "Dropout2d", "CosineSimilarity", "PairwiseDistance",
    "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss",
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "LSTM", "GRU", "RNN",
    "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Unfold", "Fold",
]
from .padding_reshape import *  # noqa: E402,F401,F403
from . import padding_reshape as _padding_reshape  # noqa: E402
from .activation_smooth import Hardshrink, Softmax2d, Softmin, Softshrink, Tanhshrink, Threshold  # noqa: E402,F401
from .dropout import Dropout1d, Dropout3d  # noqa: E402,F401
from .resample import UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402,F401

__all__ += _padding_reshape.__all__ + ["Softmin", "Softmax2d", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink",
                                       "Dropout1d", "Dropout3d", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
from .rnn_cell import GRUCell, LSTMCell, RNNCell  # noqa: E402,F401

__all__ += ["RNNCell", "LSTMCell", "GRUCell"]
from .transformer_decoder import Transformer, TransformerDecoder, TransformerDecoderLayer  # noqa: E402
from .loss_extra import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss,  # noqa: E402
                         MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss)
from .bilinear import Bilinear  # noqa: E402
__all__ += ["TransformerDecoderLayer", "TransformerDecoder", "Transformer", "MarginRankingLoss", "TripletMarginLoss",
            "CosineEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "HingeEmbeddingLoss",
            "PoissonNLLLoss", "GaussianNLLLoss", "MultiMarginLoss", "Bilinear"]
from .layer_norm import LocalResponseNorm  # noqa: E402,F401
from .dropout import AlphaDropout, FeatureAlphaDropout  # noqa: E402,F401
from .sparse import EmbeddingBag  # noqa: E402,F401
from .activation_smooth import RReLU  # noqa: E402,F401
from .loss_extra import CTCLoss, MultiLabelMarginLoss  # noqa: E402,F401

__all__ += ["LocalResponseNorm", "AlphaDropout", "FeatureAlphaDropout", "EmbeddingBag", "RReLU", "CTCLoss",
            "MultiLabelMarginLoss"]
__all__ += _pooling.__all__
from .lazy import *  # noqa: E402,F401,F403
from . import lazy as _lazy  # noqa: E402

__all__ += _lazy.__all__
from .loss_extra import TripletMarginWithDistanceLoss  # noqa: E402,F401

__all__ += ["TripletMarginWithDistanceLoss"]
