//===- ExecutorTestSupport.h - Helpers of the executor tests ----*- C++ -*-===//
//
// What the executor's test suites share: unwrapping results, a backend that
// forwards to the CPU backend (tests override what they count or break),
// and runs under a watchdog so that a hang fails instead of blocking.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TESTS_EXECUTORTESTSUPPORT_H
#define DOPPLER_RUNTIME_TESTS_EXECUTORTESTSUPPORT_H

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>

namespace doppler::runtime::test {

/// The value of a result that must hold one (a test failure otherwise).
template <typename T> T unwrap(Result<T> result) {
  EXPECT_TRUE(result) << result.message();
  return std::move(*result);
}

/// Whether a status's message contains `text`.
inline bool mentions(const Status &status, const std::string &text) {
  return status.message().find(text) != std::string::npos;
}

/// Forwards every call to a CPU backend of `devices` devices (compute
/// workers not pinned: irrelevant here, and slow on few cores); subclasses
/// override what they record or make fail, and call the base.
class ForwardingCpuBackend : public Backend {
public:
  ForwardingCpuBackend(int devices, std::string name) : name_(std::move(name)) {
    CpuBackendOptions options;
    options.numDevices = devices;
    options.pinComputeWorkers = false;
    inner_ = std::move(*createCpuBackend(options));
  }

  std::string_view name() const override { return name_; }
  int numDevices() const override { return inner_->numDevices(); }
  Result<std::unique_ptr<PreparedGraph>>
  prepare(const TaskGraph &graph) override {
    return inner_->prepare(graph);
  }
  Result<DeviceBuffer> allocate(int device, uint64_t bytes) override {
    return inner_->allocate(device, bytes);
  }
  void deallocate(int device, DeviceBuffer buffer) override {
    inner_->deallocate(device, buffer);
  }
  Result<DeviceBuffer> allocateHost(uint64_t bytes) override {
    return inner_->allocateHost(bytes);
  }
  void deallocateHost(DeviceBuffer buffer) override {
    inner_->deallocateHost(buffer);
  }
  Status upload(int device, DeviceBuffer dst, const void *src) override {
    return inner_->upload(device, dst, src);
  }
  Status download(int device, DeviceBuffer src, void *dst) override {
    return inner_->download(device, src, dst);
  }
  Status execute(const TaskLaunch &launch) override {
    return inner_->execute(launch);
  }

private:
  std::string name_;
  std::unique_ptr<Backend> inner_;
};

/// Runs with a watchdog: a run that does not return within a minute is a
/// hang, and the process ends with a message instead of blocking the suite.
inline Result<RunResult> runGuarded(Executor &executor, const TaskGraph &graph,
                                    const InputBindings &inputs) {
  std::packaged_task<Result<RunResult>()> task(
      [&] { return executor.run(graph, inputs); });
  std::future<Result<RunResult>> result = task.get_future();
  std::thread runner(std::move(task));
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: the run hung (no return after 60 s)\n");
    std::_Exit(3);
  }
  runner.join();
  return result.get();
}

} // namespace doppler::runtime::test

#endif // DOPPLER_RUNTIME_TESTS_EXECUTORTESTSUPPORT_H
