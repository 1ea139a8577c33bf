"""lucid.distributions: probability distributions with PyTorch's
``torch.distributions`` interface for the common cases (see "Distributions"
in docs/guide.md for what exists and how it differs from PyTorch).

>>> import lucid
>>> from lucid.distributions import Normal, kl_divergence
>>> round(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item(), 6)
0.5
"""
from . import constraints
from .binomial import Binomial, Multinomial
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .discrete import Bernoulli, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .gamma_family import Beta, Chi2, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .student_t import StudentT
from . import transforms
from .transformed_distribution import TransformedDistribution
from .transformed_families import Gumbel, HalfCauchy, HalfNormal
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, IndependentTransform,
                         LowerCholeskyTransform, PowerTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)
from .constraint_registry import biject_to, transform_to

__all__ = ["Distribution", "Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "Bernoulli",
           "Categorical", "OneHotCategorical", "Geometric", "Poisson", "Gamma", "Chi2", "Beta", "Dirichlet",
           "Independent", "MultivariateNormal", "kl_divergence", "register_kl", "constraints",
           "TransformedDistribution", "transforms", "Transform", "ComposeTransform", "ExpTransform", "AffineTransform",
           "SigmoidTransform", "TanhTransform", "SoftmaxTransform", "PowerTransform", "AbsTransform",
           "SoftplusTransform", "IndependentTransform", "StickBreakingTransform", "LowerCholeskyTransform",
           "identity_transform", "biject_to", "transform_to", "StudentT", "Binomial", "Multinomial",
           "Gumbel", "HalfNormal", "HalfCauchy", "MixtureSameFamily"]
