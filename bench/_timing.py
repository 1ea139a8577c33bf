"""Timing shared by the bench scripts (run as `python bench/<name>.py`, so this
folder is on sys.path)."""
import os
import sys
import time

# A site-packages folder holding a torch built for this Python (for example a
# separate virtual environment's), used when `import torch` fails here; `--torch-site`
# on the scripts that take it overrides it.
TORCH_SITE_ENV = "LUCID_TORCH_SITE"


def import_torch(site=None):
    """torch if this Python has it, else from ``site`` (or $LUCID_TORCH_SITE), appended to
    sys.path after lucid's numpy so both share one numpy; None when neither works."""
    try:
        import torch
        return torch
    except ImportError:
        pass
    site = site or os.environ.get(TORCH_SITE_ENV)
    if site and os.path.isdir(os.path.join(site, "torch")):
        sys.path.append(site)
        try:
            import torch
            return torch
        except ImportError as e:  # a torch built for another Python / numpy
            print(f"torch in {site} does not import here: {e}")
    return None


def best_time(fn, repeat: int) -> float:
    """Seconds per call of ``fn``: the best of 3 rounds of ``repeat`` calls, after one warm-up
    call (allocations, MLX's first compile). The best round is the one least disturbed by a
    shared machine."""
    fn()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best
