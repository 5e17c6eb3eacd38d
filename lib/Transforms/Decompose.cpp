//===- Decompose.cpp - EinDecomp-style decomposition of einsums -----------===//
//
// Splits every doppler.einsum into blocks of its iteration space (one block
// einsum per block), aggregates partial blocks where a contracted index is
// split, and glues differently partitioned producers and consumers together
// with doppler.slice / doppler.assemble. See the pass description in
// Passes.td for the partitioning heuristic. A doppler.fused op is
// decomposed exactly like an elementwise einsum (its spec contracts
// nothing): every "einsum" below means either op.
//
// Decomposition is one forward sweep in program order. When an einsum is
// decomposed, its result is replaced by an assemble of its output blocks;
// consumers that are einsums look through assembles and slices (getRegion)
// to take exactly the blocks they need, so the whole-tensor assembles only
// survive where a non-einsum user (a return, another dialect's op) needs
// the whole tensor. A final sweep erases the glue that became dead.
//
// A doppler.reshape, met in the same sweep, becomes one reshape per block of
// its input where those blocks stay contiguous runs of the result
// (DecomposeReshape.cpp), with an assemble of the result's blocks; otherwise
// it stays whole on its gathered input, and its consumers slice it. A
// doppler.conv or doppler.pool becomes a grid of the same op over the batch,
// channel groups and row tiles with halos (DecomposeWindow.cpp).
//
//===----------------------------------------------------------------------===//

#include "DecomposeAuto.h"
#include "DecomposePartition.h"
#include "DecomposeReshape.h"
#include "DecomposeWindow.h"

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERDECOMPOSEPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::decompose;

namespace {

constexpr int64_t kMaxParts = 4096;
/// How deep getRegion looks through chains of slices and assembles; beyond
/// that a value is sliced as it is (still correct, just more copying).
constexpr unsigned kMaxLookThrough = 8;
/// tilingOf branches into every block of a grid line: keep it shallow.
constexpr unsigned kMaxTilingDepth = 3;

/// Discardable attributes that no longer hold for a block of an op: costs
/// and schedule times must be re-annotated, and the parts are consumed.
bool isStaleAfterSplit(StringRef name) {
  return name == kPartsAttr || name == kComputeCostAttr ||
         name == kTransferCostAttr || name == kStartAttr || name == kEndAttr ||
         name == kMakespanAttr;
}

//===----------------------------------------------------------------------===//
// Partitions
//===----------------------------------------------------------------------===//

void mergeCuts(SmallVector<int64_t> &into, ArrayRef<int64_t> more) {
  into.append(more.begin(), more.end());
  llvm::sort(into);
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

/// Cut points along every dimension of an assemble's grid, read off the
/// first grid line of each dimension (the verifier makes them agree).
Tiling gridCuts(AssembleOp assemble) {
  ArrayRef<int64_t> grid = assemble.getGrid();
  int64_t rank = grid.size();
  Tiling cuts(rank);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    cuts[d].push_back(0);
    for (int64_t c = 0; c < grid[d]; ++c) {
      auto type =
          cast<RankedTensorType>(assemble.getBlocks()[c * stride].getType());
      cuts[d].push_back(cuts[d].back() + type.getDimSize(d));
    }
    stride *= grid[d];
  }
  return cuts;
}

/// How a value is already partitioned, when that is known: an assemble's
/// grid (refined by its blocks' own tiling along their grid line), a slice
/// of a known tiling, or a single block for an einsum result. Arguments and
/// other values have no known tiling: they cost no re-partitioning.
std::optional<Tiling> tilingOf(Value value, unsigned depth = 0) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (depth < kMaxTilingDepth) {
    if (auto assemble = value.getDefiningOp<AssembleOp>()) {
      Tiling cuts = gridCuts(assemble);
      ArrayRef<int64_t> grid = assemble.getGrid();
      int64_t stride = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        for (int64_t c = 0; c < grid[d]; ++c) {
          std::optional<Tiling> inner =
              tilingOf(assemble.getBlocks()[c * stride], depth + 1);
          if (!inner)
            continue;
          SmallVector<int64_t> shifted;
          for (int64_t cut : (*inner)[d])
            shifted.push_back(cut + cuts[d][c]);
          mergeCuts(cuts[d], shifted);
        }
        stride *= grid[d];
      }
      return cuts;
    }
    if (auto slice = value.getDefiningOp<SliceOp>()) {
      std::optional<Tiling> source = tilingOf(slice.getInput(), depth + 1);
      if (!source)
        return std::nullopt;
      Tiling cuts(rank);
      for (int64_t d = 0; d < rank; ++d) {
        int64_t lo = slice.getOffsets()[d], size = type.getDimSize(d);
        cuts[d] = {0, size};
        SmallVector<int64_t> inside;
        for (int64_t cut : (*source)[d])
          if (cut > lo && cut < lo + size)
            inside.push_back(cut - lo);
        mergeCuts(cuts[d], inside);
      }
      return cuts;
    }
  }
  if (!isa_and_present<EinsumOp, FusedOp, ReshapeOp, ConvOp, PoolOp>(
          value.getDefiningOp()))
    return std::nullopt;
  Tiling whole(rank);
  for (int64_t d = 0; d < rank; ++d)
    whole[d] = {0, type.getDimSize(d)};
  return whole;
}

