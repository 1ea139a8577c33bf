"""Writes special_refs.py: SciPy float64 values of polygamma, digamma, mvlgamma (multigammaln)
and the torch.special functions lucid.special composes, for tests/test_special.py.
SciPy rather than torch: torch 2.14's float64 trigamma is accurate to ~5e-10 only, and the
test checks 1e-12; polygamma from mpmath at 40 digits (SciPy's loses ~1e-10 at negative
half-integers). Run with a Python that has scipy and mpmath:
python make_special_refs.py > special_refs.py"""
import mpmath
import numpy as np
import scipy
import scipy.special as sp

X_PG = np.concatenate([np.linspace(0.05, 30.0, 25), [1e-3, 0.5, 1.0, 2.0, 123.4, 1e4],
                       -np.linspace(0.1, 7.9, 14) + 0.013, [-0.3, -2.5, -9.037]])
X_BESSEL = np.concatenate([np.linspace(-40.0, 40.0, 41), [0.0, 1e-3, 19.99, 20.01, 85.0, -85.0]])
P_NDTRI = np.array([1e-300, 1e-100, 1e-20, 1e-10, 1e-6, 1e-3, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.999,
                    1 - 1e-10, 0.0, 1.0])
X_NDTR = np.concatenate([np.linspace(-60.0, 12.0, 37), [-10.0, -9.99, 0.0, 1e-3, -1e3]])
X_ENTR = np.array([0.0, 1e-5, 0.3, 1.0, 2.5, 100.0, -1.0])
X_MVL = np.array([1.6, 2.0, 3.3, 10.0, 55.5])
XY = (np.array([0.0, 0.0, 1.5, -2.0, 3.0, 0.0]), np.array([-1.0, 0.7, 0.5, 3.0, -0.5, 2.0]))


def lit(a):
    return repr([float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]).replace("inf", "INF")


print(f'"""SciPy {scipy.__version__} float64 references, written by make_special_refs.py."""')
print('INF = float("inf")')
for name, value in [("X_PG", X_PG), ("X_BESSEL", X_BESSEL), ("P_NDTRI", P_NDTRI), ("X_NDTR", X_NDTR),
                    ("X_ENTR", X_ENTR), ("X_MVL", X_MVL), ("XLOG1PY_X", XY[0]), ("XLOG1PY_Y", XY[1])]:
    print(f"{name} = {lit(value)}")
print("POLYGAMMA = {")
for n in range(0, 7):
    mpmath.mp.dps = 40
    print(f"    {n}: {lit([float(mpmath.polygamma(n, mpmath.mpf(float(v)))) for v in X_PG])},")
print("}")
print("SPECIAL = {")
for name, x in [("i0", X_BESSEL), ("i0e", X_BESSEL), ("i1", X_BESSEL), ("i1e", X_BESSEL), ("ndtri", P_NDTRI),
                ("ndtr", X_NDTR), ("log_ndtr", X_NDTR), ("entr", X_ENTR)]:
    print(f"    {name!r}: {lit(getattr(sp, name)(x))},")
print(f"    'xlog1py': {lit(sp.xlog1py(XY[0], XY[1]))},")
for p in (1, 2, 4):
    print(f"    'mvlgamma{p}': {lit([sp.multigammaln(v, p) for v in X_MVL])},")
print("}")
