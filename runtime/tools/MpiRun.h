//===- MpiRun.h - doppler-run and doppler-run-plan under mpirun -*- C++ -*-===//
//
// Header-only (doppler-run is built without exceptions), like RunSupport.h.
// A tool started by mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in
// its environment) runs distributed: each rank runs the devices of its
// node (the plan's "nodes", else contiguous blocks), after checking that
// every rank has the same plan and the same arguments (hashes compared, a
// mismatch is an error on every rank). Only rank 0 reports and writes
// files. Started without mpirun, nothing changes. Needs a build with MPI
// (DOPPLER_WITH_MPI); under mpirun without it, the tool says so.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_MPIRUN_H
#define DOPPLER_RUNTIME_TOOLS_MPIRUN_H

#include "doppler/runtime/Executor.h"
#include "doppler/runtime/Plan.h"

#if defined(DOPPLER_WITH_MPI)
#include "doppler/runtime/MpiTransport.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace doppler::runtime::tools {

class MpiRun {
public:
  /// Starts MPI when the tool was launched by mpirun.
  Status start(int *argc, char ***argv) {
    if (!launched())
      return Status();
#if defined(DOPPLER_WITH_MPI)
    Result<std::shared_ptr<MpiTransport>> started =
        MpiTransport::start(argc, argv);
    if (!started)
      return started.status();
    transport_ = *started;
    return Status();
#else
    (void)argc;
    (void)argv;
    return Status::failure("started by mpirun, but this build has no MPI "
                           "(install libopenmpi-dev and reconfigure)");
#endif
  }

  bool active() const {
#if defined(DOPPLER_WITH_MPI)
    return transport_ != nullptr;
#else
    return false;
#endif
  }
  /// This process's rank (0 in one process): only rank 0 reports.
  int rank() const {
#if defined(DOPPLER_WITH_MPI)
    return transport_ ? transport_->rank() : 0;
#else
    return 0;
#endif
  }

  /// The number of ranks (1 in one process).
  int ranks() const {
#if defined(DOPPLER_WITH_MPI)
    return transport_ ? transport_->ranks() : 1;
#else
    return 1;
#endif
  }

  /// The transport of runs across the ranks (null in one process), for a
  /// tool that builds its own executor over one device per rank.
  std::shared_ptr<Transport> transport() const {
#if defined(DOPPLER_WITH_MPI)
    return transport_;
#else
    return nullptr;
#endif
  }

  /// Collective: fails on every rank, naming the ranks and hashes, when a
  /// rank's `hash` of `what` differs from rank 0's; a barrier besides.
  Status agree(const std::string &what, uint64_t hash) {
#if defined(DOPPLER_WITH_MPI)
    if (transport_)
      return transport_->agree(what, hash);
#else
    (void)what;
    (void)hash;
#endif
    return Status();
  }

  /// Maps `devices` devices to the ranks, checks that every rank has the
  /// same plan, and makes `options`' runs collective. Collective.
  Status setUp(const Plan &plan, int devices, const std::string &backend,
               ExecutorOptions &options) {
#if defined(DOPPLER_WITH_MPI)
    if (!transport_)
      return Status();
    if (backend != "cpu")
      return Status::failure("runs across processes use the cpu backend "
                             "(got --backend " + backend + ")");
    Result<std::vector<int>> ranks =
        assignDevicesToRanks(devices, transport_->ranks(), plan.nodes);
    if (!ranks)
      return ranks.status();
    transport_->setDeviceRanks(std::move(*ranks));
    std::string text = planToJson(plan);
    if (Status same = transport_->agree(
            "plan", hashBytes(text.data(), text.size())); !same)
      return same;
    options.transport = transport_;
#else
    (void)plan;
    (void)devices;
    (void)backend;
    (void)options;
#endif
    return Status();
  }

  /// Checks that every rank has the same arguments (read from the same
  /// file, or seeded with the same seed). Collective.
  Status agreeArguments(const HostArguments &arguments) {
#if defined(DOPPLER_WITH_MPI)
    if (!transport_)
      return Status();
    uint64_t hash = hashBytes(nullptr, 0);
    for (const std::vector<unsigned char> &buffer : arguments.buffers)
      hash = hashBytes(buffer.data(), buffer.size(), hash);
    return transport_->agree("arguments", hash);
#else
    (void)arguments;
    return Status();
#endif
  }

  /// An error: under MPI printed with the rank, and every rank ends (the
  /// others would wait for this one); else the caller reports it.
  void failIfActive(const std::string &tool, const std::string &message) {
#if defined(DOPPLER_WITH_MPI)
    if (transport_)
      transport_->fail(tool, message);
#else
    (void)tool;
    (void)message;
#endif
  }

  /// The timed runs (every collective of the run) are over: an error from
  /// here on (rank 0's --check, writing files) ends only this rank.
  void runsDone() { runsDone_ = true; }

  /// The tool's exit status. Under MPI an error before the runs were done
  /// (one a rank reported without fail(): an unreadable file, a bad
  /// option) ends every rank, which would otherwise wait for this one in a
  /// collective; otherwise MPI_Finalize.
  int finishWith(const std::string &tool, int status) {
#if defined(DOPPLER_WITH_MPI)
    if (transport_ && status != 0 && !runsDone_)
      transport_->fail(tool, "ended with exit status " +
                                 std::to_string(status) + " (see above)");
    if (transport_)
      transport_->finish();
#else
    (void)tool;
#endif
    return status;
  }

private:
  static bool launched() {
    for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
      if (std::getenv(name))
        return true;
    return false;
  }
  bool runsDone_ = false;
#if defined(DOPPLER_WITH_MPI)
  std::shared_ptr<MpiTransport> transport_;
#endif
};

} // namespace doppler::runtime::tools

#endif // DOPPLER_RUNTIME_TOOLS_MPIRUN_H
