// What a status tells: MPI_Get_count in whole elements, MPI_Get_elements in basic elements, also
// for derived types and messages that end inside an element.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

// Sends `ints` ints to itself and receives them as `count` elements of `type`.
MPI_Status self_message(int ints, void* buffer, int count, MPI_Datatype type) {
  std::vector<int> out(static_cast<std::size_t>(ints), 1);
  MPI_Send(out.data(), ints, MPI_INT, 0, 0, MPI_COMM_SELF);
  MPI_Status status;
  MPI_Recv(buffer, count, type, 0, 0, MPI_COMM_SELF, &status);
  return status;
}

TEST(Status, CountsAndElementsOfPredefinedAndDerivedTypes) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        int count = -1;
                        MPI_Count elements = -1;
                        std::vector<int> in(64);

                        MPI_Status status = self_message(5, in.data(), 64, MPI_INT);
                        MPI_Get_count(&status, MPI_INT, &count);
                        EXPECT_EQ(count, 5);
                        MPI_Get_count(&status, MPI_DOUBLE, &count);
                        EXPECT_EQ(count, MPI_UNDEFINED);  // 20 bytes are not whole doubles
                        MPI_Get_elements_x(&status, MPI_INT, &elements);
                        EXPECT_EQ(elements, 5);

                        // Pairs of ints: 5 ints are 2 whole pairs and half of one.
                        MPI_Datatype pair;
                        MPI_Type_contiguous(2, MPI_INT, &pair);
                        MPI_Type_commit(&pair);
                        status = self_message(5, in.data(), 32, pair);
                        MPI_Get_count(&status, pair, &count);
                        EXPECT_EQ(count, MPI_UNDEFINED);
                        int small_elements = -1;
                        MPI_Get_elements(&status, pair, &small_elements);
                        EXPECT_EQ(small_elements, 5);

                        // A struct of an int and a double (type map order: int, double).
                        struct Mixed {
                          int i;
                          double d;
                        };
                        const int lengths[2] = {1, 1};
                        const MPI_Aint displacements[2] = {offsetof(Mixed, i), offsetof(Mixed, d)};
                        const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
                        MPI_Datatype mixed;
                        MPI_Type_create_struct(2, lengths, displacements, types, &mixed);
                        MPI_Type_commit(&mixed);
                        std::vector<Mixed> records(4);
                        const Mixed sent[2] = {{1, 1.5}, {2, 2.5}};
                        MPI_Send(sent, 2, mixed, 0, 1, MPI_COMM_SELF);
                        MPI_Recv(records.data(), 4, mixed, 0, 1, MPI_COMM_SELF, &status);
                        MPI_Get_count(&status, mixed, &count);
                        EXPECT_EQ(count, 2);
                        MPI_Get_elements_x(&status, mixed, &elements);
                        EXPECT_EQ(elements, 4);
                        EXPECT_EQ(records[1].d, 2.5);
                        // One record and one more int: 3 basic elements, no whole count.
                        const int three[3] = {7, 0, 0};
                        MPI_Send(three, 1, MPI_INT, 0, 2, MPI_COMM_SELF);
                        MPI_Recv(records.data(), 4, mixed, 0, 2, MPI_COMM_SELF, &status);
                        MPI_Get_elements_x(&status, mixed, &elements);
                        EXPECT_EQ(elements, 1);
                        MPI_Get_count(&status, mixed, &count);
                        EXPECT_EQ(count, MPI_UNDEFINED);
                        MPI_Type_free(&mixed);
                        MPI_Type_free(&pair);
                      }),
            0);
}

}  // namespace
