//===- PlacedFunctionWalker.cpp - A placed function as runtime tasks ------===//

#include "Doppler/Conversion/PlacedFunctionWalker.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;

RuntimeTaskSink::~RuntimeTaskSink() = default;

bool mlir::doppler::hasPlacedOps(FunctionOpInterface function) {
  if (function.isExternal())
    return false;
  for (Operation &op : function.getFunctionBody().front())
    if (getDevice(&op) >= 0)
      return true;
  return false;
}

LogicalResult PlacedFunctionWalker::run() {
  if (function.isExternal())
    return function.emitError() << "function @" << function.getName()
                                << " is a declaration; it has nothing to run";
  Region &region = function.getFunctionBody();
  if (!region.hasOneBlock())
    return function.emitError()
           << "function @" << function.getName()
           << " has several blocks; the runtime runs straight-line functions "
              "only";
  Block &body = region.front();
  bool anyWork = llvm::any_of(body, [](Operation &op) {
    return !op.hasTrait<OpTrait::IsTerminator>();
  });
  if (anyWork && !hasPlacedOps(function))
    return function.emitError()
           << "function @" << function.getName() << " is not placed (no op has "
           << kDeviceAttr
           << "); place it first, e.g. doppler-opt FILE "
              "--doppler-pipeline=devices=N -o placed.mlir";

  SmallVector<std::pair<RankedTensorType, RuntimeElement>> arguments;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    FailureOr<std::pair<RankedTensorType, RuntimeElement>> argument =
        getRuntimeArgumentType(function, i);
    if (failed(argument))
      return failure();
    arguments.push_back(*argument);
  }
  argumentInputs.resize(arguments.size());
  argumentHome.assign(arguments.size(), -1);

  double predicted = -1;
  if (auto makespan = function->getAttrOfType<FloatAttr>(kMakespanAttr))
    predicted = makespan.getValueAsDouble() / 1e6;
  std::string error;
  if (failed(sink.begin(function, predicted, arguments, error)))
    return function.emitError() << error;
  for (Operation &op : body) {
    sink.startOp(op);
    if (failed(visit(op)))
      return failure();
  }
  if (failed(sink.finish(error)))
    return function.emitError() << "internal error: " << error;
  return success();
}

FailureOr<PlacedFunctionWalker::TaskRef>
PlacedFunctionWalker::argumentOn(unsigned index, int device, Operation *user) {
  std::map<int, TaskRef> &inputs = argumentInputs[index];
  if (auto it = inputs.find(device); it != inputs.end())
    return it->second;
  highestDevice = std::max(highestDevice, device);
  std::string error;
  if (options.arguments == ArgumentPlacement::FirstUser &&
      argumentHome[index] >= 0) {
    FailureOr<TaskRef> moved =
        sink.moveArgument(inputs.at(argumentHome[index]), device, error);
    if (failed(moved))
      return user->emitOpError()
             << "cannot read argument " << index << ": " << error;
    inputs[device] = *moved;
    return *moved;
  }
  FailureOr<TaskRef> input = sink.addInput(index, device, error);
  if (failed(input))
    return user->emitOpError() << error;
  inputs[device] = *input;
  if (argumentHome[index] < 0)
    argumentHome[index] = device;
  return *input;
}

FailureOr<PlacedFunctionWalker::TaskRef>
PlacedFunctionWalker::operand(Value value, Operation *user, int device) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return argumentOn(arg.getArgNumber(), device, user);
  auto it = values.find(value);
  if (it == values.end())
    return user->emitOpError()
           << "reads a value of '" << value.getDefiningOp()->getName()
           << "', which has no runtime task";
  int from = it->second.second;
  if (from != device)
    return user->emitOpError()
           << "on device " << device << " uses a value produced on device "
           << from
           << " without a doppler.transfer; run doppler-insert-transfers "
              "(or doppler-pipeline)";
  return it->second.first;
}

LogicalResult PlacedFunctionWalker::operands(ValueRange operandValues,
                                             Operation *user, int device,
                                             SmallVectorImpl<TaskRef> &refs) {
  for (Value value : operandValues) {
    FailureOr<TaskRef> ref = operand(value, user, device);
    if (failed(ref))
      return failure();
    refs.push_back(*ref);
  }
  return success();
}

