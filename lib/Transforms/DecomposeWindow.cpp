//===- DecomposeWindow.cpp - doppler-decompose's rule for windows ---------===//
//
// See DecomposeWindow.h: a conv or pool becomes a grid of the same op over
// the batch, whole channel groups and row tiles with halos.
//
//===----------------------------------------------------------------------===//

#include "DecomposeWindow.h"
#include "DecomposePartition.h"

#include "Doppler/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

#include <limits>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::decompose;

namespace {

/// What the rule needs of a conv or pool, in one place.
struct WindowShape {
  ConvOp conv; ///< null for a pool
  SmallVector<int64_t> input, weight, result;
  ::doppler::WindowGeometry geometry;
  /// Channel units the channels split into: the output channels of an
  /// ungrouped convolution, the groups of a grouped one, a pool's channels.
  int64_t units = 1;
  /// Output channels per unit; input channels per unit (0: every unit
  /// reads all input channels, an ungrouped convolution).
  int64_t outPerUnit = 1, inPerUnit = 1;

  int64_t rows() const { return result[2]; }
  int64_t extent(unsigned axis) const {
    return axis == 0 ? result[0] : axis == 1 ? units : rows();
  }
};

WindowShape describeWindow(Operation *op) {
  WindowShape shape;
  auto shapeOf = [](Value value) {
    return SmallVector<int64_t>(
        cast<RankedTensorType>(value.getType()).getShape());
  };
  shape.result = shapeOf(op->getResult(0));
  if (auto conv = dyn_cast<ConvOp>(op)) {
    shape.conv = conv;
    shape.input = shapeOf(conv.getInput());
    shape.weight = shapeOf(conv.getWeight());
    shape.geometry = conv.getGeometry();
    int64_t groups = conv.getGroups();
    if (groups == 1) {
      shape.units = shape.result[1];
      shape.inPerUnit = 0;
    } else {
      shape.units = groups;
      shape.outPerUnit = shape.result[1] / groups;
      shape.inPerUnit = shape.input[1] / groups;
    }
  } else {
    auto pool = cast<PoolOp>(op);
    shape.input = shapeOf(pool.getInput());
    shape.geometry = pool.getGeometry();
    shape.units = shape.input[1];
  }
  return shape;
}

/// The input rows [lo, hi) that output rows [a, b) read, unclipped.
std::pair<int64_t, int64_t> inputRows(const WindowShape &shape, int64_t a,
                                      int64_t b) {
  const ::doppler::WindowGeometry &g = shape.geometry;
  int64_t lo = a * g.strides[0] - g.padLow[0];
  int64_t hi = (b - 1) * g.strides[0] - g.padLow[0] +
               g.dilations[0] * (g.kernel[0] - 1) + 1;
  return {lo, hi};
}

/// One block: its ranges along the batch, channel units and output rows.
struct WindowBlock {
  int64_t n0, n1, u0, u1, a, b;
};

template <typename Visit>
void forEachBlock(const WindowShape &shape, const WindowParts &parts,
                  Visit visit) {
  for (int64_t i = 0; i < parts[0]; ++i)
    for (int64_t j = 0; j < parts[1]; ++j)
      for (int64_t k = 0; k < parts[2]; ++k)
        visit(WindowBlock{partStart(shape.result[0], parts[0], i),
                    partStart(shape.result[0], parts[0], i + 1),
                    partStart(shape.units, parts[1], j),
                    partStart(shape.units, parts[1], j + 1),
                    partStart(shape.rows(), parts[2], k),
                    partStart(shape.rows(), parts[2], k + 1)});
}

/// The input region [lo, hi) of a block, clipped to the input.
void inputRegion(const WindowShape &shape, const WindowBlock &block,
                 SmallVector<int64_t> &lo, SmallVector<int64_t> &hi) {
  lo.assign(shape.input.size(), 0);
  hi.assign(shape.input.begin(), shape.input.end());
  lo[0] = block.n0;
  hi[0] = block.n1;
  if (shape.inPerUnit > 0) {
    lo[1] = block.u0 * shape.inPerUnit;
    hi[1] = block.u1 * shape.inPerUnit;
  }
  auto [rowLo, rowHi] = inputRows(shape, block.a, block.b);
  lo[2] = std::max<int64_t>(rowLo, 0);
  hi[2] = std::min(rowHi, shape.input[2]);
}

/// Every row tile of a split into `rows` parts reads at least one input
/// row (a tile wholly in the padding would need an empty slice).
bool rowTilesRead(const WindowShape &shape, int64_t rows) {
  for (int64_t k = 0; k < rows; ++k) {
    auto [lo, hi] = inputRows(shape, partStart(shape.rows(), rows, k),
                              partStart(shape.rows(), rows, k + 1));
    if (std::min(hi, shape.input[2]) <= std::max<int64_t>(lo, 0))
      return false;
  }
  return true;
}

double product(ArrayRef<int64_t> extents) {
  double result = 1;
  for (int64_t extent : extents)
    result *= double(extent);
  return result;
}

/// Elements the blocks read, an input region that crosses a block of the
/// input's tiling counted twice (it needs an assemble, often a transfer).
double readCost(const WindowShape &shape, const WindowParts &parts,
                const std::optional<Tiling> &tiling, bool weights = true) {
  double cost = 0;
  SmallVector<int64_t> lo, hi, extents;
  forEachBlock(shape, parts, [&](const WindowBlock &block) {
    inputRegion(shape, block, lo, hi);
    extents.clear();
    bool crosses = false;
    for (size_t d = 0; d < lo.size(); ++d) {
      extents.push_back(hi[d] - lo[d]);
      if (tiling)
        for (int64_t cut : (*tiling)[d])
          crosses |= cut > lo[d] && cut < hi[d];
    }
    cost += product(extents) * (crosses ? 2 : 1);
    if (shape.conv && weights)
      cost += double(block.u1 - block.u0) * shape.outPerUnit *
              product(ArrayRef<int64_t>(shape.weight).drop_front());
  });
  return cost;
}

} // namespace

