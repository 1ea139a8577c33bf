"""A line search for LBFGS that ends at a step satisfying the strong Wolfe
conditions (Nocedal and Wright, "Numerical Optimization", algorithms 3.5 and 3.6),
with the safeguarded cubic interpolation minFunc and PyTorch use.

Along the direction ``d`` from ``x``, with ``phi(t) = f(x + t d)``:
sufficient decrease ``phi(t) <= phi(0) + c1 t phi'(0)`` and curvature
``|phi'(t)| <= c2 |phi'(0)|``.
"""
from __future__ import annotations

import math


def _dot(a, b) -> float:
    return float((a * b).sum().item())


def cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2,
    clamped to ``bounds`` (default: the interval between x1 and x2); the interval's
    midpoint when the cubic has no real minimizer."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        t = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        t = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(t, lo), hi)


def strong_wolfe(phi, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """``phi(x, t, d) -> (loss, flat gradient)`` evaluates at ``x + t d`` (and restores
    ``x``). Starts from the trial step ``t`` with loss ``f``, gradient ``g`` and slope
    ``gtd`` at ``t = 0``. Returns (loss, gradient, step, evaluations) of the chosen step."""
    d_norm = float(d.abs().max().item())
    f_new, g_new = phi(x, t, d)
    evals = 1
    gtd_new = _dot(g_new, d)

    # Phase 1: grow the step until an interval [lo, hi] must hold an acceptable one.
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    ls_iter = 0
    done = False
    bracket = None  # [steps], [losses], [gradients], [slopes]
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:  # both conditions hold at t
            bracket, done = [[t], [f_new], [g_new], [gtd_new]], True
            break
        if gtd_new >= 0:  # the slope turned: a minimum lies behind t
            bracket = [[t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]]
            break
        # Extrapolate, at least 1% further than the last move and at most ten times t.
        t_next = cubic_minimizer(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                 bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = phi(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations while growing
        bracket = [[0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]]
    steps, losses, grads, slopes = bracket

    # Phase 2 (zoom): shrink the interval; `low` indexes its better end.
    def ends():
        return (0, 1) if losses[0] <= losses[-1] else (1, 0)

    low, high = ends()
    stalled = False
    while not done and ls_iter < max_ls:
        if abs(steps[1] - steps[0]) * d_norm < tolerance_change:
            break
        t = cubic_minimizer(steps[0], losses[0], slopes[0], steps[1], losses[1], slopes[1])
        # Keep the trial away from the ends: a point within 10% of one counts as no progress.
        top, bottom = max(steps), min(steps)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if stalled or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = phi(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= losses[low]:
            steps[high], losses[high], grads[high], slopes[high] = t, f_new, g_new, gtd_new
            low, high = ends()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (steps[high] - steps[low]) >= 0:
                steps[high], losses[high], grads[high], slopes[high] = \
                    steps[low], losses[low], grads[low], slopes[low]
            steps[low], losses[low], grads[low], slopes[low] = t, f_new, g_new, gtd_new
    return losses[low], grads[low], steps[low], evals
