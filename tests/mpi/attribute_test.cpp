// Attributes: MPI_COMM_WORLD's predefined ones, per-rank values under process-wide keyvals, the
// delete callback on overwrite, delete and free, the copy callbacks on dup (with their flag), a
// failing callback failing its call, and keyvals freed while attributes still use them.
#include <gtest/gtest.h>

#include <vector>

#include "errhan/error.h"
#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

// What the test callbacks saw, through their extra_state; one per rank.
struct Log {
  std::vector<void*> deleted;
  int copies = 0;
  int fail_copy_of = -1;     // the copy callback fails for this value (as an int address)
  bool fail_delete = false;  // the delete callback fails
};

int logging_delete(MPI_Comm, int, void* value, void* extra_state) {
  Log& log = *static_cast<Log*>(extra_state);
  if (log.fail_delete) return MPI_ERR_OTHER;
  log.deleted.push_back(value);
  return MPI_SUCCESS;
}

// Copies the address of the next int: the copy is told apart from the original.
int next_int_copy(MPI_Comm, int, void* extra_state, void* value_in, void* value_out, int* flag) {
  Log& log = *static_cast<Log*>(extra_state);
  ++log.copies;
  if (static_cast<int*>(value_in) == &log.fail_copy_of) return MPI_ERR_OTHER;
  *static_cast<void**>(value_out) = static_cast<int*>(value_in) + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

int refusing_copy(MPI_Comm, int, void* extra_state, void*, void*, int* flag) {
  ++static_cast<Log*>(extra_state)->copies;
  *flag = 0;
  return MPI_SUCCESS;
}

// The attribute's value, or nullptr when it is not set.
void* get(MPI_Comm comm, int keyval) {
  void* value = nullptr;
  int flag = -1;
  EXPECT_EQ(MPI_Comm_get_attr(comm, keyval, &value, &flag), MPI_SUCCESS);
  return flag ? value : nullptr;
}

int predefined(MPI_Comm comm, int keyval) {
  const int* value = static_cast<const int*>(get(comm, keyval));
  return value == nullptr ? -12345 : *value;
}

TEST(Attribute, PredefinedOnWorldOnly) {
  for (int ranks : {3, 5}) {
    EXPECT_EQ(run_ranks(ranks, 2,
                        [ranks](int) {
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_TAG_UB),
                                    weft::mpi::kTagUpperBound);
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_HOST), MPI_PROC_NULL);
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_IO), MPI_ANY_SOURCE);
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL), 1);
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE), ranks);
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_APPNUM), 0);
                          EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_LASTUSEDCODE), MPI_ERR_LASTCODE);
                          EXPECT_EQ(get(MPI_COMM_SELF, MPI_TAG_UB), nullptr);
                          MPI_Comm dup = MPI_COMM_NULL;
                          MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                          EXPECT_EQ(get(dup, MPI_TAG_UB), nullptr);
                          MPI_Comm_free(&dup);
                        }),
              0);
  }
}

TEST(Attribute, ValuesArePerRankUnderOneKeyval) {
  WEFT_ONE_PROCESS_ONLY(
      "keyvals are process-wide: the keyval that rank 0 makes exists in rank 0's process only");
  int keyval = MPI_KEYVAL_INVALID;
  EXPECT_EQ(run_ranks(8, 2,
                      [&keyval](int rank) {
                        // One rank makes the keyval; the others may use it: keyvals are
                        // process-wide.
                        if (rank == 0) {
                          MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                                                 &keyval, nullptr);
                        }
                        MPI_Comm ready = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &ready);  // orders the write before the use
                        MPI_Comm_free(&ready);
                        int mine = rank;
                        ASSERT_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &mine), MPI_SUCCESS);
                        ASSERT_EQ(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, &mine), MPI_SUCCESS);
                        MPI_Comm sync = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &sync);  // every rank has set its value
                        EXPECT_EQ(get(MPI_COMM_WORLD, keyval), &mine);
                        EXPECT_EQ(get(MPI_COMM_SELF, keyval), &mine);
                        EXPECT_EQ(get(sync, keyval), nullptr);  // MPI_COMM_NULL_COPY_FN
                        MPI_Comm_free(&sync);
                        MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
                        MPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
                        EXPECT_EQ(get(MPI_COMM_WORLD, keyval), nullptr);
                      }),
            0);
}