LogicalResult mlir::doppler::decompose::verifyWindowParts(Operation *op,
                                                          int64_t maxBlocks) {
  auto attr = op->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr);
  if (!attr)
    return success();
  WindowShape shape = describeWindow(op);
  static const char *names[] = {"the batch", "the channels", "the first "
                                                             "spatial dim"};
  if (attr.size() != 3)
    return op->emitOpError()
           << "'" << kPartsAttr << "' has " << attr.size()
           << " entries; a window op takes 3: the blocks along the batch, "
              "the channels and the first spatial dim of its result";
  int64_t blocks = 1;
  for (unsigned axis = 0; axis < 3; ++axis) {
    int64_t count = attr[axis], extent = shape.extent(axis);
    if (count > std::max<int64_t>(extent, 1))
      return op->emitOpError()
             << "'" << kPartsAttr << "' splits " << names[axis]
             << " into " << count << " parts, but it has " << extent
             << (axis == 1 && shape.conv && shape.conv.getGroups() > 1
                     ? " groups"
                     : "")
             << "; between 1 and " << std::max<int64_t>(extent, 1)
             << " are possible";
    blocks *= count;
  }
  if (blocks > maxBlocks)
    return op->emitOpError() << "'" << kPartsAttr << "' makes " << blocks
                             << " blocks; at most " << maxBlocks
                             << " are possible";
  if (!rowTilesRead(shape, attr[2]))
    return op->emitOpError()
           << "'" << kPartsAttr << "' splits the first spatial dim into "
           << attr[2] << " tiles, and some tile reads only padding";
  return success();
}

WindowParts mlir::doppler::decompose::chooseWindowParts(
    Operation *op, int64_t blocks, int64_t minPoints,
    const std::optional<Tiling> &input) {
  if (auto attr = op->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr))
    return {attr[0], attr[1], attr[2]};
  WindowShape shape = describeWindow(op);
  // Points as an einsum's iteration space: one per multiply-add (a pool:
  // per window element).
  double points = product(shape.result) * product(shape.geometry.kernel);
  if (shape.conv)
    points *= double(shape.weight[1]);
  WindowParts whole = {1, 1, 1};
  if (points < double(minPoints))
    return whole;
  double fit = product({shape.result[0], shape.units, shape.rows()});
  int64_t capacity = fit < double(blocks) ? int64_t(fit) : blocks;
  for (int64_t total = capacity; total > 1; --total) {
    WindowParts best = whole;
    double bestCost = std::numeric_limits<double>::infinity();
    forEachWindowParts(op, total, [&](const WindowParts &parts) {
      double cost = readCost(shape, parts, input);
      if (cost < bestCost) {
        bestCost = cost;
        best = parts;
      }
    });
    if (best != whole)
      return best;
  }
  return whole;
}

void mlir::doppler::decompose::forEachWindowParts(
    Operation *op, int64_t total,
    llvm::function_ref<void(const WindowParts &)> visit) {
  WindowShape shape = describeWindow(op);
  for (int64_t n = 1; n <= std::min(total, shape.result[0]); ++n) {
    if (total % n)
      continue;
    for (int64_t u = 1; u <= std::min(total / n, shape.units); ++u) {
      int64_t rows = total / n / u;
      if ((total / n) % u || rows > shape.rows() || !rowTilesRead(shape, rows))
        continue;
      visit({n, u, rows});
    }
  }
}