//===----------------------------------------------------------------------===//
// The ops decomposed: einsums and fused elementwise ops
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// The binary join that combines two partial results of an aggregation.
JoinKind aggregationJoin(AggKind kind) {
  switch (kind) {
  case AggKind::Add:
    return JoinKind::Add;
  case AggKind::Mul:
    return JoinKind::Mul;
  case AggKind::Max:
    return JoinKind::Max;
  case AggKind::Min:
    return JoinKind::Min;
  }
  return JoinKind::Add;
}

struct Counters {
  int64_t decomposed = 0, keptWhole = 0, blockEinsums = 0,
          aggregationEinsums = 0, glueOps = 0, reshapesSplit = 0,
          reshapesWhole = 0, windowsSplit = 0, windowsWhole = 0;
};

class Decomposer {
public:
  Decomposer(MLIRContext *context, int64_t blocks, int64_t minPoints)
      : builder(context), blocks(blocks), minPoints(minPoints) {}

  void run(ArrayRef<Operation *> ops);
  const Counters &getCounters() const { return counters; }

private:
  SmallVector<int64_t> partsFor(Operation *op, const EinsumShape &shape);
  void decompose(Operation *op, const EinsumShape &shape,
                 ArrayRef<int64_t> parts);
  void decomposeReshape(ReshapeOp op);
  void decomposeWindow(Operation *op);
  bool replaceBySplit(Operation *op, AssembleOp whole);
  Value getRegion(Value value, ArrayRef<int64_t> lo, ArrayRef<int64_t> hi,
                  Location loc, unsigned depth = 0);
  Value aggregate(Operation *op, SmallVector<Value> partials,
                  ArrayRef<NamedAttribute> attrs);
  void noteGlue(Operation *op) {
    created.insert(op);
    worklist.insert(op);
  }
  void eraseDeadGlue();

  OpBuilder builder;
  int64_t blocks, minPoints;
  Counters counters;
  /// Regions already taken, per (value, insertion block, lo, hi): consumers
  /// in the same block share slices and assembles.
  std::map<std::vector<intptr_t>, Value> regionCache;
  /// Glue this pass created, and glue that may have become dead.
  llvm::DenseSet<Operation *> created;
  llvm::SetVector<Operation *> worklist;
};

SmallVector<int64_t> Decomposer::partsFor(Operation *op,
                                          const EinsumShape &shape) {
  if (auto explicitParts = op->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr))
    return SmallVector<int64_t>(explicitParts.asArrayRef());
  double points = 1;
  for (int64_t extent : shape.extents)
    points *= static_cast<double>(extent);
  if (points < static_cast<double>(minPoints))
    return SmallVector<int64_t>(shape.indices.size(), 1);
  return choosePartition(shape, blocks);
}

void Decomposer::run(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      decomposeReshape(reshape);
      continue;
    }
    if (isa<ConvOp, PoolOp>(op)) {
      decomposeWindow(op);
      continue;
    }
    EinsumShape shape = describeEinsum(op, [](Value v) { return tilingOf(v); });
    SmallVector<int64_t> parts = partsFor(op, shape);
    if (llvm::all_of(parts, [](int64_t p) { return p == 1; })) {
      op->removeAttr(kPartsAttr);
      ++counters.keptWhole;
      continue;
    }
    decompose(op, shape, parts);
    ++counters.decomposed;
  }
  eraseDeadGlue();
}

