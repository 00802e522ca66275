// The nonblocking (MPI_I<name>) and persistent (MPI_<name>_init) collectives, each checked against
// its blocking twin on the same inputs: every collective, small and large, contiguous and strided
// types, commutative and rank-ordered operations, on MPI_COMM_WORLD and split communicators, 1 to
// 64 ranks on two cores, under every progress policy; many in flight at once among point-to-point
// traffic; a rank that waits only at the very end; and the errors these calls report.
#include <memory>

#include "nbc_cases.h"
#include "process_job.h"

namespace weft::mpi::testing {
namespace {

struct Setting {
  Shape shape;
  std::string progress;  // placement.progress
  int processes = 1;     // the ranks spread over this many processes (process_job.h)
};

std::string setting_name(const ::testing::TestParamInfo<Setting>& info) {
  return std::to_string(info.param.shape.ranks) + "ranks_" + std::to_string(info.param.shape.vps) +
         "vps_" + info.param.progress +
         (info.param.processes > 1 ? "_" + std::to_string(info.param.processes) + "processes" : "");
}

std::vector<Setting> settings() {
  std::vector<Setting> all;
  for (const char* progress : {"none", "colocated", "numa", "dedicated"}) {
    for (Shape shape : {Shape{1, 1}, Shape{2, 2}, Shape{7, 2}, Shape{64, 2}}) {
      all.push_back({shape, progress});
    }
  }
  // Between processes every collective is point-to-point through UCX, whatever the policy.
  for (auto [shape, processes] :
       {std::pair{Shape{2, 2}, 2}, std::pair{Shape{7, 2}, 3}, std::pair{Shape{16, 2}, 4}}) {
    all.push_back({shape, "none", processes});
  }
  return all;
}

void run_setting(const Setting& s, const std::function<void(int rank, int size)>& body) {
  const auto ranks_body = [&](int rank) { body(rank, s.shape.ranks); };
  const int status =
      s.processes > 1
          ? weft::testing::run_processes(s.processes, s.shape.ranks, s.shape.vps, ranks_body,
                                         {{"placement.progress", s.progress}})
          : weft::testing::run_ranks(s.shape.ranks, s.shape.vps, ranks_body,
                                     {{"placement.progress", s.progress}});
  EXPECT_EQ(status, 0);
}

// Elements per block of a large call: past the size that the last member copies alone, so that
// the work goes to progress threads, without 64 ranks' all-to-all buffers growing large.
int large_count(int size) {
  return size <= 8 ? 5000 : 300;
}

// Takes the left operand: associative, not commutative, so a fold out of rank order shows.
void take_left(void* in, void* inout, int* len, MPI_Datatype*) {
  std::copy_n(static_cast<const int*>(in), *len, static_cast<int*>(inout));
}

// The layouts data-moving collectives run on: plain ints, and a strided type of two ints with a
// one-int gap between them (extent 3) that no collective may write.
struct Layouts {
  std::vector<Layout> all;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  Layouts() {
    MPI_Datatype vector = MPI_DATATYPE_NULL;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vector);
    MPI_Type_create_resized(vector, 0, 3 * sizeof(int), &strided);
    MPI_Type_free(&vector);
    MPI_Type_commit(&strided);
    all = {{MPI_INT, 1, "int"}, {strided, 3, "strided"}};
  }
  ~Layouts() { MPI_Type_free(&strided); }
};

// Runs `c` in `mode` on fresh buffers of (rank, salt) and returns what it received. A persistent
// call is started twice, with the buffers refilled from `salt` + 1 in between; `second` receives
// that second result.
std::vector<int> run_case(const Case& c, Mode mode, const CallArgs& a, int rank, int size, int salt,
                          std::vector<int>* second = nullptr) {
  CallBuffers b;
  c.prepare(b, rank, size, a, salt);
  MPI_Request request = MPI_REQUEST_NULL;
  EXPECT_EQ(c.call(mode, b, a, &request), MPI_SUCCESS) << c.name;
  if (mode == Mode::blocking) return b.recv;
  if (mode == Mode::nonblocking) {
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS) << c.name;
    EXPECT_EQ(request, MPI_REQUEST_NULL);
    return b.recv;
  }
  EXPECT_EQ(MPI_Start(&request), MPI_SUCCESS) << c.name;
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS) << c.name;
  EXPECT_NE(request, MPI_REQUEST_NULL) << "a persistent request stays allocated";
  const std::vector<int> first = b.recv;
  CallBuffers refill;
  c.prepare(refill, rank, size, a, salt + 1);
  std::copy(refill.send.begin(), refill.send.end(), b.send.begin());
  std::copy(refill.recv.begin(), refill.recv.end(), b.recv.begin());
  EXPECT_EQ(MPI_Start(&request), MPI_SUCCESS) << c.name;
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS) << c.name;
  if (second != nullptr) *second = b.recv;
  EXPECT_EQ(MPI_Request_free(&request), MPI_SUCCESS);
  return first;
}

