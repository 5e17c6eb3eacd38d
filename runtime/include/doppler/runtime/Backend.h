//===- Backend.h - What a device backend provides ---------------*- C++ -*-===//
//
// The executor owns scheduling (readiness, queues, memory accounting,
// timing); a backend owns devices: their memory and how a task runs on them.
// The executor gives each virtual device one compute worker thread and one
// or more copy worker threads and calls the backend from them:
//
//   prepare(graph)        once per graph, before the clock starts: check
//                         support, build per-task plans;
//   attachWorker(...)     once on every worker thread (a CUDA backend binds
//                         the thread to its GPU and stream here);
//   allocate/deallocate   output buffers as tasks start / values die;
//   allocateHost/...      host buffers for host values (evict outputs);
//   execute(launch)       runs one task and returns when it is done, on the
//                         worker of the task's device (copy worker for
//                         transfers, on the destination device; evicts
//                         and reloads on the copy worker of the task's
//                         device, reading or writing a host buffer).
//
// So a worker thread plays the role of a CUDA stream: tasks on one worker
// are ordered, tasks on different workers overlap.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_BACKEND_H
#define DOPPLER_RUNTIME_BACKEND_H

#include "doppler/runtime/Status.h"
#include "doppler/runtime/TaskGraph.h"

#include <cstdint>
#include <memory>
#include <string_view>

namespace doppler::runtime {

/// A buffer in some device's memory (host memory on the CPU backend).
struct DeviceBuffer {
  void *data = nullptr;
  uint64_t bytes = 0;
};

/// Who makes a transfer larger than Backend::inlineCopyBytes. For a host
/// whose devices leave no core to a copy worker, which then waits for one
/// until a device runs out of work.
enum class LargeCopyPath : uint8_t {
  /// The destination's copy worker.
  CopyWorker,
  /// The worker that made it ready, right after its task, when nothing
  /// else is queued for it (its core would idle); else the copy worker.
  IdleProducer,
  /// As IdleProducer, else the destination's compute worker, before the
  /// tasks queued there: it waits for that worker's current task, but
  /// takes its time.
  ComputeWorkers,
};

/// The kind of worker thread that runs a task.
enum class WorkerKind : uint8_t { Compute, Copy };

/// Per-graph state a backend builds in prepare() (e.g. einsum plans).
class PreparedGraph {
public:
  virtual ~PreparedGraph() = default;
};

/// Everything execute() needs for one task.
struct TaskLaunch {
  const TaskGraph *graph = nullptr;
  PreparedGraph *prepared = nullptr;
  ValueId id = -1;
  const Task *task = nullptr;
  /// One buffer per entry of task->inputs (repeats included).
  const DeviceBuffer *inputs = nullptr;
  DeviceBuffer output;
  /// Worker index among the device's workers of its kind.
  int lane = 0;
};

class Backend {
public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  /// Virtual devices; valid ids are 0..numDevices()-1.
  virtual int numDevices() const = 0;

  /// Checks that every task of `graph` can run here and builds whatever the
  /// backend wants to reuse across runs of the same graph.
  virtual Result<std::unique_ptr<PreparedGraph>>
  prepare(const TaskGraph &graph) = 0;

  /// Called once on each worker thread before it runs any task.
  virtual Status attachWorker(int device, WorkerKind kind, int lane) {
    (void)device, (void)kind, (void)lane;
    return Status();
  }

  /// Device memory. A zero-byte request may return a null pointer.
  virtual Result<DeviceBuffer> allocate(int device, uint64_t bytes) = 0;
  virtual void deallocate(int device, DeviceBuffer buffer) = 0;
  /// Host memory for host values (evict outputs, reload inputs), usable by
  /// every device's copy workers. The default is plain 64-byte aligned
  /// host memory; a GPU backend pins it.
  virtual Result<DeviceBuffer> allocateHost(uint64_t bytes);
  virtual void deallocateHost(DeviceBuffer buffer);
  /// Host <-> device copies of whole buffers, outside the timed run.
  virtual Status upload(int device, DeviceBuffer dst, const void *src) = 0;
  virtual Status download(int device, DeviceBuffer src, void *dst) = 0;

  /// Runs one task to completion on the calling worker thread.
  virtual Status execute(const TaskLaunch &launch) = 0;
  /// Whether a buffer at an offset into an allocated one is a buffer too,
  /// readable as soon as the one it points into is written: then the
  /// executor binds contiguous slices and reshapes to their input instead
  /// of running them (ExecutorOptions::sliceViews). False by default: a
  /// backend whose tasks complete asynchronously (CUDA's deferred events)
  /// would have no event for the view.
  virtual bool supportsViews() const { return false; }
  /// Transfers between devices of at most this many bytes may run on the
  /// worker thread that made them ready (the producer's), as soon as it
  /// has, instead of waking the destination's copy worker: a hop then
  /// pays one wake-up (the consumer's) instead of two. Only for a backend
  /// whose copies are plain memory copies that any thread may make. 0 (the
  /// default): every transfer runs on its copy worker.
  virtual uint64_t inlineCopyBytes() const { return 0; }
  /// Who makes the transfers inlineCopyBytes() leaves to a copy worker
  /// (LargeCopyPath). Same conditions as inlineCopyBytes(); by default the
  /// destination's copy worker.
  virtual LargeCopyPath largeCopyPath() const {
    return LargeCopyPath::CopyWorker;
  }
};

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_BACKEND_H