LogicalResult PlacedFunctionWalker::define(Operation *op,
                                           FailureOr<TaskRef> task,
                                           const std::string &error) {
  if (failed(task))
    return op->emitOpError() << "cannot become a runtime task: " << error;
  values[op->getResult(0)] = {*task, static_cast<int>(getDevice(op))};
  if (options.priorities)
    if (auto start = op->getAttrOfType<FloatAttr>(kStartAttr)) {
      double nanoseconds = std::round(start.getValueAsDouble() * 1e3);
      if (std::isfinite(nanoseconds))
        sink.setPriority(*task, static_cast<int64_t>(nanoseconds));
    }
  return success();
}

LogicalResult PlacedFunctionWalker::visitReturn(Operation &op) {
  std::string error;
  for (Value value : op.getOperands()) {
    TaskRef task;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      // A returned argument: any of its inputs will do, else one on
      // device 0.
      const std::map<int, TaskRef> &inputs = argumentInputs[arg.getArgNumber()];
      FailureOr<TaskRef> input =
          inputs.empty() ? argumentOn(arg.getArgNumber(), 0, &op)
                         : FailureOr<TaskRef>(inputs.begin()->second);
      if (failed(input))
        return failure();
      task = *input;
    } else {
      auto it = values.find(value);
      if (it == values.end())
        return op.emitOpError() << "returns a value with no runtime task";
      task = it->second.first;
    }
    if (failed(sink.addResult(task, error)))
      return op.emitOpError() << error;
  }
  return success();
}

LogicalResult PlacedFunctionWalker::visitTask(TaskOp task, int device) {
  if (!options.delayTasks)
    return task.emitOpError()
           << "is cost-only (opaque values, no data); it can only run as a "
              "delay of its compute cost ("
           << options.delayTasksHint << ")";
  SmallVector<TaskRef> inputs;
  if (failed(operands(task.getInputs(), task, device, inputs)))
    return failure();
  double compute = task.getCompute().convertToDouble();
  if (!(compute >= 0) || !std::isfinite(compute))
    return task.emitOpError() << "has a compute cost that is not a finite, "
                                 "non-negative number";
  std::string error;
  return define(task, sink.addDelay(device, compute / 1e6, inputs, error),
                error);
}

LogicalResult PlacedFunctionWalker::visitTransfer(TransferOp transfer,
                                                  int device) {
  int64_t from = transfer.getSource().getId();
  int64_t to = transfer.getTarget().getId();
  if (to != device)
    return transfer.emitOpError()
           << "moves to device " << to << " but is placed on device " << device;
  Value input = transfer.getInput();
  if (auto it = values.find(input);
      it != values.end() && it->second.second != from)
    return transfer.emitOpError()
           << "moves a value from device " << from
           << " but its producer is on device " << it->second.second;
  FailureOr<TaskRef> source =
      operand(input, transfer, static_cast<int>(from));
  if (failed(source))
    return failure();
  // Opaque values come from cost-only tasks (which need delay tasks, so
  // they were checked there): they move in their producer's transfer time.
  double seconds = -1;
  if (isa<ValueType>(input.getType()))
    if (auto producer = input.getDefiningOp<TaskOp>())
      seconds = producer.getTransfer().convertToDouble() / 1e6;
  std::string error;
  return define(transfer, sink.addTransfer(*source, device, seconds, error),
                error);
}

LogicalResult PlacedFunctionWalker::visitEvict(EvictOp evict, int device) {
  // The verifier ties the op's device, its source and the producer's device.
  if (failed(requireStaticTensor(evict.getType(), evict, "the value")) ||
      failed(getRuntimeElement(evict.getType().getElementType(), evict)))
    return failure();
  FailureOr<TaskRef> input = operand(evict.getInput(), evict, device);
  if (failed(input))
    return failure();
  std::string error;
  return define(evict, sink.addEvict(evict, *input, device, error), error);
}

