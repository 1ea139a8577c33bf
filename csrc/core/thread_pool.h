// The CPU stream's shared thread pool. Kernels call parallel_for over an
// index range; small ranges (below `grain`) run inline on the caller.
#pragma once
#include <cstdint>
#include <functional>

namespace lucid {

// ValueError unless 1 <= n <= max_num_threads(); RuntimeError (pool and
// count unchanged) when the OS cannot start that many threads.
void set_num_threads(int64_t n);
int max_num_threads();  // 4 x hardware threads, at most kMaxThreads
constexpr int kMaxThreads = 256;
int get_num_threads();

// Calls fn(begin, end) over disjoint chunks covering [0, n). Chunks are at
// least `grain` long; the call returns when every chunk has run. Exceptions
// thrown by fn are rethrown on the caller (the first one wins).
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// A grain that keeps per-chunk work worthwhile for memory-bound loops.
constexpr int64_t kElementwiseGrain = 1 << 16;

}  // namespace lucid
