//===- DecomposeAuto.h - doppler-decompose{parts=auto} ----------*- C++ -*-===//
//
// Internal to lib/Transforms: the cost-based choice of every op's partition
// (DecomposeAuto.cpp), EinDecomp's dynamic program over the graph. Each
// einsum, fused op, convolution and pool gets candidate partitions into
// k = 1, 2, 4, ... up to D blocks (the eight cheapest per k), each with a
// local cost in the system's time units:
//
//   compute: (1 - w) B + w k B / D with B = (C - launch) / k + launch the
//            time of one block, C the op's roofline cost on one device (the
//            cost model's) and launch the device's kernel launch overhead:
//            B is what a chain of ops waits for (k blocks at once on k
//            devices), k B / D the device time the blocks take from all D
//            devices; w = min(1, (total work / D) / critical path), both
//            with every op whole, says how far the program fills the
//            devices without splitting (a chain: 1 / D);
//   replication and aggregation: the elements that blocks read beyond the
//            op's inputs (an input read by blocks that differ only in
//            indices it lacks, a window's halo and replicated weights) and
//            the partial results of split contractions, moved over the
//            slowest link, k transfers at once; each level of an
//            aggregation tree a launch;
//
// and between a producer's candidate and a consumer's, a repartitioning
// cost: the fraction of the value a consumer block cannot read from the
// producer block it overlaps most (on the same device), moved at once by
// the consumer's k blocks. A consumer of k blocks can share devices with at
// most m of a producer's m < k blocks. Function arguments (and slices,
// reshapes and assembles of them) are free: each device holds what it
// reads, so replicating a weight moves nothing per run (ties between
// candidates go to the one reading fewer elements, weights included).
// Slices and assembles of decomposed values follow their producers' blocks;
// other producers (fills, other dialects' ops) count as one block.
//
// The program runs in program order: best[op][c] = local(c) + the sum over
// its operands of min over the producer's candidates p of (best[p] -
// min best[producer]) + repartition(p, c). Subtracting the producer's
// minimum keeps values bounded when a value has many consumers (a residual
// stream); only differences matter for the choice. Choices are then made
// from the last op to the first, each producer taking the candidate that
// minimises its own best plus the repartitioning towards the consumers
// already chosen. A reshape mirrors its producer's candidates (its blocks
// follow its input's, where that input's blocks stay contiguous runs).
//
// The sum over ops blends a chain whose ops each spread over k devices
// with a program that fills the devices by itself: it splits large ops of a
// chain over all devices and leaves small ones whole where launch overheads
// and transfers cost more than the split saves, and splits less where the
// program has parallel ops enough. It departs from the paper, which fixes every op's block count at
// the device count and minimises bytes moved alone; see docs/Method.md.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_TRANSFORMS_DECOMPOSEAUTO_H
#define DOPPLER_LIB_TRANSFORMS_DECOMPOSEAUTO_H

#include "Doppler/Placement/SystemDescription.h"

#include "mlir/IR/Operation.h"

namespace mlir::doppler::decompose {

struct AutoStatistics {
  int64_t split = 0;      ///< ops given more than one block
  int64_t whole = 0;      ///< ops left whole
  int64_t candidates = 0; ///< candidate partitions weighed
};

/// Chooses the partition of every doppler.einsum, doppler.fused,
/// doppler.conv and doppler.pool among `ops` (program order; reshapes
/// among them are followed, other ops ignored) that has no `doppler.parts`,
/// for `devices` devices of `system`, and writes it as its `doppler.parts`
/// (all ones for an op left whole). Ops with `doppler.parts` keep theirs.
/// `throughputWeight` in [0, 1] replaces the weight w the program's own
/// work and critical path give (a negative value keeps it).
AutoStatistics
choosePartitionsAuto(ArrayRef<Operation *> ops,
                     const ::doppler::placement::SystemDescription &system,
                     int64_t devices, double throughputWeight = -1);

} // namespace mlir::doppler::decompose

#endif // DOPPLER_LIB_TRANSFORMS_DECOMPOSEAUTO_H
