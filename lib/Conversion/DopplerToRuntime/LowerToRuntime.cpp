//===- LowerToRuntime.cpp - Placed functions as runtime C API calls -------===//
//
// Every placed function @f becomes `llvm.func @doppler_build_f(%graph:
// !llvm.ptr) -> i32`, a straight line of C API calls (CApi.h) that add the
// tasks PlacedFunctionWalker finds in f: the walk that also builds
// doppler-run's plans (RuntimePlan.cpp), so the two give the same plan.
// Every call's result is checked and the first failure returns -1 (the
// message is in dopplerRtGraphError). Constants (specs, shapes, offsets)
// are internal `llvm.mlir.global`s, shared between calls; operand lists go
// through one stack buffer sized for the longest list.
//
// The pass only emits calls, so it does not link the runtime; the lowered
// code does, at run time.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Conversion/Passes.h"
#include "Doppler/Conversion/PlacedFunctionWalker.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"


namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERLOWERTORUNTIMEPASS
#include "Doppler/Conversion/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

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

/// The sink of PlacedFunctionWalker that lowers one function into
/// @doppler_build_<name>: every task becomes a checked C API call.
class FunctionLowering final : public RuntimeTaskSink {
public:
  explicit FunctionLowering(Emitter &emitter)
      : e(emitter), builder(emitter.ctx), loc(UnknownLoc::get(emitter.ctx)) {}

  /// The builder function (null before begin()).
  LLVM::LLVMFuncOp builderFunc;
  int64_t numTasks = 0;

  LogicalResult
  begin(FunctionOpInterface function, double predictedSeconds,
        ArrayRef<std::pair<RankedTensorType, RuntimeElement>> arguments,
        std::string &) override;
  void startOp(Operation &op) override { loc = op.getLoc(); }
  void beginTask(int device) override {
    taskDevice = e.constI32(builder, loc, device);
  }

  FailureOr<TaskRef> addInput(unsigned index, int device,
                              std::string &) override {
    ArrayRef<int64_t> shape = argumentTypes[index].getShape();
    auto addInput = e.declare("dopplerRtGraphAddInput", e.i64,
                              {e.ptrType, e.i32, e.i32, e.ptrType, e.i32});
    Value input =
        checkedCall(addInput, {graph, e.constI32(builder, loc, device),
                               e.constI32(builder, loc, argumentCodes[index]),
                               e.int64s(builder, loc, shape),
                               e.constI32(builder, loc, shape.size())});
    auto bind = e.declare("dopplerRtGraphBindArgument", e.i32,
                          {e.ptrType, e.i64, e.i32});
    checkedCall(bind, {graph, input, e.constI32(builder, loc, index)});
    return remember(input);
  }

  FailureOr<TaskRef> moveArgument(TaskRef input, int device,
                                  std::string &) override {
    // One runtime transfer per (argument, device), like TaskGraph::onDevice.
    return transfer(input, e.constI32(builder, loc, device));
  }

  FailureOr<TaskRef> addTransfer(TaskRef source, int, double seconds,
                                 std::string &) override {
    if (seconds >= 0) {
      auto timed = e.declare("dopplerRtGraphAddTimedTransfer", e.i64,
                             {e.ptrType, e.i64, e.i32, e.f64});
      return task(checkedCall(timed, {graph, ids[source], taskDevice,
                                      e.constF64(builder, loc, seconds)}));
    }
    return transfer(source, taskDevice);
  }

  FailureOr<TaskRef> addDelay(int, double seconds,
                              ArrayRef<TaskRef> inputs,
                              std::string &) override {
    auto addDelay = e.declare("dopplerRtGraphAddDelay", e.i64,
                              {e.ptrType, e.i32, e.f64, e.ptrType, e.i32});
    return task(checkedCall(addDelay, {graph, taskDevice,
                                       e.constF64(builder, loc, seconds),
                                       operandList(inputs),
                                       e.constI32(builder, loc, inputs.size())}));
  }

