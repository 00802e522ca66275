// Windows (MPI-4.1 12.2): every flavor with its attributes, shared memory contiguous across ranks
// (and processes), dynamic attach, names, info, error handlers; and the errors one-sided calls
// raise: out-of-window access, a wrong epoch, a freed window.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

template <class T>
T attribute(MPI_Win win, int keyval) {
  T* value = nullptr;
  int flag = 0;
  EXPECT_EQ(MPI_Win_get_attr(win, keyval, &value, &flag), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  return value != nullptr ? *value : T{};
}

TEST(RmaWindow, CreateReportsItsAttributes) {
  EXPECT_EQ(run_ranks(4, 2,
                      [](int rank) {
                        std::vector<int> memory(static_cast<std::size_t>(rank + 1));
                        MPI_Win win = MPI_WIN_NULL;
                        ASSERT_EQ(MPI_Win_create(memory.data(), (rank + 1) * 4, 4, MPI_INFO_NULL,
                                                 MPI_COMM_WORLD, &win),
                                  MPI_SUCCESS);
                        void* base = nullptr;
                        int flag = 0;
                        EXPECT_EQ(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag), MPI_SUCCESS);
                        EXPECT_EQ(base, memory.data());
                        EXPECT_EQ(attribute<MPI_Aint>(win, MPI_WIN_SIZE), (rank + 1) * 4);
                        EXPECT_EQ(attribute<int>(win, MPI_WIN_DISP_UNIT), 4);
                        EXPECT_EQ(attribute<int>(win, MPI_WIN_CREATE_FLAVOR),
                                  MPI_WIN_FLAVOR_CREATE);
                        EXPECT_EQ(attribute<int>(win, MPI_WIN_MODEL), MPI_WIN_UNIFIED);

                        MPI_Group group = MPI_GROUP_NULL;
                        EXPECT_EQ(MPI_Win_get_group(win, &group), MPI_SUCCESS);
                        int result = MPI_UNEQUAL;
                        MPI_Group world = MPI_GROUP_NULL;
                        MPI_Comm_group(MPI_COMM_WORLD, &world);
                        MPI_Group_compare(group, world, &result);
                        EXPECT_EQ(result, MPI_IDENT);
                        MPI_Group_free(&group);
                        MPI_Group_free(&world);

                        char name[MPI_MAX_OBJECT_NAME] = {};
                        int length = -1;
                        EXPECT_EQ(MPI_Win_get_name(win, name, &length), MPI_SUCCESS);
                        EXPECT_EQ(length, 0);
                        EXPECT_EQ(MPI_Win_set_name(win, "halo"), MPI_SUCCESS);
                        EXPECT_EQ(MPI_Win_get_name(win, name, &length), MPI_SUCCESS);
                        EXPECT_STREQ(name, "halo");
                        EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
                        EXPECT_EQ(win, MPI_WIN_NULL);
                      }),
            0);
}

TEST(RmaWindow, AllocateSharedIsContiguousAndQueryable) {
  EXPECT_EQ(
      run_ranks(4, 2,
                [](int rank) {
                  MPI_Comm node = MPI_COMM_NULL;
                  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                      &node);
                  int size = 0;
                  MPI_Comm_size(node, &size);
                  int node_rank = 0;
                  MPI_Comm_rank(node, &node_rank);
                  int* mine = nullptr;
                  MPI_Win win = MPI_WIN_NULL;
                  ASSERT_EQ(MPI_Win_allocate_shared(8 * (node_rank + 1), 8, MPI_INFO_NULL, node,
                                                    &mine, &win),
                            MPI_SUCCESS);
                  EXPECT_EQ(attribute<int>(win, MPI_WIN_CREATE_FLAVOR), MPI_WIN_FLAVOR_SHARED);
                  mine[0] = 100 + rank;
                  MPI_Barrier(node);
                  std::byte* expected = nullptr;
                  for (int r = 0; r < size; ++r) {
                    MPI_Aint bytes = 0;
                    int disp_unit = 0;
                    int* base = nullptr;
                    ASSERT_EQ(MPI_Win_shared_query(win, r, &bytes, &disp_unit, &base), MPI_SUCCESS);
                    EXPECT_EQ(bytes, 8 * (r + 1));
                    EXPECT_EQ(disp_unit, 8);
                    if (expected != nullptr) {
                      EXPECT_EQ(reinterpret_cast<std::byte*>(base), expected);
                    }
                    expected = reinterpret_cast<std::byte*>(base) + bytes;
                    int world_rank = -1;
                    MPI_Group node_group, world_group;
                    MPI_Comm_group(node, &node_group);
                    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
                    MPI_Group_translate_ranks(node_group, 1, &r, world_group, &world_rank);
                    MPI_Group_free(&node_group);
                    MPI_Group_free(&world_group);
                    EXPECT_EQ(base[0], 100 + world_rank);
                  }
                  MPI_Barrier(node);
                  EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
                  MPI_Comm_free(&node);
                }),
      0);
}

