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
