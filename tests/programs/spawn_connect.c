/* Ports, service names and MPI_Comm_join between worlds of one job.
 * - The first world opens a port, publishes it as a service name and spawns 2 children (a world
 *   of their own, told nothing about the port); the children look the name up and connect;
 *   the first world accepts. Both sides check the new intercommunicator's groups and exchange
 *   messages over it, then disconnect. Looking the name up after it was unpublished fails with
 *   MPI_ERR_NAME.
 * - Ranks 0 and 1 of the first world join over a TCP connection (they may live in different
 *   processes) and exchange messages over the intercommunicator of the two.
 * Exits 1 with a message naming the rank on any difference. */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char kService[] = "weft-spawn-connect-test";
static int failures;
static const char* who = "parent";
static int me = -1;

static void check(int ok, const char* what, long got, long expected) {
  if (ok) return;
  fprintf(stderr, "%s %d: %s is %ld; expected %ld\n", who, me, what, got, expected);
  ++failures;
}

/* Both sides: the other group has `remote` ranks; rank 0 of each side sends its group's size
 * to every rank of the other, and every rank receives it. */
static void talk(MPI_Comm inter, int local, int remote) {
  int size = -1, remote_size = -1;
  MPI_Comm_size(inter, &size);
  MPI_Comm_remote_size(inter, &remote_size);
  check(size == local, "the local group's size", size, local);
  check(remote_size == remote, "the remote group's size", remote_size, remote);
  int rank = -1;
  MPI_Comm_rank(inter, &rank);
  if (rank == 0) {
    for (int r = 0; r < remote_size; ++r) MPI_Send(&size, 1, MPI_INT, r, 3, inter);
  }
  int got = -1;
  MPI_Recv(&got, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
  check(got == remote, "what the other side's rank 0 sent", got, remote);
}

static void join(int rank) {
  int fd = -1;
  if (rank == 0) {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    bind(listener, (struct sockaddr*)&address, sizeof address);
    listen(listener, 1);
    getsockname(listener, (struct sockaddr*)&address, &length);
    int port = ntohs(address.sin_port);
    MPI_Send(&port, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    fd = accept(listener, NULL, NULL);
    close(listener);
  } else {
    int port = -1;
    MPI_Recv(&port, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) {
      check(0, "connect to rank 0's socket", -1, 0);
      return;
    }
  }
  MPI_Comm inter;
  MPI_Comm_join(fd, &inter);
  close(fd);
  talk(inter, 1, 1);
  int value = rank == 0 ? 42 : -1;
  if (rank == 0) {
    MPI_Send(&value, 1, MPI_INT, 0, 4, inter);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 0, 4, inter, MPI_STATUS_IGNORE);
    check(value == 42, "what rank 0 sent over the joined communicator", value, 42);
  }
  MPI_Comm_disconnect(&inter);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  me = rank;
  char port[MPI_MAX_PORT_NAME];
  const int spawned = parent != MPI_COMM_NULL;
  if (spawned) {
    who = "child";
    int parents = -1;
    MPI_Comm_remote_size(parent, &parents);
    /* The parents publish before they spawn. */
    MPI_Lookup_name(kService, MPI_INFO_NULL, port);
    MPI_Comm server;
    MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server);
    talk(server, size, parents);
    MPI_Comm_disconnect(&server);
    MPI_Comm_disconnect(&parent);
  } else {
    if (rank == 0) {
      MPI_Open_port(MPI_INFO_NULL, port);
      MPI_Publish_name(kService, MPI_INFO_NULL, port);
    }
    MPI_Comm children;
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children,
                   MPI_ERRCODES_IGNORE);
    MPI_Comm client;
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &client);
    talk(client, size, 2);
    MPI_Comm_disconnect(&client);
    MPI_Comm_disconnect(&children);
    if (rank == 0) {
      MPI_Unpublish_name(kService, MPI_INFO_NULL, port);
      MPI_Close_port(port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = MPI_Lookup_name(kService, MPI_INFO_NULL, port);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    check(error_class == MPI_ERR_NAME, "the class of looking up an unpublished name", error_class,
          MPI_ERR_NAME);
    if (size >= 2 && rank < 2) join(rank);
  }
  MPI_Finalize();
  if (failures == 0 && !spawned && rank == 0) printf("spawn_connect: ok\n");
  return failures == 0 ? 0 : 1;
}
