// A doubly linked list threaded through its elements' own `next` / `prev` members: queueing a
// message or a receive allocates nothing, and a cancelled one leaves from the middle in O(1).
#pragma once

namespace weft::mpi {

template <class T>
class IntrusiveList {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  T* front() const noexcept { return head_; }

  void push_back(T* item) noexcept {
    item->next = nullptr;
    item->prev = tail_;
    if (tail_ != nullptr) {
      tail_->next = item;
    } else {
      head_ = item;
    }
    tail_ = item;
  }

  void remove(T* item) noexcept {
    if (item->prev != nullptr) {
      item->prev->next = item->next;
    } else {
      head_ = item->next;
    }
    if (item->next != nullptr) {
      item->next->prev = item->prev;
    } else {
      tail_ = item->prev;
    }
    item->next = item->prev = nullptr;
  }

  // The first element satisfying `pred`, in insertion order, or nullptr.
  template <class Pred>
  T* find(Pred&& pred) const {
    for (T* item = head_; item != nullptr; item = item->next) {
      if (pred(*item)) return item;
    }
    return nullptr;
  }

  // True when `item` is in this list (linear; for assertions of ownership on rare paths).
  bool contains(const T* item) const noexcept {
    for (const T* i = head_; i != nullptr; i = i->next) {
      if (i == item) return true;
    }
    return false;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
};

}  // namespace weft::mpi