  FailureOr<TaskRef> addEinsum(EinsumOp einsum, int,
                               ArrayRef<TaskRef> inputs,
                               std::string &error) override {
    // The C API's einsum takes its inputs' type; a conversion (an identity
    // einsum to another element type) runs through doppler-run's plans.
    if (getElementTypeOrSelf(einsum.getInputs()[0].getType()) !=
        getElementTypeOrSelf(einsum.getType())) {
      error = "an einsum converting its element type is not supported by "
              "the compiled (LLVM) route; run the plan (doppler-run)";
      return failure();
    }
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
    return task(checkedCall(
        addEinsum,
        {graph, taskDevice, e.string(builder, loc, einsum.getSpec()),
         e.string(builder, loc,
                  ::doppler::joinKindName(toSupport(einsum.getJoin()))),
         aggregation, e.constF64(builder, loc, scalar), operandList(inputs),
         e.constI32(builder, loc, inputs.size())}));
  }

  FailureOr<TaskRef> addFused(FusedOp fused, int, ArrayRef<TaskRef> inputs,
                              std::string &) override {
    auto addFused = e.declare(
        "dopplerRtGraphAddFused", e.i64,
        {e.ptrType, e.i32, e.ptrType, e.ptrType, e.ptrType, e.i32});
    return task(checkedCall(
        addFused, {graph, taskDevice, e.string(builder, loc, fused.getSpec()),
                   e.string(builder, loc, fused.getProgram()),
                   operandList(inputs),
                   e.constI32(builder, loc, inputs.size())}));
  }

  FailureOr<TaskRef> addSlice(SliceOp slice, int, TaskRef input,
                              RankedTensorType result,
                              std::string &) override {
    auto addSlice =
        e.declare("dopplerRtGraphAddSlice", e.i64,
                  {e.ptrType, e.i32, e.i64, e.ptrType, e.ptrType, e.i32});
    return task(checkedCall(addSlice,
                            {graph, taskDevice, ids[input],
                             e.int64s(builder, loc, slice.getOffsets()),
                             e.int64s(builder, loc, result.getShape()),
                             e.constI32(builder, loc, result.getRank())}));
  }

  FailureOr<TaskRef> addReshape(ReshapeOp, int, TaskRef input,
                                RankedTensorType result,
                                std::string &) override {
    auto addReshape =
        e.declare("dopplerRtGraphAddReshape", e.i64,
                  {e.ptrType, e.i32, e.i64, e.ptrType, e.i32});
    return task(checkedCall(addReshape,
                            {graph, taskDevice, ids[input],
                             e.int64s(builder, loc, result.getShape()),
                             e.constI32(builder, loc, result.getRank())}));
  }

  FailureOr<TaskRef> addConv(ConvOp conv, int, ArrayRef<TaskRef> inputs,
                             std::string &) override {
    auto addConvolution = e.declare(
        "dopplerRtGraphAddConvolution", e.i64,
        {e.ptrType, e.i32, e.i64, e.i64, e.i64, e.ptrType, e.ptrType,
         e.ptrType, e.ptrType, e.i32});
    ::doppler::WindowGeometry g = conv.getGeometry();
    return task(checkedCall(
        addConvolution,
        {graph, taskDevice, ids[inputs[0]], ids[inputs[1]],
         e.constI64(builder, loc, conv.getGroups()),
         e.int64s(builder, loc, g.strides), e.int64s(builder, loc, g.dilations),
         e.int64s(builder, loc, g.padLow), e.int64s(builder, loc, g.padHigh),
         e.constI32(builder, loc, g.spatialDims())}));
  }

  FailureOr<TaskRef> addPool(PoolOp pool, int, TaskRef input,
                             std::string &) override {
    auto addPool = e.declare("dopplerRtGraphAddPool", e.i64,
                             {e.ptrType, e.i32, e.ptrType, e.i64, e.ptrType,
                              e.ptrType, e.ptrType, e.ptrType, e.ptrType,
                              e.i32});
    ::doppler::WindowGeometry g = pool.getGeometry();
    return task(checkedCall(
        addPool,
        {graph, taskDevice,
         e.string(builder, loc, stringifyPoolKind(pool.getKind())), ids[input],
         e.int64s(builder, loc, g.kernel), e.int64s(builder, loc, g.strides),
         e.int64s(builder, loc, g.dilations), e.int64s(builder, loc, g.padLow),
         e.int64s(builder, loc, g.padHigh),
         e.constI32(builder, loc, g.spatialDims())}));
  }

