//===- DecomposeWindow.h - doppler-decompose's rule for windows -*- C++ -*-===//
//
// Internal to lib/Transforms: how doppler-decompose splits a doppler.conv or
// doppler.pool (DecomposeWindow.cpp). A window op is split into a grid of
// blocks over three of its result's dims: the batch, the channels (whole
// groups of them for a grouped convolution) and the first spatial dim.
// A block over output rows [a, b) reads input rows
// [a * stride - low, (b - 1) * stride - low + dilation * (K - 1) + 1): its
// rows plus the halo its kernel reaches, clipped to the input, the clipped
// part becoming the block's own padding. So a block is the same op on a
// region of the input (and of the weight), and no per-offset einsum or
// partial sum is ever needed.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_TRANSFORMS_DECOMPOSEWINDOW_H
#define DOPPLER_LIB_TRANSFORMS_DECOMPOSEWINDOW_H

#include "DecomposeReshape.h"

#include <array>

namespace mlir::doppler::decompose {

/// Block counts along the batch, the channels and the first spatial dim.
using WindowParts = std::array<int64_t, 3>;

/// Checks a `doppler.parts` on a conv or pool: three counts (batch,
/// channels, first spatial dim), each within its extent (channels: the
/// groups of a grouped convolution, the output channels otherwise), at most
/// `maxBlocks` blocks. Errors go to the op.
LogicalResult verifyWindowParts(Operation *op, int64_t maxBlocks);

/// The block counts for `op` (a conv or pool): its `doppler.parts` when
/// present; all ones when its multiply-adds (window elements for a pool)
/// are fewer than `minPoints`; otherwise the split into at most `blocks`
/// blocks (the most that fit the extents) that reads the fewest input and
/// weight elements in all, input regions crossing a block of the input's
/// tiling `input` (when known) counted twice.
WindowParts chooseWindowParts(Operation *op, int64_t blocks,
                              int64_t minPoints,
                              const std::optional<Tiling> &input);

/// Calls `visit` on every split of `op` into exactly `total` blocks that
/// fits its extents (and whose row tiles each read an input row), batch
/// counts first, then channel counts, from small to large.
void forEachWindowParts(Operation *op, int64_t total,
                        llvm::function_ref<void(const WindowParts &)> visit);

/// Input elements (and weight elements, with `weights`) the blocks of
/// `parts` read in all, halos and replicated inputs or weights included.
double windowReadElements(Operation *op, const WindowParts &parts,
                          bool weights);

/// The cut points of `op`'s result under `parts`, and those of the input
/// regions its blocks read (row tiles cut where each tile's rows start,
/// halos aside; the channels whole for an ungrouped convolution).
Tiling windowResultTiling(Operation *op, const WindowParts &parts);
Tiling windowInputTiling(Operation *op, const WindowParts &parts);

/// Builds, at `builder`'s insertion point, one block op per block of
/// `parts` (its input, and a convolution's weight, taken by `region`) and
/// the assemble of their results, and returns the assemble; `op` itself is
/// left to the caller. Block ops are clones of `op` with their own padding
/// (and groups) that keep its discardable attributes but the ones
/// `isStale` names. `parts` must not be all ones.
AssembleOp splitWindow(Operation *op, const WindowParts &parts,
                       OpBuilder &builder, RegionFn region,
                       llvm::function_ref<bool(StringRef)> isStale);

} // namespace mlir::doppler::decompose

#endif // DOPPLER_LIB_TRANSFORMS_DECOMPOSEWINDOW_H
