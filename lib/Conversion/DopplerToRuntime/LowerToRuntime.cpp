//===- LowerToRuntime.cpp - Placed functions as runtime C API calls -------===//
//
// Every placed function @f becomes `llvm.func @doppler_build_f(%graph:
// !llvm.ptr) -> i32`, a straight line of C API calls (CApi.h) that add the
// same tasks, in the same order, that RuntimeProgram (lib/Target, used by
// doppler-run) adds for f, so that the two give the same plan; a lit test
// diffs them. Every call's result is checked and the first failure returns
// -1 (the message is in dopplerRtGraphError). Constants (specs, shapes,
// offsets) are internal `llvm.mlir.global`s, shared between calls; operand
// lists go through one stack buffer sized for the longest list.
//
// The pass only emits calls, so the library layering holds: lib/Transforms
// does not link the runtime; the lowered code does, at run time.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Transforms/Passes.h"
#include "Doppler/Transforms/PlacementGraph.h"
#include "Doppler/Transforms/RuntimeTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <map>

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERLOWERTORUNTIMEPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// Element type codes of CApi.h (DOPPLER_RT_F32, ...).
FailureOr<int32_t> elementTypeCode(Type type, Operation *op) {
  FailureOr<RuntimeElement> element = getRuntimeElement(type, op);
  if (failed(element))
    return failure();
  return static_cast<int32_t>(*element);
}

/// Declarations, constants and checked calls in the module being lowered.
class Emitter {
public:
  explicit Emitter(ModuleOp module)
      : module(module), symbols(module), ctx(module.getContext()),
        ptrType(LLVM::LLVMPointerType::get(ctx)),
        i32(IntegerType::get(ctx, 32)), i64(IntegerType::get(ctx, 64)),
        f64(Float64Type::get(ctx)) {}

  ModuleOp module;
  SymbolTable symbols;
  MLIRContext *ctx;
  Type ptrType, i32, i64, f64;

  /// The declaration of C function `name` (added once, at the module top).
  LLVM::LLVMFuncOp declare(StringRef name, Type result, ArrayRef<Type> args) {
    if (auto existing = symbols.lookup<LLVM::LLVMFuncOp>(name))
      return existing;
    OpBuilder top = atTop();
    auto func = LLVM::LLVMFuncOp::create(
        top, module.getLoc(), name, LLVM::LLVMFunctionType::get(result, args));
    symbols.insert(func);
    lastTopOp = func;
    return func;
  }

  /// The address of an internal constant global holding `value`.
  Value global(OpBuilder &builder, Location loc, Type type, Attribute value,
               StringRef prefix) {
    auto key = std::make_pair(type, value);
    LLVM::GlobalOp global = globals.lookup(key);
    if (!global) {
      OpBuilder top = atTop();
      global = LLVM::GlobalOp::create(top, module.getLoc(), type,
                                      /*isConstant=*/true,
                                      LLVM::Linkage::Internal, prefix, value);
      symbols.insert(global); // Renames it when the name is taken.
      globals[key] = global;
      lastTopOp = global;
    }
    return LLVM::AddressOfOp::create(builder, loc, global);
  }

  /// A NUL-terminated string constant.
  Value string(OpBuilder &builder, Location loc, StringRef text) {
    std::string bytes = text.str();
    bytes.push_back('\0');
    auto type =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), bytes.size());
    return global(builder, loc, type, StringAttr::get(ctx, bytes),
                  "__doppler_str");
  }

  /// An i64 array constant; null for an empty array.
  Value int64s(OpBuilder &builder, Location loc, ArrayRef<int64_t> values) {
    if (values.empty())
      return LLVM::ZeroOp::create(builder, loc, ptrType);
    auto tensorType =
        RankedTensorType::get({static_cast<int64_t>(values.size())}, i64);
    auto type = LLVM::LLVMArrayType::get(i64, values.size());
    return global(builder, loc, type,
                  DenseIntElementsAttr::get(tensorType, values),
                  "__doppler_i64");
  }

  Value constI32(OpBuilder &builder, Location loc, int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, i32,
                                    builder.getI32IntegerAttr(value));
  }
  Value constI64(OpBuilder &builder, Location loc, int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, i64,
                                    builder.getI64IntegerAttr(value));
  }
  Value constF64(OpBuilder &builder, Location loc, double value) {
    return LLVM::ConstantOp::create(builder, loc, f64,
                                    builder.getF64FloatAttr(value));
  }
  Value null(OpBuilder &builder, Location loc) {
    return LLVM::ZeroOp::create(builder, loc, ptrType);
  }