Value Decomposer::getRegion(Value value, ArrayRef<int64_t> lo,
                            ArrayRef<int64_t> hi, Location loc,
                            unsigned depth) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  bool whole = true, empty = false;
  for (int64_t d = 0; d < rank; ++d) {
    whole &= lo[d] == 0 && hi[d] == type.getDimSize(d);
    empty |= lo[d] == hi[d];
  }
  // A whole value is itself, unless it is a slice: then the region of its
  // source (often one block, with no op at all) replaces it.
  if (whole &&
      (empty || depth >= kMaxLookThrough || !value.getDefiningOp<SliceOp>()))
    return value;

  std::vector<intptr_t> key;
  key.reserve(2 + 2 * rank);
  key.push_back(reinterpret_cast<intptr_t>(value.getAsOpaquePointer()));
  key.push_back(reinterpret_cast<intptr_t>(builder.getInsertionBlock()));
  key.insert(key.end(), lo.begin(), lo.end());
  key.insert(key.end(), hi.begin(), hi.end());
  auto cached = regionCache.find(key);
  if (cached != regionCache.end())
    return cached->second;

  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(hi[d] - lo[d]);
  auto regionType = RankedTensorType::get(shape, type.getElementType());

  Value result;
  if (!empty && depth < kMaxLookThrough) {
    if (auto slice = value.getDefiningOp<SliceOp>()) {
      // A region of a slice is a region of its input.
      SmallVector<int64_t> srcLo(lo), srcHi(hi);
      for (int64_t d = 0; d < rank; ++d) {
        srcLo[d] += slice.getOffsets()[d];
        srcHi[d] += slice.getOffsets()[d];
      }
      result = getRegion(slice.getInput(), srcLo, srcHi, loc, depth + 1);
    } else if (auto assemble = value.getDefiningOp<AssembleOp>()) {
      // The region is the assembly of its intersections with the blocks it
      // overlaps; exactly one block when the grids match.
      Tiling cuts = gridCuts(assemble);
      ArrayRef<int64_t> grid = assemble.getGrid();
      SmallVector<int64_t> first(rank), count(rank), strides(rank, 1);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (d + 1 < rank)
          strides[d] = strides[d + 1] * grid[d + 1];
        int64_t a = 0;
        while (cuts[d][a + 1] <= lo[d])
          ++a;
        int64_t b = a;
        while (b + 1 < grid[d] && cuts[d][b + 1] < hi[d])
          ++b;
        first[d] = a;
        count[d] = b - a + 1;
      }
      SmallVector<Value> pieces;
      int64_t numPieces = 1;
      for (int64_t c : count)
        numPieces *= c;
      for (int64_t p = 0; p < numPieces; ++p) {
        int64_t rest = p, index = 0;
        SmallVector<int64_t> pieceLo(rank), pieceHi(rank);
        for (int64_t d = rank - 1; d >= 0; --d) {
          int64_t c = first[d] + rest % count[d];
          rest /= count[d];
          index += c * strides[d];
          pieceLo[d] = std::max(lo[d], cuts[d][c]) - cuts[d][c];
          pieceHi[d] = std::min(hi[d], cuts[d][c + 1]) - cuts[d][c];
        }
        pieces.push_back(getRegion(assemble.getBlocks()[index], pieceLo,
                                   pieceHi, loc, depth + 1));
      }
      if (pieces.size() == 1) {
        result = pieces.front();
      } else {
        auto glue = AssembleOp::create(builder, loc, regionType, count, pieces);
        noteGlue(glue);
        result = glue;
      }
    }
  }
  if (!result) {
    auto slice = SliceOp::create(builder, loc, regionType, value, lo);
    noteGlue(slice);
    result = slice;
  }
  regionCache.emplace(std::move(key), result);
  return result;
}

