//===- CudaBackend.cpp - Virtual devices on NVIDIA GPUs -------------------===//
//
// Threads and streams: the executor gives every virtual device a compute
// worker and copy workers; each worker gets its own stream (non-blocking,
// so the legacy default stream never serialises them) and, for compute, its
// own cuBLAS handle, created on first use on its GPU. A task's steps are
// enqueued on its worker's stream; see CudaBackend.h for the two completion
// modes.
//
// Memory: per virtual device an arena of cudaMalloc'd blocks, rounded to
// size classes and cached when freed (cudaFree would synchronise the whole
// GPU in the middle of a run). Scratch space for GEMM operands and partial
// reductions is per worker and grows on demand. These resources are in
// CudaResources.h; CUDA and cuBLAS errors become a Status in CudaCheck.cpp.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CudaBackend.h"

#include "CudaKernels.h"
#include "CudaResources.h"
#include "doppler/runtime/CpuKernels.h"
#include "Doppler/Support/Limits.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace doppler::runtime {
namespace {

using namespace cuda;
using namespace cuda::resources;

//===----------------------------------------------------------------------===//
// The backend
//===----------------------------------------------------------------------===//

class CudaBackend final : public Backend {
public:
  CudaBackend(const CudaBackendOptions &options, std::vector<int> mapping)
      : options_(options) {
    for (int gpu : mapping) {
      auto device = std::make_unique<VirtualDevice>();
      device->gpu = gpu;
      device->arena =
          std::make_unique<DeviceArena>(gpu, options.cachedBytesPerDevice);
      devices_.push_back(std::move(device));
      gpus_[gpu].ordinal = gpu;
    }
  }

  ~CudaBackend() override {
    for (auto &device : devices_) {
      if (device->compute)
        device->compute->destroy();
      for (auto &copy : device->copies)
        if (copy)
          copy->destroy();
      Staging &staging = device->staging;
      ScopedDevice scope;
      if (!scope.enter(device->gpu))
        continue;
      if (staging.stream) {
        (void)cudaStreamSynchronize(staging.stream);
        (void)cudaStreamDestroy(staging.stream);
      }
      for (int b = 0; b < 2; ++b) {
        if (staging.host[b])
          (void)cudaFreeHost(staging.host[b]);
        if (staging.ready[b])
          (void)cudaEventDestroy(staging.ready[b]);
      }
    }
    // Arenas wait for their pending blocks before freeing them; events go
    // back to the pools, which outlive the arenas.
    devices_.clear();
    gpus_.clear();
  }

  /// Queries every GPU in use and enables peer access between them.
  Status initialize() {
    for (auto &entry : gpus_) {
      Gpu &gpu = entry.second;
      ScopedDevice scope;
      if (Status status = scope.enter(gpu.ordinal); !status)
        return status;
      DOPPLER_CUDA_TRY(cudaDeviceGetAttribute(
          &gpu.limits.smCount, cudaDevAttrMultiProcessorCount, gpu.ordinal));
      DOPPLER_CUDA_TRY(cudaDeviceGetAttribute(
          &gpu.limits.maxThreadsPerSm, cudaDevAttrMaxThreadsPerMultiProcessor,
          gpu.ordinal));
    }
    if (!options_.enablePeerAccess)
      return Status();
    for (auto &from : gpus_)
      for (auto &to : gpus_) {
        if (from.first == to.first)
          continue;
        int possible = 0;
        DOPPLER_CUDA_TRY(
            cudaDeviceCanAccessPeer(&possible, from.first, to.first));
        if (!possible)
          continue; // cudaMemcpyPeerAsync then stages through the host.
        ScopedDevice scope;
        if (Status status = scope.enter(from.first); !status)
          return status;
        cudaError_t error = cudaDeviceEnablePeerAccess(to.first, 0);
        if (error == cudaErrorPeerAccessAlreadyEnabled)
          (void)cudaGetLastError();
        else
          DOPPLER_CUDA_TRY(error);
      }
    return Status();
  }