private:
  /// Declarations and globals go to the top of the module, in creation
  /// order.
  OpBuilder atTop() {
    OpBuilder top(ctx);
    if (lastTopOp)
      top.setInsertionPointAfter(lastTopOp);
    else
      top.setInsertionPointToStart(module.getBody());
    return top;
  }

  llvm::DenseMap<std::pair<Type, Attribute>, LLVM::GlobalOp> globals;
  Operation *lastTopOp = nullptr;
};

/// Lowers one function into @doppler_build_<name>.
class FunctionLowering {
public:
  FunctionLowering(Emitter &emitter, func::FuncOp function, bool delayTasks,
                   bool firstUser)
      : e(emitter), function(function), delayTasks(delayTasks),
        firstUser(firstUser), builder(function.getContext()) {}

  /// Emits the builder function; fails with an error at the offending op.
  FailureOr<LLVM::LLVMFuncOp> run();
  int64_t numTasks = 0;
  int maxDevice = -1;

private:
  LogicalResult visit(Operation &op);
  /// The i64 graph value of `value` read by `user` on `device`.
  FailureOr<Value> operand(Value value, Operation *user, int device);
  FailureOr<Value> argumentOn(unsigned index, int device);
  /// Calls `callee` and branches to the failure block when the result is
  /// negative; continues in a fresh block.
  Value checkedCall(LLVM::LLVMFuncOp callee, ValueRange args);
  /// Stores `values` in the operand buffer and returns its address.
  Value operandList(ArrayRef<Value> values);
  void define(Operation *op, Value id);

  Emitter &e;
  func::FuncOp function;
  bool delayTasks, firstUser;
  OpBuilder builder;
  Location loc = UnknownLoc::get(function.getContext());
  Value graph, buffer;
  Block *failBlock = nullptr;
  /// Graph value and device of every lowered op result.
  llvm::DenseMap<Value, std::pair<Value, int>> values;
  std::vector<std::map<int, Value>> argumentInputs;
  std::vector<int> argumentHome;
  std::vector<RankedTensorType> argumentTypes;
  std::vector<int32_t> argumentCodes;
};

Value FunctionLowering::checkedCall(LLVM::LLVMFuncOp callee, ValueRange args) {
  Value result = LLVM::CallOp::create(builder, loc, callee, args).getResult();
  Value zero = result.getType() == e.i64 ? e.constI64(builder, loc, 0)
                                         : e.constI32(builder, loc, 0);
  Value bad = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::slt,
                                   result, zero);
  Block *next = new Block();
  next->insertAfter(builder.getInsertionBlock());
  LLVM::CondBrOp::create(builder, loc, bad, failBlock, next);
  builder.setInsertionPointToStart(next);
  return result;
}

