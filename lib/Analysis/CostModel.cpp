//===- CostModel.cpp - Compute and transfer costs of IR ops ---------------===//

#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Analysis/PlacementGraph.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/JoinProgram.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::doppler;
using ::doppler::placement::SystemDescription;

double mlir::doppler::valueBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  Type element = shaped.getElementType();
  if (!element.isIntOrFloat())
    return 0;
  // In doubles: getNumElements() wraps for types of ops no doppler
  // verifier checked (a linalg op on tensor<4611686018427387904x4xf32>).
  return ::doppler::approximateElementCount(shaped.getShape().data(),
                                            shaped.getShape().size()) *
         ((element.getIntOrFloatBitWidth() + 7) / 8);
}

double mlir::doppler::resultBytes(Operation *op) {
  double bytes = 0;
  for (Type type : op->getResultTypes())
    bytes += valueBytes(type);
  return bytes;
}

namespace {

/// "f32", "bf16", ...: the key of the system's peak FLOP/s table.
std::string elementTypeName(Operation *op) {
  Type type = op->getNumResults() ? op->getResult(0).getType()
              : op->getNumOperands() ? op->getOperand(0).getType()
                                     : Type();
  if (!type)
    return "default";
  std::string name;
  llvm::raw_string_ostream os(name);
  getElementTypeOrSelf(type).print(os);
  return name;
}

bool isGemm(EinsumOp einsum) {
  return einsum.getJoin() == JoinKind::Mul && einsum.getAggregation() &&
         *einsum.getAggregation() == AggKind::Add;
}

} // namespace

double mlir::doppler::computeCostOf(Operation &op,
                                    const SystemDescription &system,
                                    bool *fromWork) {
  double flops = 0, bytes = 0;
  auto work = dyn_cast<WorkOpInterface>(op);
  if (work) {
    flops = work.getFlops();
    bytes = work.getBytesRead() + work.getBytesWritten();
  } else {
    for (Type type : op.getOperandTypes())
      bytes += valueBytes(type);
    bytes += resultBytes(&op);
  }
  if (fromWork)
    *fromWork = bool(work);
  auto einsum = dyn_cast<EinsumOp>(op);
  // A mul-add contraction runs as a GEMM, whose rate is peak_flops; any
  // other einsum applies its join once per point of its iteration space, at
  // the device's rate for that join if listed.
  if (auto fused = dyn_cast<FusedOp>(op)) {
    // A fused op applies every step's join once per point: each step is
    // charged at the device's rate for its join, and the steps' sum
    // overlaps with the one pass over memory.
    std::vector<::doppler::JoinKind> joins;
    for (const ::doppler::JoinStep &step : fused.getParsedProgram().steps)
      joins.push_back(step.join);
    return system.computeCost(
        0, flops, bytes, elementTypeName(&op), joins,
        static_cast<double>(fused.getIndexSizes().iterationSpace()));
  }
  if (einsum && !isGemm(einsum))
    return system.computeCost(
        0, flops, bytes, elementTypeName(&op), toSupport(einsum.getJoin()),
        static_cast<double>(einsum.getIndexSizes().iterationSpace()));
  return system.computeCost(0, flops, bytes, elementTypeName(&op));
}

CostCounts mlir::doppler::annotateCosts(Operation *root,
                                        const SystemDescription &system) {
  CostCounts counts;
  Builder builder(root->getContext());
  root->walk([&](FunctionOpInterface function) {
    if (function.isExternal())
      return;
    for (Block &block : function.getFunctionBody()) {
      for (Operation &op : block) {
        if (op.hasTrait<OpTrait::IsTerminator>() || isa<TaskOp>(op))
          continue;
        bool fromWork = false;
        double compute = computeCostOf(op, system, &fromWork);
        ++(fromWork ? counts.fromWork : counts.asCopies);
        double transfer = system.worstTransferCost(0, resultBytes(&op));
        op.setAttr(kComputeCostAttr, builder.getF64FloatAttr(compute));
        op.setAttr(kTransferCostAttr, builder.getF64FloatAttr(transfer));
      }
    }
  });
  return counts;
}
