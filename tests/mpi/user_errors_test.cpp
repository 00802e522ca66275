// Error classes, codes and strings the program adds and removes (MPI-4.1 9.5), as
// MPI_Error_class, MPI_Error_string, MPI_LASTUSEDCODE and user error handlers see them.
#include <gtest/gtest.h>

#include <string>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

int last_used_code() {
  int* value = nullptr;
  int flag = 0;
  EXPECT_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  return flag ? *value : -1;
}

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = -1;
  EXPECT_EQ(MPI_Error_string(code, text, &length), MPI_SUCCESS);
  EXPECT_EQ(length, static_cast<int>(std::string(text).size()));
  return text;
}

int error_class(int code) {
  int result = -1;
  EXPECT_EQ(MPI_Error_class(code, &result), MPI_SUCCESS);
  return result;
}

int seen_code = 0;  // what the user handler below was called with (one rank only)
void remember_code(MPI_Comm*, int* code, ...) {
  seen_code = *code;
}

TEST(UserErrors, ClassesCodesAndStrings) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        EXPECT_EQ(last_used_code(), MPI_ERR_LASTCODE);
                        int cls = -1;
                        ASSERT_EQ(MPI_Add_error_class(&cls), MPI_SUCCESS);
                        EXPECT_GT(cls, MPI_ERR_LASTCODE);
                        EXPECT_EQ(last_used_code(), cls);
                        EXPECT_EQ(error_class(cls), cls);
                        EXPECT_EQ(error_string(cls), "");  // no string added yet
                        int codes[3];
                        for (int& code : codes) {
                          ASSERT_EQ(MPI_Add_error_code(cls, &code), MPI_SUCCESS);
                          EXPECT_GT(code, cls);
                          EXPECT_EQ(error_class(code), cls);
                        }
                        EXPECT_EQ(last_used_code(), codes[2]);
                        ASSERT_EQ(MPI_Add_error_string(cls, "my class"), MPI_SUCCESS);
                        ASSERT_EQ(MPI_Add_error_string(codes[1], "my code\n"), MPI_SUCCESS);
                        EXPECT_EQ(error_string(cls), "my class");
                        EXPECT_EQ(error_string(codes[1]), "my code\n");
                        ASSERT_EQ(MPI_Add_error_string(codes[1], "replaced"), MPI_SUCCESS);
                        EXPECT_EQ(error_string(codes[1]), "replaced");

                        // A code of a predefined class.
                        int arg_code = -1;
                        ASSERT_EQ(MPI_Add_error_code(MPI_ERR_ARG, &arg_code), MPI_SUCCESS);
                        EXPECT_EQ(error_class(arg_code), MPI_ERR_ARG);

                        // A user handler is called with the code itself.
                        MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
                        MPI_Comm_create_errhandler(remember_code, &handler);
                        MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
                        MPI_Comm_call_errhandler(MPI_COMM_WORLD, codes[1]);
                        EXPECT_EQ(seen_code, codes[1]);
                        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
                        MPI_Errhandler_free(&handler);

                        // Removing: strings, then codes, then the class; the newest values
                        // are given out again.
                        ASSERT_EQ(MPI_Remove_error_string(codes[1]), MPI_SUCCESS);
                        EXPECT_EQ(error_string(codes[1]), "");
                        EXPECT_EQ(MPI_Remove_error_class(cls), MPI_ERR_ARG);  // codes left
                        ASSERT_EQ(MPI_Remove_error_code(arg_code), MPI_SUCCESS);
                        for (int code : codes) ASSERT_EQ(MPI_Remove_error_code(code), MPI_SUCCESS);
                        int out = -1;
                        EXPECT_EQ(MPI_Error_class(codes[0], &out), MPI_ERR_ARG);
                        ASSERT_EQ(MPI_Remove_error_class(cls), MPI_SUCCESS);
                        EXPECT_EQ(last_used_code(), MPI_ERR_LASTCODE);
                        int again = -1;
                        MPI_Add_error_class(&again);
                        EXPECT_EQ(again, cls);
                        MPI_Remove_error_class(again);
                      }),
            0);
}

TEST(UserErrors, MisuseRaisesItsClass) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        errors_return();
                        int cls = -1;
                        MPI_Add_error_class(&cls);
                        int code = -1;
                        EXPECT_EQ(MPI_Add_error_class(nullptr), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Add_error_code(cls + 1000, &code), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Add_error_code(-5, &code), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Add_error_string(MPI_ERR_RANK, "mine"), MPI_ERR_ARG);
                        const std::string too_long(MPI_MAX_ERROR_STRING, 'x');
                        EXPECT_EQ(MPI_Add_error_string(cls, too_long.c_str()), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Remove_error_string(cls), MPI_ERR_ARG);  // none added
                        EXPECT_EQ(MPI_Remove_error_class(MPI_ERR_ARG), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Remove_error_code(cls), MPI_ERR_ARG);  // a class
                        EXPECT_EQ(MPI_Remove_error_class(cls), MPI_SUCCESS);
                        EXPECT_EQ(MPI_Remove_error_class(cls), MPI_ERR_ARG);
                      }),
            0);
}

// Ranks of one process share the registry, so their classes differ; every rank can read them.
TEST(UserErrors, RanksAddTheirOwn) {
  EXPECT_EQ(run_ranks(4, 2,
                      [](int rank) {
                        int cls = -1;
                        ASSERT_EQ(MPI_Add_error_class(&cls), MPI_SUCCESS);
                        const std::string text = "rank " + std::to_string(rank);
                        MPI_Add_error_string(cls, text.c_str());
                        int all[4];
                        MPI_Allgather(&cls, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
                        EXPECT_EQ(error_string(cls), text);
                        EXPECT_GE(last_used_code(), cls);
                        MPI_Barrier(MPI_COMM_WORLD);
                        MPI_Remove_error_string(cls);
                        EXPECT_EQ(MPI_Remove_error_class(cls), MPI_SUCCESS);
                      }),
            0);
}

}  // namespace
