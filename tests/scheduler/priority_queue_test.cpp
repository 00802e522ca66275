#include <gtest/gtest.h>

#include <vector>

#include "fiber.h"
#include "priority_queue.h"

namespace weft::detail {
namespace {

std::vector<Fiber*> drain(PriorityQueue& queue, int level) {
  std::vector<Fiber*> order;
  while (Fiber* fiber = queue.pop_front(level)) order.push_back(fiber);
  return order;
}

TEST(PriorityQueue, WokenThreadsGoAheadOfYieldedOnesInTheOrderTheyWoke) {
  PriorityQueue queue;
  Fiber yielded_a, yielded_b, woken_first, woken_second, woken_third;
  queue.push_back(&yielded_a);
  queue.push_back(&yielded_b);
  // Three timers expiring in one look wake their threads in deadline order.
  queue.push_front(&woken_first);
  queue.push_front(&woken_second);
  queue.push_front(&woken_third);
  EXPECT_EQ(drain(queue, 0), (std::vector<Fiber*>{&woken_first, &woken_second, &woken_third,
                                                  &yielded_a, &yielded_b}));
  EXPECT_TRUE(queue.empty());
}

TEST(PriorityQueue, PushFirstGoesAheadOfWokenThreads) {
  PriorityQueue queue;
  Fiber yielded, woken, handed_over;
  queue.push_back(&yielded);
  queue.push_front(&woken);
  queue.push_first(&handed_over);
  EXPECT_EQ(drain(queue, 0), (std::vector<Fiber*>{&handed_over, &woken, &yielded}));
}

TEST(PriorityQueue, WokenThreadIntoAnEmptyLevelIsItsHeadAndTail) {
  PriorityQueue queue;
  Fiber woken, yielded;
  queue.push_front(&woken);
  queue.push_back(&yielded);
  EXPECT_EQ(drain(queue, 0), (std::vector<Fiber*>{&woken, &yielded}));
}

}  // namespace
}  // namespace weft::detail
