//===- ExecutorImpl.h - The executor's internals ----------------*- C++ -*-===//
//
// What Executor.cpp (the workers, a run's life), ExecutorMemory.cpp
// (admission, parking, buffers) and ExecutorSupport.cpp (fault injection,
// the watchdog, names) share: the ready queues, a run's state and the
// executor's implementation. Executor.cpp's file comment describes the
// scheduling, memory and failure model.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_EXECUTORIMPL_H
#define DOPPLER_RUNTIME_LIB_EXECUTORIMPL_H

#include "doppler/runtime/Executor.h"

#include "WorkerThread.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace doppler::runtime {
namespace executor {

using Clock = std::chrono::steady_clock;

inline double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

/// How a failure names its task: "task 17 (einsum ij,jk->ik mul/add on
/// device 1)".
std::string taskContext(const TaskGraph &graph, ValueId id);
/// The message of an exception that escaped a task or the run.
std::string exceptionMessage(const std::exception_ptr &caught);
/// Whether a fault of `kind` can strike task `id`.
bool faultAppliesTo(FaultKind kind, const TaskGraph &graph, ValueId id);
/// The task `fault` makes fail in `graph`: -1 when none is asked for, an
/// error when the one asked for does not exist or is of the wrong kind.
Result<ValueId> resolveFault(const FaultInjection &fault,
                             const TaskGraph &graph);
/// The failure an injected fault of `kind` reports for a buffer of `bytes`.
Status injectedFailure(FaultKind kind, uint64_t bytes);

/// How a queue serves its tasks in the current run.
enum class QueueMode : uint8_t { Fifo, Priority, Program };

/// Ready tasks of one device and worker kind. All members but `queued` are
/// used with `mutex` held.
class ReadyQueue {
public:
  /// Called between runs (no task queued): `sequence` is, in program mode,
  /// every task this queue will serve, in id order.
  void startRun(QueueMode mode, std::vector<ValueId> sequence) {
    mode_ = mode;
    sequence_ = std::move(sequence);
    // In program mode a task's key is its position in the sequence (id
    // order, or the planned order), so the heap's top is the next to serve.
    rank_.clear();
    for (size_t i = 0; i < sequence_.size(); ++i)
      rank_[sequence_[i]] = static_cast<int64_t>(i);
    next_ = 0;
    blocked = false;
    admitting = false;
  }

  /// Whether no task can be served now. In program mode only the next task
  /// of the sequence can, once it is ready, and not while the previous one
  /// is being admitted or is parked (blocked).
  bool empty() const {
    if (mode_ != QueueMode::Program)
      return fifo_.empty() && heap_.empty();
    return blocked || admitting || heap_.empty() ||
           heap_.front().id != sequence_[next_];
  }

  /// Tasks that could be served right now (what the run's `active` count
  /// includes for this queue).
  int64_t runnable() const {
    if (mode_ == QueueMode::Program)
      return empty() ? 0 : 1;
    return static_cast<int64_t>(fifo_.size() + heap_.size());
  }

  /// `first`: before every task queued (not in program mode).
  void push(ValueId id, int64_t priority, bool first = false) {
    if (mode_ == QueueMode::Fifo) {
      if (first)
        fifo_.push_front(id);
      else
        fifo_.push_back(id);
    } else {
      // Program order keys on the position in the sequence: the heap's top
      // is the ready task that comes first.
      int64_t key = mode_ == QueueMode::Program ? rankOf(id)
                    : first ? std::numeric_limits<int64_t>::min()
                            : priority;
      heap_.push_back({key, nextSequence_++, id});
      std::push_heap(heap_.begin(), heap_.end(), Entry::later);
    }
    queued.store(queued.load(std::memory_order_relaxed) + 1,
                 std::memory_order_release);
  }

  ValueId pop() {
    queued.store(queued.load(std::memory_order_relaxed) - 1,
                 std::memory_order_relaxed);
    if (!fifo_.empty()) {
      ValueId id = fifo_.front();
      fifo_.pop_front();
      return id;
    }
    std::pop_heap(heap_.begin(), heap_.end(), Entry::later);
    ValueId id = heap_.back().id;
    heap_.pop_back();
    if (mode_ == QueueMode::Program) {
      ++next_;
      admitting = true;
    }
    return id;
  }

  /// Program mode: puts back the task just popped (it was parked), so that
  /// it stays the next one to serve.
  void unpop(ValueId id) {
    --next_;
    heap_.push_back({rankOf(id), nextSequence_++, id});
    std::push_heap(heap_.begin(), heap_.end(), Entry::later);
    queued.store(queued.load(std::memory_order_relaxed) + 1,
                 std::memory_order_release);
  }

  bool program() const { return mode_ == QueueMode::Program; }

