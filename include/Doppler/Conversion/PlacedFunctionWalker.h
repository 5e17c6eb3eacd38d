//===- PlacedFunctionWalker.h - A placed function as runtime tasks -*- C++ -*-===//
//
// The one walk from a placed function (every op has `doppler.device`, every
// use across devices goes through a `doppler.transfer`, as after
// `doppler-pipeline`) to the tasks of the runtime:
//
//   doppler.einsum / fused / slice /          ->  a task of the same kind on
//     assemble / reshape / fill / conv / pool     the op's device
//   doppler.transfer %x from <a> to <b>       ->  a transfer task to b
//   doppler.evict %x from <a>                 ->  an evict task (a host value
//                                                 written by a's copy worker)
//   doppler.reload %h to <b> after(%t...)     ->  a reload task onto b that
//                                                 also waits for the tasks of
//                                                 the `after` values (function
//                                                 arguments: nothing to wait for)
//   doppler.task (cost-only)                  ->  a delay task of its compute
//                                                 cost (microseconds), only
//                                                 with `delayTasks`
//   function arguments                        ->  graph inputs (see below)
//   returned values                           ->  graph outputs, in order
//
// The walker checks the program and says, at the offending op, what is
// wrong (unplaced ops, unsupported ops or element types, a use across
// devices without a transfer, a transfer whose endpoints disagree with the
// placement, doppler.task without `delayTasks`); a RuntimeTaskSink receives
// the tasks in body order. Its two sinks are the in-process plan builder
// (buildRuntimePlan, DopplerToRuntime.h) and the C-API lowering
// (doppler-lower-to-runtime), which therefore add the same tasks in the
// same order.
//
// Arguments. The placement passes treat a function argument as available
// on every device (doppler-insert-transfers adds no transfer for it, and the
// simulator charges nothing for reading it), so by default an argument read
// on several devices becomes one graph input per device, each bound to the
// same host data and uploaded before the clock starts: the run then
// measures what the placement predicted. With ArgumentPlacement::FirstUser
// an argument becomes a single graph input on the device of its first user
// (in body order; a transfer reads on its source device), and the runtime
// moves it to every other device that reads it.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_CONVERSION_PLACEDFUNCTIONWALKER_H
#define DOPPLER_CONVERSION_PLACEDFUNCTIONWALKER_H

#include "Doppler/Conversion/RuntimeTypes.h"
#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::doppler {

enum class ArgumentPlacement {
  /// One graph input per (argument, device that reads it). The default.
  EveryUser,
  /// One graph input on the first user's device; runtime transfers to the
  /// others.
  FirstUser,
};

/// Receives the tasks of a placed function. A task is named by the
/// `TaskRef` the sink returned for it. A method that fails returns failure
/// and sets `error` to one line; the walker reports it at the op.
class RuntimeTaskSink {
public:
  using TaskRef = int64_t;
  virtual ~RuntimeTaskSink();

  /// The function's name, its predicted makespan in seconds (-1: none) and
  /// its arguments' types, before any task.
  virtual LogicalResult
  begin(FunctionOpInterface function, double predictedSeconds,
        ArrayRef<std::pair<RankedTensorType, RuntimeElement>> arguments,
        std::string &error) = 0;
  /// Called before the tasks of each op (the terminator included).
  virtual void startOp(Operation &op) {}
  /// Called once the op is known to become a task on `device`, before its
  /// operands are looked up (which may add argument inputs and moves).
  virtual void beginTask(int device) {}

