//===- Executor.cpp - Work-conserving task-graph executor -----------------===//
//
// Scheduling state is a set of atomic counters per run: per task, how many
// of its inputs are still missing; per value, how many readers have not
// finished. The worker that finishes a task decrements them, frees values
// whose last reader it was, and pushes newly ready tasks onto their device's
// queue. Nothing waits for anything but its own inputs, so there are no
// barriers; each queue is served in push (= readiness) order, by
// priority, or in program order (id order; only the next task of the
// device's sequence may start).
//
// Memory: each device (and the host pool) has a mutex-guarded count of
// bytes in use. A task's bytes are counted when it is admitted, before it
// allocates. With MemoryPolicy::Wait a task that does not fit is parked on
// its device; freeing a buffer there admits the parked tasks that now fit
// and queues them again (in program order the queue is blocked while its
// next task is parked). `active` counts tasks running or servable; when it
// reaches 0 while tasks are parked, no buffer can ever be freed for them:
// the run fails as a memory deadlock.
//
// Failure: the first failing task records its error and sets `failed`;
// from then on workers skip the tasks they pop (finishing them without
// running them), so the counters still reach zero, buffers are still freed
// by their last reader, and run() returns once the graph is drained: tasks
// in flight elsewhere finish, nothing waits for a task that will not run.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/Executor.h"

#include "CpuRelax.h"
#include "Doppler/Support/NumberFormat.h"
#include "WorkerThread.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <functional>
#include <new>
#include <thread>
#include <unordered_map>

namespace doppler::runtime {
namespace {

using Clock = std::chrono::steady_clock;

using detail::cpuRelax;

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

/// How a failure names its task: "task 17 (einsum ij,jk->ik mul/add on
/// device 1)".
std::string taskContext(const TaskGraph &graph, ValueId id) {
  std::string what = graph.describe(id);
  std::string prefix = "%" + std::to_string(id) + " ";
  if (what.compare(0, prefix.size(), prefix) == 0)
    what.erase(0, prefix.size());
  return "task " + std::to_string(id) + " (" + what + " on device " +
         std::to_string(graph.task(id).device) + ")";
}

/// The message of an exception that escaped a task or the run.
std::string exceptionMessage(const std::exception_ptr &caught) {
  try {
    std::rethrow_exception(caught);
  } catch (const std::bad_alloc &) {
    return "out of host memory (std::bad_alloc)";
  } catch (const std::exception &error) {
    return std::string("exception: ") + error.what();
  } catch (...) {
    return "unknown exception";
  }
}

bool faultAppliesTo(FaultKind kind, const TaskGraph &graph, ValueId id) {
  const Task &task = graph.task(id);
  switch (kind) {
  case FaultKind::None:
    return false;
  case FaultKind::Kernel:
    return task.kind != TaskKind::Input && !task.runsOnCopyWorker();
  case FaultKind::Transfer:
    return task.runsOnCopyWorker();
  case FaultKind::Hang:
    return task.kind != TaskKind::Input;
  case FaultKind::Alloc:
    // Inputs nobody reads are never allocated.
    return task.kind != TaskKind::Input || !graph.consumers(id).empty() ||
           graph.isOutput(id);
  }
  return false;
}

/// The task `fault` makes fail in `graph`: -1 when none is asked for, an
/// error when the one asked for does not exist or is of the wrong kind.
Result<ValueId> resolveFault(const FaultInjection &fault,
                             const TaskGraph &graph) {
  if (!fault.enabled())
    return ValueId(-1);
  std::string kind(faultKindName(fault.kind));
  if (fault.task >= 0) {
    if (!graph.contains(fault.task))
      return Status::failure("fault injection: no task " +
                             std::to_string(fault.task) + " (the graph has " +
                             std::to_string(graph.size()) + ")");
    if (!faultAppliesTo(fault.kind, graph, fault.task))
      return Status::failure(
          "fault injection: " + taskContext(graph, fault.task) +
          " cannot have a " + kind + " fault");
    return fault.task;
  }
  int64_t seen = 0;
  for (ValueId id = 0; id < graph.size(); ++id)
    if (faultAppliesTo(fault.kind, graph, id) && ++seen == fault.nth)
      return id;
  return Status::failure("fault injection: no " + kind + " task #" +
                         std::to_string(fault.nth) + " (the graph has " +
                         std::to_string(seen) + ")");
}

/// The failure an injected fault of `kind` reports for a buffer of `bytes`.
Status injectedFailure(FaultKind kind, uint64_t bytes) {
  if (kind == FaultKind::Alloc)
    return Status::failure("cannot allocate " + std::to_string(bytes) +
                           " bytes (injected fault)");
  return Status::failure("injected " + std::string(faultKindName(kind)) +
                         " fault");
}

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

