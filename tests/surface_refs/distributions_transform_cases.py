"""The transform and TransformedDistribution cases of
tests/test_distributions_transforms.py, defined once for the test (lucid) and
for make_distributions_transform_refs.py (torch): ``D`` is
``lucid.distributions`` or ``torch.distributions`` and ``tensor`` makes a
tensor of the test's dtype from nested lists."""

X = [-2.5, -0.3, 0.0, 0.7, 3.0]
XPOS = [0.2, 0.9, 1.0, 2.5, 4.0]
X2 = [[-1.0, 0.5, 2.0], [0.3, -0.7, 1.1]]
LOC3 = [1.0, -2.0, 0.5]
SCALE23 = [[0.5, -1.0, 2.0], [3.0, 0.25, -0.5]]


def transforms(D, tensor):
    """name -> (transform, x): y = t(x), t.inv(y) and t.log_abs_det_jacobian(x, y) are checked."""
    T = D.transforms
    return {
        "exp": (T.ExpTransform(), X),
        "affine": (T.AffineTransform(0.5, -1.5), X),
        "affine_event1": (T.AffineTransform(tensor(LOC3), tensor(SCALE23), event_dim=1), X2),
        "sigmoid": (T.SigmoidTransform(), X),
        "tanh": (T.TanhTransform(), X),
        "power": (T.PowerTransform(2.5), XPOS),
        "power_neg": (T.PowerTransform(-0.5), XPOS),
        "exp_inv": (T.ExpTransform().inv, XPOS),
        "compose": (T.ComposeTransform([T.AffineTransform(0.5, 0.5), T.TanhTransform()]), X),
        "compose_event1": (T.ComposeTransform([T.AffineTransform(tensor(LOC3), tensor(SCALE23), event_dim=1),
                                               T.ExpTransform()]), X2),
        "compose_sigmoid_affine": (T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(-1.0, 2.0)]), X),
        "softplus": (T.SoftplusTransform(), X),
        "stick_breaking": (T.StickBreakingTransform(), X2),
        "independent_exp": (T.IndependentTransform(T.ExpTransform(), 1), X2),
        "biject_interval": (D.biject_to(D.constraints.interval(-1.0, 3.0)), X),
        "biject_greater_than": (D.biject_to(D.constraints.greater_than(2.0)), X),
        "biject_unit_interval": (D.biject_to(D.constraints.unit_interval), X),
        "biject_simplex": (D.biject_to(D.constraints.simplex), X2),
        "biject_positive_vector": (D.biject_to(D.constraints.independent(D.constraints.positive, 1)), X2),
    }


def maps_only(D, tensor):
    """name -> (transform, x): no log-det (not injective); y and t.inv(y) are checked."""
    T = D.transforms
    return {"abs": (T.AbsTransform(), X), "softmax": (T.SoftmaxTransform(), X2),
            "lower_cholesky": (T.LowerCholeskyTransform(), [[[0.5, 9.0], [2.0, -1.0]], [[-0.3, 0.0], [1.5, 0.2]]]),
            "transform_to_simplex": (D.transform_to(D.constraints.simplex), X2)}


def transformed(D, tensor):
    """name -> (distribution, values, monotone): log_prob(values) (and cdf / icdf when monotone)."""
    T = D.transforms
    normal = lambda: D.Normal(tensor([0.2, -0.5]), tensor([0.8, 1.5]))
    return {
        "affine_exp": (D.TransformedDistribution(normal(), [T.AffineTransform(1.0, 2.0), T.ExpTransform()]),
                       [[0.5, 3.0], [2.0, 0.1]], True),
        "logit_normal": (D.TransformedDistribution(normal(), T.SigmoidTransform()), [[0.3, 0.9], [0.5, 0.05]], True),
        "tanh_flip": (D.TransformedDistribution(normal(), [T.TanhTransform(), T.AffineTransform(0.0, -2.0)]),
                      [[-1.5, 0.3], [1.9, 0.0]], True),
        "event1": (D.TransformedDistribution(D.Normal(tensor([[0.0, 1.0, -1.0], [0.5, 0.5, 0.5]]),
                                                      tensor([[1.0, 2.0, 0.5], [1.0, 1.0, 3.0]])),
                                             [T.AffineTransform(tensor(LOC3), tensor(SCALE23), event_dim=1)]),
                   X2, False),
        "reinterpret": (D.TransformedDistribution(D.Normal(tensor([0.0, 1.0, -1.0]), tensor([1.0, 2.0, 0.5])),
                                                  [T.AffineTransform(0.0, tensor([2.0, -1.0, 0.5]), event_dim=1),
                                                   T.ExpTransform()]),
                        [[0.5, 3.0, 1.2], [2.0, 0.1, 0.9]], False),
        "stick_breaking": (D.TransformedDistribution(normal(), T.StickBreakingTransform()),
                           [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], False),
        "softplus_power": (D.TransformedDistribution(normal(), [T.SoftplusTransform(), T.PowerTransform(1.5)]),
                           [[0.5, 3.0], [2.0, 0.1]], True),
    }


Q = [[0.1, 0.5], [0.75, 0.98]]  # icdf arguments of the monotone cases
