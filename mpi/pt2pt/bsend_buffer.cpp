#include "pt2pt/bsend_buffer.h"

#include <iterator>
#include <mutex>
#include <utility>

#include "mpi.h"

namespace weft::mpi {

bool BsendBuffer::attached() const {
  std::lock_guard lock(lock_);
  return base_ != nullptr;
}

bool BsendBuffer::attach(void* buffer, std::size_t size) {
  std::lock_guard lock(lock_);
  if (base_ != nullptr) return false;
  base_ = static_cast<char*>(buffer);
  size_ = size;
  free_.clear();
  if (size > 0) free_.emplace(0, size);
  return true;
}

void BsendBuffer::drain() {
  Parker parker;
  {
    std::lock_guard lock(lock_);
    if (used_.empty()) return;
    drainer_ = &parker;
  }
  parker.drain(1);
}

std::pair<void*, std::size_t> BsendBuffer::detach() {
  drain();
  std::lock_guard lock(lock_);
  std::pair<void*, std::size_t> detached{base_, size_};
  base_ = nullptr;
  size_ = 0;
  free_.clear();
  return detached;
}

void* BsendBuffer::reserve(std::size_t bytes) {
  const std::size_t need = bytes + MPI_BSEND_OVERHEAD;
  std::lock_guard lock(lock_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const std::size_t offset = it->first;
    const std::size_t rest = it->second - need;
    free_.erase(it);
    if (rest > 0) free_.emplace(offset + need, rest);
    used_.emplace(offset, need);
    return base_ + offset;
  }
  return nullptr;
}

void BsendBuffer::release(void* block) {
  std::lock_guard lock(lock_);
  const auto used = used_.find(static_cast<std::size_t>(static_cast<char*>(block) - base_));
  std::size_t offset = used->first;
  std::size_t length = used->second;
  used_.erase(used);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + length) {
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      offset = previous->first;
      length += previous->second;
      free_.erase(previous);
    }
  }
  free_.emplace(offset, length);
  if (used_.empty() && drainer_ != nullptr) {
    std::exchange(drainer_, nullptr)->notify();
  }
}

}  // namespace weft::mpi