TEST(RmaWindow, AllocateAndDynamicWindows) {
  EXPECT_EQ(
      run_ranks(
          3, 2,
          [](int rank) {
            long* base = nullptr;
            MPI_Win win = MPI_WIN_NULL;
            ASSERT_EQ(MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                      MPI_SUCCESS);
            ASSERT_NE(base, nullptr);
            EXPECT_EQ(attribute<int>(win, MPI_WIN_CREATE_FLAVOR), MPI_WIN_FLAVOR_ALLOCATE);
            base[7] = rank;  // the whole allocation is usable
            EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);

            ASSERT_EQ(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
            EXPECT_EQ(attribute<int>(win, MPI_WIN_CREATE_FLAVOR), MPI_WIN_FLAVOR_DYNAMIC);
            std::vector<long> region(8, rank);
            EXPECT_EQ(MPI_Win_attach(win, region.data(), 64), MPI_SUCCESS);
            MPI_Aint address = 0;
            MPI_Get_address(region.data(), &address);
            std::vector<MPI_Aint> addresses(3);
            MPI_Allgather(&address, 1, MPI_AINT, addresses.data(), 1, MPI_AINT, MPI_COMM_WORLD);
            const int right = (rank + 1) % 3;
            long value = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
            EXPECT_EQ(MPI_Get(&value, 1, MPI_LONG, right, addresses[right] + 8, 1, MPI_LONG, win),
                      MPI_SUCCESS);
            MPI_Win_unlock(right, win);
            EXPECT_EQ(value, right);
            MPI_Barrier(MPI_COMM_WORLD);
            EXPECT_EQ(MPI_Win_detach(win, region.data()), MPI_SUCCESS);
            EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
          }),
      0);
}

TEST(RmaWindow, InfoReportsTheHintsInEffect) {
  EXPECT_EQ(
      run_ranks(2, 2,
                [](int) {
                  MPI_Info info = MPI_INFO_NULL;
                  MPI_Info_create(&info);
                  MPI_Info_set(info, "no_locks", "true");
                  MPI_Info_set(info, "accumulate_ordering", "none");
                  int memory[4];
                  MPI_Win win = MPI_WIN_NULL;
                  ASSERT_EQ(MPI_Win_create(memory, sizeof memory, 4, info, MPI_COMM_WORLD, &win),
                            MPI_SUCCESS);
                  MPI_Info_free(&info);
                  MPI_Info used = MPI_INFO_NULL;
                  ASSERT_EQ(MPI_Win_get_info(win, &used), MPI_SUCCESS);
                  char value[MPI_MAX_INFO_VAL] = {};
                  int flag = 0;
                  MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL - 1, value, &flag);
                  EXPECT_TRUE(flag);
                  EXPECT_STREQ(value, "true");
                  MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, value, &flag);
                  EXPECT_STREQ(value, "none");
                  MPI_Info_get(used, "same_size", MPI_MAX_INFO_VAL - 1, value, &flag);
                  EXPECT_STREQ(value, "false");
                  MPI_Info_free(&used);
                  EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
                }),
      0);
}

