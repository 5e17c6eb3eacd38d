//===- RuntimeProgram.cpp - Placed functions as runtime plans -------------===//

#include "Doppler/Target/RuntimeProgram.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Transforms/PlacementGraph.h"
#include "Doppler/Transforms/RuntimeTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
namespace rt = ::doppler::runtime;

bool mlir::doppler::hasPlacedOps(func::FuncOp function) {
  if (function.isExternal())
    return false;
  for (Operation &op : function.getBody().front())
    if (getDevice(&op) >= 0)
      return true;
  return false;
}

namespace {

static_assert(static_cast<int>(rt::ElementType::F32) ==
                      static_cast<int>(RuntimeElement::F32) &&
                  static_cast<int>(rt::ElementType::F64) ==
                      static_cast<int>(RuntimeElement::F64) &&
                  static_cast<int>(rt::ElementType::F16) ==
                      static_cast<int>(RuntimeElement::F16),
              "RuntimeTypes.h codes are the runtime's element types");

/// The runtime element type of a float type; fails with an error at `op`.
FailureOr<rt::ElementType> toElementType(Type type, Operation *op) {
  FailureOr<RuntimeElement> element = getRuntimeElement(type, op);
  if (failed(element))
    return failure();
  return static_cast<rt::ElementType>(*element);
}

rt::Shape toShape(RankedTensorType type) {
  return rt::Shape(type.getShape().begin(), type.getShape().end());
}

class PlanBuilder {
public:
  PlanBuilder(func::FuncOp function, const RuntimeProgramOptions &options)
      : function(function), options(options) {}

  FailureOr<rt::Plan> build();
  const llvm::DenseMap<Value, rt::ValueId> &valueIds() const { return values; }

private:
  LogicalResult declareArguments();
  LogicalResult visit(Operation &op);
  /// The graph value of `value` as read by `user` on `device`.
  FailureOr<rt::ValueId> operand(Value value, Operation *user, int device);
  /// The graph input of argument `index` on `device`.
  FailureOr<rt::ValueId> argumentOn(unsigned index, int device,
                                    Operation *user);
  /// Records `built` as the value of `op`'s result, or reports its error.
  LogicalResult define(Operation *op, rt::Result<rt::ValueId> built);

  func::FuncOp function;
  const RuntimeProgramOptions &options;
  rt::Plan plan;
  llvm::DenseMap<Value, rt::ValueId> values;
  /// Graph inputs per argument, by device (EveryUser), or the one input
  /// (FirstUser: found under any device through `argumentHome`).
  std::vector<std::map<int, rt::ValueId>> argumentInputs;
  std::vector<int> argumentHome;
};

FailureOr<rt::Plan> PlanBuilder::build() {
  if (function.isExternal())
    return function.emitError() << "function @" << function.getName()
                                << " is a declaration; it has nothing to run";
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "function @" << function.getName()
           << " has several blocks; the runtime runs straight-line functions "
              "only";
  Block &body = function.getBody().front();
  bool anyWork = llvm::any_of(body, [](Operation &op) {
    return !op.hasTrait<OpTrait::IsTerminator>();
  });
  if (anyWork && !hasPlacedOps(function))
    return function.emitError()
           << "function @" << function.getName() << " is not placed (no op has "
           << kDeviceAttr
           << "); place it first, e.g. doppler-opt FILE "
              "--doppler-pipeline=devices=N -o placed.mlir";

  plan.function = function.getName().str();
  if (auto makespan = function->getAttrOfType<FloatAttr>(kMakespanAttr))
    plan.predictedMakespan = makespan.getValueAsDouble() / 1e6;
  if (failed(declareArguments()))
    return failure();
  for (Operation &op : body)
    if (failed(visit(op)))
      return failure();
  if (rt::Status status = plan.verify(); !status)
    return function.emitError() << "internal error: " << status.message();
  return std::move(plan);
}

LogicalResult PlanBuilder::declareArguments() {
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    FailureOr<std::pair<RankedTensorType, RuntimeElement>> argument =
        getRuntimeArgumentType(function, i);
    if (failed(argument))
      return failure();
    plan.addArgument(static_cast<rt::ElementType>(argument->second),
                     toShape(argument->first));
  }
  argumentInputs.resize(function.getNumArguments());
  argumentHome.assign(function.getNumArguments(), -1);
  return success();
}