Value FunctionLowering::operandList(ArrayRef<Value> list) {
  for (auto [i, value] : llvm::enumerate(list)) {
    Value slot =
        LLVM::GEPOp::create(builder, loc, e.ptrType, e.i64, buffer,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    LLVM::StoreOp::create(builder, loc, value, slot);
  }
  return list.empty() ? e.null(builder, loc) : buffer;
}

void FunctionLowering::define(Operation *op, Value id) {
  int device = static_cast<int>(getDevice(op));
  values[op->getResult(0)] = {id, device};
  ++numTasks;
  // Simulated start (microseconds) -> priority (nanoseconds), as
  // RuntimeProgram does.
  if (auto start = op->getAttrOfType<FloatAttr>(kStartAttr)) {
    double nanoseconds = std::round(start.getValueAsDouble() * 1e3);
    if (std::isfinite(nanoseconds)) {
      auto setPriority = e.declare("dopplerRtGraphSetPriority", e.i32,
                                   {e.ptrType, e.i64, e.i64});
      checkedCall(setPriority, {graph, id,
                                e.constI64(builder, loc,
                                           static_cast<int64_t>(nanoseconds))});
    }
  }
}

FailureOr<Value> FunctionLowering::argumentOn(unsigned index, int device) {
  std::map<int, Value> &inputs = argumentInputs[index];
  if (auto it = inputs.find(device); it != inputs.end())
    return it->second;
  maxDevice = std::max(maxDevice, device);
  if (firstUser && argumentHome[index] >= 0) {
    // One runtime transfer per (argument, device), like TaskGraph::onDevice.
    auto transfer = e.declare("dopplerRtGraphAddTransfer", e.i64,
                              {e.ptrType, e.i64, e.i32});
    Value moved = checkedCall(transfer, {graph, inputs.at(argumentHome[index]),
                                         e.constI32(builder, loc, device)});
    ++numTasks;
    inputs[device] = moved;
    return moved;
  }
  ArrayRef<int64_t> shape = argumentTypes[index].getShape();
  auto addInput = e.declare("dopplerRtGraphAddInput", e.i64,
                            {e.ptrType, e.i32, e.i32, e.ptrType, e.i32});
  Value input =
      checkedCall(addInput, {graph, e.constI32(builder, loc, device),
                             e.constI32(builder, loc, argumentCodes[index]),
                             e.int64s(builder, loc, shape),
                             e.constI32(builder, loc, shape.size())});
  auto bind =
      e.declare("dopplerRtGraphBindArgument", e.i32, {e.ptrType, e.i64, e.i32});
  checkedCall(bind, {graph, input, e.constI32(builder, loc, index)});
  inputs[device] = input;
  if (argumentHome[index] < 0)
    argumentHome[index] = device;
  return input;
}

FailureOr<Value> FunctionLowering::operand(Value value, Operation *user,
                                           int device) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return argumentOn(arg.getArgNumber(), device);
  auto it = values.find(value);
  if (it == values.end())
    return user->emitOpError()
           << "reads a value of '" << value.getDefiningOp()->getName()
           << "', which has no runtime task";
  if (it->second.second != device)
    return user->emitOpError()
           << "on device " << device << " uses a value produced on device "
           << it->second.second
           << " without a doppler.transfer; run doppler-insert-transfers "
              "(or doppler-pipeline)";
  return it->second.first;
}

