// Info objects: keys in the order first set, values replaced in place, truncating gets, dup,
// the read-only MPI_INFO_ENV, and the error classes (which need a rank to return them).
#include <gtest/gtest.h>

#include <string>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

std::string nth_key(MPI_Info info, int n) {
  char key[MPI_MAX_INFO_KEY] = {};
  EXPECT_EQ(MPI_Info_get_nthkey(info, n, key), MPI_SUCCESS);
  return key;
}

std::string value_of(MPI_Info info, const char* key, int valuelen = MPI_MAX_INFO_VAL) {
  std::string value(static_cast<std::size_t>(valuelen) + 1, 'x');
  int flag = 0;
  EXPECT_EQ(MPI_Info_get(info, key, valuelen, value.data(), &flag), MPI_SUCCESS);
  if (!flag) return "<absent>";
  return value.c_str();
}

TEST(Info, SetGetReplaceDelete) {
  MPI_Info info = MPI_INFO_NULL;
  ASSERT_EQ(MPI_Info_create(&info), MPI_SUCCESS);
  int nkeys = -1;
  MPI_Info_get_nkeys(info, &nkeys);
  EXPECT_EQ(nkeys, 0);

  EXPECT_EQ(MPI_Info_set(info, "b", "two"), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_set(info, "a", "one"), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_set(info, "c", ""), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_set(info, "b", "deux"), MPI_SUCCESS);
  MPI_Info_get_nkeys(info, &nkeys);
  EXPECT_EQ(nkeys, 3);
  EXPECT_EQ(nth_key(info, 0), "b");
  EXPECT_EQ(nth_key(info, 1), "a");
  EXPECT_EQ(nth_key(info, 2), "c");
  EXPECT_EQ(value_of(info, "b"), "deux");
  EXPECT_EQ(value_of(info, "c"), "");
  EXPECT_EQ(value_of(info, "missing"), "<absent>");

  int length = -1;
  int flag = 0;
  EXPECT_EQ(MPI_Info_get_valuelen(info, "b", &length, &flag), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  EXPECT_EQ(length, 4);
  EXPECT_EQ(MPI_Info_get_valuelen(info, "zz", &length, &flag), MPI_SUCCESS);
  EXPECT_FALSE(flag);

  // valuelen counts characters without the terminating null.
  EXPECT_EQ(value_of(info, "b", 2), "de");
  EXPECT_EQ(value_of(info, "b", 0), "");

  EXPECT_EQ(MPI_Info_delete(info, "b"), MPI_SUCCESS);
  MPI_Info_get_nkeys(info, &nkeys);
  EXPECT_EQ(nkeys, 2);
  EXPECT_EQ(nth_key(info, 0), "a");
  EXPECT_EQ(MPI_Info_free(&info), MPI_SUCCESS);
  EXPECT_EQ(info, MPI_INFO_NULL);
}

TEST(Info, DupIsIndependent) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "k", "v");
  MPI_Info copy = MPI_INFO_NULL;
  ASSERT_EQ(MPI_Info_dup(info, &copy), MPI_SUCCESS);
  MPI_Info_set(info, "k", "changed");
  MPI_Info_set(copy, "only", "in copy");
  EXPECT_EQ(value_of(copy, "k"), "v");
  EXPECT_EQ(value_of(info, "only"), "<absent>");
  MPI_Info_free(&info);
  EXPECT_EQ(value_of(copy, "only"), "in copy");
  MPI_Info_free(&copy);
}

TEST(Info, LimitsAreInclusiveOfTheLongestAllowed) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  const std::string key(MPI_MAX_INFO_KEY - 1, 'k');
  const std::string value(MPI_MAX_INFO_VAL, 'v');
  EXPECT_EQ(MPI_Info_set(info, key.c_str(), value.c_str()), MPI_SUCCESS);
  EXPECT_EQ(nth_key(info, 0), key);
  EXPECT_EQ(value_of(info, key.c_str()), value);
  MPI_Info_free(&info);
}

TEST(Info, EnvironmentDescribesTheJob) {
  EXPECT_EQ(run_ranks(3, 2,
                      [](int) {
                        EXPECT_EQ(value_of(MPI_INFO_ENV, "maxprocs"), "3");
                        EXPECT_EQ(value_of(MPI_INFO_ENV, "thread_level"), "MPI_THREAD_MULTIPLE");
                        EXPECT_NE(value_of(MPI_INFO_ENV, "command"), "<absent>");
                        EXPECT_NE(value_of(MPI_INFO_ENV, "host"), "<absent>");
                        int nkeys = 0;
                        MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
                        EXPECT_GE(nkeys, 4);
                        MPI_Info copy = MPI_INFO_NULL;
                        ASSERT_EQ(MPI_Info_dup(MPI_INFO_ENV, &copy), MPI_SUCCESS);
                        MPI_Info_set(copy, "maxprocs", "7");
                        EXPECT_EQ(value_of(copy, "maxprocs"), "7");
                        EXPECT_EQ(value_of(MPI_INFO_ENV, "maxprocs"), "3");
                        MPI_Info_free(&copy);
                      }),
            0);
}

TEST(Info, ErrorsReturnTheirClass) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        errors_return();
                        MPI_Info info = MPI_INFO_NULL;
                        MPI_Info_create(&info);
                        MPI_Info_set(info, "k", "v");
                        char text[8];
                        int flag = 0;
                        int n = 0;
                        EXPECT_EQ(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
                        EXPECT_EQ(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
                        EXPECT_EQ(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
                        EXPECT_EQ(MPI_Info_delete(MPI_INFO_ENV, "host"), MPI_ERR_INFO);
                        MPI_Info env = MPI_INFO_ENV;
                        EXPECT_EQ(MPI_Info_free(&env), MPI_ERR_INFO);
                        EXPECT_EQ(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
                        EXPECT_EQ(MPI_Info_set(info, nullptr, "v"), MPI_ERR_INFO_KEY);
                        const std::string long_key(MPI_MAX_INFO_KEY, 'k');
                        EXPECT_EQ(MPI_Info_set(info, long_key.c_str(), "v"), MPI_ERR_INFO_KEY);
                        EXPECT_EQ(MPI_Info_get(info, long_key.c_str(), 7, text, &flag),
                                  MPI_ERR_INFO_KEY);
                        const std::string long_value(MPI_MAX_INFO_VAL + 1, 'v');
                        EXPECT_EQ(MPI_Info_set(info, "k", long_value.c_str()), MPI_ERR_INFO_VALUE);
                        EXPECT_EQ(MPI_Info_delete(info, "absent"), MPI_ERR_INFO_NOKEY);
                        EXPECT_EQ(MPI_Info_get(info, "k", -1, text, &flag), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Info_get_nthkey(info, 1, text), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Info_get_nthkey(info, -1, text), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Info_create(nullptr), MPI_ERR_ARG);
                        EXPECT_EQ(value_of(info, "k"), "v");
                        MPI_Info_free(&info);
                      }),
            0);
}

}  // namespace
