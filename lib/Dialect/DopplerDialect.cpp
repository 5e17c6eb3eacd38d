//===- DopplerDialect.cpp - Doppler dialect, attributes and types ---------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Support/Limits.h"
#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::doppler;

#include "Doppler/Dialect/DopplerDialect.cpp.inc"
#include "Doppler/Dialect/DopplerEnums.cpp.inc"
#include "Doppler/Dialect/DopplerInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Doppler/Dialect/DopplerAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Doppler/Dialect/DopplerTypes.cpp.inc"

void DopplerDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Doppler/Dialect/DopplerOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

void DopplerDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Doppler/Dialect/DopplerAttrs.cpp.inc"
      >();
}

void DopplerDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Doppler/Dialect/DopplerTypes.cpp.inc"
      >();
}

LogicalResult
DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t id) {
  if (id < 0)
    return emitError() << "device id must be non-negative, got " << id;
  // The cap every tool, pass and the runtime share: what reads a placement
  // (exporters sizing a row per device, the runtime's 32-bit device ids)
  // may rely on it.
  if (id >= ::doppler::kMaxDevices)
    return emitError() << "device id " << id << " is past the limit of "
                       << ::doppler::kMaxDevices << " devices";
  return success();
}

namespace {
/// Discardable `doppler.*` attributes and the kind of value each holds.
enum class DiscardableKind {
  Device,
  NonNegativeFloat,
  PositiveInts,
  NonNegativeInts,
  Dictionary,
  Nodes
};
struct DiscardableAttr {
  StringLiteral name;
  DiscardableKind kind;
};
constexpr DiscardableAttr kDiscardableAttrs[] = {
    {kDeviceAttr, DiscardableKind::Device},
    // Cost model results and simulated schedule, in the graph's cost units.
    {kComputeCostAttr, DiscardableKind::NonNegativeFloat},
    {kTransferCostAttr, DiscardableKind::NonNegativeFloat},
    {kStartAttr, DiscardableKind::NonNegativeFloat},
    {kEndAttr, DiscardableKind::NonNegativeFloat},
    {kMakespanAttr, DiscardableKind::NonNegativeFloat},
    // Explicit per-index partition counts for decomposition.
    {kPartsAttr, DiscardableKind::PositiveInts},
    // doppler-plan-memory: predicted peak bytes per device, and a summary.
    {kPeakMemoryAttr, DiscardableKind::NonNegativeInts},
    {kOffloadAttr, DiscardableKind::Dictionary},
    // On a module placed for a system of several nodes: each device's node.
    {kNodesAttr, DiscardableKind::Nodes},
};

/// `doppler.nodes`: on a module, one non-negative node id per device, for
/// every device an op of the module is placed on.
LogicalResult verifyNodes(Operation *op, Attribute value) {
  if (!isa<ModuleOp>(op))
    return op->emitOpError() << "'" << kNodesAttr
                             << "' belongs on a module, not on this op";
  auto nodes = dyn_cast<DenseI64ArrayAttr>(value);
  if (!nodes || nodes.empty())
    return op->emitOpError() << "'" << kNodesAttr
                             << "' must be a non-empty array<i64> (the node "
                                "of each device), got "
                             << value;
  if (nodes.size() > ::doppler::kMaxDevices)
    return op->emitOpError() << "'" << kNodesAttr << "' lists " << nodes.size()
                             << " devices, more than the limit of "
                             << ::doppler::kMaxDevices;
  for (auto [device, node] : llvm::enumerate(nodes.asArrayRef()))
    if (node < 0 || node >= ::doppler::kMaxDevices)
      return op->emitOpError()
             << "'" << kNodesAttr << "' entries must be in [0, "
             << ::doppler::kMaxDevices << "), got " << node << " for device "
             << device;
  int64_t size = nodes.size();
  WalkResult placed = op->walk([&](Operation *nested) {
    auto device = nested->getAttrOfType<DeviceAttr>(kDeviceAttr);
    if (!device || device.getId() < size)
      return WalkResult::advance();
    op->emitOpError() << "'" << kNodesAttr << "' lists " << size
                      << " device(s), but an op is placed on device "
                      << device.getId();
    return WalkResult::interrupt();
  });
  return failure(placed.wasInterrupted());
}
} // namespace

LogicalResult DopplerDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  for (const DiscardableAttr &known : kDiscardableAttrs) {
    if (name != known.name)
      continue;
    switch (known.kind) {
    case DiscardableKind::Device:
      if (!isa<DeviceAttr>(attr.getValue()))
        return op->emitOpError() << "'" << name
                                 << "' must be a #doppler.device<N>, got "
                                 << attr.getValue();
      return success();
    case DiscardableKind::NonNegativeFloat: {
      auto value = dyn_cast<FloatAttr>(attr.getValue());
      if (!value || !value.getType().isF64())
        return op->emitOpError()
               << "'" << name << "' must be an f64 attribute, got "
               << attr.getValue();
      double v = value.getValueAsDouble();
      if (!(v >= 0) || std::isinf(v))
        return op->emitOpError()
               << "'" << name << "' must be finite and non-negative, got "
               << v;
      return success();
    }
    case DiscardableKind::PositiveInts:
    case DiscardableKind::NonNegativeInts: {
      auto value = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
      if (!value)
        return op->emitOpError() << "'" << name
                                 << "' must be an array<i64>, got "
                                 << attr.getValue();
      int64_t least = known.kind == DiscardableKind::PositiveInts ? 1 : 0;
      for (int64_t entry : value.asArrayRef())
        if (entry < least)
          return op->emitOpError() << "'" << name << "' entries must be >= "
                                   << least << ", got " << entry;
      return success();
    }
    case DiscardableKind::Nodes:
      return verifyNodes(op, attr.getValue());
    case DiscardableKind::Dictionary:
      if (!isa<DictionaryAttr>(attr.getValue()))
        return op->emitOpError() << "'" << name
                                 << "' must be a dictionary, got "
                                 << attr.getValue();
      return success();
    }
  }
  return op->emitOpError() << "unknown doppler attribute '" << name << "'";
}

::doppler::JoinKind mlir::doppler::toSupport(JoinKind kind) {
  // Same case order by construction; the name lookup keeps us honest.
  auto mapped = ::doppler::parseJoinKind(stringifyJoinKind(kind).str());
  assert(mapped && "JoinKind out of sync with doppler::JoinKind");
  return *mapped;
}

::doppler::AggKind mlir::doppler::toSupport(AggKind kind) {
  auto mapped = ::doppler::parseAggKind(stringifyAggKind(kind).str());
  assert(mapped && "AggKind out of sync with doppler::AggKind");
  return *mapped;
}
