/* Messages on every kind of communicator, for the OTF2 definitions of their groups
 * (tests/tools/trace_checks.sh otf2_comms): MPI_COMM_WORLD, MPI_COMM_SELF, a dup, a split whose
 * keys reverse the world's order, MPI_Comm_create of the odd ranks, MPI_Comm_create_group of the
 * even ones, an intercommunicator between the split's two halves and its merge.
 *
 * Each message's tag names its sender's and its receiver's world ranks (tag = kind * 4096 +
 * sender * 64 + receiver), so that a reader of the trace can check that a record's peer, a rank in
 * the communicator, is the world rank the communicator's group says. Run with 2 to 64 ranks, an
 * even number. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int world_rank;

static int tag_of(int kind, int sender, int receiver) {
  return kind * 4096 + sender * 64 + receiver;
}

static void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: %s failed\n", world_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static int world_of(MPI_Comm comm, int rank, int remote) {
  MPI_Group group, world_group;
  int world = -1;
  if (remote) {
    check(MPI_Comm_remote_group(comm, &group), "MPI_Comm_remote_group");
  } else {
    check(MPI_Comm_group(comm, &group), "MPI_Comm_group");
  }
  check(MPI_Comm_group(MPI_COMM_WORLD, &world_group), "MPI_Comm_group");
  check(MPI_Group_translate_ranks(group, 1, &rank, world_group, &world), "translate");
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  return world;
}

/* Each rank sends to the next comm rank and receives from the previous one (on an
 * intercommunicator: to and from the remote rank of its own index, where there is one). */
static void ring(MPI_Comm comm, int kind) {
  int inter = 0, rank, size, remote_size = 0;
  check(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (inter) check(MPI_Comm_remote_size(comm, &remote_size), "MPI_Comm_remote_size");
  const int to = inter ? rank : (rank + 1) % size;
  const int from = inter ? rank : (rank + size - 1) % size;
  if (inter && rank >= remote_size) return;
  const int to_world = world_of(comm, to, inter);
  const int from_world = world_of(comm, from, inter);
  int out = world_rank, in = -1;
  check(MPI_Sendrecv(&out, 1, MPI_INT, to, tag_of(kind, world_rank, to_world), &in, 1, MPI_INT,
                     from, tag_of(kind, from_world, world_rank), comm, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  if (in != from_world) {
    fprintf(stderr, "rank %d: kind %d got %d from %d\n", world_rank, kind, in, from_world);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size % 2 != 0 || size > 64) {
    if (world_rank == 0) fprintf(stderr, "trace_comms: run with an even number of ranks, 2-64\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  ring(MPI_COMM_WORLD, 0);
  ring(MPI_COMM_SELF, 1);

  MPI_Comm dup, half, odd = MPI_COMM_NULL, even = MPI_COMM_NULL, inter, merged;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
  ring(dup, 2);
  check(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, size - world_rank, &half), "split");
  ring(half, 3);

  MPI_Group world_group, odd_group, even_group;
  int odds[32], evens[32];
  for (int i = 0; i < size / 2; ++i) {
    odds[i] = 2 * i + 1;
    evens[i] = 2 * i;
  }
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, size / 2, odds, &odd_group);
  MPI_Group_incl(world_group, size / 2, evens, &even_group);
  check(MPI_Comm_create(MPI_COMM_WORLD, odd_group, &odd), "MPI_Comm_create");
  if (world_rank % 2 == 0) {
    check(MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 7, &even), "MPI_Comm_create_group");
  }
  if (odd != MPI_COMM_NULL) ring(odd, 4);
  if (even != MPI_COMM_NULL) ring(even, 5);

  /* The halves' leaders: world ranks size - 2 (even) and size - 1 (odd), each half's rank 0 under
   * the reversed keys. */
  const int remote_leader = world_rank % 2 == 0 ? size - 1 : size - 2;
  check(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 9, &inter),
        "MPI_Intercomm_create");
  ring(inter, 6);
  check(MPI_Intercomm_merge(inter, world_rank % 2, &merged), "MPI_Intercomm_merge");
  ring(merged, 7);
  check(MPI_Barrier(merged), "MPI_Barrier");

  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  if (odd != MPI_COMM_NULL) MPI_Comm_free(&odd);
  if (even != MPI_COMM_NULL) MPI_Comm_free(&even);
  MPI_Group_free(&world_group);
  MPI_Group_free(&odd_group);
  MPI_Group_free(&even_group);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  if (world_rank == 0) printf(" No Errors\n");
  MPI_Finalize();
  return 0;
}