/// Combines partial blocks pairwise, as a balanced tree of binary einsums
/// whose join is the aggregation. Only einsums that contract have more
/// than one partial block.
Value Decomposer::aggregate(Operation *op, SmallVector<Value> partials,
                            ArrayRef<NamedAttribute> attrs) {
  if (partials.size() == 1)
    return partials.front();
  auto einsum = cast<EinsumOp>(op);
  std::string term = einsum.getParsedSpec().output;
  std::string spec = term + "," + term + "->" + term;
  JoinKind join = aggregationJoin(*einsum.getAggregation());
  while (partials.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < partials.size(); i += 2) {
      auto sum = EinsumOp::create(builder, op->getLoc(), partials[i].getType(),
                                  spec, join, /*aggregation=*/nullptr,
                                  /*scalar=*/nullptr,
                                  ValueRange{partials[i], partials[i + 1]});
      for (NamedAttribute attr : attrs)
        sum->setAttr(attr.getName(), attr.getValue());
      ++counters.aggregationEinsums;
      next.push_back(sum);
    }
    if (partials.size() % 2)
      next.push_back(partials.back());
    partials = std::move(next);
  }
  return partials.front();
}

void Decomposer::decompose(Operation *op, const EinsumShape &shape,
                           ArrayRef<int64_t> parts) {
  builder.setInsertionPoint(op);
  Location loc = op->getLoc();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());

  SmallVector<NamedAttribute> kept;
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (!isStaleAfterSplit(attr.getName().strref()))
      kept.push_back(attr);
  Attribute device =
      op->getDiscardableAttr(kDeviceAttr);

  SmallVector<SmallVector<int64_t>> cuts;
  for (auto [extent, count] : llvm::zip_equal(shape.extents, parts))
    cuts.push_back(cutPoints(extent, count));

  // Output blocks in row-major order of the output grid; for each, the
  // partial blocks over the contracted indices, then their aggregation.
  SmallVector<int64_t> outGrid;
  int64_t numOut = 1, numPartials = 1;
  for (unsigned i : shape.outputDims) {
    outGrid.push_back(parts[i]);
    numOut *= parts[i];
  }
  for (unsigned i : shape.contractedDims)
    numPartials *= parts[i];

  SmallVector<int64_t> coord(shape.indices.size(), 0);
  SmallVector<Value> outBlocks;
  for (int64_t o = 0; o < numOut; ++o) {
    int64_t rest = o;
    for (int64_t d = shape.outputDims.size() - 1; d >= 0; --d) {
      coord[shape.outputDims[d]] = rest % parts[shape.outputDims[d]];
      rest /= parts[shape.outputDims[d]];
    }
    SmallVector<Value> partials;
    for (int64_t c = 0; c < numPartials; ++c) {
      rest = c;
      for (int64_t d = shape.contractedDims.size() - 1; d >= 0; --d) {
        coord[shape.contractedDims[d]] = rest % parts[shape.contractedDims[d]];
        rest /= parts[shape.contractedDims[d]];
      }
      SmallVector<Value> operands;
      for (auto [t, dims] : llvm::enumerate(shape.inputDims)) {
        SmallVector<int64_t> lo, hi;
        for (unsigned i : dims) {
          lo.push_back(cuts[i][coord[i]]);
          hi.push_back(cuts[i][coord[i] + 1]);
        }
        operands.push_back(getRegion(inputsOf(op)[t], lo, hi, loc));
      }
      SmallVector<int64_t> blockShape;
      for (unsigned i : shape.outputDims)
        blockShape.push_back(cuts[i][coord[i] + 1] - cuts[i][coord[i]]);
      // A clone keeps the spec, join (or join program), scalar,
      // aggregation and the discardable attributes that still hold.
      Operation *block = builder.clone(*op);
      block->setOperands(operands);
      block->getResult(0).setType(
          RankedTensorType::get(blockShape, resultType.getElementType()));
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (isStaleAfterSplit(attr.getName().strref()))
          block->removeAttr(attr.getName());
      ++counters.blockEinsums;
      partials.push_back(block->getResult(0));
    }
    outBlocks.push_back(aggregate(op, std::move(partials), kept));
  }

  Value whole;
  if (outBlocks.size() == 1) {
    whole = outBlocks[0];
  } else {
    auto assemble =
        AssembleOp::create(builder, loc, resultType, outGrid, outBlocks);
    if (device)
      assemble->setAttr(kDeviceAttr, device);
    noteGlue(assemble);
    whole = assemble;
  }
  // Glue that fed the op may now be dead, and glue that used its result
  // may become dead once its own users are decomposed.
  for (Value input : inputsOf(op))
    if (Operation *def = input.getDefiningOp();
        isa_and_present<SliceOp, AssembleOp>(def))
      worklist.insert(def);
  for (Operation *user : op->getUsers())
    if (isa<SliceOp, AssembleOp>(user))
      worklist.insert(user);
  op->getResult(0).replaceAllUsesWith(whole);
  op->erase();
}

