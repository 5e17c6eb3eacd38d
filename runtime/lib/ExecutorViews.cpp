//===- ExecutorViews.cpp - Slices and reshapes that alias their input -----===//
//
// A slice whose region is one contiguous run of its input's row-major
// layout (the leading blocks of a weight split by output channels), and a
// reshape (the same bytes), need no copy: the task binds its output to its
// input's buffer at a byte offset. The view holds its input's reader
// reference until the view itself dies (Impl::freeValue), so the input
// outlives every reader of the view. Views are planned per run, and only
// when no memory limit is set and the graph has no offload tasks: both
// account each value's own bytes (a view has none) and an eviction would
// move the buffer under the views of it.
//
//===----------------------------------------------------------------------===//

#include "ExecutorImpl.h"

namespace doppler::runtime {

namespace {

/// The byte offset of slice `task` in its input of shape `whole` when the
/// slice is one contiguous run of it, else -1: every dimension before the
/// last partial one has extent 1 in the slice, every one after it is whole.
int64_t contiguousOffset(const Task &task, const Shape &whole) {
  const Shape &part = task.shape;
  const size_t rank = whole.size();
  size_t partial = rank; // the innermost dimension the slice cuts
  for (size_t d = rank; d-- > 0;)
    if (part[d] != whole[d]) {
      partial = d;
      break;
    }
  for (size_t d = 0; d < partial && partial < rank; ++d)
    if (part[d] != 1)
      return -1;
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d)
    offset = offset * whole[d] + task.sliceOffsets[d];
  return offset * static_cast<int64_t>(elementSize(task.type));
}

} // namespace

void Executor::Impl::planViews(RunState &run) const {
  const TaskGraph &graph = run.graph;
  run.viewOf.assign(graph.size(), -1);
  run.viewOffset.assign(graph.size(), 0);
  run.isView.assign(graph.size(), 0);
  if (!options.sliceViews || !backend->supportsViews())
    return;
  for (uint64_t limit : options.memoryLimits)
    if (limit > 0)
      return;
  for (ValueId id = 0; id < graph.size(); ++id)
    if (graph.task(id).kind == TaskKind::Evict ||
        graph.task(id).kind == TaskKind::Reload)
      return;
  for (ValueId id = 0; id < graph.size(); ++id) {
    const Task &task = graph.task(id);
    if (task.kind != TaskKind::Slice && task.kind != TaskKind::Reshape)
      continue;
    const ValueId input = task.inputs.front();
    const Task &source = graph.task(input);
    if (task.onHost != source.onHost || task.device != source.device)
      continue;
    const int64_t offset =
        task.kind == TaskKind::Reshape ? 0 : contiguousOffset(task, source.shape);
    if (offset < 0)
      continue;
    run.viewOf[id] = input;
    run.viewOffset[id] = static_cast<uint64_t>(offset);
  }
}

void Executor::Impl::bindView(RunState &run, ValueId id) const {
  const DeviceBuffer &whole = run.buffers[run.viewOf[id]];
  run.buffers[id] = DeviceBuffer{
      static_cast<unsigned char *>(whole.data) + run.viewOffset[id],
      run.graph.byteSize(id)};
  run.isView[id] = 1;
}

bool Executor::Impl::releaseView(RunState &run, ValueId id) {
  if (!run.isView[id])
    return false;
  run.isView[id] = 0;
  run.buffers[id] = DeviceBuffer{};
  const ValueId input = run.viewOf[id];
  if (run.pendingReaders[input].fetch_sub(1, std::memory_order_acq_rel) == 1 &&
      !run.graph.isOutput(input))
    freeValue(run, input);
  return true;
}

} // namespace doppler::runtime
