//===- DecomposeReshape.h - doppler-decompose's rule for reshapes -*- C++ -*-===//
//
// Internal to lib/Transforms: how doppler-decompose splits a doppler.reshape
// whose input is made of blocks (DecomposeReshape.cpp), and the tiling type
// the decomposition shares with it.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_TRANSFORMS_DECOMPOSERESHAPE_H
#define DOPPLER_LIB_TRANSFORMS_DECOMPOSERESHAPE_H

#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::doppler::decompose {

/// Per dimension, the sorted cut points [0, ..., extent] of the blocks a
/// value is made of.
using Tiling = SmallVector<SmallVector<int64_t>>;

/// The tiling of the result of a row-major reshape from shape `from` to
/// shape `to` whose input is cut by `input`, when every input block is one
/// block of the result; std::nullopt when some block is not.
///
/// The two shapes split into groups of consecutive dims with equal products
/// (the finest such split: [B, T, C] -> [B, T, H, E] has the groups B -> B,
/// T -> T, C -> H E). Within a group, a block is a contiguous run of the
/// group's elements, and so a block of the result, when only the group's
/// first dim of extent above 1 is cut (the dims after it are whole) and each
/// cut, in elements of the group, falls on a boundary of the result's first
/// dim of extent above 1. Groups are independent, so a block is a product
/// of one such run per group.
std::optional<Tiling> reshapeTiling(ArrayRef<int64_t> from,
                                    ArrayRef<int64_t> to, const Tiling &input);

/// The region [lo, hi) of a value, as doppler-decompose takes it (looking
/// through slices and assembles).
using RegionFn =
    llvm::function_ref<Value(Value value, ArrayRef<int64_t> lo,
                             ArrayRef<int64_t> hi)>;

/// When reshapeTiling splits `op`'s input (cut by `input`) into 2 to
/// `maxBlocks` blocks: builds, at `builder`'s insertion point, one reshape
/// per block (each input block taken by `region`) and the assemble of
/// their results (placed like `op`), and returns the assemble; `op` itself
/// is left to the caller. Otherwise builds nothing and returns null. Each
/// block reshape is a clone of `op` that keeps its discardable attributes
/// but the ones `isStale` names.
AssembleOp splitReshape(ReshapeOp op, const Tiling &input, OpBuilder &builder,
                        RegionFn region,
                        llvm::function_ref<bool(StringRef)> isStale,
                        int64_t maxBlocks);

} // namespace mlir::doppler::decompose

#endif // DOPPLER_LIB_TRANSFORMS_DECOMPOSERESHAPE_H
