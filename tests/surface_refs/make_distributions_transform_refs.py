"""Writes distributions_transform_refs.py: torch.distributions values for the
cases of distributions_transform_cases.py (float64). Run with a Python that
has torch: python tests/surface_refs/make_distributions_transform_refs.py"""
import os
import sys

import numpy as np
import torch
import torch.distributions as D

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distributions_transform_cases as C  # noqa: E402

tensor = lambda v: torch.tensor(v, dtype=torch.float64)
r = lambda t: np.round(t.detach().numpy().astype(np.float64), 10).tolist() if isinstance(t, torch.Tensor) else t
lines = ['"""PyTorch 2.14 references, written by make_distributions_transform_refs.py."""']
out = {}
for name, (t, x) in C.transforms(D, tensor).items():
    xt = tensor(x)
    y = t(xt)
    out[name] = dict(y=r(y), inv=r(t.inv(y)), ladj=r(t.log_abs_det_jacobian(xt, y)),
                     domain_event_dim=t.domain.event_dim, codomain_event_dim=t.codomain.event_dim)
lines.append(f"TRANSFORMS = {out!r}")
out = {}
for name, (t, x) in C.maps_only(D, tensor).items():
    y = t(tensor(x))
    out[name] = dict(y=r(y), inv=r(t.inv(y)))
lines.append(f"MAPS = {out!r}")
out = {}
for name, (d, v, monotone) in C.transformed(D, tensor).items():
    e = dict(batch_shape=list(d.batch_shape), event_shape=list(d.event_shape), log_prob=r(d.log_prob(tensor(v))))
    if monotone:
        e["cdf"] = r(d.cdf(tensor(v)))
        e["icdf"] = r(d.icdf(tensor(C.Q)))
    out[name] = e
lines.append(f"TRANSFORMED = {out!r}")
# log_prob gradients of tanh_flip in the base Normal's loc and scale
loc = torch.tensor([0.2, -0.5], dtype=torch.float64, requires_grad=True)
scale = torch.tensor([0.8, 1.5], dtype=torch.float64, requires_grad=True)
d = D.TransformedDistribution(D.Normal(loc, scale), [D.TanhTransform(), D.AffineTransform(0.0, -2.0)])
d.log_prob(tensor([[-1.5, 0.3], [1.9, 0.0]])).sum().backward()
lines.append(f"TANH_FLIP_GRAD = {dict(loc=r(loc.grad), scale=r(scale.grad))!r}")
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributions_transform_refs.py")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
print("wrote", path)