FailureOr<LLVM::LLVMFuncOp> FunctionLowering::run() {
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "function @" << function.getName()
           << " has several blocks; the runtime runs straight-line functions "
              "only";
  Block &body = function.getBody().front();
  bool anyWork = llvm::any_of(body, [](Operation &op) {
    return !op.hasTrait<OpTrait::IsTerminator>();
  });
  bool anyPlaced =
      llvm::any_of(body, [](Operation &op) { return getDevice(&op) >= 0; });
  if (anyWork && !anyPlaced)
    return function.emitError()
           << "function @" << function.getName() << " is not placed (no op has "
           << kDeviceAttr
           << "); place it first, e.g. doppler-opt FILE "
              "--doppler-pipeline=devices=N -o placed.mlir";

  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    FailureOr<std::pair<RankedTensorType, RuntimeElement>> argument =
        getRuntimeArgumentType(function, i);
    if (failed(argument))
      return failure();
    argumentTypes.push_back(argument->first);
    argumentCodes.push_back(static_cast<int32_t>(argument->second));
  }
  argumentInputs.resize(argumentTypes.size());
  argumentHome.assign(argumentTypes.size(), -1);

  // The longest operand list (einsum inputs, assemble blocks, delay inputs).
  int64_t longest = 1;
  for (Operation &op : body)
    longest = std::max<int64_t>(longest, op.getNumOperands());

  OpBuilder top = OpBuilder::atBlockEnd(e.module.getBody());
  std::string name = ("doppler_build_" + function.getName()).str();
  auto builderFunc =
      LLVM::LLVMFuncOp::create(top, function.getLoc(), name,
                               LLVM::LLVMFunctionType::get(e.i32, {e.ptrType}));
  e.symbols.insert(builderFunc);
  Block *entry = builderFunc.addEntryBlock(builder);
  graph = entry->getArgument(0);
  failBlock = new Block();
  builderFunc.getBody().push_back(failBlock);
  builder.setInsertionPointToStart(failBlock);
  LLVM::ReturnOp::create(builder, loc,
                         ValueRange{e.constI32(builder, loc, -1)});

  builder.setInsertionPointToStart(entry);
  buffer = LLVM::AllocaOp::create(builder, loc, e.ptrType, e.i64,
                                  e.constI64(builder, loc, longest));
  // The function's name and prediction, then its signature.
  double predicted = -1;
  if (auto makespan = function->getAttrOfType<FloatAttr>(kMakespanAttr))
    predicted = makespan.getValueAsDouble() / 1e6;
  auto setFunction =
      e.declare("dopplerRtGraphSetFunction", LLVM::LLVMVoidType::get(e.ctx),
                {e.ptrType, e.ptrType, e.f64});
  LLVM::CallOp::create(builder, loc, setFunction,
                       ValueRange{graph,
                                  e.string(builder, loc, function.getName()),
                                  e.constF64(builder, loc, predicted)});
  auto addArgument = e.declare("dopplerRtGraphAddArgument", e.i32,
                               {e.ptrType, e.i32, e.ptrType, e.i32});
  for (auto [i, type] : llvm::enumerate(argumentTypes))
    checkedCall(addArgument, {graph, e.constI32(builder, loc, argumentCodes[i]),
                              e.int64s(builder, loc, type.getShape()),
                              e.constI32(builder, loc, type.getRank())});

  for (Operation &op : body) {
    loc = op.getLoc();
    if (failed(visit(op))) {
      builderFunc.erase();
      return failure();
    }
  }
  LLVM::ReturnOp::create(builder, loc, ValueRange{e.constI32(builder, loc, 0)});
  return builderFunc;
}