  std::string_view name() const override { return "cuda"; }
  int numDevices() const override { return static_cast<int>(devices_.size()); }

  Result<std::unique_ptr<PreparedGraph>>
  prepare(const TaskGraph &graph) override {
    auto prepared = std::make_unique<CudaPreparedGraph>();
    prepared->plans.resize(graph.size());
    prepared->ready.resize(graph.size());
    for (ValueId id = 0; id < graph.size(); ++id) {
      const Task &task = graph.task(id);
      if (task.device < 0 || task.device >= numDevices())
        return Status::failure(graph.describe(id) + " is on device " +
                               std::to_string(task.device) +
                               " but the CUDA backend has " +
                               std::to_string(numDevices()));
      const DeviceLimits &limits = gpus_.at(devices_[task.device]->gpu).limits;
      Result<KernelPlan> plan = Status::failure("no plan");
      switch (task.kind) {
      case TaskKind::Einsum: {
        if (task.converts()) {
          plan = Status::failure(
              "an einsum converting " +
              std::string(elementTypeName(task.convertsFrom)) + " to " +
              std::string(elementTypeName(task.type)) +
              " is not supported by the CUDA backend (run it on the CPU "
              "backend)");
          break;
        }
        std::vector<Shape> shapes;
        for (ValueId input : task.inputs)
          shapes.push_back(graph.task(input).shape);
        plan = planEinsum(task.spec, task.join, task.aggregation, task.scalar,
                          shapes, task.type, limits);
        break;
      }
      case TaskKind::Slice:
        plan = planSlice(graph.task(task.inputs[0]).shape, task.sliceOffsets,
                         task.shape, task.type, limits);
        break;
      case TaskKind::Assemble:
        plan = planAssemble(task.blockExtents, task.type, limits);
        break;
      case TaskKind::Fill:
        plan =
            planFill(numElements(task.shape), task.type, task.scalar, limits);
        break;
      case TaskKind::Fused: {
        std::vector<Shape> shapes;
        for (ValueId input : task.inputs)
          shapes.push_back(graph.task(input).shape);
        plan = planFused(task.spec, task.program.str(), shapes, task.type,
                         limits);
        break;
      }
      case TaskKind::Conv:
        plan = planConvolution(graph.task(task.inputs[0]).shape,
                               graph.task(task.inputs[1]).shape, task.groups,
                               task.window, task.type, limits);
        break;
      case TaskKind::Pool:
        plan = planPool(task.pool, graph.task(task.inputs[0]).shape,
                        task.window, task.type, limits);
        break;
      case TaskKind::Input:
      case TaskKind::Transfer:
      case TaskKind::Delay:
      case TaskKind::Evict:
      case TaskKind::Reload:
      case TaskKind::Reshape:
      case TaskKind::Gather: // enqueueGather, no kernel plan
        continue;
      }
      if (!plan)
        return plan.status().withContext(graph.describe(id));
      prepared->plans[id] = std::move(*plan);
    }
    return std::unique_ptr<PreparedGraph>(std::move(prepared));
  }

  Status attachWorker(int device, WorkerKind kind, int lane) override {
    Result<Worker *> worker = workerFor(device, kind, lane);
    if (!worker)
      return worker.status();
    // Bind the thread to the GPU once; execute() re-checks cheaply.
    DOPPLER_CUDA_TRY(cudaSetDevice((*worker)->gpu));
    return Status();
  }

  Result<DeviceBuffer> allocate(int device, uint64_t bytes) override {
    if (bytes == 0)
      return DeviceBuffer{};
    Result<void *> data = devices_[device]->arena->allocate(bytes);
    if (!data)
      return data.status().withContext(
          "allocating " + std::to_string(bytes) + " bytes on virtual device " +
          std::to_string(device) + " (GPU " +
          std::to_string(devices_[device]->gpu) + ")");
    return DeviceBuffer{*data, bytes};
  }

