//===- CostModel.cpp - Compute and transfer costs of IR ops ---------------===//

#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Analysis/PlacementGraph.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/ElementwiseWalk.h"
#include "Doppler/Support/JoinProgram.h"
#include "Doppler/Support/WindowWork.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <algorithm>
#include <array>
#include <climits>

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

using ::doppler::placement::KernelKind;

/// The GEMM a two-input mul/add einsum runs as: m the output's indices only
/// the first input has, n those only the second has, k the indices both
/// inputs have and the output lacks, `batch` those all three have; false
/// when the einsum has not two inputs.
bool gemmShapeOf(EinsumOp einsum, double &m, double &n, double &k,
                 double &batch) {
  ::doppler::EinsumSpec spec = einsum.getParsedSpec();
  if (spec.numInputs() != 2)
    return false;
  ::doppler::IndexSizes sizes = einsum.getIndexSizes();
  m = n = k = batch = 1;
  auto has = [](const std::string &term, char c) {
    return term.find(c) != std::string::npos;
  };
  const std::string &a = spec.inputs[0], &b = spec.inputs[1];
  for (char c : spec.output) {
    if (has(a, c) && !has(b, c))
      m *= double(sizes.sizeOf(c));
    else if (has(b, c) && !has(a, c))
      n *= double(sizes.sizeOf(c));
    else if (has(a, c) && has(b, c))
      batch *= double(sizes.sizeOf(c));
  }
  for (char c : a)
    if (has(b, c) && !has(spec.output, c))
      k *= double(sizes.sizeOf(c));
  return true;
}

/// The smaller output side, min(m, n), of the GEMM a two-input mul/add
/// einsum runs as (gemmShapeOf). 0 when the einsum is not such a
/// contraction, or when it is a matrix-vector product (a side of 1: the
/// runtime calls ?gemv, bound by memory, with no small-GEMM factor).
double gemmSizeOf(EinsumOp einsum) {
  double m, n, k, batch;
  if (!gemmShapeOf(einsum, m, n, k, batch))
    return 0;
  return std::min(m, n) > 1 ? std::min(m, n) : 0;
}

/// Output positions per channel of a [N, C, O1..Ok] window op's result.
double positionsPerChannel(Type resultType) {
  double positions = 1;
  auto shape = cast<RankedTensorType>(resultType).getShape();
  for (int64_t extent : shape.drop_front(2))
    positions *= double(extent);
  return positions;
}

/// The same for a convolution: for its im2col GEMM, the smaller of filters
/// per group and output positions per image; for a depthwise one, the
/// positions (its kernel loops channel by channel).
double gemmSizeOf(ConvOp conv, KernelKind kind) {
  double positions = positionsPerChannel(conv.getType());
  if (kind == KernelKind::Depthwise)
    return positions;
  auto result = cast<RankedTensorType>(conv.getType());
  double filters = double(result.getDimSize(1)) / double(conv.getGroups());
  double side = std::min(filters, positions);
  return side > 1 ? side : 0; // a matrix-vector product: no factor
}

/// The GEMM one group of a convolution runs as (runtime/lib/CpuWindow.cpp:
/// im2col, or the input as it lies for a 1x1 kernel): m filters per group,
/// n output positions per image, k input channels per group times the
/// kernel's taps; `groups` GEMMs per image.
struct ConvGemm {
  double m = 1, n = 1, k = 1;
};

ConvGemm convGemmOf(ConvOp conv) {
  auto result = cast<RankedTensorType>(conv.getType());
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  ConvGemm gemm;
  gemm.m = double(result.getDimSize(1)) / double(conv.getGroups());
  gemm.n = positionsPerChannel(conv.getType());
  gemm.k = double(weight.getDimSize(1));
  for (int64_t extent : weight.getShape().drop_front(2))
    gemm.k *= double(extent);
  return gemm;
}

/// What a fused task's walk costs beyond its joins, as the CPU kernel
/// plans it (buildSpace in runtime/lib/CpuFused.cpp): the output's
/// dimensions with extent-1 ones dropped and neighbours merged where every
/// operand walks them as one; the last merged dimension is the row. An
/// input neither laid out like the output nor a single value is copied,
/// filled or gathered into a buffer element by element when rows are
/// shorter than the kernel's chunk (kFusedChunk), or when it is strided
/// along the row: `gathered` counts those elements over the inputs.
struct FusedWalk {
  double rows = 1;
  double gathered = 0;
};

/// CpuFused.cpp's kChunk: elements per chunk of the walk.
constexpr double kFusedChunk = 512;

/// A dense operand's stride along `index` (0 where its term lacks it).
int64_t denseStride(const std::string &term, char index,
                    const ::doppler::IndexSizes &sizes) {
  size_t at = term.find(index);
  if (at == std::string::npos)
    return 0;
  int64_t stride = 1;
  for (size_t k = at + 1; k < term.size(); ++k)
    stride *= sizes.sizeOf(term[k]);
  return stride;
}