  std::mutex mutex;
  std::condition_variable wakeUp;
  /// Workers blocked on `wakeUp` (pushers notify only when there are some).
  int sleepers = 0;
  /// Number of queued tasks, readable without the mutex by polling workers.
  std::atomic<int64_t> queued{0};
  /// Program mode: the task popped last is being admitted (its memory
  /// reserved); the next one may not start before that is settled.
  bool admitting = false;
  /// Program mode: the next task is parked until memory is freed.
  bool blocked = false;

private:
  struct Entry {
    int64_t priority;
    uint64_t sequence; ///< Readiness order among equal priorities.
    ValueId id;
    /// Max-heap comparator that puts the entry to serve first on top.
    static bool later(const Entry &x, const Entry &y) {
      return x.priority != y.priority ? x.priority > y.priority
                                      : x.sequence > y.sequence;
    }
  };
  QueueMode mode_ = QueueMode::Fifo;
  std::deque<ValueId> fifo_;
  std::vector<Entry> heap_;
  uint64_t nextSequence_ = 0;
  std::vector<ValueId> sequence_;
  std::unordered_map<ValueId, int64_t> rank_;
  size_t next_ = 0;

  int64_t rankOf(ValueId id) const {
    auto it = rank_.find(id);
    return it == rank_.end() ? id : it->second;
  }
};

/// One device's memory, or the host pool. Guarded by `mutex`.
struct DeviceMemory {
  std::mutex mutex;
  uint64_t inUse = 0;
  uint64_t peak = 0;
  uint64_t limit = 0; ///< 0: unlimited.
  /// Wait policy: tasks whose output did not fit, in the order they parked.
  std::vector<ValueId> parked;

  void account(uint64_t bytes) {
    inUse += bytes;
    peak = std::max(peak, inUse);
  }
  bool fits(uint64_t bytes) const {
    return !limit || (bytes <= limit && inUse <= limit - bytes);
  }
};

/// What one worker runs now, for the watchdog (written by the worker,
/// read by the thread waiting for the run).
struct RunningSlot {
  std::atomic<ValueId> task{-1};
  std::atomic<int64_t> sinceNs{0};
};

inline int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}
/// A task's automatic watchdog bound (ExecutorOptions::taskTimeoutSeconds).
double automaticTaskBound(const TaskGraph &graph, ValueId id);

/// What this process does with a task when a run spans ranks
/// (ExecutorRemote.cpp); every task is Local in one process.
enum class RemoteRole : uint8_t {
  Local,   ///< On this rank's device: runs here as usual.
  Receive, ///< A transfer to this rank from another: a message received.
  Send,    ///< A transfer from this rank to another: a message sent.
  Remote,  ///< Elsewhere: neither runs nor counts here.
};

/// Everything one run mutates; workers reach it through Impl::current.
struct RunState {
  RunState(const TaskGraph &graph, int numDevices)
      : graph(graph), pendingInputs(new std::atomic<int32_t>[graph.size()]),
        pendingReaders(new std::atomic<int32_t>[graph.size()]),
        buffers(graph.size()), allocated(graph.size(), 0),
        accounted(graph.size(), 0), timings(graph.size()),
        memory(new DeviceMemory[numDevices + 1]),
        deviceRemaining(new PaddedCount[numDevices]) {}

  /// A counter on its own cache line.
  struct alignas(64) PaddedCount {
    std::atomic<int64_t> value{0};
  };

