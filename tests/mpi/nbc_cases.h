// Every collective of MPI-3.1 as a "case" that runs in three modes (blocking, nonblocking with
// MPI_I<name>, persistent with MPI_<name>_init) on buffers it owns, so that the nonblocking tests
// check each nonblocking and persistent collective against its blocking twin on the same inputs.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "collective_testing.h"

namespace weft::mpi::testing {

enum class Mode { blocking, nonblocking, persistent };

// How a buffer's elements are laid out: `type` occupies `width` ints (its extent). A strided type
// leaves gaps that no collective may write.
struct Layout {
  MPI_Datatype type;
  int width;
  std::string name;
};

// The buffers of one call, and the counts and displacements of the v and w forms.
struct CallBuffers {
  std::vector<int> send;
  std::vector<int> recv;
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls, sdispls_bytes, rdispls_bytes;
  std::vector<MPI_Datatype> sendtypes, recvtypes;
};

// What a call needs besides its buffers.
struct CallArgs {
  MPI_Comm comm;
  int count;  // elements per block
  Layout layout;
  MPI_Op op;  // reductions only
};

struct Case {
  std::string name;
  bool reduction;  // takes an op, on MPI_INT only
  // Sizes and fills the buffers of member `rank` of `size`; `salt` changes the values.
  std::function<void(CallBuffers& b, int rank, int size, const CallArgs& args, int salt)> prepare;
  // Makes the call in `mode`; the I-form and the _init form return their request.
  std::function<int(Mode mode, CallBuffers& b, const CallArgs& args, MPI_Request* request)> call;
};

// Calls `blocking`, `nonblocking(request)` or `persistent(request)` as `mode` says.
template <class B, class N, class P>
int dispatch(Mode mode, MPI_Request* request, B&& blocking, N&& nonblocking, P&& persistent) {
  switch (mode) {
    case Mode::blocking:
      return blocking();
    case Mode::nonblocking:
      return nonblocking(request);
    case Mode::persistent:
      break;
  }
  return persistent(request);
}

namespace cases {

inline int block(const CallArgs& a) {
  return a.count * a.layout.width;
}
// `elements` elements of values from (rank, salt), gaps included (they are never sent).
inline std::vector<int> values(int rank, int salt, std::size_t ints) {
  std::vector<int> v(ints);
  for (std::size_t i = 0; i < ints; ++i) v[i] = value(rank, i) + 7 * salt;
  return v;
}
inline std::vector<int> empty(std::size_t ints) {
  return std::vector<int>(ints, -1);
}
// Element counts that differ per peer (some zero), and displacements leaving a one-element gap
// after every block; returns the total extent in elements.
inline int varying(int count, int size, int shift, std::vector<int>& counts,
                   std::vector<int>& displs) {
  counts.assign(static_cast<std::size_t>(size), 0);
  displs.assign(static_cast<std::size_t>(size), 0);
  int next = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = count > 2 ? count - (r + shift) % 3 : (r + shift) % 2;
    displs[r] = next;
    next += counts[r] + 1;
  }
  return next;
}
inline int root_of(int size) {
  return size / 2;
}
// The caller's place in a communicator, and the root the cases use there.
struct Place {
  int rank = 0;
  int size = 0;
  int root = 0;
};
inline Place place_in(MPI_Comm comm) {
  Place p;
  MPI_Comm_rank(comm, &p.rank);
  MPI_Comm_size(comm, &p.size);
  p.root = root_of(p.size);
  return p;
}
inline std::size_t ints(int elements, const CallArgs& a) {
  return static_cast<std::size_t>(elements) * static_cast<std::size_t>(a.layout.width);
}

}  // namespace cases

