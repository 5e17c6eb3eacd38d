//===- MpiTransport.cpp - Runs across processes on MPI --------------------===//
//
// MpiTransport.h. During a run (beginRun .. endRun) a progress thread owns
// the messages: the executor's workers hand it sends and receives under a
// mutex; it posts them (MPI_Isend / MPI_Irecv, tag = task id) and polls
// them with MPI_Testsome, calling each completion outside the lock. Between
// runs only the calling thread uses MPI (barrier, gathers), so the library
// needs MPI_THREAD_SERIALIZED; MPI_THREAD_MULTIPLE is asked for because
// abortRun may be called from a worker while the progress thread polls.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/MpiTransport.h"

#include "doppler/runtime/Executor.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

namespace doppler::runtime {

namespace {
/// How long the progress thread sleeps when nothing completed (it would
/// otherwise take a core from the devices' workers): kIdlePoll after a
/// completion or a new message, doubling while nothing completes up to
/// kIdlePollMax. A receive posted early waits for its producer's whole
/// task; polling it every 20 us through that wait cost the rank's device
/// workers measurably (2 ranks x 1 device on 2 cores).
constexpr std::chrono::microseconds kIdlePoll{20};
constexpr std::chrono::microseconds kIdlePollMax{320};

/// What a rank prints when mpirun ends it (SIGTERM: another rank failed,
/// aborted or was killed), written before the handler is installed so
/// that the handler only calls write and _exit (async-signal-safe).
char terminatedMessage[160];
size_t terminatedLength = 0;

extern "C" void onTerminated(int) {
  ssize_t written = ::write(2, terminatedMessage, terminatedLength);
  (void)written;
  ::_exit(1);
}

/// Every rank ends with an error line of its own when mpirun ends the job.
void reportTermination(int rank) {
  int length = std::snprintf(
      terminatedMessage, sizeof(terminatedMessage),
      "doppler: rank %d: error: ended by mpirun (another rank failed or "
      "died)\n",
      rank);
  terminatedLength =
      length > 0 ? std::min(static_cast<size_t>(length),
                            sizeof(terminatedMessage) - 1)
                 : 0;
  struct sigaction action {};
  action.sa_handler = onTerminated;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(value));
  return text;
}
} // namespace

struct MpiTransport::Impl {
  int rank = 0, ranks = 1;
  bool finished = false;
  int tagUpperBound = 32767;

  struct Message {
    bool send;
    int64_t tag;
    int peer;
    void *data;
    uint64_t bytes;
    Completion done;
  };
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<Message> posted; ///< Handed over, not yet posted to MPI.
  bool stopping = false;
  std::thread progress;

  void hand(Message message) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      posted.push_back(std::move(message));
    }
    wake.notify_one();
  }

  /// Posts one message; its request, or a failure for its completion.
  Status post(Message &message, MPI_Request &request) const {
    if (message.bytes > static_cast<uint64_t>(INT_MAX))
      return Status::failure(std::to_string(message.bytes) +
                             " bytes is more than one MPI message carries "
                             "here (INT_MAX)");
    if (message.tag > tagUpperBound)
      return Status::failure("task id " + std::to_string(message.tag) +
                             " is above this MPI's largest tag (" +
                             std::to_string(tagUpperBound) + ")");
    int count = static_cast<int>(message.bytes);
    int tag = static_cast<int>(message.tag);
    int error = message.send
                    ? MPI_Isend(message.data, count, MPI_BYTE, message.peer,
                                tag, MPI_COMM_WORLD, &request)
                    : MPI_Irecv(message.data, count, MPI_BYTE, message.peer,
                                tag, MPI_COMM_WORLD, &request);
    if (error != MPI_SUCCESS)
      return Status::failure(std::string(message.send ? "MPI_Isend" : "MPI_Irecv") +
                             " to/from rank " + std::to_string(message.peer) +
                             " failed (MPI error " + std::to_string(error) +
                             ")");
    return Status();
  }

  /// The progress thread: posts what workers handed over and completes
  /// what MPI finished, until endRun stops it with nothing in flight.
  void progressLoop() {
    std::vector<MPI_Request> requests;
    std::vector<Completion> completions;
    std::vector<int> indices;
    std::vector<Message> batch;
    std::chrono::microseconds idle = kIdlePoll;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (posted.empty() && requests.empty()) {
          if (stopping)
            return;
          wake.wait_for(lock, std::chrono::milliseconds(1));
        }
        batch.swap(posted);
      }
      if (!batch.empty())
        idle = kIdlePoll;
      for (Message &message : batch) {
        MPI_Request request = MPI_REQUEST_NULL;
        if (Status status = post(message, request); !status) {
          message.done(std::move(status));
          continue;
        }
        requests.push_back(request);
        completions.push_back(std::move(message.done));
      }
      batch.clear();
      if (requests.empty())
        continue;
      indices.resize(requests.size());
      int completed = 0;
      MPI_Testsome(static_cast<int>(requests.size()), requests.data(),
                   &completed, indices.data(), MPI_STATUSES_IGNORE);
      if (completed == MPI_UNDEFINED || completed == 0) {
        // Woken early by a new message (a send to post), else after idle.
        std::unique_lock<std::mutex> lock(mutex);
        if (posted.empty())
          wake.wait_for(lock, idle);
        idle = std::min(idle * 2, kIdlePollMax);
        continue;
      }
      idle = kIdlePoll;
      for (int i = 0; i < completed; ++i)
        completions[indices[i]](Status());
      // Drop the completed (their requests are MPI_REQUEST_NULL now).
      size_t kept = 0;
      for (size_t i = 0; i < requests.size(); ++i)
        if (requests[i] != MPI_REQUEST_NULL) {
          requests[kept] = requests[i];
          completions[kept] = std::move(completions[i]);
          ++kept;
        }
      requests.resize(kept);
      completions.resize(kept);
    }
  }
};

