// Attributes on every kind of object: datatypes (copied by MPI_Type_dup, deleted by
// MPI_Type_free, per rank on the predefined types), keyvals that belong to one kind, the MPI-1
// names of the communicator calls, and MPI_COMM_SELF's attributes deleted first thing in
// MPI_Finalize, last set first.
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;
using weft::testing::run_test_job;

// What the callbacks saw, through their extra_state.
struct Log {
  std::vector<void*> deleted;
  std::vector<int> deleted_keyvals;
  int copies = 0;
  int finalized_during_delete = -1;  // MPI_Finalized as a delete callback saw it
};

int type_delete(MPI_Datatype, int keyval, void* value, void* extra_state) {
  Log& log = *static_cast<Log*>(extra_state);
  log.deleted.push_back(value);
  log.deleted_keyvals.push_back(keyval);
  return MPI_SUCCESS;
}

// Copies the address of the next int: the copy is told apart from the original.
int type_next_int_copy(MPI_Datatype, int, void* extra_state, void* value_in, void* value_out,
                       int* flag) {
  ++static_cast<Log*>(extra_state)->copies;
  *static_cast<void**>(value_out) = static_cast<int*>(value_in) + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

int comm_delete(MPI_Comm, int keyval, void* value, void* extra_state) {
  Log& log = *static_cast<Log*>(extra_state);
  log.deleted.push_back(value);
  log.deleted_keyvals.push_back(keyval);
  MPI_Finalized(&log.finalized_during_delete);
  return MPI_SUCCESS;
}

void* type_get(MPI_Datatype type, int keyval) {
  void* value = nullptr;
  int flag = -1;
  EXPECT_EQ(MPI_Type_get_attr(type, keyval, &value, &flag), MPI_SUCCESS);
  return flag ? value : nullptr;
}

TEST(DatatypeAttributes, CopiedByDupDeletedByFree) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int) {
                        Log log;
                        int next = MPI_KEYVAL_INVALID;
                        int same = MPI_KEYVAL_INVALID;
                        int none = MPI_KEYVAL_INVALID;
                        ASSERT_EQ(
                            MPI_Type_create_keyval(type_next_int_copy, type_delete, &next, &log),
                            MPI_SUCCESS);
                        MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &same, &log);
                        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                               &none, nullptr);
                        int values[2] = {0, 0};
                        MPI_Datatype type = MPI_DATATYPE_NULL;
                        MPI_Type_contiguous(3, MPI_INT, &type);
                        EXPECT_EQ(type_get(type, next), nullptr);
                        for (int k : {next, same, none}) {
                          ASSERT_EQ(MPI_Type_set_attr(type, k, &values[0]), MPI_SUCCESS);
                        }
                        EXPECT_EQ(type_get(type, same), &values[0]);
                        MPI_Datatype dup = MPI_DATATYPE_NULL;
                        ASSERT_EQ(MPI_Type_dup(type, &dup), MPI_SUCCESS);
                        EXPECT_EQ(log.copies, 1);
                        EXPECT_EQ(type_get(dup, next), &values[1]);
                        EXPECT_EQ(type_get(dup, same), &values[0]);
                        EXPECT_EQ(type_get(dup, none), nullptr);
                        EXPECT_EQ(type_get(type, next), &values[0]);

                        // Last set first.
                        ASSERT_EQ(MPI_Type_free(&dup), MPI_SUCCESS);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&values[0], &values[1]}));
                        EXPECT_EQ(log.deleted_keyvals, (std::vector<int>{same, next}));
                        log.deleted.clear();
                        ASSERT_EQ(MPI_Type_delete_attr(type, same), MPI_SUCCESS);
                        EXPECT_EQ(log.deleted, std::vector<void*>{&values[0]});
                        EXPECT_EQ(type_get(type, same), nullptr);
                        ASSERT_EQ(MPI_Type_free(&type), MPI_SUCCESS);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&values[0], &values[0]}));
                        for (int* k : {&next, &same, &none}) {
                          EXPECT_EQ(MPI_Type_free_keyval(k), MPI_SUCCESS);
                          EXPECT_EQ(*k, MPI_KEYVAL_INVALID);
                        }
                      }),
            0);
}

TEST(DatatypeAttributes, PredefinedTypesHoldEachRanksOwn) {
  EXPECT_EQ(run_ranks(4, 2,
                      [](int rank) {
                        Log log;
                        int keyval = MPI_KEYVAL_INVALID;
                        MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &keyval, &log);
                        int mine = rank;
                        ASSERT_EQ(MPI_Type_set_attr(MPI_INT, keyval, &mine), MPI_SUCCESS);
                        MPI_Barrier(MPI_COMM_WORLD);  // every rank has set its value
                        EXPECT_EQ(type_get(MPI_INT, keyval), &mine);
                        EXPECT_EQ(type_get(MPI_DOUBLE, keyval), nullptr);
                        // A dup of a predefined type copies the caller's attributes.
                        MPI_Datatype dup = MPI_DATATYPE_NULL;
                        MPI_Type_dup(MPI_INT, &dup);
                        EXPECT_EQ(type_get(dup, keyval), &mine);
                        MPI_Type_free(&dup);
                        MPI_Barrier(MPI_COMM_WORLD);
                        EXPECT_EQ(type_get(MPI_INT, keyval), &mine);
                        MPI_Type_delete_attr(MPI_INT, keyval);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&mine, &mine}));
                        MPI_Type_free_keyval(&keyval);
                      }),
            0);
}

