//===- DecomposePartition.cpp - doppler-decompose's partition choice -----===//

#include "DecomposePartition.h"

#include "Doppler/Dialect/DopplerOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::decompose;

/// Start of part `k` of `extent` split into `parts` near-equal parts, the
/// larger parts first (10 in 4 parts: 3, 3, 2, 2).
int64_t decompose::partStart(int64_t extent, int64_t parts, int64_t k) {
  return k * (extent / parts) + std::min(k, extent % parts);
}

/// Cut points [0, ..., extent] of a near-equal split.
SmallVector<int64_t> decompose::cutPoints(int64_t extent, int64_t parts) {
  SmallVector<int64_t> cuts;
  for (int64_t k = 0; k <= parts; ++k)
    cuts.push_back(partStart(extent, parts, k));
  return cuts;
}

/// Fraction of a dimension's data that each consumer part can take from the
/// one producer part overlapping it most: 1 when the consumer's parts nest
/// in the producer's, 1/2 when a consumer part spans two equal producer
/// parts, and so on.
double decompose::alignedFraction(ArrayRef<int64_t> consumer, ArrayRef<int64_t> producer) {
  int64_t extent = consumer.back();
  if (extent == 0)
    return 1.0;
  int64_t aligned = 0;
  size_t q = 0;
  for (size_t c = 0; c + 1 < consumer.size(); ++c) {
    int64_t lo = consumer[c], hi = consumer[c + 1], best = 0;
    while (q + 2 < producer.size() && producer[q + 1] <= lo)
      ++q;
    for (size_t r = q; r + 1 < producer.size() && producer[r] < hi; ++r)
      best = std::max(best, std::min(hi, producer[r + 1]) -
                                std::max(lo, producer[r]));
    aligned += best;
  }
  return static_cast<double>(aligned) / static_cast<double>(extent);
}

int64_t decompose::contractedBlocks(const EinsumShape &shape, ArrayRef<int64_t> parts) {
  int64_t product = 1;
  for (unsigned i : shape.contractedDims)
    product *= parts[i];
  return product;
}

/// Calls `visit` on every assignment of counts to indices whose product is
/// `total`, no count exceeding its index's extent. Counts are tried from
/// large to small, earlier indices first, which fixes the order of ties.
void decompose::forEachFactorisation(ArrayRef<int64_t> extents, int64_t total,
                          SmallVectorImpl<int64_t> &parts, unsigned pos,
                          function_ref<void(ArrayRef<int64_t>)> visit) {
  if (pos == extents.size()) {
    if (total == 1)
      visit(parts);
    return;
  }
  int64_t limit = std::min(total, std::max<int64_t>(extents[pos], 1));
  for (int64_t count = limit; count >= 1; --count) {
    if (total % count)
      continue;
    parts[pos] = count;
    forEachFactorisation(extents, total / count, parts, pos + 1, visit);
  }
}

bool decompose::isDecomposable(Operation *op) { return isa<EinsumOp, FusedOp>(op); }

::doppler::EinsumSpec decompose::parsedSpecOf(Operation *op) {
  if (auto fused = dyn_cast<FusedOp>(op))
    return fused.getParsedSpec();
  return cast<EinsumOp>(op).getParsedSpec();
}

::doppler::IndexSizes decompose::indexSizesOf(Operation *op) {
  if (auto fused = dyn_cast<FusedOp>(op))
    return fused.getIndexSizes();
  return cast<EinsumOp>(op).getIndexSizes();
}

StringRef decompose::specTextOf(Operation *op) {
  if (auto fused = dyn_cast<FusedOp>(op))
    return fused.getSpec();
  return cast<EinsumOp>(op).getSpec();
}

OperandRange decompose::inputsOf(Operation *op) {
  if (auto fused = dyn_cast<FusedOp>(op))
    return fused.getInputs();
  return cast<EinsumOp>(op).getInputs();
}

EinsumShape decompose::describeEinsum(
    Operation *op,
    llvm::function_ref<std::optional<Tiling>(Value)> tilingOf) {
  EinsumShape shape;
  shape.spec = parsedSpecOf(op);
  ::doppler::IndexSizes sizes = indexSizesOf(op);
  shape.indices = sizes.indices;
  shape.extents.assign(sizes.sizes.begin(), sizes.sizes.end());
  for (auto [t, term] : llvm::enumerate(shape.spec.inputs)) {
    SmallVector<unsigned> dims;
    double elements = 1;
    for (char index : term) {
      dims.push_back(shape.indices.find(index));
      elements *= static_cast<double>(sizes.sizeOf(index));
    }
    shape.inputDims.push_back(std::move(dims));
    shape.inputElements.push_back(elements);
    shape.inputTilings.push_back(tilingOf ? tilingOf(inputsOf(op)[t])
                                         : std::nullopt);
  }
  for (char index : shape.spec.output) {
    shape.outputDims.push_back(shape.indices.find(index));
    shape.outputElements *= static_cast<double>(sizes.sizeOf(index));
  }
  for (char index : shape.spec.contractedIndices())
    shape.contractedDims.push_back(shape.indices.find(index));
  return shape;
}

double decompose::partitionCost(const EinsumShape &shape, ArrayRef<int64_t> parts) {
  double cost = 0;
  for (auto [t, dims] : llvm::enumerate(shape.inputDims)) {
    // Blocks that differ only in indices this input lacks read the same
    // piece of it: every copy but one is replication.
    double copies = 1;
    for (unsigned i = 0; i < parts.size(); ++i)
      if (!llvm::is_contained(dims, i))
        copies *= static_cast<double>(parts[i]);
    cost += shape.inputElements[t] * (copies - 1);
    // Data not where the producer's blocks already are must be moved.
    if (const std::optional<Tiling> &tiling = shape.inputTilings[t]) {
      double aligned = 1;
      for (auto [d, index] : llvm::enumerate(dims))
        aligned *= alignedFraction(
            cutPoints(shape.extents[index], parts[index]), (*tiling)[d]);
      cost += shape.inputElements[t] * (1 - aligned);
    }
  }
  // Every partial output block but one travels to its aggregation.
  double partials = 1;
  for (unsigned i : shape.contractedDims)
    partials *= static_cast<double>(parts[i]);
  cost += shape.outputElements * (partials - 1);
  return cost;
}

SmallVector<int64_t> decompose::choosePartition(const EinsumShape &shape, int64_t blocks) {
  SmallVector<int64_t> best(shape.indices.size(), 1);
  // No more blocks than the extents allow (saturating at `blocks`).
  int64_t capacity = 1;
  for (int64_t extent : shape.extents)
    capacity =
        std::min(blocks, capacity * std::clamp<int64_t>(extent, 1, blocks));
  for (int64_t total = capacity; total > 1; --total) {
    bool found = false;
    double bestCost = 0;
    int64_t bestPartials = 0;
    SmallVector<int64_t> parts(shape.indices.size(), 1);
    forEachFactorisation(
        shape.extents, total, parts, 0, [&](ArrayRef<int64_t> candidate) {
          double cost = partitionCost(shape, candidate);
          int64_t partials = contractedBlocks(shape, candidate);
          double slack = 1e-9 * std::max(1.0, bestCost);
          if (!found || cost < bestCost - slack ||
              (cost <= bestCost + slack && partials < bestPartials)) {
            found = true;
            bestCost = cost;
            bestPartials = partials;
            best.assign(candidate.begin(), candidate.end());
          }
        });
    if (found)
      return best;
  }
  return best;
}