void expect_same(const std::vector<int>& got, const std::vector<int>& want,
                 const std::string& what) {
  expect_elements(
      got, [&](std::size_t i) { return want[i]; }, what);
}

class Nbc : public ::testing::TestWithParam<Setting> {};

TEST_P(Nbc, EveryCollectiveAgreesWithItsBlockingTwin) {
  run_setting(GetParam(), [](int rank, int size) {
    const Layouts layouts;
    MPI_Op left = MPI_OP_NULL;
    MPI_Op_create(take_left, 0, &left);
    // Split communicators: the tests run on the world and on each half, in reverse rank order.
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int half_size = 0;
    MPI_Comm_size(half, &half_size);
    int salt = 0;
    for (const Case& c : all_cases()) {
      for (MPI_Comm comm : {MPI_COMM_WORLD, half}) {
        const int members = comm == half ? half_size : size;
        int me = 0;
        MPI_Comm_rank(comm, &me);
        for (int count : {3, large_count(members)}) {
          for (const Layout& layout : layouts.all) {
            if (c.reduction && layout.type != MPI_INT) continue;
            for (MPI_Op op : {MPI_SUM, left}) {
              if (!c.reduction && op != MPI_SUM) continue;
              const CallArgs a{comm, count, layout, op};
              const std::string what = c.name + " of " + std::to_string(count) + " " + layout.name +
                                       (comm == half ? " on a half" : "") +
                                       (op == left ? " with a user op" : "");
              ++salt;
              const std::vector<int> want = run_case(c, Mode::blocking, a, me, members, salt);
              const std::vector<int> want_next =
                  run_case(c, Mode::blocking, a, me, members, salt + 1);
              expect_same(run_case(c, Mode::nonblocking, a, me, members, salt), want, "I" + what);
              std::vector<int> second;
              expect_same(run_case(c, Mode::persistent, a, me, members, salt, &second), want,
                          what + ", persistent");
              expect_same(second, want_next, what + ", persistent, second start");
            }
          }
        }
      }
    }
    MPI_Comm_free(&half);
    MPI_Op_free(&left);
  });
}

