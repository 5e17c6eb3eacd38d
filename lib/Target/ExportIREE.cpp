//===- ExportIREE.cpp - Placed doppler functions as IREE input ------------===//
//
// doppler-translate --export-iree: a placed function becomes a module that
// iree-compile 3.13 reads as it is, with its devices declared in the module
// and Doppler's placement expressed the only way IREE honours per op:
// explicit moves.
//
//   1. Checks: every op of a function body is placed (doppler.device, or a
//      doppler.transfer's target), every value has a static shape, nothing
//      is cost-only (doppler.task). One error per op.
//   2. Names: every placed op gets the location
//      loc("<kind>_<position>@d<device>"(<its old location>)), so that IREE's
//      dispatches (their locations, with --mlir-print-debuginfo) name the
//      Doppler ops they run and the device Doppler chose.
//   3. convert-doppler-to-linalg (an assemble as a tensor.empty and one
//      tensor.insert_slice per block; a conv or pool as a tensor.pad, an
//      init and a named convolution or pooling, every op of it named and
//      placed as its source), then named linalg ops other than linalg.fill
//      are generalised (iree-compile rejects some, e.g. linalg.add; it
//      takes a linalg.generic with sliding maps as the convolution it is,
//      as fast as the named op).
//   4. Moves: each doppler.transfer, and each tensor operand of a placed op
//      that lives on another device, becomes
//      "flow.tensor.transfer"(%x) {target = #hal.device.affinity<@__device_d>}
//      (generic form: MLIR 22 has no flow dialect). Arguments live on the
//      device of their first user, results on their producer's; both say so
//      with iree.abi.affinity. An assemble's tensor.empty is moved to the
//      assemble's own device too (see isAssembleInit).
//   5. Devices: one module global per device,
//      "util.global"() {sym_name = "__device_i", sym_visibility = "private",
//      type = !hal.device, initial_value = #hal.device.alias<"KIND"[i]>}.
//   6. doppler.* attributes are dropped; the module is printed as text with
//      its locations.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Conversion/DopplerToLinalg.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Target/Translations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::doppler;

namespace {

constexpr StringLiteral kAffinityArgAttr = "iree.abi.affinity";

std::string deviceSymbol(int64_t device) {
  return "__device_" + std::to_string(device);
}

/// #hal.device.affinity<@__device_d>, as an attribute of the unregistered
/// hal dialect (MLIR prints it back in that pretty form).
Attribute affinityAttr(MLIRContext *ctx, int64_t device) {
  return OpaqueAttr::get(StringAttr::get(ctx, "hal"),
                         "device.affinity<@" + deviceSymbol(device) + ">",
                         NoneType::get(ctx));
}

/// The device an op is placed on: a doppler.transfer's target, else its
/// doppler.device; -1 when unplaced.
int64_t placedDevice(Operation *op) {
  if (auto transfer = dyn_cast<TransferOp>(op))
    return transfer.getTarget().getId();
  if (auto device = op->getAttrOfType<DeviceAttr>(
          kDeviceAttr))
    return device.getId();
  return -1;
}

/// Why `type` cannot cross into IREE, or "".
std::string unsupportedType(Type type) {
  if (isa<ValueType>(type))
    return "is an opaque !doppler.value";
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return "";
  if (!shaped.hasRank())
    return "is unranked";
  if (!shaped.hasStaticShape())
    return "has a dynamic shape";
  return "";
}

/// Step 1: one error per op (or argument) the export cannot take.
LogicalResult checkExportable(func::FuncOp function) {
  bool ok = true;
  for (auto [i, type] : llvm::enumerate(function.getArgumentTypes())) {
    std::string why = unsupportedType(type);
    if (!why.empty()) {
      function.emitError() << "cannot export @" << function.getName()
                           << " to IREE: argument " << i << " " << why << " ("
                           << type << ")";
      ok = false;
    }
  }
  for (Operation &op : function.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (isa<TaskOp>(op)) {
      op.emitOpError() << "is a cost-only op on opaque values; it cannot be "
                          "exported to IREE";
      ok = false;
      continue;
    }
    if (placedDevice(&op) < 0) {
      op.emitOpError() << "is not placed (no doppler.device); run "
                          "doppler-place or doppler-pipeline before "
                          "--export-iree";
      ok = false;
      continue;
    }
    auto check = [&](Value value, StringRef what, unsigned index) {
      std::string why = unsupportedType(value.getType());
      if (why.empty())
        return true;
      op.emitOpError() << "cannot be exported to IREE: " << what << " "
                       << index << " " << why << " (" << value.getType()
                       << ")";
      return false;
    };
    bool opOk = true;
    for (auto [i, operand] : llvm::enumerate(op.getOperands()))
      if (opOk && !check(operand, "operand", i))
        opOk = false;
    for (auto [i, result] : llvm::enumerate(op.getResults()))
      if (opOk && !check(result, "result", i))
        opOk = false;
    ok &= opOk;
  }
  return success(ok);
}

/// Step 2: stable names that carry the Doppler op and its device.
void nameOps(func::FuncOp function) {
  unsigned position = 0;
  for (Operation &op : function.getBody().front()) {
    ++position;
    int64_t device = placedDevice(&op);
    if (device < 0 || isa<TransferOp>(op))
      continue;
    std::string name = op.getName().stripDialect().str();
    name += "_" + std::to_string(position - 1) + "@d" + std::to_string(device);
    op.setLoc(NameLoc::get(StringAttr::get(op.getContext(), name),
                           op.getLoc()));
  }
}

/// Step 3b: named linalg ops (but fill) become linalg.generic.
LogicalResult generalizeNamedOps(ModuleOp module) {
  SmallVector<linalg::LinalgOp> named;
  module.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp, linalg::FillOp>(op))
      named.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::LinalgOp op : named) {
    Attribute device = op->getAttr(kDeviceAttr);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return op->emitOpError() << "cannot be generalised to linalg.generic, "
                                  "which iree-compile needs";
    if (device)
      (*generic)->setAttr(kDeviceAttr, device);
  }
  return success();
}