FusedWalk fusedWalkOf(FusedOp fused) {
  ::doppler::EinsumSpec spec = fused.getParsedSpec();
  ::doppler::IndexSizes sizes = fused.getIndexSizes();
  std::vector<const std::string *> terms = {&spec.output};
  for (const std::string &term : spec.inputs)
    terms.push_back(&term);
  auto strideOf = [&](size_t slot, char index) {
    return denseStride(*terms[slot], index, sizes);
  };
  std::vector<::doppler::WalkDim> dims =
      ::doppler::mergedWalk(spec.output, sizes, terms.size(), strideOf);
  FusedWalk walk;
  if (dims.empty()) // A single point.
    return walk;
  const double inner = double(dims.back().extent);
  for (size_t d = 0; d + 1 < dims.size(); ++d)
    walk.rows *= double(dims[d].extent);
  for (size_t slot = 1; slot < terms.size(); ++slot) {
    bool dense = true, constant = true;
    for (const ::doppler::WalkDim &dim : dims) {
      dense &= dim.strides[slot] == dim.strides[0];
      constant &= dim.strides[slot] == 0;
    }
    if (dense || constant)
      continue;
    int64_t rowStride = dims.back().strides[slot];
    if (inner < kFusedChunk || (rowStride != 0 && rowStride != 1))
      walk.gathered += inner * walk.rows;
  }
  return walk;
}

/// Rows of the loop nest the CPU runtime runs a non-GEMM einsum as
/// (buildLoopNest in runtime/lib/CpuLoopNest.cpp): every index of extent
/// above 1, ordered by the largest operand's strides (ties: the output),
/// outermost first, neighbours merged where every operand walks them as
/// one; the last is the row, one inner-loop call each.
double einsumRowsOf(EinsumOp einsum) {
  ::doppler::EinsumSpec spec = einsum.getParsedSpec();
  ::doppler::IndexSizes sizes = einsum.getIndexSizes();
  std::vector<const std::string *> terms = {&spec.output};
  for (const std::string &term : spec.inputs)
    terms.push_back(&term);
  struct Dim {
    int64_t extent;
    std::array<int64_t, 3> strides;
  };
  std::vector<Dim> dims;
  for (size_t i = 0; i < sizes.indices.size(); ++i) {
    if (sizes.sizes[i] <= 1)
      continue;
    Dim dim{sizes.sizes[i], {0, 0, 0}};
    for (size_t slot = 0; slot < terms.size() && slot < 3; ++slot)
      dim.strides[slot] =
          denseStride(*terms[slot], sizes.indices[i], sizes);
    if (terms.size() == 2) // a unary join's dummy second input
      dim.strides[2] = dim.strides[1];
    dims.push_back(dim);
  }
  size_t primary = 0;
  double largest = -1;
  for (size_t slot = 0; slot < terms.size() && slot < 3; ++slot) {
    double elements = 1;
    for (char index : *terms[slot])
      elements *= double(sizes.sizeOf(index));
    if (elements > largest) {
      largest = elements;
      primary = slot;
    }
  }
  auto key = [](int64_t stride) { return stride == 0 ? INT64_MAX : stride; };
  std::stable_sort(dims.begin(), dims.end(), [&](const Dim &x, const Dim &y) {
    for (size_t n = 0; n < 3; ++n) {
      size_t slot = (primary + n) % 3;
      if (key(x.strides[slot]) != key(y.strides[slot]))
        return key(x.strides[slot]) > key(y.strides[slot]);
    }
    return false;
  });
  double rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) {
    bool merges = true;
    for (size_t slot = 0; slot < 3; ++slot)
      merges &= dims[d].strides[slot] ==
                dims[d + 1].strides[slot] * dims[d + 1].extent;
    if (!merges)
      rows *= double(dims[d].extent);
    else
      dims[d + 1].extent *= dims[d].extent;
  }
  return rows;
}

/// What a slice or assemble copies as the CPU runtime does (copyBox in
/// runtime/lib/CpuKernels.cpp): per box (a slice's block, each block of an
/// assemble) the box's dimensions with extent-1 ones dropped and
/// neighbours merged where both sides are contiguous across them; one
/// memcpy per row of the last.
struct CopyWalk {
  double boxes = 0;
  double rows = 0;
};