FailureOr<rt::ValueId> PlanBuilder::argumentOn(unsigned index, int device,
                                               Operation *user) {
  std::map<int, rt::ValueId> &inputs = argumentInputs[index];
  if (auto it = inputs.find(device); it != inputs.end())
    return it->second;
  if (options.arguments == ArgumentPlacement::FirstUser &&
      argumentHome[index] >= 0) {
    rt::Result<rt::ValueId> moved =
        plan.graph.onDevice(inputs.at(argumentHome[index]), device);
    if (!moved)
      return user->emitOpError()
             << "cannot read argument " << index << ": " << moved.message();
    return *moved;
  }
  const rt::PlanArgument &arg = plan.arguments[index];
  rt::Result<rt::ValueId> input =
      plan.graph.addInput(device, arg.shape, arg.type);
  if (!input)
    return user->emitOpError()
           << "cannot bind argument " << index << ": " << input.message();
  if (rt::Status status = plan.bindArgument(*input, index); !status)
    return user->emitOpError() << status.message();
  inputs[device] = *input;
  if (argumentHome[index] < 0)
    argumentHome[index] = device;
  return *input;
}

FailureOr<rt::ValueId> PlanBuilder::operand(Value value, Operation *user,
                                            int device) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return argumentOn(arg.getArgNumber(), device, user);
  Operation *producer = value.getDefiningOp();
  auto it = values.find(value);
  if (it == values.end())
    return user->emitOpError() << "reads a value of '" << producer->getName()
                               << "', which has no runtime task";
  int from = plan.graph.task(it->second).device;
  if (from != device)
    return user->emitOpError()
           << "on device " << device << " uses a value produced on device "
           << from
           << " without a doppler.transfer; run doppler-insert-transfers "
              "(or doppler-pipeline)";
  return it->second;
}

LogicalResult PlanBuilder::define(Operation *op,
                                  rt::Result<rt::ValueId> built) {
  if (!built)
    return op->emitOpError()
           << "cannot become a runtime task: " << built.message();
  values[op->getResult(0)] = *built;
  if (options.priorities)
    if (auto start = op->getAttrOfType<FloatAttr>(kStartAttr)) {
      double nanoseconds = std::round(start.getValueAsDouble() * 1e3);
      if (std::isfinite(nanoseconds))
        (void)plan.graph.setPriority(*built, static_cast<int64_t>(nanoseconds));
    }
  return success();
}

