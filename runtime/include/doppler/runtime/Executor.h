//===- Executor.h - Work-conserving task-graph executor ---------*- C++ -*-===//
//
// Runs a TaskGraph on a Backend the way shared/METHOD.md section 2 describes
// the engine, with no barriers:
//  - a task becomes ready when every input it reads is available on its
//    device (graph inputs at once, others when their producer finishes);
//  - each device serves its ready tasks one at a time per worker, in the
//    order they became ready (FIFO), by priority, or in program (id) order
//    when asked;
//  - transfers run on the destination device's copy worker(s), so copies
//    overlap compute;
//  - a buffer is freed as soon as its last reader finishes (graph outputs
//    are kept and returned), and per-device memory in use is tracked
//    against an optional limit: going over it fails the run, or (with
//    MemoryPolicy::Wait) makes the task wait until memory is freed;
//  - evicts and reloads move values to and from host memory (a separate
//    pool) on the copy workers.
// Worker threads persist across runs. Every task's start and end (steady
// clock, relative to the run's start) are recorded and can be written as a
// Chrome trace.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_EXECUTOR_H
#define DOPPLER_RUNTIME_EXECUTOR_H

#include "doppler/runtime/Backend.h"
#include "doppler/runtime/Status.h"
#include "doppler/runtime/TaskGraph.h"
#include "doppler/runtime/Transport.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace doppler::runtime {

/// Order in which a device serves its ready tasks.
enum class ReadyOrder : uint8_t {
  Fifo,     ///< Readiness order (METHOD.md section 2); the default.
  Priority, ///< Smallest Task::priority first, ties in readiness order.
  /// The fixed order of an eager framework: each device's compute worker
  /// runs its compute tasks in id order (one starts only after every
  /// lower-id compute task of the device started), and its copy workers
  /// run its copy tasks (transfer, evict, reload) in id order.
  Program,
  /// The program order's discipline on a planned order: each device's
  /// compute worker runs its compute tasks, and its copy workers its copy
  /// tasks, strictly in Task::priority order (ties in id order), one
  /// starting only after the previous one started. For plans whose
  /// priorities are a schedule (doppler-plan-memory's planned start
  /// times): the run then makes the allocations the plan made, in its
  /// order, whatever the timing. Every task needs its priority.
  Planned,
};

std::string_view readyOrderName(ReadyOrder order);
/// Parses "fifo", "priority", "program" or "planned".
Result<ReadyOrder> parseReadyOrder(std::string_view text);

/// What a task does when its output does not fit under its device's
/// memory limit.
enum class MemoryPolicy : uint8_t {
  Fail, ///< The run fails ("out of memory on device N"); the default.
  /// The task is parked and the device goes on with ready tasks that fit;
  /// parked tasks are retried, in the order they were parked, whenever a
  /// buffer on the device is freed. A task bigger than the limit fails at
  /// once; parked tasks that nothing can ever unpark fail the run as a
  /// memory deadlock.
  Wait,
};

std::string_view memoryPolicyName(MemoryPolicy policy);
/// Parses "fail" or "wait".
Result<MemoryPolicy> parseMemoryPolicy(std::string_view text);

/// What an injected fault imitates (FaultInjection).
enum class FaultKind : uint8_t {
  None,     ///< No fault: the default.
  Kernel,   ///< A compute task's kernel fails (any task but inputs and
            ///< copies), after its output was allocated.
  Alloc,    ///< Allocating a task's output fails (any task with a buffer,
            ///< graph inputs included: those fail before the run starts).
  Transfer, ///< A copy (transfer, evict, reload) fails, after its output
            ///< was allocated.
  Hang,     ///< A task (compute or copy) never finishes, after its output
            ///< was allocated: the watchdog must end the run.
};

std::string_view faultKindName(FaultKind kind);

/// A testing aid: makes one task of a run fail the way a real fault would,
/// so that the failure path (stop, free everything, name the task) can be
/// tested on any graph. Off by default; when off it costs one comparison
/// per task.
struct FaultInjection {
  FaultKind kind = FaultKind::None;
  /// The task (its value id) that fails; it must be of a kind `kind`
  /// applies to, or the run fails saying so (a fault that silently misses
  /// would let a test pass without testing anything).
  ValueId task = -1;
  /// When `task` is negative: the nth (1-based) task in id order that
  /// `kind` applies to.
  int64_t nth = 0;

  bool enabled() const { return kind != FaultKind::None; }
};

/// Parses "KIND:TASK" (the `--inject-fault` syntax): KIND is kernel, alloc,
/// transfer or hang; TASK a task id, or #N for the Nth task of that kind.
Result<FaultInjection> parseFaultInjection(std::string_view text);