  void push(ValueId id, int64_t priority) {
    if (mode_ == QueueMode::Fifo) {
      fifo_.push_back(id);
    } else {
      // Program order keys on the position in the sequence: the heap's top
      // is the ready task that comes first.
      int64_t key = mode_ == QueueMode::Program ? rankOf(id) : priority;
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

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

/// A task's automatic watchdog bound (ExecutorOptions::taskTimeoutSeconds).
double automaticTaskBound(const TaskGraph &graph, ValueId id) {
  const Task &task = graph.task(id);
  double work = static_cast<double>(graph.byteSize(id));
  for (ValueId input : task.uniqueInputs)
    work += static_cast<double>(graph.byteSize(input));
  if (task.kind == TaskKind::Einsum || task.kind == TaskKind::Fused) {
    // The iteration space: every index once, at its extent.
    std::string seen;
    double iterations = 1;
    for (size_t i = 0; i < task.spec.inputs.size() && i < task.inputs.size();
         ++i) {
      const Shape &shape = graph.task(task.inputs[i]).shape;
      const std::string &labels = task.spec.inputs[i];
      for (size_t d = 0; d < labels.size() && d < shape.size(); ++d)
        if (seen.find(labels[d]) == std::string::npos) {
          seen.push_back(labels[d]);
          iterations *= static_cast<double>(shape[d]);
        }
    }
    work += iterations;
  }
  double emulated = task.seconds > 0 ? task.seconds : 0;
  return kWatchdogFloorSeconds + work / kWatchdogPessimisticRate +
         2 * emulated;
}

/// Everything one run mutates; workers reach it through Impl::current.
struct RunState {
  RunState(const TaskGraph &graph, int numDevices)
      : graph(graph), pendingInputs(new std::atomic<int32_t>[graph.size()]),
        pendingReaders(new std::atomic<int32_t>[graph.size()]),
        buffers(graph.size()), allocated(graph.size(), 0),
        accounted(graph.size(), 0), timings(graph.size()),
        memory(new DeviceMemory[numDevices + 1]) {}

  const TaskGraph &graph;
  PreparedGraph *prepared = nullptr;
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
  /// One per device, then the host pool (index numDevices).
  std::unique_ptr<DeviceMemory[]> memory;
  std::atomic<int64_t> remaining{0};
  /// Tasks running or queued where a worker can serve them now. Parked
  /// tasks, tasks queued behind a parked one in program order and tasks
  /// waiting for inputs do not count. When it drops to 0 with tasks
  /// parked, nothing can ever free memory for them: a memory deadlock.
  std::atomic<int64_t> active{0};
  std::atomic<bool> failed{false};
  /// The watchdog gave up on the run (an injected hang then returns).
  std::atomic<bool> abandoned{false};
  /// Per worker (Impl::slotOf): the task it runs now (-1: none) and since
  /// when (steady-clock nanoseconds), for the watchdog.
  std::unique_ptr<RunningSlot[]> running;
  std::mutex errorMutex;
  std::string error;
};

} // namespace

struct Executor::Impl {
  Impl(std::unique_ptr<Backend> backendIn, ExecutorOptions optionsIn)
      : backend(std::move(backendIn)), options(std::move(optionsIn)) {
    numDevices = backend ? backend->numDevices() : 0;
    options.copyWorkersPerDevice = std::max(1, options.copyWorkersPerDevice);
    int threads = numDevices * (1 + options.copyWorkersPerDevice);
    if (options.idleSpinMicroseconds < 0)
      options.idleSpinMicroseconds =
          threads <= static_cast<int>(std::thread::hardware_concurrency()) ? 20
                                                                           : 0;
    idleSpin = std::chrono::microseconds(options.idleSpinMicroseconds);
    for (int d = 0; d < numDevices; ++d) {
      computeQueues.push_back(std::make_unique<ReadyQueue>());
      copyQueues.push_back(std::make_unique<ReadyQueue>());
    }
    bool started = true;
    for (int d = 0; d < numDevices && started; ++d) {
      started = startWorker(d, [this, d] {
        workerLoop(*computeQueues[d], d, WorkerKind::Compute, 0);
      });
      for (int lane = 0; lane < options.copyWorkersPerDevice && started;
           ++lane)
        started = startWorker(d, [this, d, lane] {
          workerLoop(*copyQueues[d], d, WorkerKind::Copy, lane);
        });
    }
    // Wait until every worker attached, so the first run sees any failure.
    std::unique_lock<std::mutex> lock(workerStartMutex);
    workerStarted.wait(lock, [&] { return startedWorkers == workers.size(); });
  }

  ~Impl() {
    shutdown.store(true);
    for (auto *queues : {&computeQueues, &copyQueues})
      for (auto &queue : *queues) {
        std::lock_guard<std::mutex> lock(queue->mutex);
        queue->wakeUp.notify_all();
      }
    for (detail::WorkerThread &worker : workers)
      worker.join();
  }

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
  Status executeTask(RunState &run, ValueId id, WorkerKind kind, int lane);
  void finishTask(RunState &run, ValueId id);
  void enqueue(RunState &run, ValueId id);
  Status allocateValue(RunState &run, ValueId id);
  void freeValue(RunState &run, ValueId id);
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

  std::unique_ptr<Backend> backend;
  ExecutorOptions options;
  int numDevices = 0;
  std::vector<std::unique_ptr<ReadyQueue>> computeQueues, copyQueues;
  std::vector<detail::WorkerThread> workers;
  std::atomic<bool> shutdown{false};
  Clock::duration idleSpin{0};

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

void Executor::Impl::workerLoop(ReadyQueue &queue, int device, WorkerKind kind,
                                int lane) {
  Status attached = backend->attachWorker(device, kind, lane);
  {
    std::lock_guard<std::mutex> lock(workerStartMutex);
    if (!attached && workerError.empty())
      workerError = "device " + std::to_string(device) +
                    " worker failed to start: " + attached.message();
    ++startedWorkers;
  }
  workerStarted.notify_all();
  while (true) {
    if (idleSpin.count() > 0 &&
        queue.queued.load(std::memory_order_acquire) == 0) {
      Clock::time_point deadline = Clock::now() + idleSpin;
      // Yield between polls: when workers outnumber cores, the thread that
      // will produce our next task may need this core.
      while (queue.queued.load(std::memory_order_acquire) == 0 &&
             !shutdown.load(std::memory_order_relaxed) &&
             Clock::now() < deadline) {
        cpuRelax();
        std::this_thread::yield();
      }
    }
    ValueId id;
    RunState *run;
    {
      std::unique_lock<std::mutex> lock(queue.mutex);
      while (queue.empty() && !shutdown.load(std::memory_order_relaxed)) {
        ++queue.sleepers;
        queue.wakeUp.wait(lock);
        --queue.sleepers;
      }
      if (queue.empty())
        return; // Shutting down.
      run = current;
      int64_t before = queue.runnable();
      id = queue.pop();
      // The popped task now counts as running.
      run->active.fetch_add(queue.runnable() - before + 1);
    }
    runTask(*run, queue, id, kind, lane);
  }
}

void Executor::Impl::fail(RunState &run, std::string message) {
  {
    std::lock_guard<std::mutex> lock(run.errorMutex);
    if (run.error.empty())
      run.error = std::move(message);
    run.failed.store(true);
  }
  if (!run.waitForMemory)
    return;
  // Parked tasks are queued again, to be skipped like every other task that
  // has not started. A worker parks a task only after checking `failed`
  // under the pool's mutex, so none parks after this sweep.
  for (int d = 0; d < numDevices; ++d) {
    DeviceMemory &memory = run.memory[d];
    std::lock_guard<std::mutex> lock(memory.mutex);
    std::vector<ValueId> parked = std::move(memory.parked);
    memory.parked.clear();
    for (ValueId id : parked)
      unpark(run, id);
  }
}

void Executor::Impl::unpark(RunState &run, ValueId id) {
  const Task &task = run.graph.task(id);
  ReadyQueue &queue = queueOf(task);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(queue.mutex);
    if (queue.program()) {
      // The task stayed at the head of its sequence: unblock the queue.
      int64_t before = queue.runnable();
      queue.blocked = false;
      run.active.fetch_add(queue.runnable() - before);
    } else {
      int64_t before = queue.runnable();
      queue.push(id, task.priority);
      run.active.fetch_add(queue.runnable() - before);
    }
    wake = queue.sleepers > 0;
  }
  if (wake)
    queue.wakeUp.notify_all();
}

void Executor::Impl::retryParked(RunState &run, DeviceMemory &memory) {
  if (memory.parked.empty() || run.failed.load())
    return;
  size_t kept = 0;
  for (size_t i = 0; i < memory.parked.size(); ++i) {
    ValueId id = memory.parked[i];
    uint64_t bytes = run.graph.byteSize(id);
    if (!memory.fits(bytes)) {
      memory.parked[kept++] = id;
      continue;
    }
    memory.account(bytes);
    run.accounted[id] = 1;
    unpark(run, id);
  }
  memory.parked.resize(kept);
}

void Executor::Impl::onStall(RunState &run) {
  std::string message;
  for (int d = 0; d < numDevices; ++d) {
    DeviceMemory &memory = run.memory[d];
    std::lock_guard<std::mutex> lock(memory.mutex);
    if (memory.parked.empty())
      continue;
    if (!message.empty())
      message += "; ";
    message += "memory deadlock on device " + std::to_string(d) + ": ";
    for (size_t i = 0; i < memory.parked.size(); ++i) {
      ValueId id = memory.parked[i];
      message += (i ? ", " : "") + taskContext(run.graph, id) + " needs " +
                 std::to_string(run.graph.byteSize(id)) + " bytes";
    }
    message += "; " + std::to_string(memory.inUse) + " of the " +
               std::to_string(memory.limit) +
               "-byte limit are held by buffers whose readers cannot run";
  }
  // Nothing parked: the run is simply over.
  if (!message.empty())
    fail(run, std::move(message));
}

Status Executor::Impl::allocateValue(RunState &run, ValueId id) {
  const Task &task = run.graph.task(id);
  uint64_t bytes = run.graph.byteSize(id);
  DeviceMemory &memory = poolOf(run, task);
  if (!run.accounted[id]) {
    std::lock_guard<std::mutex> lock(memory.mutex);
    if (!memory.fits(bytes))
      return Status::failure("out of memory on device " +
                             std::to_string(task.device) + ": needs " +
                             std::to_string(bytes) + " bytes with " +
                             std::to_string(memory.inUse) +
                             " in use and a limit of " +
                             std::to_string(memory.limit));
    memory.account(bytes);
    run.accounted[id] = 1;
  }
  // A backend whose allocator throws (std::bad_alloc) fails like one that
  // returns an error; the bytes stay accounted until freeValue.
  Result<DeviceBuffer> buffer = Status::failure("not allocated");
  try {
    buffer = task.onHost ? backend->allocateHost(bytes)
                         : backend->allocate(task.device, bytes);
  } catch (...) {
    buffer = Status::failure(exceptionMessage(std::current_exception()));
  }
  if (!buffer)
    return buffer.status();
  run.buffers[id] = *buffer;
  run.allocated[id] = 1;
  return Status();
}

void Executor::Impl::freeValue(RunState &run, ValueId id) {
  const Task &task = run.graph.task(id);
  if (run.allocated[id]) {
    if (task.onHost)
      backend->deallocateHost(run.buffers[id]);
    else
      backend->deallocate(task.device, run.buffers[id]);
    run.buffers[id] = DeviceBuffer{};
    run.allocated[id] = 0;
  }
  if (!run.accounted[id])
    return;
  DeviceMemory &memory = poolOf(run, task);
  std::lock_guard<std::mutex> lock(memory.mutex);
  memory.inUse -= run.graph.byteSize(id);
  run.accounted[id] = 0;
  retryParked(run, memory);
}

void Executor::Impl::enqueue(RunState &run, ValueId id) {
  const Task &task = run.graph.task(id);
  ReadyQueue &queue = queueOf(task);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(queue.mutex);
    int64_t before = queue.runnable();
    queue.push(id, task.priority);
    run.active.fetch_add(queue.runnable() - before);
    wake = queue.sleepers > 0 && !queue.empty();
  }
  // A worker that is not asleep will find the task without a wake-up; this
  // keeps chains on one device free of system calls.
  if (wake)
    queue.wakeUp.notify_one();
}

Executor::Impl::Admission Executor::Impl::admit(RunState &run,
                                                ReadyQueue &queue, ValueId id,
                                                Status &error) {
  const Task &task = run.graph.task(id);
  // Program order: the next task of this queue may start once this one is
  // admitted (or parked, which blocks the queue instead).
  auto settle = [&](bool park) {
    if (!queue.program())
      return;
    bool wake;
    {
      std::lock_guard<std::mutex> lock(queue.mutex);
      int64_t before = queue.runnable();
      queue.admitting = false;
      if (park) {
        queue.unpop(id);
        queue.blocked = true;
      }
      run.active.fetch_add(queue.runnable() - before);
      wake = queue.sleepers > 0 && !queue.empty();
    }
    if (wake)
      queue.wakeUp.notify_one();
  };
  if (run.failed.load(std::memory_order_relaxed)) {
    settle(false);
    return Admission::Skip;
  }
  DeviceMemory &memory = poolOf(run, task);
  if (!run.waitForMemory || task.onHost || !memory.limit ||
      run.accounted[id]) {
    settle(false);
    return Admission::Run;
  }
  uint64_t bytes = run.graph.byteSize(id);
  {
    std::lock_guard<std::mutex> lock(memory.mutex);
    if (run.failed.load()) {
      settle(false);
      return Admission::Skip;
    }
    if (bytes > memory.limit) {
      settle(false);
      error = Status::failure("needs " + std::to_string(bytes) +
                              " bytes, more than device " +
                              std::to_string(task.device) +
                              "'s memory limit of " +
                              std::to_string(memory.limit) + " bytes");
      return Admission::Run;
    }
    if (memory.fits(bytes)) {
      memory.account(bytes);
      run.accounted[id] = 1;
      settle(false);
      return Admission::Run;
    }
    memory.parked.push_back(id);
    settle(true);
  }
  // No longer running: parked.
  if (run.active.fetch_sub(1) == 1)
    onStall(run);
  return Admission::Parked;
}

Status Executor::Impl::executeTask(RunState &run, ValueId id, WorkerKind kind,
                                   int lane) {
  const Task &task = run.graph.task(id);
  // The only cost of fault injection when it is off: one comparison.
  RunningSlot &slot = run.running[slotOf(task.device, kind, lane)];
  if (id == run.faultTask) {
    // Kernel and transfer faults strike after the output was allocated, as
    // a real one would, so that the failure path must free it.
    if (run.faultKind != FaultKind::Alloc)
      if (Status status = allocateValue(run, id); !status)
        return status;
    if (run.faultKind == FaultKind::Hang) {
      slot.sinceNs.store(nowNs(), std::memory_order_relaxed);
      slot.task.store(id, std::memory_order_release);
      std::unique_lock<std::mutex> lock(hangMutex);
      hangWake.wait(lock, [&] {
        return run.abandoned.load() || shutdown.load();
      });
      slot.task.store(-1, std::memory_order_release);
    }
    return injectedFailure(run.faultKind, run.graph.byteSize(id));
  }
  if (Status status = allocateValue(run, id); !status)
    return status;
  // Reused per worker thread: no allocation per task.
  thread_local std::vector<DeviceBuffer> inputBuffers;
  inputBuffers.clear();
  for (ValueId input : task.inputs)
    inputBuffers.push_back(run.buffers[input]);
  TaskLaunch launch;
  launch.graph = &run.graph;
  launch.prepared = run.prepared;
  launch.id = id;
  launch.task = &task;
  launch.inputs = inputBuffers.data();
  launch.output = run.buffers[id];
  launch.lane = lane;
  Clock::time_point start = Clock::now();
  slot.sinceNs.store(nowNs(), std::memory_order_relaxed);
  slot.task.store(id, std::memory_order_release);
  Status status = backend->execute(launch);
  slot.task.store(-1, std::memory_order_release);
  Clock::time_point end = Clock::now();
  TaskTiming &timing = run.timings[id];
  timing.start = secondsBetween(run.start, start);
  timing.end = secondsBetween(run.start, end);
  timing.device = task.device;
  timing.worker = kind;
  timing.lane = lane;
  timing.ran = status.ok();
  return status;
}

void Executor::Impl::runTask(RunState &run, ReadyQueue &queue, ValueId id,
                             WorkerKind kind, int lane) {
  Status status;
  Admission admission = admit(run, queue, id, status);
  if (admission == Admission::Parked)
    return; // Queued again once memory is freed (or the run fails).
  if (admission == Admission::Run) {
    // An exception (e.g. bad_alloc in a backend) must not end the worker
    // thread: it fails the run like any other error.
    if (status) {
      try {
        status = executeTask(run, id, kind, lane);
      } catch (...) {
        status = Status::failure(exceptionMessage(std::current_exception()));
      }
    }
    if (!status)
      fail(run, taskContext(run.graph, id) + ": " + status.message());
  }
  finishTask(run, id);
}

void Executor::Impl::finishTask(RunState &run, ValueId id) {
  const TaskGraph &graph = run.graph;
  // Free first, so that the tasks woken below find the memory available.
  for (ValueId input : graph.task(id).uniqueInputs)
    if (run.pendingReaders[input].fetch_sub(1, std::memory_order_acq_rel) ==
            1 &&
        !graph.isOutput(input))
      freeValue(run, input);
  const std::vector<ValueId> &consumers = graph.consumers(id);
  if (consumers.empty() && !graph.isOutput(id))
    freeValue(run, id);
  for (ValueId consumer : consumers)
    if (run.pendingInputs[consumer].fetch_sub(1, std::memory_order_acq_rel) ==
        1)
      enqueue(run, consumer);
  for (ValueId dependent : graph.controlDependents(id))
    if (run.pendingInputs[dependent].fetch_sub(1, std::memory_order_acq_rel) ==
        1)
      enqueue(run, dependent);
  // This task counts in `remaining` until the end, so a stall found here
  // leaves the run alive while it is handled.
  if (run.active.fetch_sub(1, std::memory_order_acq_rel) == 1)
    onStall(run);
  if (run.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The lock pairs with the waiter's predicate check: no lost wake-up.
    std::lock_guard<std::mutex> lock(doneMutex);
    done.notify_all();
  }
}

Status Executor::Impl::validate(const TaskGraph &graph,
                                const InputBindings &inputs) const {
  if (graph.numDevicesUsed() > numDevices)
    return Status::failure(
        "the graph uses device " + std::to_string(graph.numDevicesUsed() - 1) +
        " but backend '" + std::string(backend->name()) + "' has " +
        std::to_string(numDevices) + " device(s)");
  for (ValueId input : graph.inputs()) {
    auto it = inputs.find(input);
    if (it == inputs.end() || (!it->second && graph.byteSize(input) > 0))
      return Status::failure("graph input %" + std::to_string(input) +
                             " has no data bound");
  }
  for (const auto &binding : inputs)
    if (!graph.contains(binding.first) ||
        graph.task(binding.first).kind != TaskKind::Input)
      return Status::failure("binding for %" + std::to_string(binding.first) +
                             ", which is not a graph input");
  return Status();
}

Result<PreparedGraph *> Executor::Impl::prepare(const TaskGraph &graph) {
  if (prepared && preparedGraph == &graph && preparedVersion == graph.version())
    return prepared.get();
  prepared.reset();
  Result<std::unique_ptr<PreparedGraph>> fresh = backend->prepare(graph);
  if (!fresh)
    return fresh.status();
  prepared = std::move(*fresh);
  preparedGraph = &graph;
  preparedVersion = graph.version();
  return prepared.get();
}

Result<RunResult> Executor::Impl::run(const TaskGraph &graph,
                                      const InputBindings &inputs) {
  std::lock_guard<std::mutex> runLock(runMutex);
  {
    std::lock_guard<std::mutex> lock(workerStartMutex);
    if (!workerError.empty())
      return Status::failure(workerError);
  }
  if (abandonedRun.load())
    return Status::failure("the executor abandoned an earlier run whose task "
                           "never returned; start a new process");
  if (Status status = validate(graph, inputs); !status)
    return status;
  Result<PreparedGraph *> preparedGraph = prepare(graph);
  if (!preparedGraph)
    return preparedGraph.status();

  Result<ValueId> faultTask = resolveFault(options.fault, graph);
  if (!faultTask)
    return faultTask.status();

  // On the heap: a run the watchdog abandons is left to its stuck thread.
  auto state = std::make_unique<RunState>(graph, numDevices);
  RunState &run = *state;
  run.running.reset(new RunningSlot[numDevices *
                                    (1 + options.copyWorkersPerDevice)]);
  run.prepared = *preparedGraph;
  run.faultTask = *faultTask;
  run.faultKind = options.fault.kind;
  run.waitForMemory = options.memoryPolicy == MemoryPolicy::Wait;
  for (int d = 0; d < numDevices; ++d)
    run.memory[d].limit = d < static_cast<int>(options.memoryLimits.size())
                              ? options.memoryLimits[d]
                              : 0;
  // Waiting cannot help a task whose output alone exceeds its limit: fail
  // before anything runs.
  if (run.waitForMemory)
    for (ValueId id = 0; id < graph.size(); ++id) {
      const Task &task = graph.task(id);
      uint64_t limit = run.memory[task.device].limit;
      if (task.kind != TaskKind::Input && !task.onHost && limit &&
          graph.byteSize(id) > limit)
        return Status::failure(
            taskContext(graph, id) + ": needs " +
            std::to_string(graph.byteSize(id)) + " bytes, more than device " +
            std::to_string(task.device) + "'s memory limit of " +
            std::to_string(limit) + " bytes");
    }

  // Queues serve this run in its order; in program order each serves its
  // device's tasks of its kind in id order.
  // The planned order is the program mode with each sequence sorted by
  // Task::priority (ties in id order).
  const bool planned = options.order == ReadyOrder::Planned;
  QueueMode mode = options.order == ReadyOrder::Priority ? QueueMode::Priority
                   : options.order == ReadyOrder::Program || planned
                       ? QueueMode::Program
                       : QueueMode::Fifo;
  {
    std::vector<std::vector<ValueId>> computeSequence(numDevices),
        copySequence(numDevices);
    if (mode == QueueMode::Program)
      for (ValueId id = 0; id < graph.size(); ++id) {
        const Task &task = graph.task(id);
        if (task.kind != TaskKind::Input)
          (task.runsOnCopyWorker() ? copySequence
                                   : computeSequence)[task.device]
              .push_back(id);
      }
    if (planned)
      for (std::vector<std::vector<ValueId>> *sequences :
           {&computeSequence, &copySequence})
        for (std::vector<ValueId> &sequence : *sequences)
          std::stable_sort(sequence.begin(), sequence.end(),
                           [&](ValueId a, ValueId b) {
                             return graph.task(a).priority <
                                    graph.task(b).priority;
                           });
    for (int d = 0; d < numDevices; ++d) {
      {
        std::lock_guard<std::mutex> lock(computeQueues[d]->mutex);
        computeQueues[d]->startRun(mode, std::move(computeSequence[d]));
      }
      std::lock_guard<std::mutex> lock(copyQueues[d]->mutex);
      copyQueues[d]->startRun(mode, std::move(copySequence[d]));
    }
  }

  // Every buffer still allocated goes back however run() returns: an
  // error, success (after the outputs were copied back) or an exception
  // (e.g. bad_alloc making a host copy of an output).
  struct ReleaseAll {
    Impl &impl;
    std::unique_ptr<RunState> &state;
    ~ReleaseAll() {
      if (state) // not abandoned
        for (ValueId id = 0; id < state->graph.size(); ++id)
          impl.freeValue(*state, id);
    }
  } releaseAll{*this, state};

  // Graph inputs are available from the start: upload those anyone reads.
  for (ValueId id = 0; id < graph.size(); ++id) {
    run.pendingReaders[id].store(
        static_cast<int32_t>(graph.consumers(id).size()));
    const Task &task = graph.task(id);
    if (task.kind == TaskKind::Input) {
      if (graph.consumers(id).empty() && !graph.isOutput(id))
        continue;
      Status status = id == run.faultTask
                          ? injectedFailure(run.faultKind, graph.byteSize(id))
                          : allocateValue(run, id);
      if (status)
        status = backend->upload(task.device, run.buffers[id],
                                 inputs.find(id)->second);
      if (!status)
        return status.withContext(taskContext(graph, id));
      continue;
    }
    int32_t pending = 0;
    for (ValueId input : task.uniqueInputs)
      pending += graph.task(input).kind != TaskKind::Input;
    for (ValueId trigger : task.after)
      pending += graph.task(trigger).kind != TaskKind::Input;
    run.pendingInputs[id].store(pending);
    run.remaining.fetch_add(1);
  }

  // Tasks ready at time 0 queue in id order. Collect them before the first
  // push: once workers run, counters reach 0 for tasks they enqueue
  // themselves.
  std::vector<ValueId> readyAtStart;
  for (ValueId id = 0; id < graph.size(); ++id)
    if (graph.task(id).kind != TaskKind::Input &&
        run.pendingInputs[id].load(std::memory_order_relaxed) == 0)
      readyAtStart.push_back(id);

  current = &run;
  run.start = Clock::now();
  if (run.remaining.load() > 0) {
    // This thread counts as active while it queues the first tasks: one of
    // them parking before the next is queued is no deadlock.
    run.active.fetch_add(1);
    for (ValueId id : readyAtStart)
      enqueue(run, id);
    if (run.active.fetch_sub(1) == 1)
      onStall(run);
    if (!waitForRun(run)) {
      // A task never returned: its thread still uses the run's state and
      // buffers, so both are left to it.
      std::string error = run.error;
      (void)state.release();
      abandonedRun.store(true);
      return Status::failure(error);
    }
  }
  current = nullptr;

  if (run.failed.load())
    return Status::failure(run.error);

  RunResult result;
  result.devices.resize(numDevices);
  for (ValueId output : graph.outputs()) {
    HostTensor tensor;
    tensor.type = graph.task(output).type;
    tensor.shape = graph.task(output).shape;
    Status status;
    // The host copy of a large output may not fit (std::bad_alloc).
    try {
      tensor.bytes.resize(graph.byteSize(output));
      if (run.allocated[output])
        status = backend->download(graph.task(output).device,
                                   run.buffers[output], tensor.bytes.data());
    } catch (...) {
      status = Status::failure(exceptionMessage(std::current_exception()));
    }
    if (!status)
      return status.withContext("copying output " + taskContext(graph, output) +
                                " to the host");
    result.outputs.emplace(output, std::move(tensor));
  }

  for (ValueId id = 0; id < graph.size(); ++id) {
    const TaskTiming &timing = run.timings[id];
    if (!timing.ran)
      continue;
    result.makespan = std::max(result.makespan, timing.end);
    DeviceStats &stats = result.devices[timing.device];
    double busy = timing.end - timing.start;
    if (timing.worker == WorkerKind::Compute) {
      stats.computeBusy += busy;
      ++stats.computeTasks;
    } else {
      stats.copyBusy += busy;
      ++stats.copyTasks;
    }
  }
  result.hostPeakBytes = run.memory[numDevices].peak;
  for (int d = 0; d < numDevices; ++d) {
    DeviceStats &stats = result.devices[d];
    stats.peakBytes = run.memory[d].peak;
    stats.utilization =
        result.makespan > 0 ? stats.computeBusy / result.makespan : 0;
  }
  result.tasks = std::move(run.timings);
  return result;
}

std::string Executor::Impl::lateTask(RunState &run) const {
  const int64_t now = nowNs();
  const int slots = numDevices * (1 + options.copyWorkersPerDevice);
  for (int i = 0; i < slots; ++i) {
    ValueId id = run.running[i].task.load(std::memory_order_acquire);
    if (id < 0)
      continue;
    double seconds =
        (now - run.running[i].sinceNs.load(std::memory_order_relaxed)) * 1e-9;
    double bound = options.taskTimeoutSeconds > 0
                       ? options.taskTimeoutSeconds
                       : automaticTaskBound(run.graph, id);
    if (seconds > bound)
      return taskContext(run.graph, id) + ": did not finish within " +
             formatShortest(bound) + " s" +
             " (the watchdog's bound; --task-timeout sets it)";
  }
  return {};
}

bool Executor::Impl::waitForRun(RunState &run) {
  auto drained = [&] { return run.remaining.load() == 0; };
  std::unique_lock<std::mutex> lock(doneMutex);
  if (options.taskTimeoutSeconds == 0) {
    done.wait(lock, drained);
    return true;
  }
  // Ticks of a fifth of a second: a late task is found within that of its
  // bound, and a run pays nothing while it is busy.
  const auto tick = std::chrono::milliseconds(200);
  while (!done.wait_for(lock, tick, drained)) {
    std::string late = lateTask(run);
    if (late.empty())
      continue;
    lock.unlock();
    fail(run, late);
    {
      std::lock_guard<std::mutex> hangLock(hangMutex);
      run.abandoned.store(true);
    }
    hangWake.notify_all();
    lock.lock();
    // The others skip their tasks now; the late one may still return.
    return done.wait_for(lock, std::chrono::seconds(2), drained);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Backend defaults
//===----------------------------------------------------------------------===//

Result<DeviceBuffer> Backend::allocateHost(uint64_t bytes) {
  if (bytes == 0)
    return DeviceBuffer{};
  void *data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!data)
    return Status::failure("cannot allocate " + std::to_string(bytes) +
                           " bytes of host memory");
  return DeviceBuffer{data, bytes};
}

void Backend::deallocateHost(DeviceBuffer buffer) { std::free(buffer.data); }

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

Executor::Executor(std::unique_ptr<Backend> backend, ExecutorOptions options)
    : impl_(std::make_unique<Impl>(std::move(backend), std::move(options))) {}

Executor::~Executor() {
  // A task the watchdog gave up on may still run on a worker that uses the
  // executor: leave it to the process's end rather than free it under it.
  if (impl_ && impl_->abandonedRun.load())
    (void)impl_.release();
}

Result<RunResult> Executor::run(const TaskGraph &graph,
                                const InputBindings &inputs) {
  if (!impl_->backend)
    return Status::failure("executor has no backend");
  try {
    return impl_->run(graph, inputs);
  } catch (...) {
    return Status::failure(exceptionMessage(std::current_exception()));
  }
}

void Executor::setReadyOrder(ReadyOrder order) {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  impl_->options.order = order;
}

void Executor::setMemoryLimit(int device, uint64_t bytes) {
  if (device < 0)
    return;
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  std::vector<uint64_t> &limits = impl_->options.memoryLimits;
  if (static_cast<int>(limits.size()) <= device)
    limits.resize(device + 1, 0);
  limits[device] = bytes;
}

void Executor::setMemoryPolicy(MemoryPolicy policy) {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  impl_->options.memoryPolicy = policy;
}

void Executor::setFaultInjection(FaultInjection fault) {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  impl_->options.fault = fault;
}

std::string_view readyOrderName(ReadyOrder order) {
  switch (order) {
  case ReadyOrder::Fifo:
    return "fifo";
  case ReadyOrder::Priority:
    return "priority";
  case ReadyOrder::Program:
    return "program";
  case ReadyOrder::Planned:
    return "planned";
  }
  return "unknown";
}

Result<ReadyOrder> parseReadyOrder(std::string_view text) {
  for (ReadyOrder order :
       {ReadyOrder::Fifo, ReadyOrder::Priority, ReadyOrder::Program,
        ReadyOrder::Planned})
    if (text == readyOrderName(order))
      return order;
  return Status::failure("unknown ready order '" + std::string(text) +
                         "' (expected fifo, priority, program or planned)");
}

std::string_view memoryPolicyName(MemoryPolicy policy) {
  switch (policy) {
  case MemoryPolicy::Fail:
    return "fail";
  case MemoryPolicy::Wait:
    return "wait";
  }
  return "unknown";
}

Result<MemoryPolicy> parseMemoryPolicy(std::string_view text) {
  for (MemoryPolicy policy : {MemoryPolicy::Fail, MemoryPolicy::Wait})
    if (text == memoryPolicyName(policy))
      return policy;
  return Status::failure("unknown memory policy '" + std::string(text) +
                         "' (expected fail or wait)");
}

std::string_view faultKindName(FaultKind kind) {
  switch (kind) {
  case FaultKind::None:
    return "none";
  case FaultKind::Kernel:
    return "kernel";
  case FaultKind::Alloc:
    return "alloc";
  case FaultKind::Transfer:
    return "transfer";
  case FaultKind::Hang:
    return "hang";
  }
  return "unknown";
}

Result<FaultInjection> parseFaultInjection(std::string_view text) {
  auto invalid = [&] {
    return Status::failure("invalid fault '" + std::string(text) +
                           "' (expected KIND:TASK with KIND kernel, alloc, "
                           "transfer or hang and TASK a task id or #N, the Nth task "
                           "of that kind)");
  };
  size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return invalid();
  FaultInjection fault;
  std::string_view kind = text.substr(0, colon), task = text.substr(colon + 1);
  for (FaultKind candidate : {FaultKind::Kernel, FaultKind::Alloc,
                              FaultKind::Transfer, FaultKind::Hang})
    if (kind == faultKindName(candidate))
      fault.kind = candidate;
  bool nth = !task.empty() && task.front() == '#';
  if (nth)
    task.remove_prefix(1);
  // Digits only, at most 12 of them: no sign, no overflow.
  if (!fault.enabled() || task.empty() || task.size() > 12 ||
      task.find_first_not_of("0123456789") != std::string_view::npos)
    return invalid();
  int64_t number = std::stoll(std::string(task));
  if (nth) {
    if (number < 1)
      return invalid();
    fault.nth = number;
  } else {
    fault.task = static_cast<ValueId>(number);
  }
  return fault;
}

const ExecutorOptions &Executor::options() const { return impl_->options; }
Backend &Executor::backend() { return *impl_->backend; }
int Executor::numDevices() const { return impl_->numDevices; }

} // namespace doppler::runtime
