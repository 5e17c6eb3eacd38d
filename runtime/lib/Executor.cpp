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

#include "ExecutorImpl.h"

#include "CpuRelax.h"

#include <thread>

namespace doppler::runtime {

using detail::cpuRelax;

namespace {
/// How long a compute worker woken at the start of a run spins for its
/// first task (ExecutorImpl.h: runEpoch) before parking again.
constexpr std::chrono::microseconds kStartSpin{1000};
/// The watchdog slot (Impl::slotOf) of the executor worker running on this
/// thread; -1 on other threads (run()'s caller, a transport's progress
/// thread), which never copy inline.
thread_local int workerSlot = -1;
/// The queue the executor worker on this thread serves; null elsewhere.
thread_local const ReadyQueue *workerQueue = nullptr;
} // namespace

Executor::Impl::Impl(std::unique_ptr<Backend> backendIn,
                   ExecutorOptions optionsIn)
  : backend(std::move(backendIn)), options(std::move(optionsIn)) {
  numDevices = backend ? backend->numDevices() : 0;
  options.copyWorkersPerDevice = std::max(1, options.copyWorkersPerDevice);
  inlineCopyBytes = backend ? backend->inlineCopyBytes() : 0;
  largeCopies = backend ? backend->largeCopyPath() : LargeCopyPath::CopyWorker;
  // Workers that may want a core while another spins. Where small copies
  // run inline on the compute workers, the copy workers only move large
  // values, seldom, and a spinning worker yields between polls: they do
  // not count. (2 devices on 2 cores, the zoo's models: 432 against 582 us
  // for MobileNetV2, 173 against 193 us for LLaMA, spinning against not.)
  int threads = inlineCopyBytes > 0
                    ? numDevices
                    : numDevices * (1 + options.copyWorkersPerDevice);
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

Executor::Impl::~Impl() {
  shutdown.store(true);
  for (auto *queues : {&computeQueues, &copyQueues})
    for (auto &queue : *queues) {
      std::lock_guard<std::mutex> lock(queue->mutex);
      queue->wakeUp.notify_all();
    }
  for (detail::WorkerThread &worker : workers)
    worker.join();
}

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
  workerSlot = slotOf(device, kind, lane);
  workerQueue = &queue;
  uint64_t seenEpoch = runEpoch.load(std::memory_order_acquire);
  while (true) {
    Clock::duration spin = idleSpin;
    if (uint64_t epoch = runEpoch.load(std::memory_order_acquire);
        epoch != seenEpoch) {
      seenEpoch = epoch; // once per run: the spin stays bounded
      if (kind == WorkerKind::Compute)
        spin = std::max<Clock::duration>(spin, kStartSpin);
    }
    if (spin.count() > 0 &&
        queue.queued.load(std::memory_order_acquire) == 0) {
      Clock::time_point deadline = Clock::now() + spin;
      // Yield between polls: when workers outnumber cores, the thread that
      // will produce our next task may need this core.
      while (queue.queued.load(std::memory_order_acquire) == 0 &&
             !shutdown.load(std::memory_order_relaxed) &&
             Clock::now() < deadline) {
        cpuRelax();
        std::this_thread::yield();
        // A long upload bumps the epoch as it goes: keep spinning.
        if (uint64_t epoch = runEpoch.load(std::memory_order_acquire);
            epoch != seenEpoch && kind == WorkerKind::Compute) {
          seenEpoch = epoch;
          deadline = Clock::now() + kStartSpin;
        }
      }
    }
    ValueId id;
    RunState *run;
    {
      std::unique_lock<std::mutex> lock(queue.mutex);
      while (queue.empty() && !shutdown.load(std::memory_order_relaxed) &&
             runEpoch.load(std::memory_order_acquire) == seenEpoch) {
        ++queue.sleepers;
        queue.wakeUp.wait(lock);
        --queue.sleepers;
      }
      if (queue.empty()) {
        if (shutdown.load(std::memory_order_relaxed))
          return; // Shutting down.
        continue; // A run is starting: spin for its first tasks.
      }
      run = current;
      int64_t before = queue.runnable();
      id = queue.pop();
      // The popped task now counts as running.
      run->addActive(queue.runnable() - before + 1);
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
  // Across ranks the others would wait for this rank's messages forever.
  if (run.transport)
    run.transport->abortRun(run.error);
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

void Executor::Impl::enqueue(RunState &run, ValueId id) {
  if (RemoteRole role = run.role(id); role != RemoteRole::Local &&
                                      role != RemoteRole::Receive) {
    if (role == RemoteRole::Send)
      startSend(run, id);
    return;
  }
  CopyPath path = copyPath(run, id);
  if (path == CopyPath::Inline) {
    copyInline(run, id);
    return;
  }
  const Task &task = run.graph.task(id);
  ReadyQueue &queue = path == CopyPath::DestinationCompute
                          ? *computeQueues[task.device]
                          : queueOf(task);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(queue.mutex);
    int64_t before = queue.runnable();
    // A copy on the destination's compute worker goes first: it waits for
    // that worker's current task, not for its queue.
    queue.push(id, task.priority, path == CopyPath::DestinationCompute);
    run.addActive(queue.runnable() - before);
    wake = queue.sleepers > 0 && !queue.empty();
  }
  // A worker that is not asleep will find the task without a wake-up; this
  // keeps chains on one device free of system calls.
  if (wake)
    queue.wakeUp.notify_one();
}

Executor::Impl::CopyPath Executor::Impl::copyPath(RunState &run,
                                                  ValueId id) const {
  const Task &task = run.graph.task(id);
  // Not where the copy's timing or order is the point (a fixed-duration
  // copy of a cost-only graph, program order on the copy queue), nor where
  // admission may park it or a fault is injected into it: those take the
  // copy worker's path.
  if (task.kind != TaskKind::Transfer || task.seconds >= 0 ||
      run.waitForMemory || id == run.faultTask ||
      run.role(id) != RemoteRole::Local || copyQueues[task.device]->program())
    return CopyPath::CopyWorker;
  // The worker that made the copy ready makes it at once when nothing
  // else is queued for it (its core would idle otherwise; finishTask
  // queues a task's transfers after its other consumers, so that is seen
  // after them): small copies, which then pay one wake-up (the consumer's)
  // instead of two, and, where the backend says so, large ones.
  const bool idle =
      workerQueue && workerQueue->queued.load(std::memory_order_acquire) == 0;
  const bool small = inlineCopyBytes > 0 &&
                     run.graph.byteSize(id) <= inlineCopyBytes;
  if (idle && (small || largeCopies != LargeCopyPath::CopyWorker))
    return CopyPath::Inline;
  // A busy worker leaves a small copy to the copy worker: queued to the
  // destination's compute worker instead, the copies made MobileNetV2 at
  // D = 2 (49 hops of at most 960 bytes into its busier device) 1.19x
  // slower. A large one waits there for the destination's current task,
  // not for a core, but takes the destination's time: the LLaMA block at
  // D = 2 ran 1.01-1.17x its time with the copy workers (not by default).
  return !small && largeCopies == LargeCopyPath::ComputeWorkers
             ? CopyPath::DestinationCompute
             : CopyPath::CopyWorker;
}

Status Executor::Impl::executeCopyHere(RunState &run, ValueId id) {
  Status status = executeTask(run, id, WorkerKind::Copy, 0, workerSlot);
  run.timings[id].lane = options.copyWorkersPerDevice + workerSlot;
  return status;
}

void Executor::Impl::copyInline(RunState &run, ValueId id) {
  if (!run.failed.load(std::memory_order_relaxed)) {
    Status status;
    try {
      status = executeCopyHere(run, id);
    } catch (...) {
      status = Status::failure(exceptionMessage(std::current_exception()));
    }
    if (!status)
      fail(run, taskContext(run.graph, id) + ": " + status.message());
  }
  finishTask(run, id);
}

Status Executor::Impl::executeTask(RunState &run, ValueId id, WorkerKind kind,
                                   int lane, int slotIndex) {
  const Task &task = run.graph.task(id);
  // The only cost of fault injection when it is off: one comparison.
  RunningSlot &slot = run.running[slotIndex >= 0
                                      ? slotIndex
                                      : slotOf(task.device, kind, lane)];
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
  const bool view = run.viewOf[id] >= 0;
  if (!view)
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
  Status status;
  if (view)
    bindView(run, id);
  else
    status = backend->execute(launch);
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
    if (status && run.role(id) == RemoteRole::Receive &&
        id != run.faultTask) { // an injected fault strikes as below
      // Finishes when the message arrives (messageDone).
      if (status = startReceive(run, id, kind, lane); status)
        return;
    } else if (status) {
      try {
        // A copy on a compute worker (CopyPath::DestinationCompute) is
        // timed in that worker's own copy lane, as an inline copy is.
        status = kind == WorkerKind::Compute &&
                         run.graph.task(id).runsOnCopyWorker()
                     ? executeCopyHere(run, id)
                     : executeTask(run, id, kind, lane);
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
  // Free first, so that the tasks woken below find the memory available. A
  // bound view keeps its input's reader reference until it dies itself.
  for (ValueId input : graph.task(id).uniqueInputs)
    if (!(run.isView[id] && input == run.viewOf[id]) &&
        run.pendingReaders[input].fetch_sub(1, std::memory_order_acq_rel) ==
            1 &&
        !graph.isOutput(input))
      freeValue(run, input);
  const std::vector<ValueId> &consumers = graph.consumers(id);
  if (consumers.empty() && !graph.isOutput(id))
    freeValue(run, id);
  // Transfers last: a worker that copies one at once (copyPath) sees the
  // other consumers its device will run queued before it.
  for (bool transfers : {false, true})
    for (ValueId consumer : consumers)
      if ((graph.task(consumer).kind == TaskKind::Transfer) == transfers &&
          run.pendingInputs[consumer].fetch_sub(
              1, std::memory_order_acq_rel) == 1)
        enqueue(run, consumer);
  for (ValueId dependent : graph.controlDependents(id))
    if (run.pendingInputs[dependent].fetch_sub(1, std::memory_order_acq_rel) ==
        1)
      enqueue(run, dependent);
  // This task counts in `remaining` until the end, so a stall found here
  // leaves the run alive while it is handled.
  if (run.releaseActive())
    onStall(run);
  if (run.finishOne(run.graph.task(id).device)) {
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

/// Every queue serves this run in its order (ExecutorOptions::order).
void Executor::Impl::startQueues(const TaskGraph &graph) {
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
}

/// Uploads the graph inputs anyone reads and sets every task's counters
/// (inputs still missing, readers still to come).
Status Executor::Impl::uploadInputs(RunState &run,
                                    const InputBindings &inputs) {
  // Graph inputs are available from the start: upload those anyone reads.
  const TaskGraph &graph = run.graph;
  Clock::time_point bumped = Clock::now();
  for (ValueId id = 0; id < graph.size(); ++id) {
    // Workers spinning for the first tasks (runEpoch) keep spinning through
    // a long upload (a large model's weights take milliseconds).
    if (Clock::now() - bumped > kStartSpin / 4) {
      runEpoch.fetch_add(1, std::memory_order_acq_rel);
      bumped = Clock::now();
    }
    run.pendingReaders[id].store(
        static_cast<int32_t>(graph.consumers(id).size()));
    const Task &task = graph.task(id);
    if (run.remote(id))
      continue; // Another rank's: never counted here.
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
    // Across ranks only this rank's tasks (and its messages) count.
    for (ValueId input : task.uniqueInputs)
      pending += graph.task(input).kind != TaskKind::Input && !run.remote(input);
    for (ValueId trigger : task.after)
      pending +=
          graph.task(trigger).kind != TaskKind::Input && !run.remote(trigger);
    run.pendingInputs[id].store(pending);
    if (run.deviceRemaining[task.device].value.fetch_add(1) == 0)
      run.remaining.fetch_add(1);
  }
  return Status();
}

/// The outputs (copied to the host) and the timings of a finished run.
Result<RunResult> Executor::Impl::collectResult(RunState &run) {
  const TaskGraph &graph = run.graph;
  RunResult result;
  result.devices.resize(numDevices);
  for (ValueId output : graph.outputs()) {
    if (run.transport && !run.transport->isLocal(graph.task(output).device))
      continue; // Its rank sends it to rank 0 (Transport::endRun).
    HostTensor tensor;
    tensor.type = graph.task(output).type;
    tensor.shape = graph.task(output).shape;
    Status status;
    // The host copy of a large output may not fit (std::bad_alloc).
    try {
      tensor.bytes.resize(graph.byteSize(output));
      if (run.allocated[output] || run.isView[output])
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

  result.hostPeakBytes = run.memory[numDevices].peak;
  for (int d = 0; d < numDevices; ++d)
    result.devices[d].peakBytes = run.memory[d].peak;
  result.tasks = std::move(run.timings);
  // The makespan, and each device's busy times, task counts, utilisation.
  recomputeDeviceStats(result);
  return result;
}

Status Executor::Impl::setMemoryLimits(RunState &run) const {
  const TaskGraph &graph = run.graph;
  for (int d = 0; d < numDevices; ++d)
    run.memory[d].limit = d < static_cast<int>(options.memoryLimits.size())
                              ? options.memoryLimits[d]
                              : 0;
  // Waiting cannot help a task whose output alone exceeds its limit: fail
  // before anything runs.
  if (!run.waitForMemory)
    return Status();
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
  return Status();
}

void Executor::Impl::wakeComputeWorkers() {
  runEpoch.fetch_add(1, std::memory_order_acq_rel);
  for (auto &queue : computeQueues) {
    std::lock_guard<std::mutex> lock(queue->mutex);
    if (queue->sleepers > 0)
      queue->wakeUp.notify_all();
  }
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
  // Without a limit nothing can park: no admission bookkeeping (`active`),
  // and copies may leave the copy workers (copyPath).
  run.waitForMemory =
      options.memoryPolicy == MemoryPolicy::Wait &&
      std::any_of(options.memoryLimits.begin(), options.memoryLimits.end(),
                  [](uint64_t limit) { return limit > 0; });
  run.transport = options.transport.get();
  if (run.transport)
    planRoles(run);
  if (Status status = setMemoryLimits(run); !status)
    return status;

  startQueues(graph);
  wakeComputeWorkers();

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

  planViews(run);
  if (Status status = uploadInputs(run, inputs); !status)
    return status;

  // Tasks ready at time 0 queue in id order. Collect them before the first
  // push: once workers run, counters reach 0 for tasks they enqueue
  // themselves.
  std::vector<ValueId> readyAtStart;
  for (ValueId id = 0; id < graph.size(); ++id)
    if (graph.task(id).kind != TaskKind::Input && !run.remote(id) &&
        run.pendingInputs[id].load(std::memory_order_relaxed) == 0)
      readyAtStart.push_back(id);

  if (run.transport)
    if (Status status = run.transport->beginRun(); !status)
      return status;
  current = &run;
  run.start = Clock::now();
  if (run.remaining.load() > 0) {
    // This thread counts as active while it queues the first tasks: one of
    // them parking before the next is queued is no deadlock.
    run.addActive(1);
    for (ValueId id : readyAtStart)
      enqueue(run, id);
    if (run.releaseActive())
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

  Result<RunResult> result = collectResult(run);
  if (result && run.transport)
    if (Status status = run.transport->endRun(graph, *result); !status)
      return status;
  return result;
}

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

const ExecutorOptions &Executor::options() const { return impl_->options; }
Backend &Executor::backend() { return *impl_->backend; }
int Executor::numDevices() const { return impl_->numDevices; }

} // namespace doppler::runtime
