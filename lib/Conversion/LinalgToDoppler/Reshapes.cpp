//===- Reshapes.cpp - Reshapes that regroup extents, as blocks ------------===//
//
// tensor.expand_shape / collapse_shape that split or merge extents (a head
// split [B, T, H*D] -> [B, T, H, D], a merge [B, H, T, D] -> [B*H, T, D])
// cannot be one einsum, but on static shapes they are a grid of blocks:
// in each group of expanded dims, the last dim is a contiguous run of the
// merged dim, and every combination of the others is one block. Each
// block is a doppler.slice of the source, one identity einsum that adds
// (expand: a -0.0 broadcast, exact) or drops (collapse: a product over one
// element) the group's other dims as unit dims, and the blocks are put
// together by one doppler.assemble. The Python frontend writes reshapes
// the same way.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// Above this many blocks a reshape is left (the assemble would dwarf the
/// work around it).
constexpr int64_t kMaxReshapeBlocks = 4096;

} // namespace

std::string linalg_to_doppler::whyNotRegroup(
    RankedTensorType big, RankedTensorType small,
    ArrayRef<ReassociationIndices> groups) {
  if (!big.hasStaticShape() || !small.hasStaticShape())
    return "it has a dynamic shape";
  if (!isa<FloatType>(big.getElementType()))
    return "its element type is not a float type";
  if (big.getRank() > kMaxLetters)
    return "its rank is above " + std::to_string(kMaxLetters);
  if (static_cast<int64_t>(groups.size()) != small.getRank() ||
      small.getRank() == 0)
    return "it reshapes to or from rank 0 with extents other than 1";
  int64_t blocks = 1;
  for (const ReassociationIndices &group : groups) {
    if (group.empty())
      return "it has an empty reassociation group";
    for (int64_t d : group) {
      if (big.getDimSize(d) == 0)
        return "it has an empty dim";
      if (d != group.back())
        blocks *= big.getDimSize(d);
      if (blocks > kMaxReshapeBlocks)
        return "it regroups extents into more than " +
               std::to_string(kMaxReshapeBlocks) + " blocks";
    }
  }
  return "";
}

Value linalg_to_doppler::regroup(DopplerBuilder &b, Value source,
                                 RankedTensorType resultType, bool expand,
                                 ArrayRef<ReassociationIndices> groups) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  RankedTensorType big = expand ? resultType : sourceType;
  RankedTensorType small = expand ? sourceType : resultType;
  Type element = big.getElementType();
  int64_t smallRank = small.getRank(), bigRank = big.getRank();
  std::string bigTerm(kLetters, bigRank), smallTerm, units;
  // Per small dim: how many blocks along it, and their extent (the run).
  SmallVector<int64_t> counts(smallRank, 1), runs(smallRank);
  SmallVector<int64_t> bigBlock(bigRank, 1);
  SmallVector<bool> isRun(bigRank, false);
  for (auto [g, group] : llvm::enumerate(groups)) {
    int64_t last = group.back();
    runs[g] = big.getDimSize(last);
    bigBlock[last] = runs[g];
    isRun[last] = true;
    smallTerm += bigTerm[last];
    for (int64_t d : group)
      if (d != last) {
        counts[g] *= big.getDimSize(d);
        units += bigTerm[d];
      }
  }
  auto smallBlockType = RankedTensorType::get(runs, element);
  auto bigBlockType = RankedTensorType::get(bigBlock, element);
  Value zeros;
  if (expand && !units.empty())
    zeros = b.fill(-0.0, RankedTensorType::get(
                             SmallVector<int64_t>(units.size(), 1), element));
  // Blocks in row-major order of the grid; since groups are contiguous
  // and ordered, that is row-major order over the small dims' block
  // indices, each split in mixed radix over its group's leading dims.
  SmallVector<Value> blocks;
  SmallVector<int64_t> index(smallRank, 0);
  while (true) {
    SmallVector<int64_t> smallOffsets(smallRank), bigOffsets(bigRank, 0);
    for (auto [g, group] : llvm::enumerate(groups)) {
      smallOffsets[g] = index[g] * runs[g];
      int64_t rest = index[g];
      for (int64_t d : llvm::reverse(ArrayRef<int64_t>(group).drop_back())) {
        bigOffsets[d] = rest % big.getDimSize(d);
        rest /= big.getDimSize(d);
      }
    }
    Value block;
    if (expand) {
      block = b.block(source, smallOffsets, runs);
      block = units.empty()
                  ? b.einsum(smallTerm + "->" + bigTerm, JoinKind::Identity,
                             std::nullopt, std::nullopt, block, bigBlockType)
                  : b.einsum(smallTerm + "," + units + "->" + bigTerm,
                             JoinKind::Add, std::nullopt, std::nullopt,
                             ValueRange{block, zeros}, bigBlockType);
    } else {
      block = b.block(source, bigOffsets, bigBlock);
      block = b.einsum(bigTerm + "->" + smallTerm, JoinKind::Identity,
                       units.empty() ? std::optional<AggKind>()
                                     : AggKind::Mul,
                       std::nullopt, block, smallBlockType);
    }
    blocks.push_back(block);
    int64_t g = smallRank - 1;
    while (g >= 0 && ++index[g] == counts[g])
      index[g--] = 0;
    if (g < 0)
      break;
  }
  SmallVector<int64_t> grid;
  if (expand) {
    for (int64_t d = 0; d < bigRank; ++d)
      grid.push_back(isRun[d] ? 1 : big.getDimSize(d));
  } else {
    grid = counts;
  }
  return b.assemble(grid, blocks, resultType);
}