TEST(Attribute, DeleteCallbackOnOverwriteDeleteAndFree) {
  EXPECT_EQ(run_ranks(4, 2,
                      [](int) {
                        Log log;
                        int keyval = MPI_KEYVAL_INVALID;
                        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, logging_delete, &keyval, &log);
                        int a = 0;
                        int b = 0;
                        int c = 0;
                        MPI_Comm comm = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                        MPI_Comm_set_attr(comm, keyval, &a);
                        MPI_Comm_set_attr(comm, keyval, &b);
                        EXPECT_EQ(log.deleted, std::vector<void*>{&a});
                        MPI_Comm_delete_attr(comm, keyval);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&a, &b}));
                        EXPECT_EQ(get(comm, keyval), nullptr);
                        // Deleting what is not set does nothing.
                        EXPECT_EQ(MPI_Comm_delete_attr(comm, keyval), MPI_SUCCESS);
                        MPI_Comm_set_attr(comm, keyval, &c);
                        MPI_Comm_free(&comm);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&a, &b, &c}));
                        MPI_Comm_free_keyval(&keyval);
                        EXPECT_EQ(keyval, MPI_KEYVAL_INVALID);
                      }),
            0);
}

TEST(Attribute, DupRunsTheCopyCallbacks) {
  EXPECT_EQ(run_ranks(6, 2,
                      [](int rank) {
                        Log log;
                        int next = MPI_KEYVAL_INVALID;
                        int same = MPI_KEYVAL_INVALID;
                        int none = MPI_KEYVAL_INVALID;
                        int refused = MPI_KEYVAL_INVALID;
                        MPI_Comm_create_keyval(next_int_copy, logging_delete, &next, &log);
                        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, logging_delete, &same, &log);
                        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, logging_delete, &none, &log);
                        MPI_Comm_create_keyval(refusing_copy, logging_delete, &refused, &log);
                        int values[2] = {rank, rank};
                        MPI_Comm parent = MPI_COMM_NULL;
                        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &parent);
                        for (int k : {next, same, none, refused}) {
                          MPI_Comm_set_attr(parent, k, &values[0]);
                        }
                        MPI_Comm child = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Comm_dup(parent, &child), MPI_SUCCESS);
                        EXPECT_EQ(log.copies, 2);
                        EXPECT_EQ(get(child, next), &values[1]);
                        EXPECT_EQ(get(child, same), &values[0]);
                        EXPECT_EQ(get(child, none), nullptr);
                        EXPECT_EQ(get(child, refused), nullptr);
                        EXPECT_EQ(get(parent, next), &values[0]);

                        // A dup of the dup copies again, from the copies.
                        MPI_Comm grandchild = MPI_COMM_NULL;
                        MPI_Comm_dup(child, &grandchild);
                        EXPECT_EQ(get(grandchild, next), &values[1] + 1);
                        MPI_Comm_free(&grandchild);
                        MPI_Comm_free(&child);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&values[0], &values[1] + 1,
                                                                   &values[0], &values[1]}));
                        log.deleted.clear();
                        MPI_Comm_free(&parent);
                        EXPECT_EQ(log.deleted.size(), 4u);
                        for (int* k : {&next, &same, &none, &refused}) MPI_Comm_free_keyval(k);
                      }),
            0);
}

