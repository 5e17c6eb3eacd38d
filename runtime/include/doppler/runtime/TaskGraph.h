//===- TaskGraph.h - The runtime's task graph -------------------*- C++ -*-===//
//
// A task graph is a DAG of values. Every value is one buffer on one device:
// either a graph input (bound by the caller at run time) or the output of
// exactly one task. A task reads values that live on its own device (moves
// between devices are explicit transfer tasks) and writes one new buffer.
// Ids are dense and handed out in insertion order; a task may only read
// values added before it, so the id order is a topological order.
//
// Every builder validates its arguments at once (spec, arity, shapes,
// devices) and returns an error message instead of adding a broken task.
// Device ids are checked against the backend when the graph runs.
//
// Offload to host memory: an evict task copies a device value into a *host
// value* (Task::onHost), which only a reload task may read; the reload
// copies it back onto a device. Both run on the copy worker(s) of their
// device. A reload may also wait for other values (`after`, control
// dependencies) without reading them, so they do not keep those buffers
// alive.
//
// Sliding windows (Doppler/Support/Window.h, channels first): a conv task
// reads an input [N, C, S1..Sk] and a weight [F, C/groups, K1..Kk] and
// writes [N, F, O1..Ok]; a pool task reads [N, C, S1..Sk] and writes
// [N, C, O1..Ok] (max: padding is -inf, NaN propagates; avg: the window's
// sum over the kernel volume, padding included).
//
// Integers: i32/i64 values are moved (slice, assemble, reshape, transfer,
// evict, reload), read as a gather's indices and converted to floats by a
// conversion einsum (addEinsum's `outputType`); no other arithmetic task
// (einsum, fused, conv, pool) takes them. A gather task reads a table and
// an index tensor (i32/i64, or f32/f64 holding integers) and writes
// table.shape[:axis] + indices.shape + table.shape[axis+1:]; an index
// outside [0, table.shape[axis]) (or a float one that is not an integer)
// fails the task (an error naming it), it is never read.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TASKGRAPH_H
#define DOPPLER_RUNTIME_TASKGRAPH_H

#include "doppler/runtime/Status.h"
#include "doppler/runtime/Types.h"

#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/JoinProgram.h"
#include "Doppler/Support/Window.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace doppler::runtime {

/// Index of a value (buffer) in its graph; the task producing it shares it.
using ValueId = int64_t;

enum class TaskKind : uint8_t {
  Input,    ///< Bound by the caller; no task runs.
  Einsum,   ///< out[o] = AGG over contracted idx of JOIN(in0[..], in1[..]).
  Transfer, ///< Copy of a value to another device (runs on a copy worker).
  Fill,     ///< Every element set to a constant.
  Slice,    ///< A static box of the input.
  Assemble, ///< A row-major grid of blocks concatenated into one tensor.
  Delay,    ///< Opaque: busies its device for a fixed time (cost-only graphs).
  Fused,    ///< out[o] = PROGRAM(in0[..], in1[..], ...): an elementwise chain.
  Evict,    ///< Copy of a device value into host memory (copy worker).
  Reload,   ///< Copy of a host value back onto a device (copy worker).
  Reshape,  ///< The input's elements, in row-major order, in another shape.
  Conv,     ///< A convolution of an input with a weight (Window.h).
  Pool,     ///< Max or average pooling of an input (Window.h).
  Gather,   ///< Slices of a table picked by integer indices along one axis.
};
std::string_view taskKindName(TaskKind kind);

/// One value and the task that produces it. Fields a kind does not use keep
/// their defaults.
struct Task {
  TaskKind kind = TaskKind::Input;
  int device = 0;
  ElementType type = ElementType::F32;
  Shape shape;
  /// Operands in the order the task reads them (may repeat a value).
  std::vector<ValueId> inputs;
  /// `inputs` without repeats: the values read (data dependencies).
  std::vector<ValueId> uniqueInputs;
  /// Reload: control dependencies, without repeats and disjoint from
  /// `uniqueInputs`: values whose producer must have finished before the
  /// task starts. They are not read, so they do not extend any buffer's
  /// life. The task's dependencies are `uniqueInputs` and `after`.
  std::vector<ValueId> after;
  /// True for a value in host memory (the output of an evict): it counts in
  /// the host pool, not against its device's memory, and only a reload may
  /// read it. `device` is then the device whose copy worker wrote it.
  bool onHost = false;
  /// Ready-queue key when the executor orders by priority (smaller first).
  int64_t priority = 0;
  /// Free-form name shown in traces (e.g. the MLIR op it came from).
  std::string label;

  // Einsum and fused (an elementwise spec).
  EinsumSpec spec;
  /// Fused: the join program applied per element (JoinProgram.h).
  JoinProgram program;
  JoinKind join = JoinKind::Identity;
  std::optional<AggKind> aggregation;
  /// Einsum: the join's scalar (scale/shift). Fill: the value.
  double scalar = 0;
  /// Einsum: the inputs' element type; differs from `type` in a conversion
  /// (addEinsum's `outputType`).
  ElementType convertsFrom = ElementType::F32;
  bool converts() const {
    return kind == TaskKind::Einsum && convertsFrom != type;
  }

