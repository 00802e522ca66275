// The dynamic-process calls that need no program image (mpi/spawn/, docs/mpi-spawn.md): two
// halves of the world meet through a port (MPI_Open_port, MPI_Comm_accept, MPI_Comm_connect) as
// two separate groups, and through a published service name; two ranks join over a socketpair;
// MPI_Comm_disconnect; and a spawn without a program loader (a job run inside a test) fails with
// MPI_ERR_SPAWN. Spawning itself needs a weftcc program: tests/programs/spawn_*.c.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

// The lower half of the world accepts on a port that world rank 0 opened, the upper half
// connects; `named` passes the port through a service name rather than a message.
void meet_halves(int ranks, bool named) {
  EXPECT_EQ(
      run_ranks(
          ranks, 2,
          [ranks, named](int rank) {
            const int cut = ranks / 2;
            const bool acceptor = rank < cut;
            MPI_Comm half;
            MPI_Comm_split(MPI_COMM_WORLD, acceptor ? 0 : 1, rank, &half);
            char port[MPI_MAX_PORT_NAME] = {};
            const std::string service = "dynamic_test " + std::to_string(ranks);
            if (rank == 0) {
              ASSERT_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
              if (named) {
                ASSERT_EQ(MPI_Publish_name(service.c_str(), MPI_INFO_NULL, port), MPI_SUCCESS);
              } else {
                MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, cut, 0, MPI_COMM_WORLD);
              }
            }
            if (named) MPI_Barrier(MPI_COMM_WORLD);
            if (rank == cut) {
              if (named) {
                ASSERT_EQ(MPI_Lookup_name(service.c_str(), MPI_INFO_NULL, port), MPI_SUCCESS);
              } else {
                MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
              }
            }
            MPI_Comm inter;
            if (acceptor) {
              ASSERT_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter), MPI_SUCCESS);
            } else {
              ASSERT_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter), MPI_SUCCESS);
            }
            int flag = 0, size = -1, remote = -1, me = -1;
            MPI_Comm_test_inter(inter, &flag);
            MPI_Comm_size(inter, &size);
            MPI_Comm_remote_size(inter, &remote);
            MPI_Comm_rank(inter, &me);
            EXPECT_TRUE(flag);
            EXPECT_EQ(size, acceptor ? cut : ranks - cut);
            EXPECT_EQ(remote, acceptor ? ranks - cut : cut);
            EXPECT_EQ(me, acceptor ? rank : rank - cut);
            // Every rank sends its world rank to the same rank of the other side,
            // where there is one.
            if (me < remote) MPI_Send(&rank, 1, MPI_INT, me, 1, inter);
            if (me < remote) {
              int got = -1;
              MPI_Recv(&got, 1, MPI_INT, me, 1, inter, MPI_STATUS_IGNORE);
              EXPECT_EQ(got, acceptor ? me + cut : me);
            }
            EXPECT_EQ(MPI_Comm_disconnect(&inter), MPI_SUCCESS);
            EXPECT_EQ(inter, MPI_COMM_NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
              if (named) {
                EXPECT_EQ(MPI_Unpublish_name(service.c_str(), MPI_INFO_NULL, port), MPI_SUCCESS);
              }
              EXPECT_EQ(MPI_Close_port(port), MPI_SUCCESS);
            }
            MPI_Comm_free(&half);
          }),
      0);
}

TEST(Dynamic, AcceptConnectBetweenHalves) {
  for (int ranks : {2, 3, 5}) meet_halves(ranks, false);
}

TEST(Dynamic, PublishedNameLeadsToThePort) {
  for (int ranks : {2, 4}) meet_halves(ranks, true);
}

TEST(Dynamic, UnpublishedNameIsMpiErrName) {
  EXPECT_EQ(
      run_ranks(2, 2,
                [](int rank) {
                  errors_return();
                  const char kService[] = "dynamic_test unpublished";
                  if (rank == 0) {
                    EXPECT_EQ(MPI_Publish_name(kService, MPI_INFO_NULL, "a port"), MPI_SUCCESS);
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                  char port[MPI_MAX_PORT_NAME] = {};
                  EXPECT_EQ(MPI_Lookup_name(kService, MPI_INFO_NULL, port), MPI_SUCCESS);
                  EXPECT_STREQ(port, "a port");
                  MPI_Barrier(MPI_COMM_WORLD);
                  if (rank == 1) {
                    EXPECT_EQ(MPI_Unpublish_name(kService, MPI_INFO_NULL, "a port"), MPI_SUCCESS);
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                  int error_class = -1;
                  MPI_Error_class(MPI_Lookup_name(kService, MPI_INFO_NULL, port), &error_class);
                  EXPECT_EQ(error_class, MPI_ERR_NAME);
                }),
      0);
}

TEST(Dynamic, JoinOverASocketpair) {
  WEFT_ONE_PROCESS_ONLY("the two ranks share the socketpair's descriptors");
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_EQ(run_ranks(2, 2,
                      [&fds](int rank) {
                        MPI_Comm inter;
                        ASSERT_EQ(MPI_Comm_join(fds[rank], &inter), MPI_SUCCESS);
                        int size = -1, remote = -1;
                        MPI_Comm_size(inter, &size);
                        MPI_Comm_remote_size(inter, &remote);
                        EXPECT_EQ(size, 1);
                        EXPECT_EQ(remote, 1);
                        int value = rank == 0 ? 42 : -1;
                        if (rank == 0) {
                          MPI_Send(&value, 1, MPI_INT, 0, 5, inter);
                        } else {
                          MPI_Recv(&value, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
                          EXPECT_EQ(value, 42);
                        }
                        EXPECT_EQ(MPI_Comm_disconnect(&inter), MPI_SUCCESS);
                      }),
            0);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(Dynamic, SpawnWithoutAProgramLoaderIsMpiErrSpawn) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int) {
                        errors_return();
                        MPI_Comm children = MPI_COMM_WORLD;
                        int codes[1] = {-1};
                        const int rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL,
                                                      0, MPI_COMM_WORLD, &children, codes);
                        int error_class = -1;
                        MPI_Error_class(rc, &error_class);
                        EXPECT_EQ(error_class, MPI_ERR_SPAWN);
                        EXPECT_EQ(children, MPI_COMM_NULL);
                        MPI_Comm parent = MPI_COMM_WORLD;
                        MPI_Comm_get_parent(&parent);
                        EXPECT_EQ(parent, MPI_COMM_NULL);
                      }),
            0);
}

}  // namespace