void Decomposer::decomposeReshape(ReshapeOp op) {
  std::optional<Tiling> cuts = tilingOf(op.getInput());
  builder.setInsertionPoint(op);
  auto region = [&](Value value, ArrayRef<int64_t> lo, ArrayRef<int64_t> hi) {
    return getRegion(value, lo, hi, op.getLoc());
  };
  AssembleOp whole = cuts ? decompose::splitReshape(op, *cuts, builder, region,
                                                    isStaleAfterSplit, kMaxParts)
                          : AssembleOp();
  ++(replaceBySplit(op, whole) ? counters.reshapesSplit
                               : counters.reshapesWhole);
}

void Decomposer::decomposeWindow(Operation *op) {
  decompose::WindowParts parts = decompose::chooseWindowParts(
      op, blocks, minPoints, tilingOf(op->getOperand(0)));
  op->removeAttr(kPartsAttr);
  AssembleOp whole;
  if (parts != decompose::WindowParts{1, 1, 1}) {
    builder.setInsertionPoint(op);
    auto region = [&](Value value, ArrayRef<int64_t> lo, ArrayRef<int64_t> hi) {
      return getRegion(value, lo, hi, op->getLoc());
    };
    whole = decompose::splitWindow(op, parts, builder, region,
                                   isStaleAfterSplit);
  }
  ++(replaceBySplit(op, whole) ? counters.windowsSplit
                               : counters.windowsWhole);
}

/// Replaces `op` by the assemble of its blocks, when there is one (else
/// returns false and leaves `op`); glue that fed or read `op` may now be
/// dead.
bool Decomposer::replaceBySplit(Operation *op, AssembleOp whole) {
  if (!whole)
    return false;
  noteGlue(whole);
  SmallVector<Operation *> neighbours(op->getUsers());
  for (Value operand : op->getOperands())
    neighbours.push_back(operand.getDefiningOp());
  for (Operation *glue : neighbours)
    if (isa_and_present<SliceOp, AssembleOp>(glue))
      worklist.insert(glue);
  op->getResult(0).replaceAllUsesWith(whole.getResult());
  op->erase();
  return true;
}

void Decomposer::eraseDeadGlue() {
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty() ||
        !isa<SliceOp, AssembleOp>(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (isa<SliceOp, AssembleOp>(def) && !erased.contains(def))
          worklist.insert(def);
    if (created.contains(op))
      created.erase(op);
    erased.insert(op);
    op->erase();
  }
  counters.glueOps = created.size();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Checks what the rewrite relies on, before anything changes. The op's
/// verifier already guarantees static shapes, and the dialect's attribute
/// verifier that `doppler.parts` is an array of counts >= 1; what is left is
/// how the counts fit this einsum.
LogicalResult verifyInput(Operation *op) {
  auto parts = op->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr);
  if (!parts)
    return success();
  ::doppler::IndexSizes sizes = indexSizesOf(op);
  if (parts.size() != static_cast<int64_t>(sizes.indices.size()))
    return op->emitOpError()
           << "'" << kPartsAttr << "' has " << parts.size()
           << " entries but spec '" << specTextOf(op) << "' has "
           << sizes.indices.size() << " indices ('" << sizes.indices
           << "'); give one partition count per index, in that order";
  for (auto [i, count] : llvm::enumerate(parts.asArrayRef())) {
    int64_t extent = sizes.sizes[i];
    if (count > std::max<int64_t>(extent, 1))
      return op->emitOpError()
             << "'" << kPartsAttr << "' splits index '" << sizes.indices[i]
             << "' of extent " << extent << " into " << count
             << " parts; between 1 and " << std::max<int64_t>(extent, 1)
             << " are possible";
  }
  // Each count fits its extent, but their product is the number of blocks
  // the rewrite creates: the same cap as the pass's 'parts' option.
  int64_t blocks = 1;
  for (int64_t count : parts.asArrayRef()) {
    if (count > kMaxParts / blocks)
      return op->emitOpError()
             << "'" << kPartsAttr << "' [" << parts.asArrayRef()
             << "] makes more than " << kMaxParts
             << " blocks (the product of its entries); at most " << kMaxParts
             << " blocks per einsum are possible";
    blocks *= count;
  }
  return success();
}

