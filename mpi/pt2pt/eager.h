// Eager messages: a send of at most mpi.eager_limit bytes that finds no posted receive packs its
// data into one of these, queues it in the receiver's engine and completes at once. The receiver
// copies it out and gives it back. Buffers come from size classes kept by the receiving engine,
// so the steady state allocates nothing.
#pragma once

#include <array>
#include <cstddef>

#include "pt2pt/message.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

class EagerPool {
 public:
  EagerPool() = default;
  EagerPool(const EagerPool&) = delete;
  EagerPool& operator=(const EagerPool&) = delete;
  ~EagerPool();

  // A message with `envelope` holding the packed data of `count` elements of `type` at `buffer`
  // (envelope.bytes of them).
  weft_mpi_message* make(const Envelope& envelope, const void* buffer, std::size_t count,
                         const Datatype& type);
  static bool is_eager(const weft_mpi_message& message) { return message.ops == &kOps; }

 private:
  struct Block;
  static void release(weft_mpi_message& message);
  static std::size_t deliver(weft_mpi_message& message, void* buffer, std::size_t count,
                             const Datatype& type);
  static const PayloadOps kOps;

  // Classes of 64 B, 256 B, ... 64 KiB of data; larger messages get a block of their own.
  static constexpr int kClasses = 6;
  static constexpr int kMaxFreePerClass = 64;
  static int class_of(std::size_t bytes);

  detail::SpinLock lock_;  // guards the free lists: the receiver releases, senders make
  std::array<Block*, kClasses> free_{};
  std::array<int, kClasses> free_count_{};
};

}  // namespace weft::mpi