MpiTransport::MpiTransport() : impl_(std::make_unique<Impl>()) {}

MpiTransport::~MpiTransport() { finish(); }

Result<std::shared_ptr<MpiTransport>> MpiTransport::start(int *argc,
                                                          char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (!initialized &&
      MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) !=
          MPI_SUCCESS)
    return Status::failure("MPI_Init_thread failed");
  if (initialized)
    MPI_Query_thread(&provided);
  std::shared_ptr<MpiTransport> transport(new MpiTransport());
  Impl &impl = *transport->impl_;
  MPI_Comm_rank(MPI_COMM_WORLD, &impl.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl.ranks);
  if (provided < MPI_THREAD_SERIALIZED)
    return Status::failure("this MPI library does not support threads "
                           "(MPI_THREAD_SERIALIZED or better is needed)");
  void *bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found);
  if (found && bound)
    impl.tagUpperBound = *static_cast<int *>(bound);
  reportTermination(impl.rank);
  return transport;
}

int MpiTransport::rank() const { return impl_->rank; }
int MpiTransport::ranks() const { return impl_->ranks; }

Status MpiTransport::beginRun() {
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
    return Status::failure("MPI_Barrier failed at the start of a run");
  impl_->stopping = false;
  impl_->progress = std::thread([this] { impl_->progressLoop(); });
  return Status();
}

void MpiTransport::send(int64_t tag, int peer, const void *data,
                        uint64_t bytes, Completion done) {
  impl_->hand({true, tag, peer, const_cast<void *>(data), bytes,
               std::move(done)});
}

void MpiTransport::receive(int64_t tag, int peer, void *data, uint64_t bytes,
                           Completion done) {
  impl_->hand({false, tag, peer, data, bytes, std::move(done)});
}

Status MpiTransport::endRun(const TaskGraph &graph, RunResult &result) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  if (impl_->progress.joinable())
    impl_->progress.join();
  // Every rank's part of the run goes to rank 0.
  std::vector<unsigned char> packed =
      impl_->rank == 0 ? std::vector<unsigned char>{}
                       : packRankResult(graph, deviceRanks(), impl_->rank,
                                        result);
  if (packed.size() > static_cast<size_t>(INT_MAX))
    return Status::failure("rank " + std::to_string(impl_->rank) +
                           "'s outputs are too large to gather on rank 0");
  int size = static_cast<int>(packed.size());
  std::vector<int> sizes(static_cast<size_t>(impl_->ranks));
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(sizes.size(), 0);
  long long total = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += sizes[r];
  }
  if (impl_->rank == 0 && total > INT_MAX)
    return Status::failure("the ranks' outputs are too large to gather on "
                           "rank 0 (over 2 GiB)");
  std::vector<unsigned char> all(
      impl_->rank == 0 ? static_cast<size_t>(total) : 0);
  MPI_Gatherv(packed.data(), size, MPI_BYTE, all.data(), sizes.data(),
              offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  Status merged;
  if (impl_->rank == 0) {
    for (int r = 1; r < impl_->ranks && merged; ++r)
      merged = unpackRankResult(
          graph, deviceRanks(), r,
          std::vector<unsigned char>(all.begin() + offsets[r],
                                     all.begin() + offsets[r] + sizes[r]),
          result);
    result.devices.resize(deviceRanks().size());
    recomputeDeviceStats(result);
    result.deviceRanks = deviceRanks();
  }
  // Every rank agrees on the makespan (the median run is the same one).
  result.makespan = maxOverRanks(result.makespan);
  return merged;
}

double MpiTransport::maxOverRanks(double value) {
  double largest = value;
  MPI_Allreduce(&value, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return largest;
}

void MpiTransport::abortRun(const std::string &message) {
  fail("doppler", message);
}

void MpiTransport::fail(const std::string &tool, const std::string &message) {
  std::fprintf(stderr, "%s: rank %d: error: %s\n", tool.c_str(), impl_->rank,
               message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

Status MpiTransport::agree(const std::string &what, uint64_t hash) {
  std::vector<unsigned long long> hashes(static_cast<size_t>(impl_->ranks));
  unsigned long long mine = hash;
  if (MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, hashes.data(), 1,
                    MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD) != MPI_SUCCESS)
    return Status::failure("MPI_Allgather of the " + what + " hashes failed");
  for (int r = 1; r < impl_->ranks; ++r)
    if (hashes[r] != hashes[0])
      return Status::failure(
          "the " + what + " hash differs between ranks: rank " +
          std::to_string(r) + " has " + hex(hashes[r]) + ", rank 0 has " +
          hex(hashes[0]) + " (every rank must be given the same " + what +
          ")");
  return Status();
}

void MpiTransport::finish() {
  if (!impl_ || impl_->finished)
    return;
  impl_->finished = true;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

} // namespace doppler::runtime