  const TaskGraph &graph;
  PreparedGraph *prepared = nullptr;
  /// Runs across ranks: the transport and each task's role (empty: all
  /// Local).
  Transport *transport = nullptr;
  std::vector<RemoteRole> roles;
  RemoteRole role(ValueId id) const {
    return roles.empty() ? RemoteRole::Local : roles[id];
  }
  bool remote(ValueId id) const { return role(id) == RemoteRole::Remote; }
  bool waitForMemory = false;
  /// The task an injected fault fails (-1: none) and the fault's kind.
  ValueId faultTask = -1;
  FaultKind faultKind = FaultKind::None;
  Clock::time_point start;
  std::unique_ptr<std::atomic<int32_t>[]> pendingInputs;
  std::unique_ptr<std::atomic<int32_t>[]> pendingReaders;
  std::vector<DeviceBuffer> buffers;
  std::vector<uint8_t> allocated;
  /// The value's bytes are counted in its pool's `inUse` (set under the
  /// pool's mutex; a parked task is admitted this way before it is
  /// queued again).
  std::vector<uint8_t> accounted;
  std::vector<TaskTiming> timings;
  /// Per value: the value a view task aliases (-1: it copies), the view's
  /// byte offset there, and whether its buffer is that alias now
  /// (ExecutorViews.cpp).
  std::vector<ValueId> viewOf;
  std::vector<uint64_t> viewOffset;
  std::vector<uint8_t> isView;
  /// One per device, then the host pool (index numDevices).
  std::unique_ptr<DeviceMemory[]> memory;
  /// Per device, its tasks not yet finished; `remaining` counts the devices
  /// with some left (0: the run is over). A device's workers decrement
  /// their own line, not one that every device's workers share.
  std::unique_ptr<PaddedCount[]> deviceRemaining;
  std::atomic<int64_t> remaining{0};
  /// One of `device`'s tasks finished; true when it was the run's last.
  bool finishOne(int device) {
    return deviceRemaining[device].value.fetch_sub(
               1, std::memory_order_acq_rel) == 1 &&
           remaining.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  /// Tasks running or queued where a worker can serve them now. Parked
  /// tasks, tasks queued behind a parked one in program order and tasks
  /// waiting for inputs do not count. When it drops to 0 with tasks
  /// parked, nothing can ever free memory for them: a memory deadlock.
  /// Counted only when tasks can park (waitForMemory): otherwise no run
  /// can stall, and the count's three updates per task, on one cache line
  /// every device's workers share, cost 0.3-0.5 us per task at D = 2 on a
  /// 2-core VM.
  std::atomic<int64_t> active{0};
  void addActive(int64_t delta) {
    if (waitForMemory && delta != 0)
      active.fetch_add(delta, std::memory_order_acq_rel);
  }
  /// One fewer active task; true when that was the last (a stall to check).
  bool releaseActive() {
    return waitForMemory &&
           active.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  std::atomic<bool> failed{false};
  /// The watchdog gave up on the run (an injected hang then returns).
  std::atomic<bool> abandoned{false};
  /// Per worker (Impl::slotOf): the task it runs now (-1: none) and since
  /// when (steady-clock nanoseconds), for the watchdog.
  std::unique_ptr<RunningSlot[]> running;
  std::mutex errorMutex;
  std::string error;
};

} // namespace executor

using namespace executor;

struct Executor::Impl {
  Impl(std::unique_ptr<Backend> backendIn, ExecutorOptions optionsIn);
  ~Impl();

  /// Starts a worker thread of device `device` (with a bounded stack,
  /// WorkerThread). When the host cannot create one more thread (a thread
  /// or address-space limit: thousands of virtual devices under
  /// `ulimit -v`), records the error that every run then returns, instead
  /// of ending the process.
  bool startWorker(int device, std::function<void()> body) {
    Result<detail::WorkerThread> thread =
        detail::WorkerThread::start(std::move(body));
    if (thread) {
      workers.push_back(std::move(*thread));
      return true;
    }
    std::lock_guard<std::mutex> lock(workerStartMutex);
    workerError = "cannot start worker thread " +
                  std::to_string(workers.size() + 1) + " (device " +
                  std::to_string(device) + " of " +
                  std::to_string(numDevices) + "): " + thread.message() +
                  "; this host cannot run that many virtual devices (use "
                  "fewer devices, or raise its thread and memory limits)";
    return false;
  }

  /// What admit() decided for a task a worker popped.
  enum class Admission { Run, Skip, Parked };

