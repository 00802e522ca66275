// MPI_Alloc_mem / MPI_Free_mem with the alignment hint, MPI_Info_get_string and
// MPI_Info_create_env.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

TEST(AllocMem, AlignedAndUsableForMessages) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        MPI_Info info = MPI_INFO_NULL;
                        MPI_Info_create(&info);
                        MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
                        int* buffer = nullptr;
                        ASSERT_EQ(MPI_Alloc_mem(100 * sizeof(int), info, &buffer), MPI_SUCCESS);
                        ASSERT_NE(buffer, nullptr);
                        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 4096, 0u);
                        MPI_Info_free(&info);
                        int* plain = nullptr;
                        ASSERT_EQ(MPI_Alloc_mem(8, MPI_INFO_NULL, &plain), MPI_SUCCESS);
                        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(plain) % 64, 0u);
                        for (int i = 0; i < 100; ++i) buffer[i] = rank * 1000 + i;
                        const int peer = 1 - rank;
                        int received[100];
                        MPI_Sendrecv(buffer, 100, MPI_INT, peer, 0, received, 100, MPI_INT, peer, 0,
                                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        EXPECT_EQ(received[99], peer * 1000 + 99);
                        void* empty = nullptr;
                        EXPECT_EQ(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty), MPI_SUCCESS);
                        EXPECT_EQ(MPI_Free_mem(empty), MPI_SUCCESS);
                        EXPECT_EQ(MPI_Free_mem(buffer), MPI_SUCCESS);
                        EXPECT_EQ(MPI_Free_mem(plain), MPI_SUCCESS);
                        errors_return();
                        EXPECT_EQ(MPI_Alloc_mem(-1, MPI_INFO_NULL, &plain), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Alloc_mem(8, MPI_INFO_NULL, nullptr), MPI_ERR_ARG);
                      }),
            0);
}

TEST(InfoString, SizesIncludeTheNullAndCutToFit) {
  MPI_Info info = MPI_INFO_NULL;
  ASSERT_EQ(MPI_Info_create(&info), MPI_SUCCESS);
  MPI_Info_set(info, "key", "abcdef");
  int flag = -1;
  int buflen = 0;
  ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, nullptr, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(buflen, 7);
  char value[16];
  buflen = 4;
  ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, value, &flag), MPI_SUCCESS);
  EXPECT_STREQ(value, "abc");
  EXPECT_EQ(buflen, 7);
  buflen = sizeof value;
  ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, value, &flag), MPI_SUCCESS);
  EXPECT_STREQ(value, "abcdef");
  buflen = sizeof value;
  ASSERT_EQ(MPI_Info_get_string(info, "other", &buflen, value, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(buflen, static_cast<int>(sizeof value));  // untouched when absent
  MPI_Info_free(&info);
}

TEST(InfoString, CreateEnvCopiesTheEnvironment) {
  MPI_Info info = MPI_INFO_NULL;
  ASSERT_EQ(MPI_Info_create_env(0, nullptr, &info), MPI_SUCCESS);
  ASSERT_NE(info, MPI_INFO_ENV);
  char value[MPI_MAX_INFO_VAL + 1];
  int buflen = sizeof value;
  int flag = 0;
  ASSERT_EQ(MPI_Info_get_string(info, "host", &buflen, value, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_GT(std::strlen(value), 0u);
  // A copy the program owns: it may change it.
  EXPECT_EQ(MPI_Info_set(info, "host", "elsewhere"), MPI_SUCCESS);
  MPI_Info_free(&info);
}

}  // namespace