TEST(AttributeKinds, KeyvalsBelongToTheirKind) {
  EXPECT_EQ(
      run_ranks(1, 1,
                [](int) {
                  errors_return();
                  int comm_keyval = MPI_KEYVAL_INVALID;
                  int type_keyval = MPI_KEYVAL_INVALID;
                  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                                         &comm_keyval, nullptr);
                  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                         &type_keyval, nullptr);
                  EXPECT_NE(comm_keyval, type_keyval);
                  int value = 0;
                  void* out = nullptr;
                  int flag = 0;
                  EXPECT_EQ(MPI_Type_set_attr(MPI_INT, comm_keyval, &value), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Type_get_attr(MPI_INT, comm_keyval, &out, &flag), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, type_keyval, &value), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Attr_put(MPI_COMM_WORLD, type_keyval, &value), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &out, &flag), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Type_set_attr(MPI_DATATYPE_NULL, type_keyval, &value),
                            MPI_ERR_TYPE);
                  EXPECT_EQ(MPI_Type_get_attr(MPI_INT, type_keyval, nullptr, &flag), MPI_ERR_ARG);
                  int copy = type_keyval;
                  EXPECT_EQ(MPI_Comm_free_keyval(&copy), MPI_ERR_KEYVAL);
                  copy = comm_keyval;
                  EXPECT_EQ(MPI_Type_free_keyval(&copy), MPI_ERR_KEYVAL);
                  EXPECT_EQ(MPI_Type_free_keyval(&type_keyval), MPI_SUCCESS);
                  EXPECT_EQ(MPI_Keyval_free(&comm_keyval), MPI_SUCCESS);
                  copy = comm_keyval;
                  EXPECT_EQ(MPI_Keyval_free(&copy), MPI_ERR_KEYVAL);
                }),
      0);
}

TEST(AttributeKinds, Mpi1Names) {
  EXPECT_EQ(run_ranks(3, 2,
                      [](int rank) {
                        Log log;
                        int dup_keyval = MPI_KEYVAL_INVALID;
                        int null_keyval = MPI_KEYVAL_INVALID;
                        ASSERT_EQ(MPI_Keyval_create(MPI_DUP_FN, comm_delete, &dup_keyval, &log),
                                  MPI_SUCCESS);
                        MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &null_keyval,
                                          nullptr);
                        int value = rank;
                        MPI_Comm comm = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                        ASSERT_EQ(MPI_Attr_put(comm, dup_keyval, &value), MPI_SUCCESS);
                        ASSERT_EQ(MPI_Attr_put(comm, null_keyval, &value), MPI_SUCCESS);
                        void* out = nullptr;
                        int flag = 0;
                        ASSERT_EQ(MPI_Attr_get(comm, dup_keyval, &out, &flag), MPI_SUCCESS);
                        EXPECT_TRUE(flag);
                        EXPECT_EQ(out, &value);
                        MPI_Comm copy = MPI_COMM_NULL;
                        MPI_Comm_dup(comm, &copy);
                        MPI_Attr_get(copy, dup_keyval, &out, &flag);
                        EXPECT_TRUE(flag && out == &value);
                        MPI_Attr_get(copy, null_keyval, &out, &flag);
                        EXPECT_FALSE(flag);
                        ASSERT_EQ(MPI_Attr_delete(copy, dup_keyval), MPI_SUCCESS);
                        EXPECT_EQ(log.deleted, std::vector<void*>{&value});
                        MPI_Attr_get(copy, dup_keyval, &out, &flag);
                        EXPECT_FALSE(flag);
                        MPI_Comm_free(&copy);
                        MPI_Comm_free(&comm);
                        EXPECT_EQ(log.deleted, (std::vector<void*>{&value, &value}));
                        int* tag_ub = nullptr;
                        MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
                        ASSERT_TRUE(flag);
                        EXPECT_GE(*tag_ub, 32767);
                        EXPECT_EQ(MPI_Keyval_free(&dup_keyval), MPI_SUCCESS);
                        EXPECT_EQ(MPI_Keyval_free(&null_keyval), MPI_SUCCESS);
                        EXPECT_EQ(dup_keyval, MPI_KEYVAL_INVALID);
                      }),
            0);
}

// MPI-4.1 11.2.2: MPI_Finalize first frees MPI_COMM_SELF as MPI_Comm_free would, running the
// delete callbacks in the reverse order of setting (a replaced value keeps its place), while
// MPI_Finalized still says false; freed keyvals still have theirs called.
TEST(AttributeKinds, FinalizeDeletesSelfAttributesLastSetFirst) {
  EXPECT_EQ(run_test_job(3, 2,
                         [](int rank) {
                           MPI_Init(nullptr, nullptr);
                           Log log;
                           int keyvals[5];
                           for (int& k : keyvals) {
                             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &k, &log);
                           }
                           // Set in an order unlike the keyvals' creation.
                           const int order[5] = {3, 1, 4, 0, 2};
                           int values[5] = {rank, rank, rank, rank, rank};
                           for (int i : order) {
                             MPI_Comm_set_attr(MPI_COMM_SELF, keyvals[i], &values[i]);
                           }
                           MPI_Comm_set_attr(MPI_COMM_SELF, keyvals[order[0]], &values[order[0]]);
                           // The replaced value's delete callback ran.
                           if (log.deleted_keyvals != std::vector<int>{keyvals[order[0]]}) {
                             return 10;
                           }
                           log.deleted_keyvals.clear();
                           const std::vector<int> expected = {keyvals[2], keyvals[0], keyvals[4],
                                                              keyvals[1], keyvals[3]};
                           for (int& k : keyvals) MPI_Comm_free_keyval(&k);
                           if (!log.deleted_keyvals.empty()) return 13;
                           MPI_Finalize();
                           if (log.deleted_keyvals != expected) return 11;
                           if (log.finalized_during_delete != 0) return 12;
                           return 0;
                         }),
            0);
}

}  // namespace