/// Whether `empty` is the tensor an assemble writes its blocks into (the
/// destination of a tensor.insert_slice). The export moves it to the
/// assemble's device: IREE 3.13 places an op without tensor operands where
/// its consumers are, a flow.tensor.transfer counting on its target, so an
/// assemble read only on another device had its empty tensor there and its
/// copies on no single device, and iree-compile crashed (docs/IREE.md,
/// "Assembles read on another device"). Moved, its only consumer is on the
/// assemble's device.
bool isAssembleInit(tensor::EmptyOp empty) {
  return llvm::any_of(empty->getUses(), [](OpOperand &use) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
    return insert && use.get() == insert.getDest();
  });
}

/// Step 4 for one function: transfers and affinities. Returns the number of
/// devices it uses (highest id + 1).
int64_t insertTransfers(func::FuncOp function) {
  MLIRContext *ctx = function.getContext();
  Block &body = function.getBody().front();
  int64_t numDevices = 0;

  // Arguments live on the device of their first placed user.
  SmallVector<int64_t> argDevice(function.getNumArguments(), -1);
  for (Operation &op : body) {
    int64_t device = placedDevice(&op);
    // A transfer reads its input where it comes from.
    if (auto transfer = dyn_cast<TransferOp>(op))
      device = transfer.getSource().getId();
    if (device < 0)
      continue;
    for (Value operand : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (arg.getOwner() == &body && argDevice[arg.getArgNumber()] < 0)
          argDevice[arg.getArgNumber()] = device;
  }
  for (int64_t &device : argDevice)
    device = std::max<int64_t>(device, 0);

  llvm::DenseMap<Value, int64_t> valueDevice;
  for (BlockArgument arg : body.getArguments())
    valueDevice[arg] = argDevice[arg.getArgNumber()];
  auto deviceOf = [&](Value value) -> int64_t {
    auto it = valueDevice.find(value);
    if (it != valueDevice.end())
      return it->second;
    if (Operation *def = value.getDefiningOp())
      return placedDevice(def);
    return -1;
  };

  OpBuilder builder(ctx);
  DenseMap<std::pair<Value, int64_t>, Value> moved;
  auto transferTo = [&](Value value, int64_t device, Location loc) -> Value {
    auto key = std::make_pair(value, device);
    if (Value done = moved.lookup(key))
      return done;
    OperationState state(loc, "flow.tensor.transfer");
    state.addOperands(value);
    state.addTypes(value.getType());
    state.addAttribute("target", affinityAttr(ctx, device));
    Value result = builder.create(state)->getResult(0);
    valueDevice[result] = device;
    moved[key] = result;
    return result;
  };

  for (Operation &op : llvm::make_early_inc_range(body)) {
    int64_t device = placedDevice(&op);
    numDevices = std::max(numDevices, device + 1);
    if (auto empty = dyn_cast<tensor::EmptyOp>(op);
        empty && device >= 0 && isAssembleInit(empty)) {
      builder.setInsertionPointAfter(&op);
      Value pinned = transferTo(empty.getResult(), device, op.getLoc());
      empty.getResult().replaceAllUsesExcept(pinned, pinned.getDefiningOp());
      continue;
    }
    builder.setInsertionPoint(&op);
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      Value result =
          transferTo(transfer.getInput(), device, transfer.getLoc());
      transfer.getResult().replaceAllUsesWith(result);
      transfer.erase();
      continue;
    }
    if (device < 0 || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      int64_t from = deviceOf(operand.get());
      if (from != device)
        operand.set(transferTo(operand.get(), device, op.getLoc()));
    }
  }

  for (auto [i, device] : llvm::enumerate(argDevice)) {
    function.setArgAttr(i, kAffinityArgAttr, affinityAttr(ctx, device));
    numDevices = std::max(numDevices, device + 1);
  }
  Operation *terminator = body.getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    int64_t device = std::max<int64_t>(deviceOf(value), 0);
    function.setResultAttr(i, kAffinityArgAttr, affinityAttr(ctx, device));
  }
  return numDevices;
}