class DecomposePass
    : public mlir::doppler::impl::DopplerDecomposePassBase<DecomposePass> {
public:
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    std::string text = parts.getValue();
    autoParts = text == "auto";
    if (autoParts) {
      std::string error;
      autoSystem = ::doppler::placement::SystemDescription::load(system, &error);
      if (!autoSystem)
        return emitError(UnknownLoc::get(context))
               << "doppler-decompose: system '" << system.getValue()
               << "': " << error;
      if (devices < 0 || devices > kMaxParts)
        return emitError(UnknownLoc::get(context))
               << "doppler-decompose: option 'devices' must be between 0 and "
               << kMaxParts << ", got " << devices.getValue();
      blockCount = devices ? int64_t(devices) : autoSystem->numDevices();
      if (throughputWeight > 1 || std::isnan(double(throughputWeight)))
        return emitError(UnknownLoc::get(context))
               << "doppler-decompose: option 'throughput-weight' must be in "
                  "[0, 1] (or negative: computed), got "
               << throughputWeight.getValue();
    } else if (StringRef(text).getAsInteger(10, blockCount) || blockCount < 1 ||
               blockCount > kMaxParts) {
      return emitError(UnknownLoc::get(context))
             << "doppler-decompose: option 'parts' must be 'auto' or between "
                "1 and "
             << kMaxParts << ", got " << text;
    }
    if (minPoints < 0)
      return emitError(UnknownLoc::get(context))
             << "doppler-decompose: option 'min-points' must be "
                "non-negative, got "
             << minPoints.getValue();
    return success();
  }

  void runOnOperation() override {

    // Program order: producers come before their consumers, so each einsum
    // (and reshape) sees its producers' partitions.
    SmallVector<Operation *> einsums;
    bool valid = true;
    SmallVector<Operation *> program; // every op, for parts=auto
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      program.push_back(op);
      if (isDecomposable(op)) {
        valid &= succeeded(verifyInput(op));
        einsums.push_back(op);
      } else if (isa<ReshapeOp>(op)) {
        if (op->hasAttr(kPartsAttr))
          op->emitWarning() << "'" << kPartsAttr
                            << "' is not read on doppler.reshape (it follows "
                               "its input's blocks); ignored";
        einsums.push_back(op);
      } else if (isa<ConvOp, PoolOp>(op)) {
        valid &= succeeded(decompose::verifyWindowParts(op, kMaxParts));
        einsums.push_back(op);
      } else if (op->hasAttr(kPartsAttr)) {
        op->emitWarning() << "'" << kPartsAttr
                          << "' is only read on doppler.einsum, doppler.fused, "
                             "doppler.conv and doppler.pool ops; ignored";
      }
    });
    if (!valid)
      return signalPassFailure();

    if (autoParts) {
      decompose::AutoStatistics chosen =
          decompose::choosePartitionsAuto(program, *autoSystem, blockCount,
                                          throughputWeight);
      numAutoSplit += chosen.split;
      numAutoWhole += chosen.whole;
    }
    Decomposer decomposer(&getContext(), blockCount, minPoints);
    decomposer.run(einsums);
    const Counters &counters = decomposer.getCounters();
    numDecomposed += counters.decomposed;
    numKeptWhole += counters.keptWhole;
    numBlockEinsums += counters.blockEinsums;
    numAggregationEinsums += counters.aggregationEinsums;
    numGlueOps += counters.glueOps;
    numReshapesSplit += counters.reshapesSplit;
    numReshapesKeptWhole += counters.reshapesWhole;
    numWindowsSplit += counters.windowsSplit;
    numWindowsKeptWhole += counters.windowsWhole;
  }

private:
  bool autoParts = false;
  int64_t blockCount = 4;
  std::optional<::doppler::placement::SystemDescription> autoSystem;
};

} // namespace