LogicalResult PlacedFunctionWalker::visitReload(ReloadOp reload, int device) {
  auto it = values.find(reload.getStash());
  if (it == values.end())
    return reload.emitOpError() << "reloads a value that has no runtime task";
  SmallVector<TaskRef> after;
  for (Value value : reload.getAfter()) {
    if (isa<BlockArgument>(value))
      continue; // Arguments are bound before the run starts.
    auto dependency = values.find(value);
    if (dependency == values.end())
      return reload.emitOpError()
             << "waits for a value of '" << value.getDefiningOp()->getName()
             << "', which has no runtime task";
    after.push_back(dependency->second.first);
  }
  std::string error;
  return define(reload,
                sink.addReload(reload, it->second.first, device, after, error),
                error);
}

LogicalResult PlacedFunctionWalker::visitTensorOp(Operation &op, int device) {
  // Check the result type first.
  FailureOr<RankedTensorType> resultType =
      requireStaticTensor(op.getResult(0).getType(), &op, "the result");
  if (failed(resultType))
    return failure();
  FailureOr<RuntimeElement> element =
      getRuntimeElement(resultType->getElementType(), &op);
  if (failed(element))
    return failure();
  for (Value value : op.getOperands())
    if (failed(requireStaticTensor(value.getType(), &op, "an operand")))
      return failure();
  SmallVector<TaskRef> inputs;
  if (failed(operands(op.getOperands(), &op, device, inputs)))
    return failure();

  std::string error;
  if (auto einsum = dyn_cast<EinsumOp>(op))
    return define(&op, sink.addEinsum(einsum, device, inputs, error), error);
  if (auto fused = dyn_cast<FusedOp>(op))
    return define(&op, sink.addFused(fused, device, inputs, error), error);
  if (auto slice = dyn_cast<SliceOp>(op))
    return define(&op,
                  sink.addSlice(slice, device, inputs[0], *resultType, error),
                  error);
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return define(
        &op, sink.addReshape(reshape, device, inputs[0], *resultType, error),
        error);
  if (auto conv = dyn_cast<ConvOp>(op))
    return define(&op, sink.addConv(conv, device, inputs, error), error);
  if (auto pool = dyn_cast<PoolOp>(op))
    return define(&op, sink.addPool(pool, device, inputs[0], error), error);
  if (auto gather = dyn_cast<GatherOp>(op))
    return define(&op, sink.addGather(gather, device, inputs, error), error);
  if (auto fill = dyn_cast<FillOp>(op))
    return define(
        &op, sink.addFill(fill, device, *resultType, *element, error), error);
  auto assemble = cast<AssembleOp>(op);
  // Extent of grid row g along dimension d: that of the block at grid
  // coordinate g on d and 0 elsewhere (the verifier made rows consistent).
  ArrayRef<int64_t> grid = assemble.getGrid();
  std::vector<std::vector<int64_t>> extents(grid.size());
  int64_t stride = 1;
  for (size_t d = grid.size(); d-- > 0;) {
    for (int64_t g = 0; g < grid[d]; ++g) {
      auto block =
          cast<RankedTensorType>(assemble.getBlocks()[g * stride].getType());
      extents[d].push_back(block.getDimSize(d));
    }
    stride *= grid[d];
  }
  return define(&op,
                sink.addAssemble(assemble, device, extents, inputs, error),
                error);
}

LogicalResult PlacedFunctionWalker::visit(Operation &op) {
  if (isa<func::ReturnOp>(op))
    return visitReturn(op);
  FailureOr<int> device = getRuntimeDevice(op);
  if (failed(device))
    return failure();
  highestDevice = std::max(highestDevice, *device);
  sink.beginTask(*device);
  if (auto task = dyn_cast<TaskOp>(op))
    return visitTask(task, *device);
  if (auto transfer = dyn_cast<TransferOp>(op))
    return visitTransfer(transfer, *device);
  if (auto evict = dyn_cast<EvictOp>(op))
    return visitEvict(evict, *device);
  if (auto reload = dyn_cast<ReloadOp>(op))
    return visitReload(reload, *device);
  return visitTensorOp(op, *device);
}