  void deallocate(int device, DeviceBuffer buffer) override {
    if (!buffer.data)
      return;
    DeviceArena &arena = *devices_[device]->arena;
    std::vector<SharedEvent> events;
    if (options_.completion == Completion::Deferred)
      events = arena.takeUses(buffer.data);
    arena.release(buffer.data, buffer.bytes, std::move(events));
  }

  /// Host values live in pinned memory (portable: any GPU's copy engine can
  /// reach it), so evicts and reloads are plain async copies.
  Result<DeviceBuffer> allocateHost(uint64_t bytes) override {
    if (bytes == 0)
      return DeviceBuffer{};
    void *data = nullptr;
    DOPPLER_CUDA_TRY(cudaHostAlloc(&data, bytes, cudaHostAllocPortable));
    return DeviceBuffer{data, bytes};
  }

  void deallocateHost(DeviceBuffer buffer) override {
    if (buffer.data)
      (void)cudaFreeHost(buffer.data);
  }

  Status upload(int device, DeviceBuffer dst, const void *src) override {
    if (dst.bytes == 0)
      return Status();
    VirtualDevice &vd = *devices_[device];
    ScopedDevice scope;
    if (Status status = scope.enter(vd.gpu); !status)
      return status;
    std::lock_guard<std::mutex> lock(vd.staging.mutex);
    if (Status status = ensureStaging(vd); !status)
      return status;
    Staging &staging = vd.staging;
    const uint64_t chunk = options_.stagingBytes;
    auto *to = static_cast<char *>(dst.data);
    auto *from = static_cast<const char *>(src);
    // Double buffering: fill one pinned buffer while the other is copied.
    for (uint64_t offset = 0, i = 0; offset < dst.bytes; offset += chunk, ++i) {
      int b = static_cast<int>(i % 2);
      uint64_t bytes = std::min(chunk, dst.bytes - offset);
      DOPPLER_CUDA_TRY(cudaEventSynchronize(staging.ready[b]));
      std::memcpy(staging.host[b], from + offset, bytes);
      DOPPLER_CUDA_TRY(cudaMemcpyAsync(to + offset, staging.host[b], bytes,
                                       cudaMemcpyHostToDevice, staging.stream));
      DOPPLER_CUDA_TRY(cudaEventRecord(staging.ready[b], staging.stream));
    }
    DOPPLER_CUDA_TRY(cudaStreamSynchronize(staging.stream));
    return Status();
  }

  Status download(int device, DeviceBuffer src, void *dst) override {
    if (src.bytes == 0)
      return Status();
    VirtualDevice &vd = *devices_[device];
    if (options_.completion == Completion::Deferred)
      if (Status status = vd.arena->waitForUses(src.data); !status)
        return status;
    ScopedDevice scope;
    if (Status status = scope.enter(vd.gpu); !status)
      return status;
    std::lock_guard<std::mutex> lock(vd.staging.mutex);
    if (Status status = ensureStaging(vd); !status)
      return status;
    Staging &staging = vd.staging;
    const uint64_t chunk = options_.stagingBytes;
    const uint64_t chunks = (src.bytes + chunk - 1) / chunk;
    auto *from = static_cast<const char *>(src.data);
    auto *to = static_cast<char *>(dst);
    auto enqueue = [&](uint64_t i) -> Status {
      int b = static_cast<int>(i % 2);
      uint64_t offset = i * chunk;
      uint64_t bytes = std::min(chunk, src.bytes - offset);
      DOPPLER_CUDA_TRY(cudaMemcpyAsync(staging.host[b], from + offset, bytes,
                                       cudaMemcpyDeviceToHost, staging.stream));
      DOPPLER_CUDA_TRY(cudaEventRecord(staging.ready[b], staging.stream));
      return Status();
    };
    if (Status status = enqueue(0); !status)
      return status;
    for (uint64_t i = 0; i < chunks; ++i) {
      // The next chunk's buffer was emptied in the previous iteration.
      if (i + 1 < chunks)
        if (Status status = enqueue(i + 1); !status)
          return status;
      int b = static_cast<int>(i % 2);
      DOPPLER_CUDA_TRY(cudaEventSynchronize(staging.ready[b]));
      uint64_t offset = i * chunk;
      std::memcpy(to + offset, staging.host[b],
                  std::min(chunk, src.bytes - offset));
    }
    return Status();
  }