// The reductions, on MPI_INT, each plain and in place.
inline void add_reductions(std::vector<Case>& all) {
  using namespace cases;
  // A reduction's send and receive buffers: `in_count` elements in, `out_count` out; in place the
  // receive buffer holds the input.
  auto prepare = [](bool in_place, auto in_count, auto out_count) {
    return [=](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
      b.send = values(rank, salt, static_cast<std::size_t>(in_count(a.count, size)));
      b.recv = empty(static_cast<std::size_t>(out_count(a.count, size, rank)));
      if (in_place) {
        b.recv.resize(std::max(b.recv.size(), b.send.size()), -1);
        std::copy(b.send.begin(), b.send.end(), b.recv.begin());
      }
    };
  };
  auto same = [](int count, int) { return count; };
  auto same_out = [](int count, int, int) { return count; };
  for (bool in_place : {false, true}) {
    const std::string suffix = in_place ? " in place" : "";
    all.push_back(
        {"Reduce" + suffix, true,
         [=](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
           prepare(in_place && rank == root_of(size), same, same_out)(b, rank, size, a, salt);
         },
         [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
           const Place at = place_in(a.comm);
           const int rank = at.rank;
           const int root = at.root;
           const void* send = in_place && rank == root ? MPI_IN_PLACE : b.send.data();
           return dispatch(
               m, q,
               [&] {
                 return MPI_Reduce(send, b.recv.data(), a.count, MPI_INT, a.op, root, a.comm);
               },
               [&](MPI_Request* r) {
                 return MPI_Ireduce(send, b.recv.data(), a.count, MPI_INT, a.op, root, a.comm, r);
               },
               [&](MPI_Request* r) {
                 return MPI_Reduce_init(send, b.recv.data(), a.count, MPI_INT, a.op, root, a.comm,
                                        MPI_INFO_NULL, r);
               });
         }});
    all.push_back({"Reduce_scatter_block" + suffix, true,
                   prepare(
                       in_place, [](int count, int size) { return count * size; }, same_out),
                   [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                     const void* send = in_place ? MPI_IN_PLACE : b.send.data();
                     return dispatch(
                         m, q,
                         [&] {
                           return MPI_Reduce_scatter_block(send, b.recv.data(), a.count, MPI_INT,
                                                           a.op, a.comm);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Ireduce_scatter_block(send, b.recv.data(), a.count, MPI_INT,
                                                            a.op, a.comm, r);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Reduce_scatter_block_init(send, b.recv.data(), a.count,
                                                                MPI_INT, a.op, a.comm,
                                                                MPI_INFO_NULL, r);
                         });
                   }});
    // Member r receives count + r % 2 elements.
    all.push_back({"Reduce_scatter" + suffix, true,
                   prepare(
                       in_place, [](int count, int size) { return count * size + size / 2; },
                       [](int count, int, int rank) { return count + rank % 2; }),
                   [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                     int size = 0;
                     MPI_Comm_size(a.comm, &size);
                     b.recvcounts.clear();
                     for (int r = 0; r < size; ++r) b.recvcounts.push_back(a.count + r % 2);
                     const void* send = in_place ? MPI_IN_PLACE : b.send.data();
                     return dispatch(
                         m, q,
                         [&] {
                           return MPI_Reduce_scatter(send, b.recv.data(), b.recvcounts.data(),
                                                     MPI_INT, a.op, a.comm);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Ireduce_scatter(send, b.recv.data(), b.recvcounts.data(),
                                                      MPI_INT, a.op, a.comm, r);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Reduce_scatter_init(send, b.recv.data(), b.recvcounts.data(),
                                                          MPI_INT, a.op, a.comm, MPI_INFO_NULL, r);
                         });
                   }});
    // Allreduce, Scan and Exscan take the same arguments.
    struct SameShape {
      const char* name;
      decltype(&MPI_Allreduce) blocking;
      decltype(&MPI_Iallreduce) nonblocking;
      decltype(&MPI_Allreduce_init) persistent;
    };
    for (SameShape f : {SameShape{"Allreduce", MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init},
                        SameShape{"Scan", MPI_Scan, MPI_Iscan, MPI_Scan_init},
                        SameShape{"Exscan", MPI_Exscan, MPI_Iexscan, MPI_Exscan_init}}) {
      all.push_back(
          {f.name + suffix, true, prepare(in_place, same, same_out),
           [in_place, f](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
             const void* send = in_place ? MPI_IN_PLACE : b.send.data();
             return dispatch(
                 m, q,
                 [&] { return f.blocking(send, b.recv.data(), a.count, MPI_INT, a.op, a.comm); },
                 [&](MPI_Request* r) {
                   return f.nonblocking(send, b.recv.data(), a.count, MPI_INT, a.op, a.comm, r);
                 },
                 [&](MPI_Request* r) {
                   return f.persistent(send, b.recv.data(), a.count, MPI_INT, a.op, a.comm,
                                       MPI_INFO_NULL, r);
                 });
           }});
    }
  }
}