  FailureOr<TaskRef> addGather(GatherOp gather, int,
                               ArrayRef<TaskRef> inputs,
                               std::string &) override {
    auto addGather = e.declare("dopplerRtGraphAddGather", e.i64,
                               {e.ptrType, e.i32, e.i64, e.i64, e.i64});
    return task(checkedCall(addGather,
                            {graph, taskDevice, ids[inputs[0]],
                             ids[inputs[1]],
                             e.constI64(builder, loc, gather.getAxis())}));
  }

  FailureOr<TaskRef> addFill(FillOp fill, int, RankedTensorType result,
                             RuntimeElement element,
                             std::string &) override {
    auto addFill =
        e.declare("dopplerRtGraphAddFill", e.i64,
                  {e.ptrType, e.i32, e.i32, e.ptrType, e.i32, e.f64});
    return task(checkedCall(
        addFill, {graph, taskDevice,
                  e.constI32(builder, loc, static_cast<int32_t>(element)),
                  e.int64s(builder, loc, result.getShape()),
                  e.constI32(builder, loc, result.getRank()),
                  e.constF64(builder, loc, fill.getValue().convertToDouble())}));
  }

  FailureOr<TaskRef> addAssemble(AssembleOp assemble, int,
                                 ArrayRef<std::vector<int64_t>> extents,
                                 ArrayRef<TaskRef> blocks,
                                 std::string &) override {
    // Extents of each grid row, dimension after dimension (CApi.h's layout).
    SmallVector<int64_t> flat;
    for (const std::vector<int64_t> &rows : extents)
      flat.append(rows.begin(), rows.end());
    ArrayRef<int64_t> grid = assemble.getGrid();
    auto addAssemble = e.declare(
        "dopplerRtGraphAddAssemble", e.i64,
        {e.ptrType, e.i32, e.ptrType, e.i32, e.ptrType, e.ptrType, e.i32});
    return task(checkedCall(addAssemble,
                            {graph, taskDevice, e.int64s(builder, loc, grid),
                             e.constI32(builder, loc, grid.size()),
                             e.int64s(builder, loc, flat), operandList(blocks),
                             e.constI32(builder, loc, blocks.size())}));
  }

  FailureOr<TaskRef> addEvict(EvictOp, TaskRef input, int,
                              std::string &) override {
    auto addEvict =
        e.declare("dopplerRtGraphAddEvict", e.i64, {e.ptrType, e.i64});
    return task(checkedCall(addEvict, {graph, ids[input]}));
  }

  FailureOr<TaskRef> addReload(ReloadOp, TaskRef stash, int,
                               ArrayRef<TaskRef> after,
                               std::string &) override {
    auto addReload = e.declare("dopplerRtGraphAddReload", e.i64,
                               {e.ptrType, e.i64, e.i32, e.ptrType, e.i32});
    return task(checkedCall(addReload,
                            {graph, ids[stash], taskDevice, operandList(after),
                             e.constI32(builder, loc, after.size())}));
  }

  void setPriority(TaskRef task, int64_t priority) override {
    auto setPriority = e.declare("dopplerRtGraphSetPriority", e.i32,
                                 {e.ptrType, e.i64, e.i64});
    checkedCall(setPriority,
                {graph, ids[task], e.constI64(builder, loc, priority)});
  }

  LogicalResult addResult(TaskRef task, std::string &) override {
    auto addResult =
        e.declare("dopplerRtGraphAddResult", e.i32, {e.ptrType, e.i64});
    checkedCall(addResult, {graph, ids[task]});
    return success();
  }

