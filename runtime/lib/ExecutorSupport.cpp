//===- ExecutorSupport.cpp - Faults, the watchdog, names ------------------===//
//
// The executor's fault injection (which task a fault strikes, what it
// reports), its watchdog (each task's bound, finding a late one, waiting
// for a run), the backends' host-memory defaults and the names and parsers
// of the executor's options.
//
//===----------------------------------------------------------------------===//

#include "ExecutorImpl.h"

#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

namespace doppler::runtime {
namespace executor {

std::string taskContext(const TaskGraph &graph, ValueId id) {
  std::string what = graph.describe(id);
  std::string prefix = "%" + std::to_string(id) + " ";
  if (what.compare(0, prefix.size(), prefix) == 0)
    what.erase(0, prefix.size());
  return "task " + std::to_string(id) + " (" + what + " on device " +
         std::to_string(graph.task(id).device) + ")";
}

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

Status injectedFailure(FaultKind kind, uint64_t bytes) {
  if (kind == FaultKind::Alloc)
    return Status::failure("cannot allocate " + std::to_string(bytes) +
                           " bytes (injected fault)");
  return Status::failure("injected " + std::string(faultKindName(kind)) +
                         " fault");
}

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
  if (task.kind == TaskKind::Conv)
    work += convolutionMultiplyAdds(graph.task(task.inputs[0]).shape,
                                    graph.task(task.inputs[1]).shape,
                                    task.groups, task.shape);
  if (task.kind == TaskKind::Pool) {
    // Each output reads at most min(kernel, input extent) taps per dim.
    const Shape &in = graph.task(task.inputs[0]).shape;
    double taps = 1;
    for (size_t j = 0; j < task.window.kernel.size() && j + 2 < in.size(); ++j)
      taps *= static_cast<double>(
          std::max<int64_t>(1, std::min(task.window.kernel[j], in[j + 2])));
    work += taps * static_cast<double>(numElements(task.shape));
  }
  double emulated = task.seconds > 0 ? task.seconds : 0;
  return kWatchdogFloorSeconds + work / kWatchdogPessimisticRate +
         2 * emulated;
}

} // namespace executor

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

} // namespace doppler::runtime