// Every collective of MPI-3.1, with its MPI_IN_PLACE forms.
inline std::vector<Case> all_cases() {
  using namespace cases;
  std::vector<Case> all;
  all.push_back({"Barrier", false, [](CallBuffers&, int, int, const CallArgs&, int) {},
                 [](Mode m, CallBuffers&, const CallArgs& a, MPI_Request* q) {
                   return dispatch(
                       m, q, [&] { return MPI_Barrier(a.comm); },
                       [&](MPI_Request* r) { return MPI_Ibarrier(a.comm, r); },
                       [&](MPI_Request* r) { return MPI_Barrier_init(a.comm, MPI_INFO_NULL, r); });
                 }});
  all.push_back(
      {"Bcast", false,
       [](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
         b.recv =
             rank == root_of(size) ? values(rank, salt, ints(a.count, a)) : empty(ints(a.count, a));
       },
       [](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
         const int root = place_in(a.comm).root;
         return dispatch(
             m, q, [&] { return MPI_Bcast(b.recv.data(), a.count, a.layout.type, root, a.comm); },
             [&](MPI_Request* r) {
               return MPI_Ibcast(b.recv.data(), a.count, a.layout.type, root, a.comm, r);
             },
             [&](MPI_Request* r) {
               return MPI_Bcast_init(b.recv.data(), a.count, a.layout.type, root, a.comm,
                                     MPI_INFO_NULL, r);
             });
       }});
  for (bool in_place : {false, true}) {
    all.push_back({in_place ? "Gather in place" : "Gather", false,
                   [in_place](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
                     b.send = values(rank, salt, ints(a.count, a));
                     const bool root = rank == root_of(size);
                     b.recv = empty(root ? ints(a.count * size, a) : 0);
                     if (root && in_place) {
                       std::copy(b.send.begin(), b.send.end(),
                                 b.recv.begin() + static_cast<long>(ints(a.count * rank, a)));
                     }
                   },
                   [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                     const Place at = place_in(a.comm);
                     const int rank = at.rank;
                     const int root = at.root;
                     const void* send = in_place && rank == root ? MPI_IN_PLACE : b.send.data();
                     return dispatch(
                         m, q,
                         [&] {
                           return MPI_Gather(send, a.count, a.layout.type, b.recv.data(), a.count,
                                             a.layout.type, root, a.comm);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Igather(send, a.count, a.layout.type, b.recv.data(), a.count,
                                              a.layout.type, root, a.comm, r);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Gather_init(send, a.count, a.layout.type, b.recv.data(),
                                                  a.count, a.layout.type, root, a.comm,
                                                  MPI_INFO_NULL, r);
                         });
                   }});
    all.push_back(
        {in_place ? "Scatter in place" : "Scatter", false,
         [](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
           const bool root = rank == root_of(size);
           b.send = root ? values(rank, salt, ints(a.count * size, a)) : std::vector<int>{};
           b.recv = empty(ints(a.count, a));
         },
         [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
           const Place at = place_in(a.comm);
           const int rank = at.rank;
           const int root = at.root;
           void* recv = in_place && rank == root ? MPI_IN_PLACE : b.recv.data();
           return dispatch(
               m, q,
               [&] {
                 return MPI_Scatter(b.send.data(), a.count, a.layout.type, recv, a.count,
                                    a.layout.type, root, a.comm);
               },
               [&](MPI_Request* r) {
                 return MPI_Iscatter(b.send.data(), a.count, a.layout.type, recv, a.count,
                                     a.layout.type, root, a.comm, r);
               },
               [&](MPI_Request* r) {
                 return MPI_Scatter_init(b.send.data(), a.count, a.layout.type, recv, a.count,
                                         a.layout.type, root, a.comm, MPI_INFO_NULL, r);
               });
         }});
    all.push_back({in_place ? "Allgather in place" : "Allgather", false,
                   [in_place](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
                     b.send = values(rank, salt, ints(a.count, a));
                     b.recv = empty(ints(a.count * size, a));
                     if (in_place) {
                       std::copy(b.send.begin(), b.send.end(),
                                 b.recv.begin() + static_cast<long>(ints(a.count * rank, a)));
                     }
                   },
                   [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                     const void* send = in_place ? MPI_IN_PLACE : b.send.data();
                     return dispatch(
                         m, q,
                         [&] {
                           return MPI_Allgather(send, a.count, a.layout.type, b.recv.data(),
                                                a.count, a.layout.type, a.comm);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Iallgather(send, a.count, a.layout.type, b.recv.data(),
                                                 a.count, a.layout.type, a.comm, r);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Allgather_init(send, a.count, a.layout.type, b.recv.data(),
                                                     a.count, a.layout.type, a.comm, MPI_INFO_NULL,
                                                     r);
                         });
                   }});
    all.push_back({in_place ? "Alltoall in place" : "Alltoall", false,
                   [in_place](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
                     b.send = values(rank, salt, ints(a.count * size, a));
                     b.recv = in_place ? b.send : empty(ints(a.count * size, a));
                   },
                   [in_place](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                     const void* send = in_place ? MPI_IN_PLACE : b.send.data();
                     return dispatch(
                         m, q,
                         [&] {
                           return MPI_Alltoall(send, a.count, a.layout.type, b.recv.data(), a.count,
                                               a.layout.type, a.comm);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Ialltoall(send, a.count, a.layout.type, b.recv.data(),
                                                a.count, a.layout.type, a.comm, r);
                         },
                         [&](MPI_Request* r) {
                           return MPI_Alltoall_init(send, a.count, a.layout.type, b.recv.data(),
                                                    a.count, a.layout.type, a.comm, MPI_INFO_NULL,
                                                    r);
                         });
                   }});
  }
  all.push_back({"Gatherv", false,
                 [](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
                   const int extent = varying(a.count, size, 0, b.recvcounts, b.rdispls);
                   b.send = values(rank, salt, ints(b.recvcounts[rank], a));
                   b.recv = empty(rank == root_of(size) ? ints(extent, a) : 0);
                 },
                 [](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                   const Place at = place_in(a.comm);
                   const int rank = at.rank;
                   const int root = at.root;
                   const int n = b.recvcounts[rank];
                   return dispatch(
                       m, q,
                       [&] {
                         return MPI_Gatherv(b.send.data(), n, a.layout.type, b.recv.data(),
                                            b.recvcounts.data(), b.rdispls.data(), a.layout.type,
                                            root, a.comm);
                       },
                       [&](MPI_Request* r) {
                         return MPI_Igatherv(b.send.data(), n, a.layout.type, b.recv.data(),
                                             b.recvcounts.data(), b.rdispls.data(), a.layout.type,
                                             root, a.comm, r);
                       },
                       [&](MPI_Request* r) {
                         return MPI_Gatherv_init(b.send.data(), n, a.layout.type, b.recv.data(),
                                                 b.recvcounts.data(), b.rdispls.data(),
                                                 a.layout.type, root, a.comm, MPI_INFO_NULL, r);
                       });
                 }});
  all.push_back(
      {"Scatterv", false,
       [](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
         const int extent = varying(a.count, size, 1, b.sendcounts, b.sdispls);
         b.send = rank == root_of(size) ? values(rank, salt, ints(extent, a)) : std::vector<int>{};
         b.recv = empty(ints(b.sendcounts[rank], a));
       },
       [](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
         const Place at = place_in(a.comm);
         const int rank = at.rank;
         const int root = at.root;
         const int n = b.sendcounts[rank];
         return dispatch(
             m, q,
             [&] {
               return MPI_Scatterv(b.send.data(), b.sendcounts.data(), b.sdispls.data(),
                                   a.layout.type, b.recv.data(), n, a.layout.type, root, a.comm);
             },
             [&](MPI_Request* r) {
               return MPI_Iscatterv(b.send.data(), b.sendcounts.data(), b.sdispls.data(),
                                    a.layout.type, b.recv.data(), n, a.layout.type, root, a.comm,
                                    r);
             },
             [&](MPI_Request* r) {
               return MPI_Scatterv_init(b.send.data(), b.sendcounts.data(), b.sdispls.data(),
                                        a.layout.type, b.recv.data(), n, a.layout.type, root,
                                        a.comm, MPI_INFO_NULL, r);
             });
       }});
  all.push_back({"Allgatherv", false,
                 [](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
                   const int extent = varying(a.count, size, 2, b.recvcounts, b.rdispls);
                   b.send = values(rank, salt, ints(b.recvcounts[rank], a));
                   b.recv = empty(ints(extent, a));
                 },
                 [](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
                   int rank = 0;
                   MPI_Comm_rank(a.comm, &rank);
                   const int n = b.recvcounts[rank];
                   return dispatch(
                       m, q,
                       [&] {
                         return MPI_Allgatherv(b.send.data(), n, a.layout.type, b.recv.data(),
                                               b.recvcounts.data(), b.rdispls.data(), a.layout.type,
                                               a.comm);
                       },
                       [&](MPI_Request* r) {
                         return MPI_Iallgatherv(b.send.data(), n, a.layout.type, b.recv.data(),
                                                b.recvcounts.data(), b.rdispls.data(),
                                                a.layout.type, a.comm, r);
                       },
                       [&](MPI_Request* r) {
                         return MPI_Allgatherv_init(b.send.data(), n, a.layout.type, b.recv.data(),
                                                    b.recvcounts.data(), b.rdispls.data(),
                                                    a.layout.type, a.comm, MPI_INFO_NULL, r);
                       });
                 }});
  for (bool typed : {false, true}) {
    all.push_back(
        {typed ? "Alltoallw" : "Alltoallv", false,
         [](CallBuffers& b, int rank, int size, const CallArgs& a, int salt) {
           // What rank p sends to q is count - (p + q) % 3 elements, so both sides agree.
           const int send_extent = varying(a.count, size, rank, b.sendcounts, b.sdispls);
           const int recv_extent = varying(a.count, size, rank, b.recvcounts, b.rdispls);
           b.send = values(rank, salt, ints(send_extent, a));
           b.recv = empty(ints(recv_extent, a));
           const int bytes = a.layout.width * static_cast<int>(sizeof(int));
           b.sdispls_bytes.clear();
           b.rdispls_bytes.clear();
           for (int p = 0; p < size; ++p) {
             b.sdispls_bytes.push_back(b.sdispls[p] * bytes);
             b.rdispls_bytes.push_back(b.rdispls[p] * bytes);
           }
           b.sendtypes.assign(static_cast<std::size_t>(size), a.layout.type);
           b.recvtypes.assign(static_cast<std::size_t>(size), a.layout.type);
         },
         [typed](Mode m, CallBuffers& b, const CallArgs& a, MPI_Request* q) {
           if (typed) {
             return dispatch(
                 m, q,
                 [&] {
                   return MPI_Alltoallw(b.send.data(), b.sendcounts.data(), b.sdispls_bytes.data(),
                                        b.sendtypes.data(), b.recv.data(), b.recvcounts.data(),
                                        b.rdispls_bytes.data(), b.recvtypes.data(), a.comm);
                 },
                 [&](MPI_Request* r) {
                   return MPI_Ialltoallw(b.send.data(), b.sendcounts.data(), b.sdispls_bytes.data(),
                                         b.sendtypes.data(), b.recv.data(), b.recvcounts.data(),
                                         b.rdispls_bytes.data(), b.recvtypes.data(), a.comm, r);
                 },
                 [&](MPI_Request* r) {
                   return MPI_Alltoallw_init(
                       b.send.data(), b.sendcounts.data(), b.sdispls_bytes.data(),
                       b.sendtypes.data(), b.recv.data(), b.recvcounts.data(),
                       b.rdispls_bytes.data(), b.recvtypes.data(), a.comm, MPI_INFO_NULL, r);
                 });
           }
           return dispatch(
               m, q,
               [&] {
                 return MPI_Alltoallv(b.send.data(), b.sendcounts.data(), b.sdispls.data(),
                                      a.layout.type, b.recv.data(), b.recvcounts.data(),
                                      b.rdispls.data(), a.layout.type, a.comm);
               },
               [&](MPI_Request* r) {
                 return MPI_Ialltoallv(b.send.data(), b.sendcounts.data(), b.sdispls.data(),
                                       a.layout.type, b.recv.data(), b.recvcounts.data(),
                                       b.rdispls.data(), a.layout.type, a.comm, r);
               },
               [&](MPI_Request* r) {
                 return MPI_Alltoallv_init(b.send.data(), b.sendcounts.data(), b.sdispls.data(),
                                           a.layout.type, b.recv.data(), b.recvcounts.data(),
                                           b.rdispls.data(), a.layout.type, a.comm, MPI_INFO_NULL,
                                           r);
               });
         }});
  }
  add_reductions(all);
  return all;
}

}  // namespace weft::mpi::testing