/// Step 6: drops every doppler.* attribute (IREE cannot parse them).
void dropDopplerAttrs(Operation *root) {
  auto isDoppler = [](NamedAttribute attr) {
    return attr.getName().strref().starts_with("doppler.");
  };
  root->walk([&](Operation *op) {
    SmallVector<StringAttr> names;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (isDoppler(attr))
        names.push_back(attr.getName());
    for (StringAttr name : names)
      op->removeDiscardableAttr(name);
  });
}

} // namespace

LogicalResult mlir::doppler::exportIREE(ModuleOp module, llvm::raw_ostream &os,
                                        const IREEExportOptions &options) {
  MLIRContext *ctx = module.getContext();
  if (options.deviceKind.empty() ||
      !llvm::all_of(options.deviceKind, [](char c) {
        return llvm::isAlnum(c) || c == '-' || c == '_';
      }))
    return module.emitError() << "--export-iree: device kind '"
                              << options.deviceKind
                              << "' is not a HAL device name (e.g. local, "
                                 "cuda, hip, vulkan)";
  // flow, hal and util are not MLIR 22 dialects: their ops and attributes
  // are built unregistered and printed in generic form.
  ctx->allowUnregisteredDialects(true);
  // What the conversion creates (a pass would list them as dependent).
  ctx->loadDialect<arith::ArithDialect, linalg::LinalgDialect,
                   math::MathDialect, tensor::TensorDialect>();

  OwningOpRef<ModuleOp> clone = module.clone();
  SmallVector<func::FuncOp> functions;
  for (auto function : clone->getOps<func::FuncOp>())
    if (!function.isExternal())
      functions.push_back(function);
  if (functions.empty())
    return module.emitError("--export-iree: the module has no function with "
                            "a body to export");

  bool ok = true;
  for (func::FuncOp function : functions) {
    if (!function.getBody().hasOneBlock()) {
      function.emitError() << "cannot export @" << function.getName()
                           << " to IREE: it has several blocks";
      ok = false;
      continue;
    }
    ok &= succeeded(checkExportable(function));
  }
  if (!ok)
    return failure();

  for (func::FuncOp function : functions)
    nameOps(function);
  DopplerToLinalgOptions conversion;
  conversion.assembleWithConcat = false;
  if (failed(convertDopplerToLinalg(*clone, conversion)) ||
      failed(generalizeNamedOps(*clone)))
    return failure();

  int64_t numDevices = std::max<int64_t>(options.numDevices, 1);
  for (func::FuncOp function : functions)
    numDevices = std::max(numDevices, insertTransfers(function));
  dropDopplerAttrs(*clone);
  SmallVector<NamedAttribute> moduleAttrs;
  for (NamedAttribute attr : (*clone)->getAttrs())
    if (!attr.getName().strref().starts_with("doppler."))
      moduleAttrs.push_back(attr);
  (*clone)->setAttrs(moduleAttrs);

  OpBuilder builder = OpBuilder::atBlockBegin(clone->getBody());
  Type deviceType =
      OpaqueType::get(StringAttr::get(ctx, "hal"), "device");
  for (int64_t device = 0; device < numDevices; ++device) {
    OperationState state(clone->getLoc(), "util.global");
    state.addAttribute("sym_name",
                       builder.getStringAttr(deviceSymbol(device)));
    state.addAttribute("sym_visibility", builder.getStringAttr("private"));
    state.addAttribute("type", TypeAttr::get(deviceType));
    state.addAttribute(
        "initial_value",
        OpaqueAttr::get(StringAttr::get(ctx, "hal"),
                        "device.alias<\"" + options.deviceKind + "\"[" +
                            std::to_string(device) + "]>",
                        NoneType::get(ctx)));
    builder.create(state);
  }

  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  os << "// Exported by doppler-translate --export-iree for IREE 3.13: "
     << numDevices << " \"" << options.deviceKind << "\" device(s).\n";
  clone->print(os, flags);
  os << "\n";
  return success();
}
