// LLVM's layer finds the caller's state by the gtid the compiler passes (omp_bridge/thread_state.h):
// the table holds every live state under its gtid, and a gtid it does not hold (a state gone, or a
// number no state has) finds nothing, so that the caller looks its state up through the scheduler.
#include <gtest/gtest.h>

#include "omp_bridge/thread_state.h"

namespace weft::omp {
namespace {

TEST(OmpStateByGtid, FindsEveryLiveStateByItsGtid) {
  ThreadState first;
  ThreadState second;
  EXPECT_NE(first.gtid, second.gtid);
  EXPECT_EQ(state_by_gtid(first.gtid), &first);
  EXPECT_EQ(state_by_gtid(second.gtid), &second);
  EXPECT_EQ(&self(second.gtid), &second);
}

TEST(OmpStateByGtid, ForgetsAStateThatIsGone) {
  int gtid = -1;
  {
    ThreadState state;
    gtid = state.gtid;
    ASSERT_EQ(state_by_gtid(gtid), &state);
  }
  EXPECT_EQ(state_by_gtid(gtid), nullptr);
}

TEST(OmpStateByGtid, NumbersOutsideTheTableFindNothing) {
  EXPECT_EQ(state_by_gtid(-1), nullptr);
  EXPECT_EQ(state_by_gtid(kGtidSlots), nullptr);
}

}  // namespace
}  // namespace weft::omp
