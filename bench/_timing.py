"""Timing shared by the bench scripts (run as `python bench/<name>.py`, so this
folder is on sys.path)."""
import time


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