LogicalResult FunctionLowering::visit(Operation &op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    auto addResult =
        e.declare("dopplerRtGraphAddResult", e.i32, {e.ptrType, e.i64});
    for (Value value : ret.getOperands()) {
      Value id;
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        std::map<int, Value> &inputs = argumentInputs[arg.getArgNumber()];
        if (inputs.empty()) {
          FailureOr<Value> input = argumentOn(arg.getArgNumber(), 0);
          if (failed(input))
            return failure();
          id = *input;
        } else {
          id = inputs.begin()->second;
        }
      } else {
        auto it = values.find(value);
        if (it == values.end())
          return op.emitOpError() << "returns a value with no runtime task";
        id = it->second.first;
      }
      checkedCall(addResult, {graph, id});
    }
    return success();
  }
  FailureOr<int> runtimeDevice = getRuntimeDevice(op);
  if (failed(runtimeDevice))
    return failure();
  int dev = *runtimeDevice;
  maxDevice = std::max(maxDevice, dev);
  Value devValue = e.constI32(builder, loc, dev);

  auto gather = [&](ValueRange operands,
                    SmallVectorImpl<Value> &ids) -> LogicalResult {
    for (Value value : operands) {
      FailureOr<Value> id = operand(value, &op, dev);
      if (failed(id))
        return failure();
      ids.push_back(*id);
    }
    return success();
  };

  if (auto task = dyn_cast<TaskOp>(op)) {
    if (!delayTasks)
      return op.emitOpError()
             << "is cost-only (opaque values, no data); it can only run as a "
                "delay of its compute cost (delay-tasks=true)";
    SmallVector<Value> ids;
    if (failed(gather(task.getInputs(), ids)))
      return failure();
    double compute = task.getCompute().convertToDouble();
    if (!(compute >= 0) || !std::isfinite(compute))
      return op.emitOpError() << "has a compute cost that is not a finite, "
                                 "non-negative number";
    auto addDelay = e.declare("dopplerRtGraphAddDelay", e.i64,
                              {e.ptrType, e.i32, e.f64, e.ptrType, e.i32});
    define(&op, checkedCall(addDelay, {graph, devValue,
                                       e.constF64(builder, loc, compute / 1e6),
                                       operandList(ids),
                                       e.constI32(builder, loc, ids.size())}));
    return success();
  }

  if (auto transfer = dyn_cast<TransferOp>(op)) {
    int64_t from = transfer.getSource().getId();
    int64_t to = transfer.getTarget().getId();
    if (to != dev)
      return op.emitOpError() << "moves to device " << to
                              << " but is placed on device " << dev;
    Value input = transfer.getInput();
    if (auto it = values.find(input);
        it != values.end() && it->second.second != from)
      return op.emitOpError()
             << "moves a value from device " << from
             << " but its producer is on device " << it->second.second;
    FailureOr<Value> source = operand(input, &op, static_cast<int>(from));
    if (failed(source))
      return failure();
    if (isa<ValueType>(input.getType())) {
      if (!delayTasks)
        return op.emitOpError() << "moves an opaque !doppler.value; lower "
                                   "with delay-tasks=true";
      double seconds = -1;
      if (auto producer = input.getDefiningOp<TaskOp>())
        seconds = producer.getTransfer().convertToDouble() / 1e6;
      if (seconds >= 0) {
        auto timed = e.declare("dopplerRtGraphAddTimedTransfer", e.i64,
                               {e.ptrType, e.i64, e.i32, e.f64});
        define(&op, checkedCall(timed, {graph, *source, devValue,
                                        e.constF64(builder, loc, seconds)}));
        return success();
      }
    }
    auto addTransfer = e.declare("dopplerRtGraphAddTransfer", e.i64,
                                 {e.ptrType, e.i64, e.i32});
    define(&op, checkedCall(addTransfer, {graph, *source, devValue}));
    return success();
  }

  FailureOr<RankedTensorType> resultType =
      requireStaticTensor(op.getResult(0).getType(), &op, "the result");
  if (failed(resultType))
    return failure();
  FailureOr<int32_t> code = elementTypeCode(resultType->getElementType(), &op);
  if (failed(code))
    return failure();
  for (Value value : op.getOperands())
    if (failed(requireStaticTensor(value.getType(), &op, "an operand")))
      return failure();
  SmallVector<Value> ids;
  if (failed(gather(op.getOperands(), ids)))
    return failure();

  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    auto addEinsum = e.declare("dopplerRtGraphAddEinsum", e.i64,
                               {e.ptrType, e.i32, e.ptrType, e.ptrType,
                                e.ptrType, e.f64, e.ptrType, e.i32});
    Value aggregation = einsum.getAggregation()
                            ? e.string(builder, loc,
                                       ::doppler::aggKindName(
                                           toSupport(*einsum.getAggregation())))
                            : e.null(builder, loc);
    double scalar =
        einsum.getScalar() ? einsum.getScalar()->convertToDouble() : 0.0;
    define(&op,
           checkedCall(
               addEinsum,
               {graph, devValue, e.string(builder, loc, einsum.getSpec()),
                e.string(builder, loc,
                         ::doppler::joinKindName(toSupport(einsum.getJoin()))),
                aggregation, e.constF64(builder, loc, scalar), operandList(ids),
                e.constI32(builder, loc, ids.size())}));
    return success();
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    auto addSlice =
        e.declare("dopplerRtGraphAddSlice", e.i64,
                  {e.ptrType, e.i32, e.i64, e.ptrType, e.ptrType, e.i32});
    define(&op, checkedCall(addSlice,
                            {graph, devValue, ids[0],
                             e.int64s(builder, loc, slice.getOffsets()),
                             e.int64s(builder, loc, resultType->getShape()),
                             e.constI32(builder, loc, resultType->getRank())}));
    return success();
  }
  if (auto fill = dyn_cast<FillOp>(op)) {
    auto addFill =
        e.declare("dopplerRtGraphAddFill", e.i64,
                  {e.ptrType, e.i32, e.i32, e.ptrType, e.i32, e.f64});
    define(&op, checkedCall(addFill,
                            {graph, devValue, e.constI32(builder, loc, *code),
                             e.int64s(builder, loc, resultType->getShape()),
                             e.constI32(builder, loc, resultType->getRank()),
                             e.constF64(builder, loc,
                                        fill.getValue().convertToDouble())}));
    return success();
  }
  auto assemble = cast<AssembleOp>(op);
  // Extents of each grid row, dimension after dimension (CApi.h's layout):
  // the block at grid coordinate g on d and 0 elsewhere has row g's extent.
  ArrayRef<int64_t> grid = assemble.getGrid();
  SmallVector<int64_t> strides(grid.size(), 1);
  for (size_t d = grid.size(); d-- > 1;)
    strides[d - 1] = strides[d] * grid[d];
  SmallVector<int64_t> extents;
  for (size_t d = 0; d < grid.size(); ++d)
    for (int64_t g = 0; g < grid[d]; ++g)
      extents.push_back(
          cast<RankedTensorType>(assemble.getBlocks()[g * strides[d]].getType())
              .getDimSize(d));
  auto addAssemble = e.declare(
      "dopplerRtGraphAddAssemble", e.i64,
      {e.ptrType, e.i32, e.ptrType, e.i32, e.ptrType, e.ptrType, e.i32});
  define(&op, checkedCall(addAssemble,
                          {graph, devValue, e.int64s(builder, loc, grid),
                           e.constI32(builder, loc, grid.size()),
                           e.int64s(builder, loc, extents), operandList(ids),
                           e.constI32(builder, loc, ids.size())}));
  return success();
}

