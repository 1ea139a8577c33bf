"""Writes interpolate_refs.py: torch outputs (and a bicubic input gradient) for the
interpolate modes tests/test_interpolate_modes.py checks. Run with a Python that has torch."""
import numpy as np, torch, torch.nn.functional as F
def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape)); return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)
x4 = torch.tensor(det(1, 2, 3, 4, k=0.6), requires_grad=True)
cases = {
 "bicubic_size": F.interpolate(x4, size=(5, 7), mode="bicubic"),
 "bicubic_ac": F.interpolate(x4, size=(4, 6), mode="bicubic", align_corners=True),
 "bicubic_down": F.interpolate(x4, scale_factor=0.6, mode="bicubic"),
 "nearest_exact": F.interpolate(x4, size=(5, 7), mode="nearest-exact"),
 "area": F.interpolate(x4, size=(2, 3), mode="area"),
}
x3 = torch.tensor(det(1, 2, 7, k=0.9)); x5 = torch.tensor(det(1, 1, 2, 3, 4, k=0.7))
cases["area1d"] = F.interpolate(x3, size=3, mode="area")
cases["trilinear"] = F.interpolate(x5, size=(3, 4, 5), mode="trilinear")
cases["trilinear_ac"] = F.interpolate(x5, scale_factor=1.5, mode="trilinear", align_corners=True)
cases["nearest3d"] = F.interpolate(x5, size=(3, 2, 6), mode="nearest")
g = torch.tensor(det(1, 2, 5, 7, k=0.37))
(cases["bicubic_size"] * g).sum().backward()
print("REFS = {")
for k, v in cases.items():
    print(f"    {k!r}: {np.round(v.detach().numpy().astype(np.float64), 6).tolist()!r},")
print("}")
print("BICUBIC_GRAD =", np.round(x4.grad.numpy().astype(np.float64), 6).tolist())