  Status execute(const TaskLaunch &launch) override {
    const Task &task = *launch.task;
    Clock::time_point start = Clock::now();
    Result<Worker *> found = workerFor(
        task.device,
        task.runsOnCopyWorker() ? WorkerKind::Copy : WorkerKind::Compute,
        launch.lane);
    if (!found)
      return found.status();
    Worker &worker = **found;
    DOPPLER_CUDA_TRY(cudaSetDevice(worker.gpu));
    auto *prepared = static_cast<CudaPreparedGraph *>(launch.prepared);
    bool deferred = options_.completion == Completion::Deferred;
    if (deferred) {
      for (ValueId input : task.uniqueInputs)
        if (const SharedEvent &ready = prepared->ready[input])
          DOPPLER_CUDA_TRY(cudaStreamWaitEvent(worker.stream, ready->event, 0));
      // A reload's control dependencies: their work is done on the GPU too
      // before the reload starts (not only enqueued).
      for (ValueId trigger : task.after)
        if (const SharedEvent &ready = prepared->ready[trigger])
          DOPPLER_CUDA_TRY(cudaStreamWaitEvent(worker.stream, ready->event, 0));
    }

    if (Status status = enqueue(launch, worker, *prepared); !status)
      return status;
    // Evicts and reloads always complete before returning, even when
    // completion is deferred: the host buffer they read or write may be
    // freed (cudaFreeHost) as soon as the executor sees them finish, and
    // the device arenas track device pointers only.
    bool hostCopy =
        task.kind == TaskKind::Evict || task.kind == TaskKind::Reload;
    if (deferred && !hostCopy)
      return recordCompletion(launch, worker, *prepared);
    if (hostCopy)
      prepared->ready[launch.id].reset();
    if (Status status = waitForStream(worker); !status)
      return status;
    // A fixed-duration transfer lasts that long however fast the copy was
    // (cost-only graphs).
    if (task.kind == TaskKind::Transfer && task.seconds > 0)
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(task.seconds)));
    return Status();
  }

