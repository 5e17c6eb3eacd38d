//===- DecomposePartition.h - doppler-decompose's partition choice -*- C++ -*-===//
//
// Internal to lib/Transforms: how doppler-decompose chooses an einsum's
// partition (how many blocks along which indices) by its local
// communication estimate, and the near-equal cuts every rule of the pass
// shares. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_TRANSFORMS_DECOMPOSEPARTITION_H
#define DOPPLER_LIB_TRANSFORMS_DECOMPOSEPARTITION_H

#include "DecomposeReshape.h"

#include "Doppler/Support/EinsumSpec.h"

#include <optional>
#include <string>

namespace mlir::doppler::decompose {

/// Start of part `k` of `extent` split into `parts` near-equal parts, the
/// larger parts first (10 in 4 parts: 3, 3, 2, 2).
int64_t partStart(int64_t extent, int64_t parts, int64_t k);

/// Cut points [0, ..., extent] of a near-equal split.
SmallVector<int64_t> cutPoints(int64_t extent, int64_t parts);

/// What the cost model needs to know about one einsum.
struct EinsumShape {
  ::doppler::EinsumSpec spec;
  std::string indices;          ///< allIndices()
  SmallVector<int64_t> extents; ///< per index
  /// Per input: position in `indices` of each of its dimensions.
  SmallVector<SmallVector<unsigned>> inputDims;
  SmallVector<unsigned> outputDims, contractedDims;
  SmallVector<double> inputElements;
  SmallVector<std::optional<Tiling>> inputTilings;
  double outputElements = 1;
};

/// doppler.einsum and doppler.fused, the ops decomposed by their index
/// space (a fused op like an elementwise einsum), and what both have: a
/// spec, index sizes and inputs.
bool isDecomposable(Operation *op);
::doppler::EinsumSpec parsedSpecOf(Operation *op);
::doppler::IndexSizes indexSizesOf(Operation *op);
StringRef specTextOf(Operation *op);
OperandRange inputsOf(Operation *op);

/// The shape of an einsum or fused op; each input's tiling from `tilingOf`
/// (none when it is null).
EinsumShape
describeEinsum(Operation *op,
               llvm::function_ref<std::optional<Tiling>(Value)> tilingOf);

/// Fraction of a dimension's data that each consumer part (cut points
/// `consumer`) can take from the one producer part (cut points `producer`)
/// overlapping it most: 1 when the consumer's parts nest in the producer's,
/// 1/2 when a consumer part spans two equal producer parts, and so on.
double alignedFraction(ArrayRef<int64_t> consumer, ArrayRef<int64_t> producer);

/// Blocks along the contracted indices (the partial results per output
/// block) of `parts`.
int64_t contractedBlocks(const EinsumShape &shape, ArrayRef<int64_t> parts);

/// Calls `visit` on every assignment of counts to indices whose product is
/// `total`, no count exceeding its index's extent. Counts are tried from
/// large to small, earlier indices first, which fixes the order of ties.
void forEachFactorisation(ArrayRef<int64_t> extents, int64_t total,
                          SmallVectorImpl<int64_t> &parts, unsigned pos,
                          function_ref<void(ArrayRef<int64_t>)> visit);

/// The communication cost, in elements, of running an einsum of `shape`
/// split by `parts` (one count per index). See the pass description.
double partitionCost(const EinsumShape &shape, ArrayRef<int64_t> parts);

/// The heuristic's choice for an einsum of `shape`: among the
/// factorisations of the largest block count <= `blocks` the extents allow,
/// the cheapest; ties go to the one without aggregation, then to the first
/// enumerated.
SmallVector<int64_t> choosePartition(const EinsumShape &shape, int64_t blocks);

} // namespace mlir::doppler::decompose

#endif // DOPPLER_LIB_TRANSFORMS_DECOMPOSEPARTITION_H
