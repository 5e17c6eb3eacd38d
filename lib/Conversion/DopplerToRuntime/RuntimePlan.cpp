//===- RuntimePlan.cpp - Placed functions as runtime plans ----------------===//
//
// The in-process sink of PlacedFunctionWalker: every task goes straight into
// a runtime::TaskGraph.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Conversion/DopplerToRuntime.h"

#include "Doppler/Dialect/DopplerDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::doppler;
namespace rt = ::doppler::runtime;

namespace {

static_assert(static_cast<int>(rt::ElementType::F32) ==
                      static_cast<int>(RuntimeElement::F32) &&
                  static_cast<int>(rt::ElementType::F64) ==
                      static_cast<int>(RuntimeElement::F64) &&
                  static_cast<int>(rt::ElementType::F16) ==
                      static_cast<int>(RuntimeElement::F16) &&
                  static_cast<int>(rt::ElementType::I32) ==
                      static_cast<int>(RuntimeElement::I32) &&
                  static_cast<int>(rt::ElementType::I64) ==
                      static_cast<int>(RuntimeElement::I64),
              "RuntimeTypes.h codes are the runtime's element types");

rt::Shape toShape(RankedTensorType type) {
  return rt::Shape(type.getShape().begin(), type.getShape().end());
}

std::vector<rt::ValueId> toIds(ArrayRef<RuntimeTaskSink::TaskRef> refs) {
  return std::vector<rt::ValueId>(refs.begin(), refs.end());
}

/// A runtime result as a sink's answer.
FailureOr<RuntimeTaskSink::TaskRef> answer(rt::Result<rt::ValueId> result,
                                           std::string &error) {
  if (!result) {
    error = result.message();
    return failure();
  }
  return *result;
}

class PlanSink final : public RuntimeTaskSink {
public:
  rt::Plan plan;

  LogicalResult
  begin(FunctionOpInterface function, double predictedSeconds,
        ArrayRef<std::pair<RankedTensorType, RuntimeElement>> arguments,
        std::string &) override {
    plan.function = function.getName().str();
    if (predictedSeconds >= 0)
      plan.predictedMakespan = predictedSeconds;
    for (auto [type, element] : arguments)
      plan.addArgument(static_cast<rt::ElementType>(element), toShape(type));
    return success();
  }

  FailureOr<TaskRef> addInput(unsigned index, int device,
                              std::string &error) override {
    const rt::PlanArgument &arg = plan.arguments[index];
    rt::Result<rt::ValueId> input =
        plan.graph.addInput(device, arg.shape, arg.type);
    if (!input) {
      error = "cannot bind argument " + std::to_string(index) + ": " +
              input.message();
      return failure();
    }
    if (rt::Status status = plan.bindArgument(*input, index); !status) {
      error = status.message();
      return failure();
    }
    return *input;
  }

  FailureOr<TaskRef> moveArgument(TaskRef input, int device,
                                  std::string &error) override {
    return answer(plan.graph.onDevice(input, device), error);
  }

  FailureOr<TaskRef> addTransfer(TaskRef source, int device, double seconds,
                                 std::string &error) override {
    return answer(plan.graph.addTransfer(source, device, seconds), error);
  }

  FailureOr<TaskRef> addDelay(int device, double seconds,
                              ArrayRef<TaskRef> inputs,
                              std::string &error) override {
    return answer(plan.graph.addDelay(device, seconds, toIds(inputs)), error);
  }

  FailureOr<TaskRef> addEinsum(EinsumOp einsum, int device,
                               ArrayRef<TaskRef> inputs,
                               std::string &error) override {
    std::optional<::doppler::AggKind> aggregation;
    if (einsum.getAggregation())
      aggregation = toSupport(*einsum.getAggregation());
    double scalar =
        einsum.getScalar() ? einsum.getScalar()->convertToDouble() : 0.0;
    // The result's type (a conversion's differs from its input's).
    FailureOr<RuntimeElement> element =
        getRuntimeElement(einsum.getType().getElementType(), einsum);
    if (failed(element))
      return failure();
    return answer(plan.graph.addEinsum(
                      device, einsum.getSpec().str(),
                      toSupport(einsum.getJoin()), aggregation, toIds(inputs),
                      scalar, static_cast<rt::ElementType>(*element)),
                  error);
  }

  FailureOr<TaskRef> addFused(FusedOp fused, int device,
                              ArrayRef<TaskRef> inputs,
                              std::string &error) override {
    return answer(plan.graph.addFused(device, fused.getSpec().str(),
                                      fused.getProgram().str(), toIds(inputs)),
                  error);
  }