struct ExecutorOptions {
  ReadyOrder order = ReadyOrder::Fifo;
  /// Slices that are one contiguous run of their input, and reshapes, bind
  /// to their input's buffer instead of copying it (ExecutorViews.cpp); off
  /// by itself when a memory limit is set or the graph offloads.
  bool sliceViews = true;
  /// Copy worker threads per device (concurrent incoming transfers).
  int copyWorkersPerDevice = 1;
  /// Bytes of live buffers allowed per device (index = device id); 0 or a
  /// missing entry means unlimited. Host values (evict outputs) count in a
  /// separate, unlimited host pool.
  std::vector<uint64_t> memoryLimits;
  /// What happens when a task's output does not fit under its limit.
  MemoryPolicy memoryPolicy = MemoryPolicy::Fail;
  /// How long an idle worker polls its queue before sleeping. Polling cuts
  /// the hand-off latency between devices from a futex wake-up (several us)
  /// to well under one, but burns a core while it lasts. Negative: automatic
  /// (20 us when every worker thread can have a hardware thread, else 0;
  /// copy workers do not count where the backend copies small values
  /// inline, Backend::inlineCopyBytes).
  int idleSpinMicroseconds = -1;
  /// Testing only: a task to fail on purpose (see FaultInjection).
  FaultInjection fault;
  /// The watchdog: a task (kernel or copy) still running after this many
  /// seconds ends the run with an error naming it and its device.
  /// Negative: automatic, per task, kWatchdogFloorSeconds plus its work
  /// (bytes read and written, and an einsum's iterations) at
  /// kWatchdogPessimisticRate per second, plus a fixed duration it
  /// emulates. 0: no watchdog. A task cannot be interrupted: when it does
  /// not return once the run is failed, its thread and the run's state are
  /// abandoned, and the executor refuses further runs (end the process).
  double taskTimeoutSeconds = -1;
  /// Runs across processes (Transport.h): this process runs the tasks on
  /// its rank's devices only, transfers between ranks are messages, and
  /// every run is collective. Null: one process runs everything.
  std::shared_ptr<Transport> transport;
};

/// The automatic watchdog bound of a task: this floor, plus its work at the
/// pessimistic rate (far below any real kernel's or link's).
constexpr double kWatchdogFloorSeconds = 30;
constexpr double kWatchdogPessimisticRate = 1e7;

/// When and where one task ran. Times are seconds since the run started.
struct TaskTiming {
  double start = 0;
  double end = 0;
  int device = -1;
  WorkerKind worker = WorkerKind::Compute;
  /// Copies: k < copyWorkersPerDevice is the device's copy worker k; a copy
  /// another worker thread made (Backend::inlineCopyBytes,
  /// Backend::largeCopyPath) takes a lane of that thread's own,
  /// copyWorkersPerDevice + its index among the executor's workers (device
  /// p's compute worker: p * (1 + copyWorkersPerDevice)), so that no lane
  /// ever runs two copies at once.
  int lane = 0;
  /// False for graph inputs (and for tasks skipped after a failure).
  bool ran = false;
};

struct DeviceStats {
  double computeBusy = 0; ///< Seconds the compute worker ran tasks.
  double copyBusy = 0;    ///< Seconds copy workers ran transfers (summed).
  double utilization = 0; ///< computeBusy / makespan.
  int64_t computeTasks = 0;
  int64_t copyTasks = 0;
  /// Largest sum of live buffers on the device (graph inputs included;
  /// host values excluded).
  uint64_t peakBytes = 0;
};

/// A graph output copied back to the host.
struct HostTensor {
  ElementType type = ElementType::F32;
  Shape shape;
  std::vector<unsigned char> bytes;

  const float *f32() const {
    return reinterpret_cast<const float *>(bytes.data());
  }
  const double *f64() const {
    return reinterpret_cast<const double *>(bytes.data());
  }
};

struct RunResult {
  /// Seconds from the run's start to the end of its last task.
  double makespan = 0;
  /// Indexed by ValueId.
  std::vector<TaskTiming> tasks;
  /// Indexed by device id.
  std::vector<DeviceStats> devices;
  /// Largest sum of live host values (evict outputs).
  uint64_t hostPeakBytes = 0;
  std::map<ValueId, HostTensor> outputs;
  /// Runs across processes: the rank of each device (the trace names its
  /// processes "rank R device D"); empty in one process.
  std::vector<int> deviceRanks;

  /// Chrome trace (chrome://tracing, Perfetto): a process per device, a
  /// thread per worker (tid 0 compute, tid 1.. copy workers), one complete
  /// ("X") event per task in microseconds.
  std::string chromeTrace(const TaskGraph &graph) const;
  Status writeChromeTrace(const TaskGraph &graph,
                          const std::string &path) const;
};

/// Host data for graph inputs: one dense row-major buffer per input value.
using InputBindings = std::unordered_map<ValueId, const void *>;

class Executor {
public:
  /// Starts the worker threads. `backend` must not be null.
  explicit Executor(std::unique_ptr<Backend> backend,
                    ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Runs `graph` once. Every graph input needs a binding. Runs of one
  /// executor are serialised. Fails (and frees everything) on invalid
  /// graphs, unsupported tasks, memory limits, backend errors and
  /// exceptions; a task's failure names it ("task 17 (einsum ... on device
  /// 1): ..."), the first one wins when several fail at once, and the
  /// tasks that have not started yet are skipped.
  Result<RunResult> run(const TaskGraph &graph, const InputBindings &inputs);

  /// Options may be changed between runs.
  void setReadyOrder(ReadyOrder order);
  void setMemoryLimit(int device, uint64_t bytes);
  void setMemoryPolicy(MemoryPolicy policy);
  void setFaultInjection(FaultInjection fault);
  const ExecutorOptions &options() const;

  Backend &backend();
  int numDevices() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_EXECUTOR_H
