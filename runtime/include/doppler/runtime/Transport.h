//===- Transport.h - Runs of one task graph across processes ----*- C++ -*-===//
//
// What the executor needs to run a graph whose devices belong to several
// processes (ranks): each rank runs the whole graph's structure but only the
// tasks on its own devices. A transfer from a device of rank s to a device
// of rank d is a message: rank s sends the source buffer once it is ready,
// rank d receives into the transfer's output (a tag per transfer: its task
// id). The executor posts both and goes on with ready work; the transport
// completes them in the background (MpiTransport.cpp, built when MPI is
// found; this header and its helpers do not depend on MPI).
//
// Each Executor::run with a transport is collective: every rank must call
// it on the same graph (beginRun synchronises the starts; endRun makes the
// makespan the largest of the ranks' and gathers the timings, peaks and
// outputs of every rank into rank 0's RunResult).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TRANSPORT_H
#define DOPPLER_RUNTIME_TRANSPORT_H

#include "doppler/runtime/Status.h"
#include "doppler/runtime/TaskGraph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace doppler::runtime {

struct RunResult;

class Transport {
public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// The rank that owns each device (index = device id).
  const std::vector<int> &deviceRanks() const { return deviceRanks_; }
  void setDeviceRanks(std::vector<int> ranks) {
    deviceRanks_ = std::move(ranks);
  }
  int rankOf(int device) const {
    return device >= 0 && device < static_cast<int>(deviceRanks_.size())
               ? deviceRanks_[device]
               : 0;
  }
  bool isLocal(int device) const { return rankOf(device) == rank(); }

  /// Called once a message completed (or failed), from the transport's
  /// progress thread.
  using Completion = std::function<void(Status)>;

  /// Collective: every rank starts the run here (a barrier, so that the
  /// ranks' clocks start together); starts completing messages.
  virtual Status beginRun() = 0;
  /// Non-blocking: sends `bytes` at `data` (kept alive until `done`) to
  /// `peer` under `tag`.
  virtual void send(int64_t tag, int peer, const void *data, uint64_t bytes,
                    Completion done) = 0;
  /// Non-blocking: receives `bytes` into `data` from `peer` under `tag`.
  virtual void receive(int64_t tag, int peer, void *data, uint64_t bytes,
                       Completion done) = 0;
  /// Collective, once every message of the run completed: stops the
  /// progress, makes `result.makespan` the ranks' largest and, on rank 0,
  /// merges every rank's timings, peaks and outputs into `result`.
  virtual Status endRun(const TaskGraph &graph, RunResult &result) = 0;
  /// A task of this rank failed: the other ranks cannot finish the run
  /// (they wait for its messages), so every rank ends now, with `message`
  /// on this one's standard error. Does not return.
  [[noreturn]] virtual void abortRun(const std::string &message) = 0;

private:
  std::vector<int> deviceRanks_;
};

/// The rank of each of `devices` devices: `nodes[d]` when given (node i =
/// rank i; one entry per device, each in [0, ranks)), else contiguous
/// blocks of devices / ranks devices (an error naming both when they do not
/// divide).
Result<std::vector<int>> assignDevicesToRanks(int devices, int ranks,
                                              const std::vector<int> &nodes);

/// FNV-1a over `bytes` (continuing from `seed`): what ranks compare to
/// check they run the same plan on the same arguments.
uint64_t hashBytes(const void *data, uint64_t bytes,
                   uint64_t seed = 14695981039346656037ull);

/// The parts of a run one rank sends rank 0 (endRun): the timings of the
/// tasks it ran, the peak bytes of its devices and the outputs on them.
std::vector<unsigned char> packRankResult(const TaskGraph &graph,
                                          const std::vector<int> &deviceRanks,
                                          int rank, const RunResult &result);
/// Merges what `rank` packed into rank 0's `result`. A transfer between
/// ranks keeps its start on the sending rank and its end on the receiving
/// one. Fails on a malformed buffer.
Status unpackRankResult(const TaskGraph &graph,
                        const std::vector<int> &deviceRanks, int rank,
                        const std::vector<unsigned char> &packed,
                        RunResult &result);
/// Recomputes `result`'s makespan and per-device stats from its timings,
/// keeping the peaks: what the executor reports after a run, and rank 0
/// after merging the other ranks'.
void recomputeDeviceStats(RunResult &result);

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_TRANSPORT_H