// 32 nonblocking collectives in flight on the world and 8 on a half, with point-to-point
// messages around the ring posted between them; everything completes with one MPI_Waitall.
TEST_P(Nbc, ManyInFlightAmongPointToPoint) {
  run_setting(GetParam(), [](int rank, int size) {
    const Layouts layouts;
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int half_rank = 0, half_size = 0;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    const std::vector<Case> cases = all_cases();
    struct Call {
      const Case* c;
      CallArgs args;
      int rank;
      int size;
      int salt;
      CallBuffers buffers;
    };
    std::vector<std::unique_ptr<Call>> calls;
    std::vector<MPI_Request> requests;
    std::vector<int> tokens(64, -1);
    for (int i = 0; i < 40; ++i) {
      const bool on_half = i % 5 == 4;
      const int members = on_half ? half_size : size;
      const Case& c = cases[static_cast<std::size_t>(i * 7) % cases.size()];
      const Layout& layout = c.reduction ? layouts.all[0] : layouts.all[i % 2];
      auto call = std::make_unique<Call>(
          Call{&c,
               {on_half ? half : MPI_COMM_WORLD, i % 3 == 0 ? large_count(members) : 3 + i % 4,
                layout, MPI_SUM},
               on_half ? half_rank : rank,
               members,
               100 + i,
               {}});
      c.prepare(call->buffers, call->rank, call->size, call->args, call->salt);
      requests.push_back(MPI_REQUEST_NULL);
      ASSERT_EQ(c.call(Mode::nonblocking, call->buffers, call->args, &requests.back()),
                MPI_SUCCESS);
      calls.push_back(std::move(call));
      if (i < 32) {
        requests.push_back(MPI_REQUEST_NULL);
        MPI_Irecv(&tokens[static_cast<std::size_t>(i)], 1, MPI_INT, (rank + size - 1) % size, i,
                  MPI_COMM_WORLD, &requests.back());
        const int token = rank * 100 + i;
        MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, i, MPI_COMM_WORLD);
      }
    }
    ASSERT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              MPI_SUCCESS);
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(tokens[static_cast<std::size_t>(i)], ((rank + size - 1) % size) * 100 + i);
    }
    for (const auto& call : calls) {
      const std::vector<int> want =
          run_case(*call->c, Mode::blocking, call->args, call->rank, call->size, call->salt);
      expect_same(call->buffers.recv, want, call->c->name + " in flight");
    }
    MPI_Comm_free(&half);
  });
}

