#include "pt2pt/eager.h"

#include <mutex>
#include <new>

namespace weft::mpi {

struct EagerPool::Block : weft_mpi_message {
  EagerPool* pool;
  int size_class;  // -1: a block of its own, freed on release
  Block* next_free = nullptr;

  unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
};

const PayloadOps EagerPool::kOps = {&EagerPool::deliver, &EagerPool::release, nullptr};

namespace {

constexpr std::size_t class_bytes(int size_class) {
  return std::size_t{64} << (2 * size_class);
}

}  // namespace

int EagerPool::class_of(std::size_t bytes) {
  for (int c = 0; c < kClasses; ++c) {
    if (bytes <= class_bytes(c)) return c;
  }
  return -1;
}

EagerPool::~EagerPool() {
  for (Block* head : free_) {
    while (head != nullptr) {
      Block* next = head->next_free;
      head->~Block();
      ::operator delete(head);
      head = next;
    }
  }
}

weft_mpi_message* EagerPool::make(const Envelope& envelope, const void* buffer, std::size_t count,
                                  const Datatype& type) {
  const int size_class = class_of(envelope.bytes);
  Block* block = nullptr;
  if (size_class >= 0) {
    std::lock_guard lock(lock_);
    block = free_[size_class];
    if (block != nullptr) {
      free_[size_class] = block->next_free;
      --free_count_[size_class];
    }
  }
  if (block == nullptr) {
    const std::size_t capacity = size_class >= 0 ? class_bytes(size_class) : envelope.bytes;
    block = new (::operator new(sizeof(Block) + capacity)) Block;
    block->pool = this;
    block->size_class = size_class;
    block->ops = &kOps;
  }
  block->envelope = envelope;
  block->sender_key = 0;
  if (envelope.bytes > 0) pack(buffer, count, type, block->data());
  return block;
}

std::size_t EagerPool::deliver(weft_mpi_message& message, void* buffer, std::size_t count,
                               const Datatype& type) {
  Block& block = static_cast<Block&>(message);
  if (block.envelope.bytes == 0) return 0;
  return copy(block.data(), block.envelope.bytes, weft_mpi_byte, buffer, count, type);
}

void EagerPool::release(weft_mpi_message& message) {
  Block* block = static_cast<Block*>(&message);
  const int size_class = block->size_class;
  if (size_class >= 0) {
    EagerPool& pool = *block->pool;
    std::lock_guard lock(pool.lock_);
    if (pool.free_count_[size_class] < kMaxFreePerClass) {
      block->next_free = pool.free_[size_class];
      pool.free_[size_class] = block;
      ++pool.free_count_[size_class];
      return;
    }
  }
  block->~Block();
  ::operator delete(block);
}

}  // namespace weft::mpi