// Calls of the user handler below, by rank (the ranks of a job in this process share it).
std::atomic<int> handler_calls[2];
void count_call(MPI_Win*, int* code, ...) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (*code == MPI_ERR_RMA_RANGE) ++handler_calls[rank];
}

// The three errors the issue names, returned as their classes once the window's handler says so.
TEST(RmaWindow, ErrorsOutOfWindowWrongEpochFreedWindow) {
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [](int rank) {
            int memory[4] = {};
            MPI_Win win = MPI_WIN_NULL;
            ASSERT_EQ(MPI_Win_create(memory, sizeof memory, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                      MPI_SUCCESS);
            EXPECT_EQ(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);
            MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
            EXPECT_EQ(MPI_Win_get_errhandler(win, &handler), MPI_SUCCESS);
            EXPECT_EQ(handler, MPI_ERRORS_RETURN);
            const int other = 1 - rank;
            int value = 1;
            // No epoch yet.
            EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, other, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
            EXPECT_EQ(MPI_Win_unlock(other, win), MPI_ERR_RMA_SYNC);
            EXPECT_EQ(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
            EXPECT_EQ(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
            EXPECT_EQ(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
            int scratch = 0;
            MPI_Request request = MPI_REQUEST_NULL;
            MPI_Win_fence(0, win);
            // Request-based calls need a passive-target epoch, even inside a fence epoch.
            EXPECT_EQ(MPI_Rget(&scratch, 1, MPI_INT, other, 0, 1, MPI_INT, win, &request),
                      MPI_ERR_RMA_SYNC);
            // Out of the target's 16 bytes.
            EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, other, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
            EXPECT_EQ(MPI_Get(&scratch, 2, MPI_INT, other, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
            EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, other, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
            EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, 5, 0, 1, MPI_INT, win), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Accumulate(&value, 1, MPI_INT, other, 0, 1, MPI_INT, MPI_OP_NULL, win),
                      MPI_ERR_OP);
            EXPECT_EQ(MPI_Win_lock(7, other, 0, win), MPI_ERR_LOCKTYPE);
            // A user handler hears of the error with its class.
            MPI_Errhandler counting = MPI_ERRHANDLER_NULL;
            EXPECT_EQ(MPI_Win_create_errhandler(count_call, &counting), MPI_SUCCESS);
            EXPECT_EQ(MPI_Win_set_errhandler(win, counting), MPI_SUCCESS);
            const int before = handler_calls[rank];
            EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, other, 9, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
            EXPECT_EQ(handler_calls[rank], before + 1);
            MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
            MPI_Errhandler_free(&counting);
            MPI_Win_fence(0, win);

            MPI_Win freed = win;
            EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
            weft::testing::errors_return();
            EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, other, 0, 1, MPI_INT, freed), MPI_ERR_WIN);
            EXPECT_EQ(MPI_Win_fence(0, freed), MPI_ERR_WIN);
            EXPECT_EQ(MPI_Win_free(&freed), MPI_ERR_WIN);
            EXPECT_EQ(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
          }),
      0);
}

TEST(RmaWindowDeath, AnErrorIsFatalByDefaultAndNamesTheCall) {
  EXPECT_EXIT(weft::testing::exit_with(run_ranks(
                  2, 2,
                  [](int rank) {
                    int memory[2] = {};
                    MPI_Win win = MPI_WIN_NULL;
                    MPI_Win_create(memory, sizeof memory, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
                    MPI_Win_fence(0, win);
                    if (rank == 0) {
                      MPI_Put(memory, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
                    }
                    MPI_Win_fence(0, win);
                    MPI_Win_free(&win);
                  })),
              ::testing::ExitedWithCode(1), "MPI_Put \\(rank 0\\): MPI_ERR_RMA_RANGE");
}

}  // namespace