/// @main: build, [write the plan,] run seeded, print; 0 or 1.
void emitEntry(Emitter &e, StringRef entryName, LLVM::LLVMFuncOp build,
               int devices, uint64_t seed, StringRef outputs, StringRef plan) {
  MLIRContext *ctx = e.ctx;
  Location loc = e.module.getLoc();
  OpBuilder top = OpBuilder::atBlockEnd(e.module.getBody());
  auto entry = LLVM::LLVMFuncOp::create(top, loc, entryName,
                                        LLVM::LLVMFunctionType::get(e.i32, {}));
  e.symbols.insert(entry);
  OpBuilder builder(ctx);
  Block *start = entry.addEntryBlock(builder);
  Block *fail = new Block(), *run = new Block();
  entry.getBody().push_back(run);
  entry.getBody().push_back(fail);

  auto create = e.declare("dopplerRtGraphCreate", e.ptrType, {});
  auto destroy = e.declare("dopplerRtGraphDestroy",
                           LLVM::LLVMVoidType::get(ctx), {e.ptrType});
  auto error = e.declare("dopplerRtGraphError", e.ptrType, {e.ptrType});
  auto puts = e.declare("puts", e.i32, {e.ptrType});
  auto writePlan =
      e.declare("dopplerRtGraphWritePlan", e.i32, {e.ptrType, e.ptrType});
  auto runSeeded = e.declare("dopplerRtGraphRunSeeded", e.i32,
                             {e.ptrType, e.i32, e.i64, e.ptrType});

  builder.setInsertionPointToStart(start);
  Value graph =
      LLVM::CallOp::create(builder, loc, create, ValueRange{}).getResult();
  Value zero = e.constI32(builder, loc, 0);
  Value built =
      LLVM::CallOp::create(builder, loc, build, ValueRange{graph}).getResult();
  auto branchOnFailure = [&](Value result, Block *next) {
    Value bad = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::slt,
                                     result, zero);
    LLVM::CondBrOp::create(builder, loc, bad, fail, next);
  };
  if (!plan.empty()) {
    Block *write = new Block();
    write->insertBefore(run);
    branchOnFailure(built, write);
    builder.setInsertionPointToStart(write);
    Value written =
        LLVM::CallOp::create(builder, loc, writePlan,
                             ValueRange{graph, e.string(builder, loc, plan)})
            .getResult();
    branchOnFailure(written, run);
  } else {
    branchOnFailure(built, run);
  }

  builder.setInsertionPointToStart(run);
  Value outputsPath =
      outputs.empty() ? e.null(builder, loc) : e.string(builder, loc, outputs);
  Value status =
      LLVM::CallOp::create(
          builder, loc, runSeeded,
          ValueRange{graph, e.constI32(builder, loc, devices),
                     e.constI64(builder, loc, static_cast<int64_t>(seed)),
                     outputsPath})
          .getResult();
  LLVM::CallOp::create(builder, loc, destroy, ValueRange{graph});
  Value failed = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::slt,
                                      status, zero);
  Value code = LLVM::SelectOp::create(builder, loc, failed,
                                      e.constI32(builder, loc, 1), zero);
  LLVM::ReturnOp::create(builder, loc, ValueRange{code});

  builder.setInsertionPointToStart(fail);
  Value message =
      LLVM::CallOp::create(builder, loc, error, ValueRange{graph}).getResult();
  LLVM::CallOp::create(builder, loc, puts,
                       ValueRange{e.string(builder, loc,
                                           "doppler: cannot build or export "
                                           "the task graph:")});
  LLVM::CallOp::create(builder, loc, puts, ValueRange{message});
  LLVM::CallOp::create(builder, loc, destroy, ValueRange{graph});
  LLVM::ReturnOp::create(builder, loc, ValueRange{e.constI32(builder, loc, 1)});
}