  /// Slice: the box's offset per dimension (its sizes are `shape`).
  std::vector<int64_t> sliceOffsets;
  /// Assemble: per dimension, the extent of the blocks at each grid
  /// coordinate; the grid shape is the sizes of these vectors.
  std::vector<std::vector<int64_t>> blockExtents;

  /// Conv and pool: kernel extents, strides, dilations and padding (for a
  /// conv the kernel is the weight's spatial extents).
  WindowGeometry window;
  /// Conv: channel groups (C and F split into this many).
  int64_t groups = 1;
  /// Pool: max or avg.
  PoolKind pool = PoolKind::Max;

  /// Gather: the table's axis the indices pick along.
  int64_t axis = 0;

  /// Delay: busy time. Transfer: a fixed duration that replaces the
  /// backend's bandwidth model (negative: use the model).
  double seconds = -1;

  bool runsOnCopyWorker() const {
    return kind == TaskKind::Transfer || kind == TaskKind::Evict ||
           kind == TaskKind::Reload;
  }
};

/// checkEinsumSignature for an einsum as the runtime holds one (a task, a
/// kernel): `scalar` is given only to joins that take one, and
/// `aggregation` only when the spec contracts (aggregating over nothing is
/// the identity), so neither is an error here.
Result<EinsumSignature>
checkRuntimeEinsum(const EinsumSpec &spec, JoinKind join,
                   std::optional<AggKind> aggregation, double scalar,
                   const std::vector<Shape> &inputShapes);

class TaskGraph {
public:
  /// A buffer the caller provides at run time on `device`.
  Result<ValueId> addInput(int device, Shape shape,
                           ElementType type = ElementType::F32);

  /// An einsum over 1 or 2 inputs (as many as `join` takes), e.g.
  /// ("ij,jk->ik", Mul, Add). `aggregation` is required exactly when the
  /// spec contracts an index. `scalar` feeds the scale/shift joins. Every
  /// input must live on `device` and share one element type (f32 or f64).
  /// `outputType` (default: the inputs') may differ from the input's only
  /// in a *conversion*: the identity join over one input whose term is the
  /// output's ("ij->ij"), from i32, i64, f32 or f64 to f32 or f64. An
  /// integer is converted exactly or the task fails naming it (an i64
  /// beyond 2^53 in f64, 2^24 in f32); f64 -> f32 rounds to nearest.
  Result<ValueId> addEinsum(int device, std::string_view spec, JoinKind join,
                            std::optional<AggKind> aggregation,
                            std::vector<ValueId> inputs, double scalar = 0,
                            std::optional<ElementType> outputType = {});

  /// A fused elementwise chain over any number of inputs: for every point
  /// of `spec`'s output (an elementwise spec, broadcasts allowed, e.g.
  /// "bh,h->bh"), `program` (JoinProgram's text, e.g. "add(in0, in1);
  /// gelu(s0)") applied to one element of each input. Checked by
  /// checkFusedSignature; every input must live on `device` and share one
  /// element type (f32 or f64).
  Result<ValueId> addFused(int device, std::string_view spec,
                           std::string_view program,
                           std::vector<ValueId> inputs);

  /// A copy of `input` on `device`. `fixedSeconds` >= 0 makes the copy take
  /// that long regardless of size (cost-only graphs).
  Result<ValueId> addTransfer(ValueId input, int device,
                              double fixedSeconds = -1);
  /// `value` itself when it lives on `device`, otherwise a transfer of it
  /// there, created once per (value, device) and reused afterwards.
  Result<ValueId> onDevice(ValueId value, int device);

  /// A copy of device value `input` in host memory (a host value), made by
  /// the copy worker of `input`'s device.
  Result<ValueId> addEvict(ValueId input);
  /// A copy of host value `stash` on `device`, made by that device's copy
  /// worker once `stash` and every value of `after` are available. `after`
  /// are control dependencies: they are not read and do not keep their
  /// buffers alive (a buffer is freed after its last reader). They may be
  /// any earlier values, on any device, host values included (e.g. "after
  /// that evict finished"); repeats and `stash` itself are dropped.
  Result<ValueId> addReload(ValueId stash, int device,
                            std::vector<ValueId> after = {});

  Result<ValueId> addFill(int device, Shape shape, double value,
                          ElementType type = ElementType::F32);

  /// input[offsets[d] : offsets[d] + sizes[d]] on every dimension d.
  Result<ValueId> addSlice(int device, ValueId input,
                           std::vector<int64_t> offsets,
                           std::vector<int64_t> sizes);

  /// `input`'s elements in row-major order as a tensor of `shape` (same
  /// element count): a copy of the buffer into the task's own.
  Result<ValueId> addReshape(int device, ValueId input, Shape shape);