LogicalResult PlanBuilder::visit(Operation &op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (Value value : ret.getOperands()) {
      rt::ValueId id;
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        // A returned argument: any of its inputs will do, else one on
        // device 0.
        const std::map<int, rt::ValueId> &inputs =
            argumentInputs[arg.getArgNumber()];
        FailureOr<rt::ValueId> input =
            inputs.empty() ? argumentOn(arg.getArgNumber(), 0, &op)
                           : FailureOr<rt::ValueId>(inputs.begin()->second);
        if (failed(input))
          return failure();
        id = *input;
      } else {
        auto it = values.find(value);
        if (it == values.end())
          return op.emitOpError() << "returns a value with no runtime task";
        id = it->second;
      }
      if (rt::Status status = plan.addResult(id); !status)
        return op.emitOpError() << status.message();
    }
    return success();
  }
  FailureOr<int> runtimeDevice = getRuntimeDevice(op);
  if (failed(runtimeDevice))
    return failure();
  int dev = *runtimeDevice;

  if (auto task = dyn_cast<TaskOp>(op)) {
    if (!options.delayTasks)
      return op.emitOpError()
             << "is cost-only (opaque values, no data); it can only run as a "
                "delay of its compute cost (doppler-run --delay-tasks)";
    std::vector<rt::ValueId> inputs;
    for (Value value : task.getInputs()) {
      FailureOr<rt::ValueId> input = operand(value, &op, dev);
      if (failed(input))
        return failure();
      inputs.push_back(*input);
    }
    double compute = task.getCompute().convertToDouble();
    if (!(compute >= 0) || !std::isfinite(compute))
      return op.emitOpError() << "has a compute cost that is not a finite, "
                                 "non-negative number";
    return define(&op, plan.graph.addDelay(dev, compute / 1e6, inputs));
  }

  if (auto transfer = dyn_cast<TransferOp>(op)) {
    int64_t from = transfer.getSource().getId();
    int64_t to = transfer.getTarget().getId();
    if (to != dev)
      return op.emitOpError() << "moves to device " << to
                              << " but is placed on device " << dev;
    Value input = transfer.getInput();
    if (auto it = values.find(input); it != values.end()) {
      int producerDevice = plan.graph.task(it->second).device;
      if (producerDevice != from)
        return op.emitOpError()
               << "moves a value from device " << from
               << " but its producer is on device " << producerDevice;
    }
    FailureOr<rt::ValueId> source = operand(input, &op, static_cast<int>(from));
    if (failed(source))
      return failure();
    double seconds = -1;
    if (isa<ValueType>(input.getType())) {
      if (!options.delayTasks)
        return op.emitOpError() << "moves an opaque !doppler.value; run with "
                                   "delay tasks (doppler-run --delay-tasks)";
      if (auto producer = input.getDefiningOp<TaskOp>())
        seconds = producer.getTransfer().convertToDouble() / 1e6;
    }
    return define(&op, plan.graph.addTransfer(*source, dev, seconds));
  }

  // Tensor ops: check the result type first.
  FailureOr<RankedTensorType> resultType =
      requireStaticTensor(op.getResult(0).getType(), &op, "the result");
  if (failed(resultType))
    return failure();
  FailureOr<rt::ElementType> element =
      toElementType(resultType->getElementType(), &op);
  if (failed(element))
    return failure();
  std::vector<rt::ValueId> inputs;
  for (Value value : op.getOperands()) {
    if (failed(requireStaticTensor(value.getType(), &op, "an operand")))
      return failure();
    FailureOr<rt::ValueId> input = operand(value, &op, dev);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }

  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    std::optional<::doppler::AggKind> aggregation;
    if (einsum.getAggregation())
      aggregation = toSupport(*einsum.getAggregation());
    double scalar =
        einsum.getScalar() ? einsum.getScalar()->convertToDouble() : 0.0;
    return define(&op, plan.graph.addEinsum(dev, einsum.getSpec().str(),
                                            toSupport(einsum.getJoin()),
                                            aggregation, inputs, scalar));
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    ArrayRef<int64_t> offsets = slice.getOffsets();
    return define(&op, plan.graph.addSlice(
                           dev, inputs[0],
                           std::vector<int64_t>(offsets.begin(), offsets.end()),
                           toShape(*resultType)));
  }
  if (auto fill = dyn_cast<FillOp>(op))
    return define(&op, plan.graph.addFill(dev, toShape(*resultType),
                                          fill.getValue().convertToDouble(),
                                          *element));
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
  return define(&op, plan.graph.addAssemble(dev, std::move(extents), inputs));
}

} // namespace

FailureOr<rt::Plan>
mlir::doppler::buildRuntimePlan(func::FuncOp function,
                                const RuntimeProgramOptions &options,
                                std::vector<Operation *> *taskOps) {
  PlanBuilder builder(function, options);
  FailureOr<rt::Plan> plan = builder.build();
  if (succeeded(plan) && taskOps) {
    taskOps->assign(plan->graph.size(), nullptr);
    for (auto [value, id] : builder.valueIds())
      if (Operation *op = value.getDefiningOp())
        (*taskOps)[id] = op;
  }
  return plan;
}
