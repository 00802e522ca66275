/* MPI_Comm_spawn and MPI_Comm_spawn_multiple of this program, as the parents and as the children.
 * The parents spawn 3 children with arguments, then 1 + 2 children of two commands (the same
 * program with other arguments). Each child checks its own world (its size, its rank, an
 * Allreduce over it), MPI_APPNUM, its arguments and its parent intercommunicator; parents and
 * children exchange messages both ways over the intercommunicator, merge it, and disconnect.
 * A command that is not a weft program fails with MPI_ERR_SPAWN, naming it. Exits 1 with a
 * message naming the rank on any difference. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static const char* who = "parent";
static int me = -1;

static void check(int ok, const char* what, long got, long expected) {
  if (ok) return;
  fprintf(stderr, "%s %d: %s is %ld; expected %ld\n", who, me, what, got, expected);
  ++failures;
}

static void child(MPI_Comm parent, int argc, char** argv) {
  who = "child";
  int size = -1, rank = -1, remote = -1, inter_rank = -1, flag = 0, *appnum = NULL;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  me = rank;
  MPI_Comm_remote_size(parent, &remote);
  MPI_Comm_rank(parent, &inter_rank);
  check(inter_rank == rank, "its rank in the parent intercommunicator", inter_rank, rank);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
  check(flag && appnum != NULL, "MPI_APPNUM set", flag, 1);
  check(argc >= 3, "argc", argc, 3);
  if (argc < 3 || !flag) return;
  const int expected_size = atoi(argv[2]);
  check(size == expected_size, "the size of its MPI_COMM_WORLD", size, expected_size);
  /* The first spawn: "spawn 3"; the second: "multi-a 3" (appnum 0) and "multi-b 3" (appnum 1). */
  const int expected_appnum = strcmp(argv[1], "multi-b") == 0 ? 1 : 0;
  check(*appnum == expected_appnum, "MPI_APPNUM", *appnum, expected_appnum);

  int sum = -1;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(sum == size * (size - 1) / 2, "the sum of its world's ranks", sum, size * (size - 1) / 2);

  /* Parent 0 sends each child its rank times 10; each child answers every parent. */
  int got = -1;
  MPI_Recv(&got, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
  check(got == rank * 10, "what parent 0 sent", got, rank * 10);
  for (int p = 0; p < remote; ++p) {
    const int answer = 1000 + rank;
    MPI_Send(&answer, 1, MPI_INT, p, 8, parent);
  }
  MPI_Comm merged;
  MPI_Intercomm_merge(parent, 1, &merged);
  int merged_rank = -1;
  MPI_Comm_rank(merged, &merged_rank);
  check(merged_rank == remote + rank, "its rank in the merged communicator", merged_rank,
        remote + rank);
  MPI_Comm_free(&merged);
  MPI_Comm_disconnect(&parent);
  MPI_Comm_get_parent(&parent);
  check(parent == MPI_COMM_NULL, "MPI_Comm_get_parent after the disconnect is null", 0, 1);
}

static void exchange(MPI_Comm children, int rank, int expected) {
  int remote = -1;
  MPI_Comm_remote_size(children, &remote);
  check(remote == expected, "the number of children", remote, expected);
  if (rank == 0) {
    for (int c = 0; c < remote; ++c) {
      const int value = c * 10;
      MPI_Send(&value, 1, MPI_INT, c, 7, children);
    }
  }
  for (int c = 0; c < remote; ++c) {
    int got = -1;
    MPI_Status status;
    MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 8, children, &status);
    check(got == 1000 + status.MPI_SOURCE, "a child's answer", got, 1000 + status.MPI_SOURCE);
  }
  MPI_Comm merged;
  MPI_Intercomm_merge(children, 0, &merged);
  int merged_size = -1;
  MPI_Comm_size(merged, &merged_size);
  int size = -1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(merged_size == size + remote, "the size of the merged communicator", merged_size,
        size + remote);
  MPI_Comm_free(&merged);
  MPI_Comm_disconnect(&children);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    child(parent, argc, argv);
  } else {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    me = rank;
    int flag = 0, *universe = NULL, size = -1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    check(flag && *universe > size, "MPI_UNIVERSE_SIZE above the world's size", flag, 1);

    char* args[] = {"spawn", "3", NULL};
    int codes[3] = {-1, -1, -1};
    MPI_Comm children;
    MPI_Comm_spawn(argv[0], args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, codes);
    for (int i = 0; i < 3; ++i) check(codes[i] == MPI_SUCCESS, "an error code", codes[i], 0);
    exchange(children, rank, 3);

    char* commands[2] = {argv[0], argv[0]};
    char* args_a[] = {"multi-a", "3", NULL};
    char* args_b[] = {"multi-b", "3", NULL};
    char** argvs[2] = {args_a, args_b};
    int counts[2] = {1, 2};
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_set(infos[0], "soft", "1:4");
    infos[1] = MPI_INFO_NULL;
    MPI_Comm_spawn_multiple(2, commands, argvs, counts, infos, size - 1, MPI_COMM_WORLD, &children,
                            MPI_ERRCODES_IGNORE);
    MPI_Info_free(&infos[0]);
    exchange(children, rank, 3);

    /* Not a weft program: refused, by name. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int code = -1;
    const int rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                  &children, &code);
    check(code == rc, "the error code of the child that did not start", code, rc);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    check(error_class == MPI_ERR_SPAWN, "the class of spawning /bin/true", error_class,
          MPI_ERR_SPAWN);
    check(children == MPI_COMM_NULL, "the intercommunicator of a failed spawn is null", 0, 1);
  }
  MPI_Finalize();
  if (failures == 0 && parent == MPI_COMM_NULL && me == 0) printf("spawn_children: ok\n");
  return failures == 0 ? 0 : 1;
}
