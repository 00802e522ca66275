// MPI_Bsend's attached buffer: each message takes its size plus MPI_BSEND_OVERHEAD until it is
// received, and detaching waits for the messages in it.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "mpi_test_util.h"
#include "weft/this_thread.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;
using weft::testing::Shared;

void await(const std::atomic<int>& value, int at_least) {
  while (value.load() < at_least) weft::this_thread::yield();
}

TEST(Bsend, MessagesTakeTheirSizePlusTheOverheadUntilReceived) {
  WEFT_ONE_PROCESS_ONLY(
      "a message holds its room in the attached buffer until it is received only between ranks "
      "of one process; one to another process frees it once UCX has sent it (MPI-3.1 3.6.1 "
      "asks for no more), so the third MPI_Bsend below may find room");
  constexpr int kInts = 100;
  Shared<std::atomic<int>> step(0);
  EXPECT_EQ(
      run_ranks(2, 2,
                [&](int rank) {
                  errors_return();
                  std::vector<int> data(kInts, 1);
                  if (rank == 0) {
                    int size = 0;
                    MPI_Pack_size(kInts, MPI_INT, MPI_COMM_WORLD, &size);
                    std::vector<char> buffer(2 * (size + MPI_BSEND_OVERHEAD));
                    MPI_Buffer_attach(buffer.data(), static_cast<int>(buffer.size()));
                    for (int i = 0; i < 2; ++i) {
                      EXPECT_EQ(MPI_Bsend(data.data(), kInts, MPI_INT, 1, i, MPI_COMM_WORLD),
                                MPI_SUCCESS);
                    }
                    EXPECT_EQ(MPI_Bsend(data.data(), kInts, MPI_INT, 1, 2, MPI_COMM_WORLD),
                              MPI_ERR_BUFFER);
                    *step = 1;  // receive one
                    await(*step, 2);
                    MPI_Request request;
                    EXPECT_EQ(
                        MPI_Ibsend(data.data(), kInts, MPI_INT, 1, 2, MPI_COMM_WORLD, &request),
                        MPI_SUCCESS);
                    int flag = 0;
                    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
                    EXPECT_TRUE(flag);  // buffered: complete at once
                    void* detached = nullptr;
                    MPI_Buffer_detach(&detached, &size);  // waits for the receives
                    EXPECT_EQ(step->load(), 3);
                    EXPECT_EQ(size, static_cast<int>(buffer.size()));
                    return;
                  }
                  await(*step, 1);
                  MPI_Recv(data.data(), kInts, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  *step = 2;
                  MPI_Recv(data.data(), kInts, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  *step = 3;
                  MPI_Recv(data.data(), kInts, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }),
      0);
}

}  // namespace