  /// A graph input of argument `index` on `device`, bound to the argument.
  virtual FailureOr<TaskRef> addInput(unsigned index, int device,
                                      std::string &error) = 0;
  /// The argument input `input` moved to `device` (FirstUser).
  virtual FailureOr<TaskRef> moveArgument(TaskRef input, int device,
                                          std::string &error) = 0;
  /// A move of `source` to `device`; `seconds` >= 0 makes it a copy of that
  /// fixed duration (opaque values of cost-only tasks).
  virtual FailureOr<TaskRef> addTransfer(TaskRef source, int device,
                                         double seconds,
                                         std::string &error) = 0;
  virtual FailureOr<TaskRef> addDelay(int device, double seconds,
                                      ArrayRef<TaskRef> inputs,
                                      std::string &error) = 0;
  virtual FailureOr<TaskRef> addEinsum(EinsumOp op, int device,
                                       ArrayRef<TaskRef> inputs,
                                       std::string &error) = 0;
  /// A fused elementwise chain (its spec and join program as on the op).
  virtual FailureOr<TaskRef> addFused(FusedOp op, int device,
                                      ArrayRef<TaskRef> inputs,
                                      std::string &error) = 0;
  virtual FailureOr<TaskRef> addSlice(SliceOp op, int device, TaskRef input,
                                      RankedTensorType result,
                                      std::string &error) = 0;
  /// `input`'s elements as a tensor of `result`'s shape.
  virtual FailureOr<TaskRef> addReshape(ReshapeOp op, int device,
                                        TaskRef input, RankedTensorType result,
                                        std::string &error) = 0;
  /// A convolution of inputs[0] with the weight inputs[1] (the op's
  /// geometry and groups).
  virtual FailureOr<TaskRef> addConv(ConvOp op, int device,
                                     ArrayRef<TaskRef> inputs,
                                     std::string &error) = 0;
  /// Max or average pooling of `input` (the op's kind and geometry).
  virtual FailureOr<TaskRef> addPool(PoolOp op, int device, TaskRef input,
                                     std::string &error) = 0;
  /// inputs[0] (the table) gathered along the op's axis at inputs[1] (the
  /// i32/i64 indices).
  virtual FailureOr<TaskRef> addGather(GatherOp op, int device,
                                       ArrayRef<TaskRef> inputs,
                                       std::string &error) = 0;
  virtual FailureOr<TaskRef> addFill(FillOp op, int device,
                                     RankedTensorType result,
                                     RuntimeElement element,
                                     std::string &error) = 0;
  /// `extents[d][g]`: the extent along dimension d of grid row g.
  virtual FailureOr<TaskRef>
  addAssemble(AssembleOp op, int device,
              ArrayRef<std::vector<int64_t>> extents, ArrayRef<TaskRef> blocks,
              std::string &error) = 0;
  /// A copy of `input` (on `device`) into host memory.
  virtual FailureOr<TaskRef> addEvict(EvictOp op, TaskRef input, int device,
                                      std::string &error) = 0;
  /// A copy of the host value `stash` onto `device` once every task of
  /// `after` has finished (control dependencies, not read).
  virtual FailureOr<TaskRef> addReload(ReloadOp op, TaskRef stash, int device,
                                       ArrayRef<TaskRef> after,
                                       std::string &error) = 0;
  /// Serve `task` by this priority (nanoseconds of simulated start).
  virtual void setPriority(TaskRef task, int64_t priority) = 0;
  virtual LogicalResult addResult(TaskRef task, std::string &error) = 0;
  /// After the last op.
  virtual LogicalResult finish(std::string &error) { return success(); }
};

struct PlacedFunctionWalkerOptions {
  /// Run `doppler.task` ops as delay tasks of their compute cost (cost units
  /// are microseconds), and transfers of their opaque values as fixed-time
  /// copies of the producer's transfer cost. Off: doppler.task is an error.
  bool delayTasks = false;
  /// How a user turns delay tasks on, for the error that asks for them.
  std::string delayTasksHint = "delay-tasks=true";
  ArgumentPlacement arguments = ArgumentPlacement::EveryUser;
  /// Copy the simulated start times (`doppler.start`, microseconds) into
  /// task priorities (nanoseconds), so that an executor serving ready tasks
  /// by priority follows the simulated order.
  bool priorities = true;
};

/// Whether any op in `function`'s body carries `doppler.device`.
bool hasPlacedOps(FunctionOpInterface function);

/// Walks one placed function into a sink.
class PlacedFunctionWalker {
public:
  using TaskRef = RuntimeTaskSink::TaskRef;

  PlacedFunctionWalker(FunctionOpInterface function, RuntimeTaskSink &sink,
                       const PlacedFunctionWalkerOptions &options)
      : function(function), sink(sink), options(options) {}

  /// Sends every task to the sink; fails with an error diagnostic.
  LogicalResult run();

  /// The task of every op result, and its device.
  const llvm::DenseMap<Value, std::pair<TaskRef, int>> &taskValues() const {
    return values;
  }
  /// The highest device any task or argument input uses (-1: none).
  int maxDevice() const { return highestDevice; }

private:
  LogicalResult visit(Operation &op);
  LogicalResult visitReturn(Operation &op);
  LogicalResult visitTask(TaskOp task, int device);
  LogicalResult visitTransfer(TransferOp transfer, int device);
  LogicalResult visitEvict(EvictOp evict, int device);
  LogicalResult visitReload(ReloadOp reload, int device);
  LogicalResult visitTensorOp(Operation &op, int device);
  /// The task of `value` as read by `user` on `device`.
  FailureOr<TaskRef> operand(Value value, Operation *user, int device);
  LogicalResult operands(ValueRange values, Operation *user, int device,
                         SmallVectorImpl<TaskRef> &refs);
  /// The graph input of argument `index` on `device`.
  FailureOr<TaskRef> argumentOn(unsigned index, int device, Operation *user);
  /// Records `task` as the value of `op`'s result, or reports its error.
  LogicalResult define(Operation *op, FailureOr<TaskRef> task,
                       const std::string &error);

  FunctionOpInterface function;
  RuntimeTaskSink &sink;
  const PlacedFunctionWalkerOptions &options;
  llvm::DenseMap<Value, std::pair<TaskRef, int>> values;
  /// Graph inputs per argument, by device (EveryUser), or the one input
  /// (FirstUser: found under any device through `argumentHome`).
  std::vector<std::map<int, TaskRef>> argumentInputs;
  std::vector<int> argumentHome;
  int highestDevice = -1;
};

} // namespace mlir::doppler

#endif // DOPPLER_CONVERSION_PLACEDFUNCTIONWALKER_H
