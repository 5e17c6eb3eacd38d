//===- ExecutorMemory.cpp - Admission, parking and buffers ----------------===//
//
// A task's bytes are counted against its device's pool when it is admitted;
// with the wait policy a task that does not fit parks until a free makes
// room (Executor.cpp's file comment has the model). Buffers are allocated
// on admission and freed by their last reader.
//
//===----------------------------------------------------------------------===//

#include "ExecutorImpl.h"

namespace doppler::runtime {

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
      run.addActive(queue.runnable() - before);
    } else {
      int64_t before = queue.runnable();
      queue.push(id, task.priority);
      run.addActive(queue.runnable() - before);
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
  if (releaseView(run, id))
    return; // a view has no bytes of its own
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
      run.addActive(queue.runnable() - before);
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
  if (run.releaseActive())
    onStall(run);
  return Admission::Parked;
}

} // namespace doppler::runtime