/// Adds one box of `extents` copied between dense layouts of `to` and
/// `from` to `walk`.
void addCopyBox(ArrayRef<int64_t> extents, ArrayRef<int64_t> to,
                ArrayRef<int64_t> from, CopyWalk &walk) {
  auto dense = [](ArrayRef<int64_t> shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;)
      strides[d - 1] = strides[d] * shape[d];
    return strides;
  };
  std::vector<int64_t> dst = dense(to), src = dense(from);
  struct Dim {
    int64_t extent, dst, src;
  };
  std::vector<Dim> dims;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] == 1)
      continue;
    Dim dim{extents[d], dst[d], src[d]};
    if (!dims.empty() && dims.back().dst == dim.dst * dim.extent &&
        dims.back().src == dim.src * dim.extent) {
      dims.back() = {dims.back().extent * dim.extent, dim.dst, dim.src};
      continue;
    }
    dims.push_back(dim);
  }
  double rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d)
    rows *= double(dims[d].extent);
  walk.boxes += 1;
  walk.rows += rows;
}

/// The copy walk of a slice or an assemble; none (no boxes) for other ops
/// and shapes that are not static.
CopyWalk copyWalkOf(Operation &op) {
  CopyWalk walk;
  auto shapeOf = [](Value value) -> std::optional<ArrayRef<int64_t>> {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    return type.getShape();
  };
  if (auto slice = dyn_cast<SliceOp>(op)) {
    auto in = shapeOf(slice.getInput()), out = shapeOf(slice.getResult());
    if (in && out && in->size() == out->size())
      addCopyBox(*out, *out, *in, walk);
  } else if (auto assemble = dyn_cast<AssembleOp>(op)) {
    auto out = shapeOf(assemble.getResult());
    for (Value block : assemble.getBlocks()) {
      auto shape = shapeOf(block);
      if (!out || !shape || shape->size() != out->size())
        return CopyWalk{};
      addCopyBox(*shape, *out, *shape, walk);
    }
  }
  return walk;
}

/// Whether the CPU runtime runs `op` as a view of its input's buffer
/// rather than a copy (runtime/lib/ExecutorViews.cpp): a reshape (when its
/// input is on the same device and no memory limit or offload is planned).
/// A slice that is one contiguous run of its input is a view too, but is
/// still priced by its bytes: priced as a view, the placer split ResNet-18's
/// convolutions over two devices more (predicted 3.1-3.2 ms at D = 2
/// against 4.9), and their hops, which wait for a core on this 2-core host
/// (HF ResNet-64: 73-115 us against 35-58 predicted), made it run 1.4-1.7x
/// its prediction; slices as views wait for the hops to be modelled.
bool runsAsView(Operation &op) { return isa<ReshapeOp>(op); }

/// The kind of task `op` runs as, for the device's per-kind figures; none
/// for an elementwise or reducing einsum (launch_overhead and the join
/// rates price those) and for ops that are not tasks.
std::optional<KernelKind> kernelKindOf(Operation &op) {
  if (auto einsum = dyn_cast<EinsumOp>(op))
    return isGemm(einsum) ? std::optional(KernelKind::Contraction)
                          : std::nullopt;
  if (isa<FusedOp>(op))
    return KernelKind::Fused;
  if (auto conv = dyn_cast<ConvOp>(op)) {
    // One input channel per group runs the depthwise kernel (as the CPU
    // runtime chooses it: runtime/lib/CpuWindow.cpp).
    auto weight = cast<RankedTensorType>(conv.getWeight().getType());
    return weight.getDimSize(1) == 1 ? KernelKind::Depthwise
                                     : KernelKind::Conv;
  }
  if (isa<PoolOp>(op))
    return KernelKind::Pool;
  if (isa<SliceOp, AssembleOp, ReshapeOp, FillOp>(op))
    return KernelKind::Copy;
  return std::nullopt;
}

/// An einsum that is not a mul/add contraction: its joins' rates or the
/// roofline, the `elementwise` kind's overhead where the device gives one
/// (else launch_overhead) and its loop nest's rows where it gives a
/// row_time (calibrated hosts do).
double elementwiseCost(EinsumOp einsum, const SystemDescription &system,
                       double flops, double bytes) {
  const ::doppler::placement::KernelCost &loopCost =
      system.device(0).kernels[static_cast<unsigned>(KernelKind::Elementwise)];
  double walk =
      loopCost.rowTime > 0 ? loopCost.walkSeconds(einsumRowsOf(einsum), 0) : 0;
  return system.computeCost(
             0, flops, bytes, elementTypeName(einsum.getOperation()),
             {toSupport(einsum.getJoin())},
             static_cast<double>(einsum.getIndexSizes().iterationSpace()),
             KernelKind::Elementwise) +
         walk * ::doppler::placement::kCostUnitsPerSecond;
}

