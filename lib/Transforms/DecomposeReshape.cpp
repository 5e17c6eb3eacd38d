//===- DecomposeReshape.cpp - doppler-decompose's rule for reshapes -------===//
//
// A doppler.reshape whose input is made of blocks becomes one reshape per
// block where every block is a contiguous run of the result (a head split
// of a value cut along its batch or its channels, a flatten of a value cut
// along its leading dim), with no gather; see reshapeTiling. Otherwise
// doppler-decompose keeps it whole on the gathered input.
//
//===----------------------------------------------------------------------===//

#include "DecomposeReshape.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::decompose;

namespace {

/// Dims [inBegin, inEnd) of the input and [outBegin, outEnd) of the result
/// that hold the same elements (equal products).
struct Group {
  size_t inBegin, inEnd, outBegin, outEnd;
};

/// The finest split of both shapes into groups of equal products; none
/// when a shape has an empty dim (every split fits, none is needed).
std::optional<SmallVector<Group>> groupsOf(ArrayRef<int64_t> from,
                                           ArrayRef<int64_t> to) {
  if (llvm::is_contained(from, 0) || llvm::is_contained(to, 0))
    return std::nullopt;
  SmallVector<Group> groups;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    Group group{i, i, j, j};
    // Products stay within the element count (at most 2^62, verified).
    int64_t inProduct = 1, outProduct = 1;
    if (i < from.size())
      inProduct *= from[i++];
    if (j < to.size())
      outProduct *= to[j++];
    while (inProduct != outProduct) {
      if (inProduct < outProduct) {
        if (i == from.size())
          return std::nullopt;
        inProduct *= from[i++];
      } else {
        if (j == to.size())
          return std::nullopt;
        outProduct *= to[j++];
      }
    }
    group.inEnd = i;
    group.outEnd = j;
    groups.push_back(group);
  }
  return groups;
}

/// The first dim of [begin, end) whose extent is above 1 (end: none).
size_t firstNonUnit(ArrayRef<int64_t> shape, size_t begin, size_t end) {
  while (begin < end && shape[begin] == 1)
    ++begin;
  return begin;
}

int64_t product(ArrayRef<int64_t> shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t d = begin; d < end; ++d)
    result *= shape[d];
  return result;
}

bool isWhole(ArrayRef<int64_t> cuts) { return cuts.size() == 2; }

} // namespace

std::optional<Tiling> decompose::reshapeTiling(ArrayRef<int64_t> from,
                                               ArrayRef<int64_t> to,
                                               const Tiling &input) {
  if (input.size() != from.size())
    return std::nullopt;
  std::optional<SmallVector<Group>> groups = groupsOf(from, to);
  if (!groups)
    return std::nullopt;
  Tiling output;
  for (int64_t extent : to)
    output.push_back({0, extent});
  for (const Group &group : *groups) {
    size_t cutIn = firstNonUnit(from, group.inBegin, group.inEnd);
    size_t cutOut = firstNonUnit(to, group.outBegin, group.outEnd);
    for (size_t d = group.inBegin; d < group.inEnd; ++d)
      if (d != cutIn && !isWhole(input[d]))
        return std::nullopt;
    if (cutIn == group.inEnd || isWhole(input[cutIn]))
      continue;
    // Cut along a dim of extent above 1: the group's product is above 1,
    // so the result's side has such a dim too.
    int64_t innerIn = product(from, cutIn + 1, group.inEnd);
    int64_t innerOut = product(to, cutOut + 1, group.outEnd);
    SmallVector<int64_t> &cuts = output[cutOut];
    cuts.clear();
    for (int64_t cut : input[cutIn]) {
      int64_t elements = cut * innerIn; // At most the group's product.
      if (elements % innerOut)
        return std::nullopt;
      cuts.push_back(elements / innerOut);
    }
  }
  return output;
}

AssembleOp decompose::splitReshape(ReshapeOp op, const Tiling &input,
                                   OpBuilder &builder, RegionFn region,
                                   llvm::function_ref<bool(StringRef)> isStale,
                                   int64_t maxBlocks) {
  std::optional<Tiling> found = reshapeTiling(
      cast<RankedTensorType>(op.getInput().getType()).getShape(),
      op.getType().getShape(), input);
  if (!found)
    return {};
  const Tiling &output = *found;
  // reshapeTiling cuts one dim per group on each side, in the same group
  // order and into as many blocks: the two grids list matching blocks in
  // the same row-major order.
  int64_t numBlocks = 1;
  SmallVector<int64_t> grid;
  for (const SmallVector<int64_t> &cuts : output) {
    grid.push_back(static_cast<int64_t>(cuts.size()) - 1);
    if (grid.back() > maxBlocks / numBlocks)
      return {};
    numBlocks *= grid.back();
  }
  if (numBlocks < 2)
    return {};
  Type element = op.getType().getElementType();
  SmallVector<Value> blocks;
  int64_t inRank = input.size(), outRank = output.size();
  for (int64_t b = 0; b < numBlocks; ++b) {
    SmallVector<int64_t> lo(inRank), hi(inRank), shape(outRank);
    int64_t rest = b;
    for (int64_t d = inRank - 1; d >= 0; --d) {
      int64_t count = static_cast<int64_t>(input[d].size()) - 1;
      int64_t c = rest % count;
      rest /= count;
      lo[d] = input[d][c];
      hi[d] = input[d][c + 1];
    }
    rest = b;
    for (int64_t d = outRank - 1; d >= 0; --d) {
      int64_t c = rest % grid[d];
      rest /= grid[d];
      shape[d] = output[d][c + 1] - output[d][c];
    }
    // The region first: it may create a slice, which must come before the
    // block reshape that reads it.
    Value piece = region(op.getInput(), lo, hi);
    Operation *block = builder.clone(*op);
    block->setOperand(0, piece);
    block->getResult(0).setType(RankedTensorType::get(shape, element));
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (isStale(attr.getName().strref()))
        block->removeAttr(attr.getName());
    blocks.push_back(block->getResult(0));
  }
  auto assemble =
      AssembleOp::create(builder, op.getLoc(), op.getType(), grid, blocks);
  if (Attribute device = op->getDiscardableAttr(kDeviceAttr))
    assemble->setAttr(kDeviceAttr, device);
  return assemble;
}