  LogicalResult finish(std::string &) override {
    LLVM::ReturnOp::create(builder, loc,
                           ValueRange{e.constI32(builder, loc, 0)});
    return success();
  }

private:
  /// Calls `callee` and branches to the failure block when the result is
  /// negative; continues in a fresh block.
  Value checkedCall(LLVM::LLVMFuncOp callee, ValueRange args);
  /// Stores the tasks' graph values in the operand buffer and returns its
  /// address.
  Value operandList(ArrayRef<TaskRef> tasks);
  /// A move of `source` to the device `device` holds.
  TaskRef transfer(TaskRef source, Value device) {
    auto addTransfer = e.declare("dopplerRtGraphAddTransfer", e.i64,
                                 {e.ptrType, e.i64, e.i32});
    return task(checkedCall(addTransfer, {graph, ids[source], device}));
  }
  /// A new task's graph value.
  TaskRef task(Value id) {
    ++numTasks;
    return remember(id);
  }
  TaskRef remember(Value id) {
    ids.push_back(id);
    return static_cast<TaskRef>(ids.size() - 1);
  }

  Emitter &e;
  OpBuilder builder;
  Location loc;
  Value graph, buffer;
  /// The device of the op being lowered, as an i32 constant.
  Value taskDevice;
  Block *failBlock = nullptr;
  /// The i64 graph value of every TaskRef.
  std::vector<Value> ids;
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

Value FunctionLowering::operandList(ArrayRef<TaskRef> tasks) {
  for (auto [i, task] : llvm::enumerate(tasks)) {
    Value slot =
        LLVM::GEPOp::create(builder, loc, e.ptrType, e.i64, buffer,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    LLVM::StoreOp::create(builder, loc, ids[task], slot);
  }
  return tasks.empty() ? e.null(builder, loc) : buffer;
}

LogicalResult FunctionLowering::begin(
    FunctionOpInterface function, double predictedSeconds,
    ArrayRef<std::pair<RankedTensorType, RuntimeElement>> arguments,
    std::string &) {
  for (auto [type, element] : arguments) {
    argumentTypes.push_back(type);
    argumentCodes.push_back(static_cast<int32_t>(element));
  }
  // The longest operand list (einsum and fused inputs, assemble blocks, delay
  // inputs).
  int64_t longest = 1;
  for (Operation &op : function.getFunctionBody().front())
    longest = std::max<int64_t>(longest, op.getNumOperands());

  OpBuilder top = OpBuilder::atBlockEnd(e.module.getBody());
  std::string name = ("doppler_build_" + function.getName()).str();
  builderFunc =
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
  auto setFunction =
      e.declare("dopplerRtGraphSetFunction", LLVM::LLVMVoidType::get(e.ctx),
                {e.ptrType, e.ptrType, e.f64});
  LLVM::CallOp::create(builder, loc, setFunction,
                       ValueRange{graph,
                                  e.string(builder, loc, function.getName()),
                                  e.constF64(builder, loc, predictedSeconds)});
  auto addArgument = e.declare("dopplerRtGraphAddArgument", e.i32,
                               {e.ptrType, e.i32, e.ptrType, e.i32});
  for (auto [i, type] : llvm::enumerate(argumentTypes))
    checkedCall(addArgument, {graph, e.constI32(builder, loc, argumentCodes[i]),
                              e.int64s(builder, loc, type.getShape()),
                              e.constI32(builder, loc, type.getRank())});
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

  LogicalResult initialize(MLIRContext *context) override {
    if (inputs != "every-user" && inputs != "first-user")
      return emitError(UnknownLoc::get(context))
             << "doppler-lower-to-runtime: inputs must be every-user or "
                "first-user, not '"
             << inputs.getValue() << "'";
    if (devices < 0)
      return emitError(UnknownLoc::get(context))
             << "doppler-lower-to-runtime: devices must be >= 0";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
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
    PlacedFunctionWalkerOptions walkOptions;
    walkOptions.delayTasks = delayTasks;
    walkOptions.arguments = inputs == "first-user"
                                ? ArgumentPlacement::FirstUser
                                : ArgumentPlacement::EveryUser;
    for (func::FuncOp f : functions) {
      FunctionLowering lowering(emitter);
      PlacedFunctionWalker walker(f, lowering, walkOptions);
      if (failed(walker.run())) {
        if (lowering.builderFunc)
          lowering.builderFunc.erase();
        return signalPassFailure();
      }
      ++numLowered;
      numTasks += lowering.numTasks;
      if (!entryBuild && (function.empty() || f.getName() == function)) {
        entryBuild = lowering.builderFunc;
        entryDevices = std::max(walker.maxDevice() + 1, 1);
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