double mlir::doppler::decompose::windowReadElements(Operation *op,
                                                    const WindowParts &parts,
                                                    bool weights) {
  return readCost(describeWindow(op), parts, std::nullopt, weights);
}

Tiling mlir::doppler::decompose::windowResultTiling(Operation *op,
                                                    const WindowParts &parts) {
  WindowShape shape = describeWindow(op);
  Tiling cuts;
  for (int64_t extent : shape.result)
    cuts.push_back({0, extent});
  cuts[0] = cutPoints(shape.result[0], parts[0]);
  cuts[1].clear();
  for (int64_t k = 0; k <= parts[1]; ++k)
    cuts[1].push_back(partStart(shape.units, parts[1], k) * shape.outPerUnit);
  cuts[2] = cutPoints(shape.rows(), parts[2]);
  return cuts;
}

Tiling mlir::doppler::decompose::windowInputTiling(Operation *op,
                                                   const WindowParts &parts) {
  WindowShape shape = describeWindow(op);
  Tiling cuts;
  for (int64_t extent : shape.input)
    cuts.push_back({0, extent});
  cuts[0] = cutPoints(shape.input[0], parts[0]);
  if (shape.inPerUnit > 0) {
    cuts[1].clear();
    for (int64_t k = 0; k <= parts[1]; ++k)
      cuts[1].push_back(partStart(shape.units, parts[1], k) * shape.inPerUnit);
  }
  SmallVector<int64_t> rows = {0};
  for (int64_t k = 1; k < parts[2]; ++k) {
    int64_t start = inputRows(shape, partStart(shape.rows(), parts[2], k),
                              shape.rows()).first;
    rows.push_back(std::clamp<int64_t>(start, rows.back(), shape.input[2]));
  }
  rows.push_back(shape.input[2]);
  cuts[2] = rows;
  return cuts;
}

AssembleOp mlir::doppler::decompose::splitWindow(
    Operation *op, const WindowParts &parts, OpBuilder &builder,
    RegionFn region, llvm::function_ref<bool(StringRef)> isStale) {
  WindowShape shape = describeWindow(op);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = resultType.getElementType();
  size_t spatial = shape.geometry.spatialDims();
  SmallVector<Value> blocks;
  SmallVector<int64_t> lo, hi;
  forEachBlock(shape, parts, [&](const WindowBlock &block) {
    inputRegion(shape, block, lo, hi);
    SmallVector<Value> operands = {region(op->getOperand(0), lo, hi)};
    int64_t c0 = block.u0 * shape.outPerUnit, c1 = block.u1 * shape.outPerUnit;
    if (shape.conv) {
      SmallVector<int64_t> wLo(shape.weight.size(), 0), wHi(shape.weight);
      wLo[0] = c0;
      wHi[0] = c1;
      operands.push_back(region(shape.conv.getWeight(), wLo, wHi));
    }
    // The rows clipped off the input become the block's padding.
    auto [rowLo, rowHi] = inputRows(shape, block.a, block.b);
    SmallVector<int64_t> padding(shape.geometry.padLow.begin(),
                                 shape.geometry.padLow.end());
    padding.append(shape.geometry.padHigh.begin(),
                   shape.geometry.padHigh.end());
    padding[0] = std::max<int64_t>(0, -rowLo);
    padding[spatial] = std::max<int64_t>(0, rowHi - shape.input[2]);
    SmallVector<int64_t> blockShape(shape.result);
    blockShape[0] = block.n1 - block.n0;
    blockShape[1] = c1 - c0;
    blockShape[2] = block.b - block.a;

    Operation *clone = builder.clone(*op);
    clone->setOperands(operands);
    clone->getResult(0).setType(RankedTensorType::get(blockShape, element));
    if (auto conv = dyn_cast<ConvOp>(clone)) {
      conv.setPadding(padding);
      if (shape.inPerUnit > 0)
        conv.setGroupsAttr(builder.getI64IntegerAttr(block.u1 - block.u0));
    } else {
      cast<PoolOp>(clone).setPadding(padding);
    }
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (isStale(attr.getName().strref()))
        clone->removeAttr(attr.getName());
    blocks.push_back(clone->getResult(0));
  });
  SmallVector<int64_t> grid(resultType.getRank(), 1);
  grid[0] = parts[0];
  grid[1] = parts[1];
  grid[2] = parts[2];
  auto assemble =
      AssembleOp::create(builder, op->getLoc(), resultType, grid, blocks);
  if (Attribute device = op->getDiscardableAttr(kDeviceAttr))
    assemble->setAttr(kDeviceAttr, device);
  return assemble;
}