// Rank 0 starts each collective and then only receives a message from every other rank, sent
// once that rank's own wait has returned; it waits for the collective at the very end. The
// others' waits must not need rank 0 to enter MPI_Wait or MPI_Test.
TEST_P(Nbc, OthersCompleteWhileOneRankNeverWaits) {
  run_setting(GetParam(), [](int rank, int size) {
    const int count = large_count(size);
    std::vector<int> in(static_cast<std::size_t>(count), rank + 1);
    std::vector<int> sum(static_cast<std::size_t>(count), 0);
    std::vector<int> data(static_cast<std::size_t>(count), rank == 0 ? 42 : 0);
    MPI_Request requests[3];
    MPI_Iallreduce(in.data(), sum.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
    MPI_Ibcast(data.data(), count, MPI_INT, 0, MPI_COMM_WORLD, &requests[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &requests[2]);
    if (rank == 0) {
      for (int r = 1; r < size; ++r) {
        int done = 0;
        MPI_Recv(&done, 1, MPI_INT, r, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        EXPECT_EQ(done, 3) << "rank " << r;
      }
    } else {
      EXPECT_EQ(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
      const int done = 3;
      MPI_Send(&done, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }
    if (rank == 0) {
      EXPECT_EQ(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    }
    expect_elements(
        sum, [&](std::size_t) { return size * (size + 1) / 2; }, "Iallreduce");
    expect_elements(
        data, [](std::size_t) { return 42; }, "Ibcast");
  });
}

INSTANTIATE_TEST_SUITE_P(Settings, Nbc, ::testing::ValuesIn(settings()), setting_name);

// An Ibarrier is not complete before every member has called it: rank 0 tests it, then lets the
// others in.
TEST(NbcCompletion, IbarrierWaitsForTheLastArrival) {
  run_ranks({4, 2}, [](int rank, int) {
    MPI_Request barrier = MPI_REQUEST_NULL;
    if (rank == 0) {
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      int flag = 1;
      for (int i = 0; i < 100; ++i) {
        MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE);
        EXPECT_EQ(flag, 0) << "complete before the others called MPI_Ibarrier";
      }
      for (int r = 1; r < 4; ++r) MPI_Send(nullptr, 0, MPI_INT, r, 1, MPI_COMM_WORLD);
      MPI_Wait(&barrier, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(nullptr, 0, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      int flag = 0;
      while (flag == 0) MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE);
    }
  });
}

// More nonblocking collectives outstanding than the communicator's instance ring has slots
// (mpi/coll/instance_ring.h), of mixed kinds, with persistent ones among them: rank 0 issues a
// first batch alone, so that its later calls find their slots held by older ones and go to the
// map, while the others, coming after, find those slots released; then every rank issues a second
// batch at once, reusing slots whose instances the unwaited requests of the first still hold.
// Completed in reverse order, each result checked against its call's own numbers.
TEST(NbcRing, MoreOutstandingThanSlotsOfMixedKindsCompleteOutOfOrder) {
  for (const Shape shape : {Shape{2, 1}, Shape{2, 2}, Shape{3, 2}}) {
    run_ranks(shape, [](int rank, int size) {
      constexpr int kCalls = 3 * 16 + 5;  // per batch: past three turns of every slot
      struct Call {
        int kind = 0;
        int value = 0;
        int result = -1;
        MPI_Request request = MPI_REQUEST_NULL;
      };
      std::vector<Call> calls(2 * kCalls);
      MPI_Request persistent = MPI_REQUEST_NULL;
      int persistent_in = 0, persistent_sum = 0;
      auto issue = [&](int i) {
        Call& c = calls[static_cast<std::size_t>(i)];
        c.kind = i % 5;
        c.value = rank + 1 + i;
        const int root = i % size;
        switch (c.kind) {
          case 0:
            MPI_Ibarrier(MPI_COMM_WORLD, &c.request);
            break;
          case 1:
            c.result = rank == root ? 1000 + i : -1;
            MPI_Ibcast(&c.result, 1, MPI_INT, root, MPI_COMM_WORLD, &c.request);
            break;
          case 2:
            MPI_Iallreduce(&c.value, &c.result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &c.request);
            break;
          case 3:
            MPI_Ireduce(&c.value, &c.result, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &c.request);
            break;
          default:
            // A persistent init takes a call number as the others do.
            if (persistent == MPI_REQUEST_NULL) {
              MPI_Allreduce_init(&persistent_in, &persistent_sum, 1, MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &persistent);
            }
            break;
        }
      };
      if (rank == 0) {
        for (int i = 0; i < kCalls; ++i) issue(i);
        for (int r = 1; r < size; ++r) MPI_Send(nullptr, 0, MPI_INT, r, 7, MPI_COMM_WORLD);
      } else {
        MPI_Recv(nullptr, 0, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < kCalls; ++i) issue(i);
      }
      for (int i = kCalls; i < 2 * kCalls; ++i) issue(i);
      for (int i = 2 * kCalls - 1; i >= 0; --i) {
        Call& c = calls[static_cast<std::size_t>(i)];
        ASSERT_EQ(MPI_Wait(&c.request, MPI_STATUS_IGNORE), MPI_SUCCESS) << "call " << i;
        const int root = i % size;
        const int sum = size * (size + 1) / 2 + size * i;
        const int want = c.kind == 1 ? 1000 + i : sum;
        if (c.kind == 1 || c.kind == 2 || (c.kind == 3 && rank == root)) {
          EXPECT_EQ(c.result, want) << "call " << i << " of kind " << c.kind;
        }
      }
      // The persistent request's starts meet in a ring of their own: more of them than its slots.
      for (int start = 0; start < 40; ++start) {
        persistent_in = rank + start;
        MPI_Start(&persistent);
        MPI_Wait(&persistent, MPI_STATUS_IGNORE);
        EXPECT_EQ(persistent_sum, size * (size - 1) / 2 + size * start) << "start " << start;
      }
      MPI_Request_free(&persistent);
    });
  }
}

// MPI_COMM_SELF is one object whose every rank is its only member: the ranks' nonblocking calls on
// it, outstanding together, must each meet alone: in one shared instance ring, a rank that came
// while another's call held a slot would join that call's instance and wait forever (a window of a
// few instructions, hence many calls).
TEST(NbcRing, EachRanksCallsOnCommSelfMeetAlone) {
  run_ranks({3, 2}, [](int rank, int) {
    constexpr int kCalls = 4000;
    std::vector<int> in(kCalls), out(kCalls, -1);
    std::vector<MPI_Request> requests(kCalls, MPI_REQUEST_NULL);
    for (int i = 0; i < kCalls; ++i) {
      in[static_cast<std::size_t>(i)] = rank * 1000 + i;
      MPI_Iallreduce(&in[static_cast<std::size_t>(i)], &out[static_cast<std::size_t>(i)], 1,
                     MPI_INT, MPI_SUM, MPI_COMM_SELF, &requests[static_cast<std::size_t>(i)]);
    }
    ASSERT_EQ(MPI_Waitall(kCalls, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < kCalls; ++i) {
      EXPECT_EQ(out[static_cast<std::size_t>(i)], rank * 1000 + i) << "call " << i;
    }
  });
}

TEST(NbcErrors, ArgumentsAndRequestsAreChecked) {
  run_ranks({3, 2}, [](int rank, int) {
    weft::testing::errors_return();
    int v[4] = {1, 2, 3, 4};
    EXPECT_EQ(MPI_Ibarrier(MPI_COMM_WORLD, nullptr), MPI_ERR_ARG);
    MPI_Request request = MPI_REQUEST_NULL;
    EXPECT_EQ(MPI_Ibcast(v, 1, MPI_INT, 5, MPI_COMM_WORLD, &request), MPI_ERR_ROOT);
    EXPECT_EQ(MPI_Iallreduce(v, v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request), MPI_ERR_BUFFER);
    EXPECT_EQ(request, MPI_REQUEST_NULL) << "a refused call returns no request";

    // An active collective request can be neither freed nor cancelled (MPI-3.1 5.12).
    if (rank == 0) {
      MPI_Ibarrier(MPI_COMM_WORLD, &request);
      EXPECT_EQ(MPI_Request_free(&request), MPI_ERR_REQUEST);
      EXPECT_EQ(MPI_Cancel(&request), MPI_ERR_REQUEST);
      for (int r = 1; r < 3; ++r) MPI_Send(nullptr, 0, MPI_INT, r, 2, MPI_COMM_WORLD);
    } else {
      MPI_Recv(nullptr, 0, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Ibarrier(MPI_COMM_WORLD, &request);
    }
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);

    // Truncation reaches the member that received too little, through its wait.
    int got[4] = {0, 0, 0, 0};
    MPI_Ibcast(rank == 0 ? v : got, rank == 2 ? 2 : 4, MPI_INT, 0, MPI_COMM_WORLD, &request);
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), rank == 2 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    // A persistent collective starts again only once complete.
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS) << "inactive: returns at once";
    MPI_Start(&request);
    if (rank == 0) {
      EXPECT_EQ(MPI_Start(&request), MPI_ERR_REQUEST);
    }
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(MPI_Request_free(&request), MPI_SUCCESS);
  });
}

// Contributions that disagree fail every member's reduction, and nothing is written.
TEST(NbcErrors, DisagreeingContributionsFailEveryMember) {
  run_ranks({3, 2}, [](int rank, int) {
    weft::testing::errors_return();
    int v[4] = {1, 2, 3, 4};
    int sum[4] = {-1, -1, -1, -1};
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallreduce(v, sum, rank == 1 ? 3 : 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    EXPECT_EQ(sum[0], -1);
  });
}

class NbcDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(NbcDeath, ABlockingCallMatchedWithANonblockingOneEndsTheJob) {
  // Between processes the heads' messages tell the kinds apart, not the calls' names.
  const char* expected =
      weft::testing::test_processes() > 1
          ? "weft: collective calls out of order: rank [01]'s collective call #0 on a "
            "communicator is a (non)?blocking collective where the member of comm rank [01], in "
            "another process, made a (non)?blocking one"
          : "weft: collective calls out of order: rank [01]'s collective call #0 on a "
            "communicator is MPI_I?[Bb]arrier where another member's is";
  EXPECT_EXIT(
      weft::testing::exit_with(weft::testing::run_ranks(2, 1,
                                                        [](int rank) {
                                                          if (rank == 0) {
                                                            MPI_Barrier(MPI_COMM_WORLD);
                                                          } else {
                                                            MPI_Request request = MPI_REQUEST_NULL;
                                                            MPI_Ibarrier(MPI_COMM_WORLD, &request);
                                                            MPI_Wait(&request, MPI_STATUS_IGNORE);
                                                          }
                                                        })),
      ::testing::ExitedWithCode(1), expected);
}

// The same two calls in opposite orders: inside one process the two blocking calls meet at the
// same place of the ring with different call numbers (or one side sees the other's call first).
TEST_F(NbcDeath, CallsOfBothKindsInOppositeOrdersEndTheJob) {
  const char* expected =
      weft::testing::test_processes() > 1
          ? "weft: collective calls out of order: rank [01]'s collective call #[01] on a "
            "communicator is a (non)?blocking collective where the member of comm rank [01], in "
            "another process, made a (non)?blocking one"
          : "weft: collective calls out of order: rank [01]'s collective call #0 on a "
            "communicator is MPI_I?[Bb]arrier where another member's is MPI_I?[Bb]arrier";
  EXPECT_EXIT(
      weft::testing::exit_with(weft::testing::run_ranks(2, 1,
                                                        [](int rank) {
                                                          MPI_Request request;
                                                          if (rank == 0) {
                                                            MPI_Ibarrier(MPI_COMM_WORLD, &request);
                                                            MPI_Barrier(MPI_COMM_WORLD);
                                                          } else {
                                                            MPI_Barrier(MPI_COMM_WORLD);
                                                            MPI_Ibarrier(MPI_COMM_WORLD, &request);
                                                          }
                                                          MPI_Wait(&request, MPI_STATUS_IGNORE);
                                                        })),
      ::testing::ExitedWithCode(1), expected);
}

// Four ranks, one of them nonblocking: inside one process the members' meeting finds it; spread
// over 2 processes, the meeting of rank 1's group (ranks 0 and 1); over 4, the engine of a
// member that receives the other kind's message.
TEST_F(NbcDeath, OneNonblockingCallAmongBlockingOnesEndsTheJob) {
  const char* expected = nullptr;
  switch (weft::testing::test_processes()) {
    case 1:
      expected =
          "rank [0-3]'s collective call #0 on a communicator is (MPI_Ibarrier|MPI_Barrier) where "
          "another member's is (MPI_Ibarrier|MPI_Barrier)";
      break;
    case 2:
      expected =
          "rank [01]'s collective call #0 on a communicator is a (non)?blocking collective "
          "where another member's is a (non)?blocking collective";
      break;
    default:
      expected =
          "rank [0-3]'s collective call #0 on a communicator is a (non)?blocking collective "
          "where the member of comm rank [0-3], in another process, made a (non)?blocking "
          "one";
  }
  EXPECT_EXIT(
      weft::testing::exit_with(weft::testing::run_ranks(4, 1,
                                                        [](int rank) {
                                                          if (rank == 1) {
                                                            MPI_Request request;
                                                            MPI_Ibarrier(MPI_COMM_WORLD, &request);
                                                            MPI_Wait(&request, MPI_STATUS_IGNORE);
                                                          } else {
                                                            MPI_Barrier(MPI_COMM_WORLD);
                                                          }
                                                        })),
      ::testing::ExitedWithCode(1), expected);
}

TEST_F(NbcDeath, AFailedWaitNamesTheCollective) {
  // Between processes no member sees the others' arguments: the message names the call and the
  // mismatch, not the member that disagrees.
  const char* expected =
      weft::testing::test_processes() > 1
          ? "MPI_Wait \\(rank [01]\\): MPI_ERR_TRUNCATE: MPI_Iallreduce: the members' data and "
            "the buffers that receive it differ in size"
          : "MPI_Wait \\(rank [01]\\): MPI_ERR_TRUNCATE: MPI_Iallreduce: rank 1 passed 2 "
            "elements";
  EXPECT_EXIT(weft::testing::exit_with(
                  weft::testing::run_ranks(2, 1,
                                           [](int rank) {
                                             int v[2] = {1, 2};
                                             MPI_Request request = MPI_REQUEST_NULL;
                                             MPI_Iallreduce(MPI_IN_PLACE, v, rank + 1, MPI_INT,
                                                            MPI_SUM, MPI_COMM_WORLD, &request);
                                             MPI_Wait(&request, MPI_STATUS_IGNORE);
                                           })),
              ::testing::ExitedWithCode(1), expected);
}

}  // namespace
}  // namespace weft::mpi::testing