TEST(Attribute, FailingCallbacksFailTheirCall) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int) {
                        errors_return();
                        Log log;
                        int copied = MPI_KEYVAL_INVALID;
                        int failing = MPI_KEYVAL_INVALID;
                        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, logging_delete, &copied, &log);
                        MPI_Comm_create_keyval(next_int_copy, logging_delete, &failing, &log);
                        int value = 0;
                        // `copied` is the older keyval: it is copied before `failing` fails.
                        MPI_Comm_set_attr(MPI_COMM_WORLD, copied, &value);
                        MPI_Comm_set_attr(MPI_COMM_WORLD, failing, &log.fail_copy_of);
                        MPI_Comm dup = MPI_COMM_SELF;
                        EXPECT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_ERR_OTHER);
                        EXPECT_EQ(dup, MPI_COMM_NULL);
                        // The copy made before the failure was deleted again.
                        EXPECT_EQ(log.deleted, std::vector<void*>{&value});

                        log.fail_delete = true;
                        MPI_Comm comm = MPI_COMM_NULL;
                        MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &comm);
                        MPI_Comm_set_attr(comm, copied, &value);
                        EXPECT_EQ(MPI_Comm_set_attr(comm, copied, &value), MPI_ERR_OTHER);
                        EXPECT_EQ(MPI_Comm_delete_attr(comm, copied), MPI_ERR_OTHER);
                        EXPECT_EQ(MPI_Comm_free(&comm), MPI_ERR_OTHER);
                        EXPECT_NE(comm, MPI_COMM_NULL);  // still usable: the free failed
                        EXPECT_EQ(get(comm, copied), &value);
                        log.fail_delete = false;
                        EXPECT_EQ(MPI_Comm_free(&comm), MPI_SUCCESS);
                        MPI_Comm_delete_attr(MPI_COMM_WORLD, copied);
                        MPI_Comm_delete_attr(MPI_COMM_WORLD, failing);
                        MPI_Comm_free_keyval(&copied);
                        MPI_Comm_free_keyval(&failing);
                      }),
            0);
}

TEST(Attribute, FreedKeyvalLivesWhileAttributesUseIt) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int) {
                        errors_return();
                        Log log;
                        int keyval = MPI_KEYVAL_INVALID;
                        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, logging_delete, &keyval, &log);
                        const int id = keyval;
                        int value = 0;
                        MPI_Comm comm = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                        MPI_Comm_set_attr(comm, keyval, &value);
                        ASSERT_EQ(MPI_Comm_free_keyval(&keyval), MPI_SUCCESS);
                        EXPECT_EQ(keyval, MPI_KEYVAL_INVALID);
                        void* out = nullptr;
                        int flag = 0;
                        EXPECT_EQ(MPI_Comm_get_attr(comm, id, &out, &flag), MPI_ERR_KEYVAL);
                        EXPECT_EQ(MPI_Comm_set_attr(comm, id, &value), MPI_ERR_KEYVAL);
                        // Freeing it again while an attribute uses it changes nothing, as in
                        // MPICH (its attr/keyval_double_free frees a keyval three times).
                        int again = id;
                        EXPECT_EQ(MPI_Comm_free_keyval(&again), MPI_SUCCESS);
                        EXPECT_EQ(again, MPI_KEYVAL_INVALID);
                        // Its attributes are still copied and deleted through its callbacks.
                        MPI_Comm dup = MPI_COMM_NULL;
                        MPI_Comm_dup(comm, &dup);
                        MPI_Comm_free(&dup);
                        MPI_Comm_free(&comm);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&value, &value}));
                        // Once no attribute uses it, the keyval is gone.
                        again = id;
                        EXPECT_EQ(MPI_Comm_free_keyval(&again), MPI_ERR_KEYVAL);
                      }),
            0);
}

TEST(Attribute, ErrorsReturnTheirClass) {
  EXPECT_EQ(
      run_ranks(1, 1,
                [](int) {
                  errors_return();
                  int keyval = MPI_KEYVAL_INVALID;
                  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval,
                                         nullptr);
                  void* out = nullptr;
                  int flag = 0;
                  int value = 0;
                  EXPECT_EQ(MPI_Comm_create_keyval(nullptr, nullptr, nullptr, nullptr),
                            MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, 999999, &out, &flag), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Comm_get_attr(MPI_COMM_NULL, keyval, &out, &flag), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &out, nullptr), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, nullptr, &flag), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Comm_delete_attr(MPI_COMM_WORLD, 999999), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Comm_set_attr(MPI_COMM_NULL, keyval, &value), MPI_ERR_COMM);
                  int tag_ub = MPI_TAG_UB;
                  EXPECT_EQ(MPI_Comm_free_keyval(&tag_ub), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Comm_free_keyval(nullptr), MPI_ERR_ARG);
                  EXPECT_EQ(predefined(MPI_COMM_WORLD, MPI_TAG_UB), weft::mpi::kTagUpperBound);
                  MPI_Comm_free_keyval(&keyval);
                }),
      0);
}

}  // namespace