  void workerLoop(ReadyQueue &queue, int device, WorkerKind kind, int lane);
  void runTask(RunState &run, ReadyQueue &queue, ValueId id, WorkerKind kind,
               int lane);
  Admission admit(RunState &run, ReadyQueue &queue, ValueId id,
                  Status &error);
  /// Runs `id` on the calling thread, recorded as worker (kind, lane) of
  /// its device; `slot` (default: that worker's) is the watchdog's slot of
  /// the thread that runs it.
  Status executeTask(RunState &run, ValueId id, WorkerKind kind, int lane,
                     int slot = -1);
  /// Where a task made ready now runs, if it is a transfer.
  enum class CopyPath {
    CopyWorker,         ///< Queued to its device's copy worker (the rule).
    Inline,             ///< Copied at once on this (worker) thread.
    DestinationCompute, ///< Queued to its device's compute worker.
  };
  /// Inline: made ready on a worker thread with nothing else queued, and
  /// at most Backend::inlineCopyBytes, or larger with a Backend::
  /// largeCopyPath other than CopyWorker. The larger ones of the rest go
  /// to the destination's compute worker with ComputeWorkers, the others
  /// to the copy worker.
  CopyPath copyPath(RunState &run, ValueId id) const;
  /// Runs transfer `id` on this (compute) worker's thread, timed in the
  /// thread's own copy lane, past the copy workers' lanes (no lane
  /// overlaps itself).
  Status executeCopyHere(RunState &run, ValueId id);
  /// Runs transfer `id` on this thread, then finishes it.
  void copyInline(RunState &run, ValueId id);
  void finishTask(RunState &run, ValueId id);
  void enqueue(RunState &run, ValueId id);
  /// Runs across ranks (ExecutorRemote.cpp): each task's role; a receive
  /// posted by a copy worker (its output allocated first); a send posted
  /// when its source is ready; the completion of either.
  void planRoles(RunState &run) const;
  Status startReceive(RunState &run, ValueId id, WorkerKind kind, int lane);
  void startSend(RunState &run, ValueId id);
  void messageDone(RunState &run, ValueId id, Status status);
  Status allocateValue(RunState &run, ValueId id);
  void freeValue(RunState &run, ValueId id);
  /// Views (ExecutorViews.cpp): which slices and reshapes of `run` alias
  /// their input; binding one's buffer; releasing it (false when `id` is
  /// not a bound view), which frees its input after the input's last reader.
  void planViews(RunState &run) const;
  void bindView(RunState &run, ValueId id) const;
  bool releaseView(RunState &run, ValueId id);
  /// Wait policy: admits the parked tasks of `memory` that now fit, in the
  /// order they parked. Called with memory.mutex held.
  void retryParked(RunState &run, DeviceMemory &memory);
  /// Puts parked task `id` back where a worker finds it.
  void unpark(RunState &run, ValueId id);
  /// `active` dropped to 0: fails the run when tasks are parked.
  void onStall(RunState &run);
  void fail(RunState &run, std::string message);
  ReadyQueue &queueOf(const Task &task) {
    return task.runsOnCopyWorker() ? *copyQueues[task.device]
                                   : *computeQueues[task.device];
  }
  DeviceMemory &poolOf(RunState &run, const Task &task) {
    return run.memory[task.onHost ? numDevices : task.device];
  }
  Status validate(const TaskGraph &graph, const InputBindings &inputs) const;
  Result<PreparedGraph *> prepare(const TaskGraph &graph);
  Result<RunResult> run(const TaskGraph &graph, const InputBindings &inputs);
  /// The phases of run(): queues set for the run's order, inputs uploaded
  /// and counters set, the outputs and timings collected at the end.
  void startQueues(const TaskGraph &graph);
  /// Each device's memory limit for `run`; with the Wait policy, the error
  /// for a task whose output alone exceeds its device's limit.
  Status setMemoryLimits(RunState &run) const;
  /// Parked compute workers wake for a new run, while the inputs upload,
  /// and spin for the first tasks.
  void wakeComputeWorkers();
  Status uploadInputs(RunState &run, const InputBindings &inputs);
  Result<RunResult> collectResult(RunState &run);

  std::unique_ptr<Backend> backend;
  ExecutorOptions options;
  int numDevices = 0;
  std::vector<std::unique_ptr<ReadyQueue>> computeQueues, copyQueues;
  std::vector<detail::WorkerThread> workers;
  std::atomic<bool> shutdown{false};
  Clock::duration idleSpin{0};
  /// Backend::inlineCopyBytes, read once.
  uint64_t inlineCopyBytes = 0;
  /// Backend::largeCopyPath, read once.
  LargeCopyPath largeCopies = LargeCopyPath::CopyWorker;
  /// Bumped when a run begins (before its inputs are uploaded): a parked
  /// compute worker wakes and spins, up to kStartSpin, for the run's first
  /// tasks, instead of paying a futex wake-up when they are queued (35 us
  /// on the 2-core VM, a third of a small model's run).
  std::atomic<uint64_t> runEpoch{0};

  /// Where worker (device, kind, lane) records what it runs
  /// (RunState::running).
  int slotOf(int device, WorkerKind kind, int lane) const {
    return device * (1 + options.copyWorkersPerDevice) +
           (kind == WorkerKind::Compute ? 0 : 1 + lane);
  }
  /// Waits for `run` to drain; with a watchdog, fails it when a task runs
  /// past its bound. False when a task did not return even then: the run's
  /// state must be left to its thread.
  bool waitForRun(RunState &run);
  /// The first task running past its watchdog bound, described; "" if none.
  std::string lateTask(RunState &run) const;

  /// An injected hang waits here until the watchdog abandons its run.
  std::mutex hangMutex;
  std::condition_variable hangWake;
  /// Set when the watchdog had to abandon a run whose task never returned:
  /// every later run fails with it, and the executor is never destroyed
  /// (its stuck thread still uses it).
  std::atomic<bool> abandonedRun{false};

  std::mutex workerStartMutex; ///< Guards the two fields below.
  std::condition_variable workerStarted;
  size_t startedWorkers = 0;
  std::string workerError;

  std::mutex runMutex; ///< Serialises runs.
  /// The run in progress. Written before its first task is queued; workers
  /// read it only after popping a task (the queue mutex orders the two).
  RunState *current = nullptr;
  std::mutex doneMutex;
  std::condition_variable done;

  // Backend plans of the last graph run, reused while it is unchanged.
  const TaskGraph *preparedGraph = nullptr;
  uint64_t preparedVersion = 0;
  std::unique_ptr<PreparedGraph> prepared;
};

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_LIB_EXECUTORIMPL_H
