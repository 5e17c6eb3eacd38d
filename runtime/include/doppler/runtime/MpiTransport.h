//===- MpiTransport.h - Runs across processes on MPI ------------*- C++ -*-===//
//
// The Transport of runs under `mpirun` (lib/MpiTransport.cpp, in the
// DopplerRuntimeMpi library, built when CMake finds MPI; tools define
// DOPPLER_WITH_MPI when they link it). This header does not include mpi.h.
//
//   Result<std::shared_ptr<MpiTransport>> mpi = MpiTransport::start(&argc,
//                                                                   &argv);
//   (*mpi)->setDeviceRanks(*assignDevicesToRanks(devices, (*mpi)->ranks(),
//                                                nodes));
//   if (Status same = (*mpi)->agree("plan", hash); !same) ... // every rank
//   options.transport = *mpi;  // Executor runs are now collective
//   ...
//   (*mpi)->finish();          // MPI_Finalize
//
// Messages: MPI_Isend/MPI_Irecv of bytes on MPI_COMM_WORLD, tag = task id,
// completed by a progress thread that polls them (MPI_Testsome) while a
// run lasts. Failures: abortRun (and fail, for errors outside a run)
// print the error with the rank and call MPI_Abort, which ends every rank;
// a rank killed by a signal makes mpirun end the others (Open MPI's
// default), which test/Mpi/killed-rank.test checks.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_MPITRANSPORT_H
#define DOPPLER_RUNTIME_MPITRANSPORT_H

#include "doppler/runtime/Transport.h"

#include <memory>
#include <string>

namespace doppler::runtime {

class MpiTransport : public Transport {
public:
  /// MPI_Init_thread (MPI_THREAD_MULTIPLE); fails when the library gives
  /// less than MPI_THREAD_SERIALIZED.
  static Result<std::shared_ptr<MpiTransport>> start(int *argc, char ***argv);
  ~MpiTransport() override;

  int rank() const override;
  int ranks() const override;
  Status beginRun() override;
  void send(int64_t tag, int peer, const void *data, uint64_t bytes,
            Completion done) override;
  void receive(int64_t tag, int peer, void *data, uint64_t bytes,
               Completion done) override;
  Status endRun(const TaskGraph &graph, RunResult &result) override;
  [[noreturn]] void abortRun(const std::string &message) override;

  /// Collective: every rank passes its hash of `what` ("plan",
  /// "arguments"); fails on every rank, naming the ranks and hashes, when
  /// any differs from rank 0's.
  Status agree(const std::string &what, uint64_t hash);
  /// Collective: the largest of the ranks' `value`.
  double maxOverRanks(double value);
  /// Prints "TOOL: rank R: error: MESSAGE" and ends every rank.
  [[noreturn]] void fail(const std::string &tool, const std::string &message);
  /// MPI_Finalize (also done by the destructor when not yet).
  void finish();

  struct Impl;

private:
  MpiTransport();
  std::unique_ptr<Impl> impl_;
};

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_MPITRANSPORT_H
