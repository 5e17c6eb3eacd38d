//===- WorkerThread.h - A joinable thread with a bounded stack ---*- C++ -*-===//
//
// The executor starts a worker thread per device and copy lane: thousands
// with thousands of virtual devices. std::thread reserves the process's
// default stack (8 MB on Linux) for each, so a few hundred devices already
// exhaust a 4 GB address space. Workers run kernels whose buffers live on
// the heap (the BLAS libraries allocate their own), so a smaller stack is
// enough; and a thread that cannot be created is reported as a Status
// instead of an exception.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_WORKERTHREAD_H
#define DOPPLER_RUNTIME_LIB_WORKERTHREAD_H

#include "doppler/runtime/Status.h"

#include <pthread.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>

namespace doppler::runtime::detail {

class WorkerThread {
public:
  /// Stack of each worker, an eighth of the usual default (the size other
  /// platforms give secondary threads): the kernels keep their data on the
  /// heap, and no runtime code allocates large arrays on the stack.
  static constexpr size_t kStackBytes = size_t(1) << 20;

  /// Starts `body` on a new thread, or says why the host refused one.
  static Result<WorkerThread> start(std::function<void()> body) {
    auto owned = std::make_unique<std::function<void()>>(std::move(body));
    pthread_attr_t attributes;
    if (int error = pthread_attr_init(&attributes))
      return Status::failure(std::string("pthread_attr_init: ") +
                             std::strerror(error));
    pthread_attr_setstacksize(&attributes, kStackBytes);
    WorkerThread thread;
    int error =
        pthread_create(&thread.handle_, &attributes, &run, owned.get());
    pthread_attr_destroy(&attributes);
    if (error)
      return Status::failure(std::strerror(error));
    owned.release(); // the thread owns it now
    thread.joinable_ = true;
    return thread;
  }

  WorkerThread() = default;
  WorkerThread(WorkerThread &&other) noexcept { *this = std::move(other); }
  WorkerThread &operator=(WorkerThread &&other) noexcept {
    handle_ = other.handle_;
    joinable_ = other.joinable_;
    other.joinable_ = false;
    return *this;
  }
  WorkerThread(const WorkerThread &) = delete;
  WorkerThread &operator=(const WorkerThread &) = delete;
  /// A thread must be joined (or detached) before it is destroyed.
  ~WorkerThread() {
    if (joinable_)
      pthread_detach(handle_);
  }

  void join() {
    if (joinable_)
      pthread_join(handle_, nullptr);
    joinable_ = false;
  }

private:
  static void *run(void *argument) {
    std::unique_ptr<std::function<void()>> body(
        static_cast<std::function<void()> *>(argument));
    (*body)();
    return nullptr;
  }

  pthread_t handle_{};
  bool joinable_ = false;
};

} // namespace doppler::runtime::detail

#endif // DOPPLER_RUNTIME_LIB_WORKERTHREAD_H