/// A copy's cost where the device's copy entry prices it beyond the
/// roofline (none: the caller's roofline and overhead apply). A view moves
/// no bytes: the copy's fixed time alone, or launch_overhead where the
/// entry gives a row_time (its overhead is then a real copy's, as
/// doppler-calibrate times slices; a view runs no kernel, as a one-element
/// einsum's task). A slice or assemble copies box by box, a row at a time:
/// each box beyond the first pays the overhead again, each row beyond a
/// box's first the row time.
std::optional<double> copyCost(Operation &op, const SystemDescription &system,
                               double flops, double bytes) {
  const ::doppler::placement::KernelCost &cost =
      system.device(0).kernels[static_cast<unsigned>(KernelKind::Copy)];
  if (!cost.hasOverhead())
    return std::nullopt;
  if (runsAsView(op))
    return cost.rowTime > 0
               ? system.computeCost(0, 0, 0, elementTypeName(&op))
               : system.computeCost(0, 0, 0, elementTypeName(&op),
                                    KernelKind::Copy);
  CopyWalk walk = copyWalkOf(op);
  if (cost.rowTime <= 0 || walk.boxes <= 0)
    return std::nullopt;
  return system.computeCost(0, flops, bytes, elementTypeName(&op),
                            KernelKind::Copy) +
         ((walk.boxes - 1) * cost.overhead +
          (walk.rows - walk.boxes) * cost.rowTime) *
             ::doppler::placement::kCostUnitsPerSecond;
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
  if (auto conv = dyn_cast<ConvOp>(op);
      conv && kernelKindOf(op) == KernelKind::Depthwise &&
      system.device(0)
          .kernels[static_cast<unsigned>(KernelKind::Depthwise)]
          .hasFlops()) {
    // Priced by the work its kernel does (WindowWork.h), as
    // doppler-calibrate measures the depthwise rate; the presets, which
    // give no such rate, keep the defined FLOPs.
    auto shapeOf = [](Value value) {
      auto shape = cast<RankedTensorType>(value.getType()).getShape();
      return std::vector<int64_t>(shape.begin(), shape.end());
    };
    flops = 2 * ::doppler::depthwiseKernelMultiplyAdds(
                    shapeOf(conv.getInput()), conv.getGeometry(),
                    shapeOf(conv.getResult()));
  }
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
    // Its walk's rows and gathers come on top (none unless the device's
    // fused entry gives gather_time or row_time: calibrated hosts do).
    FusedWalk walk = fusedWalkOf(fused);
    const ::doppler::placement::KernelCost &fusedCost =
        system.device(0).kernels[static_cast<unsigned>(KernelKind::Fused)];
    return system.computeCost(
               0, flops, bytes, elementTypeName(&op), joins,
               static_cast<double>(fused.getIndexSizes().iterationSpace()),
               KernelKind::Fused) +
           fusedCost.walkSeconds(walk.rows, walk.gathered) *
               ::doppler::placement::kCostUnitsPerSecond;
  }
  if (einsum && !isGemm(einsum))
    return elementwiseCost(einsum, system, flops, bytes);
  if (std::optional<KernelKind> kind = kernelKindOf(op)) {
    // Views and copies' walks where the device's kernels table prices them
    // (a calibrated host's; the presets price every copy by its bytes).
    if (*kind == KernelKind::Copy)
      if (std::optional<double> cost = copyCost(op, system, flops, bytes))
        return *cost;
    // A contraction or convolution on a calibrated rate grid
    // (KernelCost::grid) runs at its GEMM shape's rate (a batched one, its
    // batch of GEMMs of that shape); a matrix-vector product (a side of 1)
    // keeps the stream of its weights below.
    const ::doppler::placement::DeviceDescription &device = system.device(0);
    const ::doppler::placement::KernelCost &kindCost =
        device.kernels[static_cast<unsigned>(*kind)];
    if (!kindCost.grid.empty()) {
      ConvGemm gemm;
      double batch = 1;
      bool shaped = false;
      if (auto conv = dyn_cast<ConvOp>(op); conv && *kind == KernelKind::Conv) {
        gemm = convGemmOf(conv);
        shaped = true;
      } else if (einsum) {
        shaped = gemmShapeOf(einsum, gemm.m, gemm.n, gemm.k, batch);
      }
      if (shaped && std::min(gemm.m, gemm.n) > 1) {
        double seconds =
            std::max(flops / kindCost.grid.rateAt(gemm.m, gemm.n, gemm.k),
                     bytes / device.memoryBandwidth) +
            device.overheadFor(*kind);
        return seconds * ::doppler::placement::kCostUnitsPerSecond;
      }
    }
    // The task's size for the kind's half-performance length.
    double gemmSize = 0;
    if (einsum)
      gemmSize = gemmSizeOf(einsum);
    else if (auto conv = dyn_cast<ConvOp>(op))
      gemmSize = gemmSizeOf(conv, *kind);
    else if (auto pool = dyn_cast<PoolOp>(op))
      gemmSize = positionsPerChannel(pool.getType());
    return system.computeCost(0, flops, bytes, elementTypeName(&op), *kind,
                              gemmSize);
  }
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