class LowerToRuntimePass
    : public mlir::doppler::impl::DopplerLowerToRuntimePassBase<
          LowerToRuntimePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (inputs != "every-user" && inputs != "first-user") {
      module.emitError() << "doppler-lower-to-runtime: inputs must be "
                            "every-user or first-user, not '"
                         << inputs.getValue() << "'";
      return signalPassFailure();
    }
    if (devices < 0) {
      module.emitError() << "doppler-lower-to-runtime: devices must be >= 0";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        functions.push_back(function);
    if (!function.empty() && llvm::none_of(functions, [&](func::FuncOp f) {
          return f.getName() == function;
        })) {
      module.emitError() << "doppler-lower-to-runtime: no function named '"
                         << function.getValue() << "' with a body";
      return signalPassFailure();
    }

    Emitter emitter(module);
    LLVM::LLVMFuncOp entryBuild;
    int entryDevices = 1;
    for (func::FuncOp f : functions) {
      FunctionLowering lowering(emitter, f, delayTasks, inputs == "first-user");
      FailureOr<LLVM::LLVMFuncOp> build = lowering.run();
      if (failed(build))
        return signalPassFailure();
      ++numLowered;
      numTasks += lowering.numTasks;
      if (!entryBuild && (function.empty() || f.getName() == function)) {
        entryBuild = *build;
        entryDevices = std::max(lowering.maxDevice + 1, 1);
      }
      f.erase();
    }
    if (entry.empty())
      return;
    if (!entryBuild) {
      module.emitError() << "doppler-lower-to-runtime: entry '"
                         << entry.getValue()
                         << "' needs a function with a body to run";
      return signalPassFailure();
    }
    if (devices > 0 && devices < entryDevices) {
      module.emitError() << "doppler-lower-to-runtime: devices="
                         << devices.getValue()
                         << " is too few: the program uses device "
                         << entryDevices - 1;
      return signalPassFailure();
    }
    if (emitter.symbols.lookup(entry)) {
      module.emitError() << "doppler-lower-to-runtime: the module already has "
                            "a symbol named '"
                         << entry.getValue() << "'";
      return signalPassFailure();
    }
    emitEntry(emitter, entry, entryBuild, devices > 0 ? devices : entryDevices,
              seed, outputs, plan);
  }
};

} // namespace