  /// A convolution of `input` [N, C, S1..Sk] with `weight` [F, C/groups,
  /// K1..Kk] (k = 1..3), giving [N, F, O1..Ok] (Window.h). Both live on
  /// `device` and share one element type, f32 or f64. `geometry.kernel` may
  /// be left empty: it is then the weight's spatial extents; otherwise it
  /// must equal them. Shapes and geometry are checked by
  /// convolutionResultShape.
  Result<ValueId> addConvolution(int device, ValueId input, ValueId weight,
                                 int64_t groups, WindowGeometry geometry);

  /// Max or average pooling of `input` [N, C, S1..Sk] (k = 1..3, f32 or
  /// f64) over windows of `geometry.kernel`, giving [N, C, O1..Ok]; checked
  /// by poolResultShape.
  Result<ValueId> addPool(int device, PoolKind kind, ValueId input,
                          WindowGeometry geometry);

  /// `table` [P.., V, Q..] gathered along `axis` (the position of V) at
  /// `indices` (i32 or i64, or f32/f64 holding integers; any shape I..):
  /// [P.., I.., Q..]. Both live on `device`; the table may have any
  /// element type. Indices are checked against V (and float ones for
  /// being integers) when the task runs.
  Result<ValueId> addGather(int device, ValueId table, ValueId indices,
                            int64_t axis);

  /// Concatenates `blocks` (row-major over the grid) into one tensor. The
  /// grid has blockExtents[d].size() blocks along dimension d, and the block
  /// at grid coordinate (g0, g1, ...) must have shape
  /// (blockExtents[0][g0], blockExtents[1][g1], ...).
  Result<ValueId> addAssemble(int device,
                              std::vector<std::vector<int64_t>> blockExtents,
                              std::vector<ValueId> blocks);

  /// An opaque task that keeps `device` busy for `seconds` once `inputs`
  /// are available, and produces an uninitialised buffer of `shape` (by
  /// default empty, so it costs no memory) that later tasks may depend on.
  Result<ValueId> addDelay(int device, double seconds,
                           std::vector<ValueId> inputs = {}, Shape shape = {0},
                           ElementType type = ElementType::F32);

  /// Keeps `value` alive after the run and returns its contents. Host
  /// values cannot be outputs (reload them first).
  Status markOutput(ValueId value);
  Status setPriority(ValueId value, int64_t priority);
  Status setLabel(ValueId value, std::string label);

  int64_t size() const { return static_cast<int64_t>(tasks_.size()); }
  bool contains(ValueId value) const { return value >= 0 && value < size(); }
  const Task &task(ValueId value) const { return tasks_[value]; }
  /// Tasks reading `value`, without repeats, in id order.
  const std::vector<ValueId> &consumers(ValueId value) const {
    return consumers_[value];
  }
  /// Tasks that wait for `value` without reading it (it is in their
  /// `after`), in id order.
  const std::vector<ValueId> &controlDependents(ValueId value) const {
    return controlDependents_[value];
  }
  bool isOutput(ValueId value) const { return isOutput_[value]; }
  const std::vector<ValueId> &inputs() const { return inputIds_; }
  const std::vector<ValueId> &outputs() const { return outputIds_; }
  uint64_t byteSize(ValueId value) const;
  /// One more than the largest device id used (0 for an empty graph).
  int numDevicesUsed() const { return numDevicesUsed_; }
  /// Short description for messages and traces: "einsum ij,jk->ik mul/add",
  /// "fused bh,h->bh add(in0, in1); gelu(s0)", "conv 3x3 stride 1x1 groups
  /// 1", "pool max 3x3 stride 2x2", or the label when one was set.
  std::string describe(ValueId value) const;
  /// Changes on every mutation; lets executors cache per-graph plans.
  uint64_t version() const { return version_; }

private:
  Result<ValueId> add(Task task);
  Status checkValue(ValueId value, const char *role) const;
  Status checkOnDevice(ValueId value, int device, size_t operand) const;
  /// Fails when `value` is a host value (only reloads read those).
  Status checkNotOnHost(ValueId value, const char *role) const;
  /// The shapes of `inputs`, all on `device` and of one element type
  /// (returned in `type`); errors are prefixed with `context`.
  Result<std::vector<Shape>> operandShapes(const std::vector<ValueId> &inputs,
                                           int device,
                                           const std::string &context,
                                           ElementType &type) const;
  /// An einsum or fused task's spec, parsed, for `device` and as many
  /// operands as `inputs`; errors are prefixed with `context`.
  Result<EinsumSpec> parseTaskSpec(int device, std::string_view specText,
                                   const std::vector<ValueId> &inputs,
                                   const std::string &context) const;

  std::vector<Task> tasks_;
  std::vector<std::vector<ValueId>> consumers_;
  std::vector<std::vector<ValueId>> controlDependents_;
  std::vector<bool> isOutput_;
  std::vector<ValueId> inputIds_;
  std::vector<ValueId> outputIds_;
  std::map<std::pair<ValueId, int>, ValueId> transferCache_;
  int numDevicesUsed_ = 0;
  uint64_t version_ = 0;
};

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_TASKGRAPH_H
