//===- ExecutorRemote.cpp - Runs whose devices span processes -------------===//
//
// With ExecutorOptions::transport, each rank runs the graph's structure and
// executes the tasks on its own devices (Transport.h). A task's role:
//  - Local: on one of this rank's devices, run as usual;
//  - Receive: a transfer to one of this rank's devices from another rank's.
//    It has no local input, so it is ready at the start; its device's copy
//    worker admits it (memory accounted, output allocated) and posts the
//    receive, then goes on with other tasks. It finishes when the message
//    arrives (messageDone, on the transport's progress thread), which
//    releases its consumers as any finished task does;
//  - Send: a transfer from one of this rank's devices to another rank's. It
//    is queued nowhere: when its source is ready (enqueue) the send is
//    posted, and it finishes, releasing the source's reader count, when the
//    message has left;
//  - Remote: everything else on other ranks' devices; never counted here.
// An injected fault strikes a transfer between ranks on the receiving rank
// (as executeTask injects it), never on the sending one.
// So no worker ever blocks on a message: compute overlaps communication and
// the executor stays work-conserving. A failure on any rank ends every rank
// (Transport::abortRun): the others would wait for its messages forever.
//
//===----------------------------------------------------------------------===//

#include "ExecutorImpl.h"

namespace doppler::runtime {

void Executor::Impl::planRoles(RunState &run) const {
  const TaskGraph &graph = run.graph;
  const Transport &transport = *run.transport;
  run.roles.assign(static_cast<size_t>(graph.size()), RemoteRole::Local);
  for (ValueId id = 0; id < graph.size(); ++id) {
    const Task &task = graph.task(id);
    bool here = transport.isLocal(task.device);
    bool fromHere =
        task.kind == TaskKind::Transfer && !task.inputs.empty() &&
        transport.isLocal(graph.task(task.inputs[0]).device);
    if (task.kind == TaskKind::Transfer && here != fromHere)
      run.roles[id] = here ? RemoteRole::Receive : RemoteRole::Send;
    else if (!here)
      run.roles[id] = RemoteRole::Remote;
  }
}

Status Executor::Impl::startReceive(RunState &run, ValueId id,
                                    WorkerKind kind, int lane) {
  const Task &task = run.graph.task(id);
  if (Status status = allocateValue(run, id); !status)
    return status;
  TaskTiming &timing = run.timings[id];
  timing.start = secondsBetween(run.start, Clock::now());
  timing.device = task.device;
  timing.worker = kind;
  timing.lane = lane;
  int peer = run.transport->rankOf(run.graph.task(task.inputs[0]).device);
  run.transport->receive(id, peer, run.buffers[id].data,
                         run.graph.byteSize(id), [this, &run, id](Status s) {
                           messageDone(run, id, std::move(s));
                         });
  return Status();
}

void Executor::Impl::startSend(RunState &run, ValueId id) {
  const Task &task = run.graph.task(id);
  run.addActive(1); // released by finishTask, as a queued task's would be
  if (run.failed.load(std::memory_order_acquire)) {
    finishTask(run, id); // skipped, as workers skip tasks after a failure
    return;
  }
  ValueId source = task.inputs[0];
  TaskTiming &timing = run.timings[id];
  timing.start = secondsBetween(run.start, Clock::now());
  timing.device = task.device;
  timing.worker = WorkerKind::Copy;
  timing.lane = 0;
  run.transport->send(id, run.transport->rankOf(task.device),
                      run.buffers[source].data, run.graph.byteSize(id),
                      [this, &run, id](Status s) {
                        messageDone(run, id, std::move(s));
                      });
}

void Executor::Impl::messageDone(RunState &run, ValueId id, Status status) {
  TaskTiming &timing = run.timings[id];
  timing.end = secondsBetween(run.start, Clock::now());
  timing.ran = status.ok();
  if (!status)
    fail(run, taskContext(run.graph, id) + ": " + status.message());
  finishTask(run, id);
}

} // namespace doppler::runtime