private:
  /// The worker (stream, handle) of (device, kind, lane), created on first
  /// use on the device's GPU.
  Result<Worker *> workerFor(int device, WorkerKind kind, int lane) {
    if (device < 0 || device >= numDevices())
      return Status::failure("virtual device " + std::to_string(device) +
                             " does not exist (the CUDA backend has " +
                             std::to_string(numDevices()) + ")");
    if (lane < 0)
      return Status::failure("negative worker lane");
    VirtualDevice &vd = *devices_[device];
    std::lock_guard<std::mutex> lock(vd.workerMutex);
    std::unique_ptr<Worker> *slot = &vd.compute;
    if (kind == WorkerKind::Copy) {
      if (static_cast<int>(vd.copies.size()) <= lane)
        vd.copies.resize(lane + 1);
      slot = &vd.copies[lane];
    }
    if (*slot)
      return slot->get();
    auto worker = std::make_unique<Worker>();
    worker->gpu = vd.gpu;
    ScopedDevice scope;
    if (Status status = scope.enter(vd.gpu); !status)
      return status;
    Status status = createWorker(*worker, kind == WorkerKind::Compute);
    if (!status) {
      worker->destroy();
      return status.withContext(
          "creating the " +
          std::string(kind == WorkerKind::Compute ? "compute" : "copy") +
          " stream of virtual device " + std::to_string(device));
    }
    *slot = std::move(worker);
    return slot->get();
  }

  Status createWorker(Worker &worker, bool compute) {
    DOPPLER_CUDA_TRY(
        cudaStreamCreateWithFlags(&worker.stream, cudaStreamNonBlocking));
    // Blocking sync: a long task's worker sleeps instead of spinning after
    // its spin budget.
    DOPPLER_CUDA_TRY(cudaEventCreateWithFlags(
        &worker.done, cudaEventDisableTiming | cudaEventBlockingSync));
    if (!compute)
      return Status();
    DOPPLER_CUBLAS_TRY(cublasCreate(&worker.blas));
    DOPPLER_CUBLAS_TRY(cublasSetStream(worker.blas, worker.stream));
    DOPPLER_CUBLAS_TRY(cublasSetMathMode(
        worker.blas,
        options_.allowTf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    return Status();
  }

  Status ensureStaging(VirtualDevice &vd) {
    Staging &staging = vd.staging;
    if (staging.stream)
      return Status();
    for (int b = 0; b < 2; ++b) {
      DOPPLER_CUDA_TRY(cudaHostAlloc(&staging.host[b], options_.stagingBytes,
                                     cudaHostAllocPortable));
      DOPPLER_CUDA_TRY(
          cudaEventCreateWithFlags(&staging.ready[b], cudaEventDisableTiming));
    }
    DOPPLER_CUDA_TRY(
        cudaStreamCreateWithFlags(&staging.stream, cudaStreamNonBlocking));
    return Status();
  }

  Status ensureScratch(Worker &worker, uint64_t bytes) {
    if (worker.scratchBytes >= bytes)
      return Status();
    if (worker.scratch) {
      // Work queued earlier on this stream may still read the old block.
      DOPPLER_CUDA_TRY(cudaStreamSynchronize(worker.stream));
      DOPPLER_CUDA_TRY(cudaFree(worker.scratch));
      worker.scratch = nullptr;
      worker.scratchBytes = 0;
    }
    uint64_t size = deviceBlockSize(std::max(bytes, worker.scratchBytes * 2));
    DOPPLER_CUDA_TRY(cudaMalloc(&worker.scratch, size));
    worker.scratchBytes = size;
    return Status();
  }

  Status enqueue(const TaskLaunch &launch, Worker &worker,
                 CudaPreparedGraph &prepared) {
    const Task &task = *launch.task;
    switch (task.kind) {
    case TaskKind::Einsum:
    case TaskKind::Fused:
    case TaskKind::Slice:
    case TaskKind::Assemble:
    case TaskKind::Fill:
    case TaskKind::Conv:
    case TaskKind::Pool: {
      const std::optional<KernelPlan> &plan = prepared.plans[launch.id];
      if (!plan)
        return Status::failure("task was not prepared");
      return runPlan(*plan, launch, worker);
    }
    case TaskKind::Transfer:
      return enqueueTransfer(launch, worker);
    case TaskKind::Evict:
      if (launch.output.bytes)
        DOPPLER_CUDA_TRY(cudaMemcpyAsync(
            launch.output.data, launch.inputs[0].data, launch.output.bytes,
            cudaMemcpyDeviceToHost, worker.stream));
      return Status();
    case TaskKind::Reload:
      if (launch.output.bytes)
        DOPPLER_CUDA_TRY(cudaMemcpyAsync(
            launch.output.data, launch.inputs[0].data, launch.output.bytes,
            cudaMemcpyHostToDevice, worker.stream));
      return Status();
    case TaskKind::Reshape:
      // Row-major order is unchanged: one device-to-device copy.
      if (launch.output.bytes)
        DOPPLER_CUDA_TRY(cudaMemcpyAsync(
            launch.output.data, launch.inputs[0].data, launch.output.bytes,
            cudaMemcpyDeviceToDevice, worker.stream));
      return Status();
    case TaskKind::Gather:
      return enqueueGather(launch, worker);
    case TaskKind::Delay:
      DOPPLER_CUDA_TRY(launchDelay(task.seconds, worker.stream));
      return Status();
    case TaskKind::Input:
      break;
    }
    return Status::failure("task kind '" +
                           std::string(taskKindName(task.kind)) +
                           "' cannot be executed");
  }

  Status enqueueTransfer(const TaskLaunch &launch, Worker &worker) {
    const Task &task = *launch.task;
    uint64_t bytes = launch.output.bytes;
    if (bytes) {
      int srcGpu = devices_[launch.graph->task(task.inputs[0]).device]->gpu;
      void *dst = launch.output.data;
      const void *src = launch.inputs[0].data;
      if (srcGpu == worker.gpu)
        DOPPLER_CUDA_TRY(cudaMemcpyAsync(
            dst, src, bytes, cudaMemcpyDeviceToDevice, worker.stream));
      else // Direct with peer access, otherwise staged by the driver.
        DOPPLER_CUDA_TRY(cudaMemcpyPeerAsync(dst, worker.gpu, src, srcGpu,
                                             bytes, worker.stream));
    }
    if (options_.completion == Completion::Deferred && task.seconds > 0)
      DOPPLER_CUDA_TRY(launchDelay(task.seconds, worker.stream));
    return Status();
  }

  Status runPlan(const KernelPlan &plan, const TaskLaunch &launch,
                 Worker &worker) {
    if (uint64_t scratch = plan.scratchBytes())
      if (Status status = ensureScratch(worker, scratch); !status)
        return status;
    const uint64_t elementBytes = elementSize(plan.type);
    auto address = [&](const BufferRef &ref) -> char * {
      char *base = nullptr;
      switch (ref.kind) {
      case BufferRef::Kind::Input:
        base = static_cast<char *>(launch.inputs[ref.index].data);
        break;
      case BufferRef::Kind::Output:
        base = static_cast<char *>(launch.output.data);
        break;
      case BufferRef::Kind::Temp:
        base = static_cast<char *>(worker.scratch) + plan.tempOffset(ref.index);
        break;
      }
      return base + ref.offset * static_cast<int64_t>(elementBytes);
    };
    cudaStream_t stream = worker.stream;
    for (const Step &step : plan.steps) {
      Status status;
      if (const auto *map = std::get_if<MapStep>(&step))
        status = DOPPLER_CUDA_CHECK(
            launchMap(*map, plan.type, address(map->out), address(map->in0),
                      address(map->in1), stream));
      else if (const auto *reduce = std::get_if<ReduceStep>(&step))
        status = DOPPLER_CUDA_CHECK(
            launchReduce(*reduce, plan.type, address(reduce->out),
                         address(reduce->in0), address(reduce->in1), stream));
      else if (const auto *copy = std::get_if<CopyStep>(&step))
        status = DOPPLER_CUDA_CHECK(
            launchCopy(*copy, address(copy->dst), address(copy->src), stream));
      else if (const auto *fill = std::get_if<FillStep>(&step))
        status =
            DOPPLER_CUDA_CHECK(launchFill(*fill, address(fill->dst), stream));
      else if (const auto *fused = std::get_if<FusedStep>(&step)) {
        const void *inputs[kMaxFusedInputs] = {};
        for (int k = 0; k < fused->numInputs; ++k)
          inputs[k] = address(fused->in[k]);
        status = DOPPLER_CUDA_CHECK(launchFused(*fused, plan.type,
                                                address(fused->out), inputs,
                                                stream));
      } else if (const auto *gemm = std::get_if<GemmStep>(&step)) {
        status = runGemm(*gemm, plan.type, address(gemm->a), address(gemm->b),
                         address(gemm->c), worker);
      } else if (const auto *window = std::get_if<WindowStep>(&step)) {
        status = DOPPLER_CUDA_CHECK(launchWindow(
            *window, plan.type, address(window->out), address(window->input),
            window->hasWeight ? address(window->weight) : nullptr, stream));
      }
      if (!status)
        return status.withContext(describeStep(step));
    }
    return Status();
  }

  /// A gather: the indices are copied to the host and checked first (one
  /// stream synchronisation per gather), so an out-of-range index fails
  /// the task with cpu::checkGatherIndices's message, then one kernel
  /// copies the rows (CudaGather.cu).
  Status enqueueGather(const TaskLaunch &launch, Worker &worker) {
    const Task &task = *launch.task;
    const Task &table = launch.graph->task(task.inputs[0]);
    const Task &indices = launch.graph->task(task.inputs[1]);
    if (!isIntegerType(indices.type))
      return Status::failure(
          "gather at " + std::string(elementTypeName(indices.type)) +
          " indices (integers computed on a float carrier) is not supported "
          "by the CUDA backend (run it on the CPU backend)");
    std::vector<unsigned char> host(launch.inputs[1].bytes);
    if (!host.empty()) {
      DOPPLER_CUDA_TRY(cudaMemcpyAsync(host.data(), launch.inputs[1].data,
                                       host.size(), cudaMemcpyDeviceToHost,
                                       worker.stream));
      DOPPLER_CUDA_TRY(cudaStreamSynchronize(worker.stream));
    }
    int64_t count = numElements(indices.shape);
    if (Status status = cpu::checkGatherIndices(
            host.data(), indices.type, count, table.shape, task.axis);
        !status)
      return status;
    GatherLaunch gather;
    gather.count = static_cast<uint64_t>(count);
    gather.extent = static_cast<uint64_t>(table.shape[task.axis]);
    uint64_t inner = 1;
    for (size_t d = 0; d < table.shape.size(); ++d) {
      if (static_cast<int64_t>(d) < task.axis)
        gather.outer *= static_cast<uint64_t>(table.shape[d]);
      else if (static_cast<int64_t>(d) > task.axis)
        inner *= static_cast<uint64_t>(table.shape[d]);
    }
    gather.rowBytes = inner * elementSize(task.type);
    gather.indices64 = indices.type == ElementType::I64;
    DOPPLER_CUDA_TRY(launchGather(gather, launch.output.data,
                                  launch.inputs[0].data, launch.inputs[1].data,
                                  worker.stream));
    return Status();
  }

  Status runGemm(const GemmStep &gemm, ElementType type, const void *a,
                 const void *b, void *c, Worker &worker) {
    if (!worker.blas)
      return Status::failure("GEMM on a worker without a cuBLAS handle");
    cublasOperation_t opA = gemm.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = gemm.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = static_cast<int>(gemm.m), n = static_cast<int>(gemm.n),
              k = static_cast<int>(gemm.k);
    const int lda = static_cast<int>(gemm.lda),
              ldb = static_cast<int>(gemm.ldb),
              ldc = static_cast<int>(gemm.ldc);
    const int batch = static_cast<int>(gemm.batch);
    const long long strideA = gemm.strideA, strideB = gemm.strideB,
                    strideC = gemm.strideC;
    if (type == ElementType::F64) {
      const double alpha = 1, beta = 0;
      DOPPLER_CUBLAS_TRY(cublasDgemmStridedBatched(
          worker.blas, opA, opB, m, n, k, &alpha,
          static_cast<const double *>(a), lda, strideA,
          static_cast<const double *>(b), ldb, strideB, &beta,
          static_cast<double *>(c), ldc, strideC, batch));
      return Status();
    }
    const float alpha = 1, beta = 0;
    DOPPLER_CUBLAS_TRY(cublasSgemmStridedBatched(
        worker.blas, opA, opB, m, n, k, &alpha, static_cast<const float *>(a),
        lda, strideA, static_cast<const float *>(b), ldb, strideB, &beta,
        static_cast<float *>(c), ldc, strideC, batch));
    return Status();
  }

  /// Synchronize mode: waits for everything enqueued on the worker's
  /// stream, polling briefly before blocking.
  Status waitForStream(Worker &worker) {
    DOPPLER_CUDA_TRY(cudaEventRecord(worker.done, worker.stream));
    Clock::time_point deadline =
        Clock::now() + std::chrono::microseconds(options_.spinMicroseconds);
    while (true) {
      cudaError_t state = cudaEventQuery(worker.done);
      if (state == cudaSuccess)
        return Status();
      if (state != cudaErrorNotReady) // E.g. a fault in the task's kernels.
        return checkCuda(state, "cudaEventQuery(end of task)", __FILE__,
                         __LINE__);
      if (Clock::now() >= deadline)
        break;
      detail::cpuRelax();
    }
    DOPPLER_CUDA_TRY(cudaEventSynchronize(worker.done));
    return Status();
  }

  /// Deferred mode: an event after the task's work, which consumers wait
  /// for on the GPU and which keeps its buffers from being reused early.
  Status recordCompletion(const TaskLaunch &launch, Worker &worker,
                          CudaPreparedGraph &prepared) {
    const std::shared_ptr<EventPool> &pool = gpus_.at(worker.gpu).events;
    Result<cudaEvent_t> event = pool->acquire();
    if (!event)
      return event.status();
    auto shared = std::make_shared<PooledEvent>(*event, pool);
    DOPPLER_CUDA_TRY(cudaEventRecord(shared->event, worker.stream));
    const Task &task = *launch.task;
    for (size_t i = 0; i < task.inputs.size(); ++i)
      if (void *data = launch.inputs[i].data)
        devices_[launch.graph->task(task.inputs[i]).device]->arena->recordUse(
            data, shared);
    if (launch.output.data)
      devices_[task.device]->arena->recordUse(launch.output.data, shared);
    prepared.ready[launch.id] = std::move(shared);
    return Status();
  }

  CudaBackendOptions options_;
  /// Per GPU in use (read-only after initialize()).
  std::map<int, Gpu> gpus_;
  std::vector<std::unique_ptr<VirtualDevice>> devices_;
};

} // namespace