  FailureOr<TaskRef> addSlice(SliceOp slice, int device, TaskRef input,
                              RankedTensorType result,
                              std::string &error) override {
    ArrayRef<int64_t> offsets = slice.getOffsets();
    return answer(plan.graph.addSlice(
                      device, input,
                      std::vector<int64_t>(offsets.begin(), offsets.end()),
                      toShape(result)),
                  error);
  }

  FailureOr<TaskRef> addReshape(ReshapeOp, int device, TaskRef input,
                                RankedTensorType result,
                                std::string &error) override {
    return answer(plan.graph.addReshape(device, input, toShape(result)), error);
  }

  FailureOr<TaskRef> addConv(ConvOp conv, int device, ArrayRef<TaskRef> inputs,
                             std::string &error) override {
    return answer(plan.graph.addConvolution(device, inputs[0], inputs[1],
                                            conv.getGroups(),
                                            conv.getGeometry()),
                  error);
  }

  FailureOr<TaskRef> addPool(PoolOp pool, int device, TaskRef input,
                             std::string &error) override {
    ::doppler::PoolKind kind = pool.getKind() == PoolKind::Max
                                   ? ::doppler::PoolKind::Max
                                   : ::doppler::PoolKind::Avg;
    return answer(
        plan.graph.addPool(device, kind, input, pool.getGeometry()), error);
  }

  FailureOr<TaskRef> addGather(GatherOp gather, int device,
                               ArrayRef<TaskRef> inputs,
                               std::string &error) override {
    return answer(plan.graph.addGather(device, inputs[0], inputs[1],
                                       gather.getAxis()),
                  error);
  }

  FailureOr<TaskRef> addFill(FillOp fill, int device, RankedTensorType result,
                             RuntimeElement element,
                             std::string &error) override {
    return answer(plan.graph.addFill(device, toShape(result),
                                     fill.getValue().convertToDouble(),
                                     static_cast<rt::ElementType>(element)),
                  error);
  }

  FailureOr<TaskRef> addAssemble(AssembleOp, int device,
                                 ArrayRef<std::vector<int64_t>> extents,
                                 ArrayRef<TaskRef> blocks,
                                 std::string &error) override {
    return answer(plan.graph.addAssemble(device,
                                         std::vector<std::vector<int64_t>>(
                                             extents.begin(), extents.end()),
                                         toIds(blocks)),
                  error);
  }

  FailureOr<TaskRef> addEvict(EvictOp, TaskRef input, int,
                              std::string &error) override {
    return answer(plan.graph.addEvict(input), error);
  }

  FailureOr<TaskRef> addReload(ReloadOp, TaskRef stash, int device,
                               ArrayRef<TaskRef> after,
                               std::string &error) override {
    return answer(plan.graph.addReload(stash, device, toIds(after)), error);
  }

  void setPriority(TaskRef task, int64_t priority) override {
    (void)plan.graph.setPriority(task, priority);
  }

  LogicalResult addResult(TaskRef task, std::string &error) override {
    if (rt::Status status = plan.addResult(task); !status) {
      error = status.message();
      return failure();
    }
    return success();
  }

  LogicalResult finish(std::string &error) override {
    if (rt::Status status = plan.verify(); !status) {
      error = status.message();
      return failure();
    }
    return success();
  }
};

} // namespace

FailureOr<rt::Plan>
mlir::doppler::buildRuntimePlan(func::FuncOp function,
                                const RuntimeProgramOptions &options,
                                std::vector<Operation *> *taskOps) {
  PlacedFunctionWalkerOptions walkOptions;
  walkOptions.delayTasks = options.delayTasks;
  walkOptions.delayTasksHint = "doppler-run --delay-tasks";
  walkOptions.arguments = options.arguments;
  walkOptions.priorities = options.priorities;
  PlanSink sink;
  PlacedFunctionWalker walker(function, sink, walkOptions);
  if (failed(walker.run()))
    return failure();
  // A module placed for a system of several nodes gives each device's node
  // (the dialect verified one per placed device): the plan's "nodes", and
  // its device count, which may exceed the devices used.
  if (auto module = function->getParentOfType<ModuleOp>())
    if (auto nodes = module->getAttrOfType<DenseI64ArrayAttr>(kNodesAttr)) {
      sink.plan.nodes.assign(nodes.asArrayRef().begin(),
                             nodes.asArrayRef().end());
      sink.plan.devices = static_cast<int>(nodes.size());
    }
  if (taskOps) {
    taskOps->assign(sink.plan.graph.size(), nullptr);
    for (auto [value, task] : walker.taskValues())
      if (Operation *op = value.getDefiningOp())
        (*taskOps)[task.first] = op;
  }
  return std::move(sink.plan);
}
