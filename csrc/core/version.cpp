// The counters live in a table keyed by the storage (CPU) or TensorImpl (GPU)
// they count, next to a weak reference to it: a buffer that was never written
// in place has no entry (version 0), and an entry whose buffer has been freed
// reads as absent, so an address reused by a new buffer starts again at 0.
// Expired entries are dropped whenever the table has doubled since the last
// sweep, so it stays proportional to the live buffers that were written.
#include "core/version.h"

#include <memory>
#include <mutex>
#include <unordered_map>

namespace lucid {

namespace {

struct Entry {
  std::weak_ptr<void> owner;
  int64_t version = 0;
};

struct Table {
  std::mutex mu;
  std::unordered_map<const void*, Entry> entries;
  size_t sweep_at = 1024;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: tensors may outlive static destruction
  return *t;
}

std::shared_ptr<void> counted_object(const Tensor& t) {
  if (t.impl().storage) return t.impl().storage;
  return t.impl_ptr();
}

}  // namespace

int64_t tensor_version(const Tensor& t) {
  std::shared_ptr<void> key = counted_object(t);
  Table& tab = table();
  std::lock_guard<std::mutex> lock(tab.mu);
  auto it = tab.entries.find(key.get());
  if (it == tab.entries.end()) return 0;
  if (it->second.owner.expired()) {
    tab.entries.erase(it);
    return 0;
  }
  return it->second.version;
}

void set_tensor_version(const Tensor& t, int64_t version) {
  std::shared_ptr<void> key = counted_object(t);
  Table& tab = table();
  std::lock_guard<std::mutex> lock(tab.mu);
  Entry& e = tab.entries[key.get()];
  if (e.owner.expired()) e.owner = key;  // new entry, or a freed buffer's address reused
  e.version = version;
  if (tab.entries.size() >= tab.sweep_at) {
    for (auto i = tab.entries.begin(); i != tab.entries.end();) {
      i = i->second.owner.expired() ? tab.entries.erase(i) : std::next(i);
    }
    tab.sweep_at = 2 * tab.entries.size() + 1024;
  }
}

}  // namespace lucid