Result<int> cudaDeviceCount() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::failure(std::string("no CUDA device: ") +
                           cudaGetErrorString(error));
  }
  if (count <= 0)
    return Status::failure("no CUDA device: cudaGetDeviceCount reports none");
  return count;
}

Result<std::unique_ptr<Backend>>
createCudaBackend(const CudaBackendOptions &options) {
  if (options.numDevices < 0)
    return Status::failure("the CUDA backend needs a device count >= 0 (0: "
                           "one per GPU), got " +
                           std::to_string(options.numDevices));
  // Virtual devices share GPUs round-robin, each with its own streams and
  // events: the same cap as the CPU backend's.
  if (options.numDevices > kMaxDevices)
    return Status::failure("the CUDA backend runs at most " +
                           std::to_string(kMaxDevices) +
                           " virtual devices, got " +
                           std::to_string(options.numDevices));
  if (options.spinMicroseconds < 0)
    return Status::failure("spinMicroseconds must be >= 0");
  if (options.stagingBytes == 0)
    return Status::failure("stagingBytes must be > 0");
  if (!options.physicalDevices.empty() && options.numDevices != 0 &&
      static_cast<size_t>(options.numDevices) != options.physicalDevices.size())
    return Status::failure("the device mapping names " +
                           std::to_string(options.physicalDevices.size()) +
                           " virtual devices but numDevices is " +
                           std::to_string(options.numDevices));
  Result<int> gpus = cudaDeviceCount();
  if (!gpus)
    return gpus.status();
  std::vector<int> mapping = options.physicalDevices;
  for (int gpu : mapping)
    if (gpu < 0 || gpu >= *gpus)
      return Status::failure("the device mapping names GPU " +
                             std::to_string(gpu) + " but " +
                             std::to_string(*gpus) + " are visible");
  if (mapping.empty()) {
    int count = options.numDevices > 0 ? options.numDevices : *gpus;
    for (int d = 0; d < count; ++d)
      mapping.push_back(d % *gpus);
  }
  auto backend = std::make_unique<CudaBackend>(options, std::move(mapping));
  if (Status status = backend->initialize(); !status)
    return status;
  return std::unique_ptr<Backend>(std::move(backend));
}

} // namespace doppler::runtime
