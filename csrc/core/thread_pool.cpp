#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"

namespace lucid {
namespace {

// Set while a thread runs a chunk: a nested parallel_for then runs inline
// instead of waiting for a pool that is busy with its caller.
thread_local bool t_inside_job = false;

// Workers sleep on a condition variable; each parallel_for publishes one job
// and every thread (caller included) pulls chunks from an atomic counter.
class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool();  // leaked on purpose: no join at interpreter exit
    return *pool;
  }

  int threads() const { return num_threads_; }

  // A failed resize (the OS refuses a thread) joins whatever it started and
  // restores the previous pool, so get_num_threads() and parallel_for keep
  // working as before; the caller sees RuntimeError.
  void resize(int n) {
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    const int previous = num_threads_;
    stop_workers();
    num_threads_ = n;
    try {
      start_workers();
      return;
    } catch (const std::exception& e) {
      stop_workers();
      num_threads_ = previous;
      std::string why = e.what();
      try {
        start_workers();
      } catch (const std::exception&) {  // not even the old count: run inline, which always works
        stop_workers();
        num_threads_ = 1;
      }
      throw RuntimeError("set_num_threads(): could not start " + std::to_string(n) + " threads (" + why +
                         "); the pool keeps " + std::to_string(num_threads_) + " threads");
    }
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    int64_t max_chunks = (n + grain - 1) / grain;
    if (num_threads_ <= 1 || max_chunks <= 1 || t_inside_job) {
      fn(0, n);
      return;
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);  // one job at a time
    int64_t chunks = std::min<int64_t>(max_chunks, num_threads_ * 4);
    int64_t chunk = (n + chunks - 1) / chunks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      job_n_ = n;
      job_chunk_ = chunk;
      next_.store(0);
      pending_ = static_cast<int>(workers_.size());
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  Pool() {
    unsigned hw = std::thread::hardware_concurrency();
    num_threads_ = hw == 0 ? 1 : static_cast<int>(hw);
    start_workers();
  }

  void work() {
    for (;;) {
      int64_t begin = next_.fetch_add(job_chunk_);
      if (begin >= job_n_) return;
      int64_t end = std::min(job_n_, begin + job_chunk_);
      t_inside_job = true;
      try {
        (*job_)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      t_inside_job = false;
    }
  }

  // `seen` is the generation current when the worker was created (no job can
  // run then: start_workers is called from the constructor or under
  // run_mutex_). Reading it from the new thread instead would race with the
  // first job: a worker scheduled late would skip that job while it is still
  // counted in pending_, and the caller would wait forever.
  void worker_loop(uint64_t seen) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  void start_workers() {
    stop_ = false;
    uint64_t current = generation_;
    for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, current] { worker_loop(current); });
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_, mutex_;
  std::condition_variable cv_, done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  int pending_ = 0;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 1;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
};

}  // namespace

int max_num_threads() {
  unsigned hw = std::thread::hardware_concurrency();
  return std::min(kMaxThreads, 4 * static_cast<int>(hw == 0 ? 1 : hw));
}

void set_num_threads(int64_t n) {
  check(n >= 1, "set_num_threads(): argument 'n' must be >= 1, got " + std::to_string(n));
  check(n <= max_num_threads(), "set_num_threads(): argument 'n' must be at most " +
                                    std::to_string(max_num_threads()) + " (4 x the " +
                                    std::to_string(std::thread::hardware_concurrency()) +
                                    " hardware threads, capped at " + std::to_string(kMaxThreads) + "), got " +
                                    std::to_string(n));
  if (n != Pool::get().threads()) Pool::get().resize(static_cast<int>(n));
}

int get_num_threads() { return Pool::get().threads(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  Pool::get().run(n, std::max<int64_t>(grain, 1), fn);
}

}  // namespace lucid
