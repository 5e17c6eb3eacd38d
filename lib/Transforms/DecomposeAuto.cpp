//===- DecomposeAuto.cpp - doppler-decompose{parts=auto} ------------------===//
//
// The dynamic program of DecomposeAuto.h.
//
//===----------------------------------------------------------------------===//

#include "DecomposeAuto.h"
#include "DecomposePartition.h"
#include "DecomposeWindow.h"

#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::decompose;
using ::doppler::placement::SystemDescription;

namespace {

/// Candidates kept per block count (the cheapest by local cost): enough to
/// offer a consumer a partition aligned with it, few enough to stay cheap.
constexpr size_t kCandidatesPerCount = 8;

struct Candidate {
  SmallVector<int64_t> parts; ///< the op's doppler.parts (none: reshape)
  int64_t blocks = 1;
  Tiling out; ///< cut points of the result
  /// Per operand, cut points of the regions the blocks read; none: the
  /// operand costs nothing to read (a weight, a value outside the program).
  SmallVector<std::optional<Tiling>> in;
  double local = 0;
  /// Ties on `local` go to the candidate that reads fewer elements in all,
  /// parameters included (a replicated weight costs memory on each device).
  double elementsRead = 0;
};

struct Node {
  Operation *op = nullptr;
  std::vector<Candidate> candidates;
  SmallVector<double> best;
  SmallVector<int> producers; ///< per operand: node index, or -1
  /// (consumer node, operand) pairs reading this node's result.
  SmallVector<std::pair<int, unsigned>> consumers;
  int choice = -1;
  bool fixed = false; ///< the op carried doppler.parts
};

/// A function argument, or a slice, reshape or assemble of arguments only:
/// a parameter or input that each device holds where it is read, so that
/// reading it on several devices moves nothing at run time.
bool isParameter(Value value, unsigned depth = 0) {
  if (isa<BlockArgument>(value))
    return true;
  Operation *op = value.getDefiningOp();
  if (depth > 4 || !isa_and_present<SliceOp, ReshapeOp, AssembleOp>(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return isParameter(operand, depth + 1);
  });
}

Tiling wholeTiling(Type type) {
  Tiling cuts;
  for (int64_t extent : cast<RankedTensorType>(type).getShape())
    cuts.push_back({0, extent});
  return cuts;
}

class AutoChooser {
public:
  AutoChooser(const SystemDescription &system, int64_t devices,
              double weightOverride)
      : system(system), devices(std::max<int64_t>(devices, 1)),
        weightOverride(weightOverride),
        // An empty kernel's cost: the launch overhead in cost units.
        launch(system.computeCost(0, 0, 0, "f32")) {}

  AutoStatistics run(ArrayRef<Operation *> ops);

private:
  double linkSeconds(double bytes) const {
    return bytes > 0 ? system.worstTransferCost(0, bytes) : 0;
  }
  /// What splitting the op of cost `whole` into k blocks costs the
  /// program: one block's time (the latency of a chain of such ops) and the
  /// blocks' device time shared by all devices (the throughput of a program
  /// with enough parallel ops to fill them), weighed by `throughputWeight`.
  double blockTime(double whole, int64_t k) const {
    double block =
        k <= 1 ? whole : std::max(whole - launch, 0.0) / double(k) + launch;
    return (1 - throughputWeight) * block +
           throughputWeight * double(k) * block / double(devices);
  }
  void weighThroughput(ArrayRef<Operation *> ops);
  SmallVector<int64_t> blockCounts() const;
  void keepCheapest(Node &node, std::vector<Candidate> found);
  void einsumCandidates(Node &node);
  void windowCandidates(Node &node);
  void reshapeCandidates(Node &node);
  void sliceCandidates(Node &node);
  void assembleCandidates(Node &node);
  double repartition(const Candidate &from, const Candidate &to,
                     unsigned operand, Operation *consumer) const;
  double external(const Candidate &to, unsigned operand,
                  Operation *consumer) const;
  void solve();
  void choose();

  const SystemDescription &system;
  int64_t devices;
  double weightOverride;
  double launch;
  /// How far the program is throughput-bound: its work over the devices
  /// against its critical path, both with every op whole, capped at 1
  /// (a chain: 1 / D; as many parallel ops as devices or more: 1).
  double throughputWeight = 0;
  std::vector<Node> nodes;
  llvm::DenseMap<Operation *, int> indexOf;
  AutoStatistics statistics;
};

SmallVector<int64_t> AutoChooser::blockCounts() const {
  SmallVector<int64_t> counts;
  for (int64_t k = 2; k <= devices; k *= 2)
    counts.push_back(k);
  if (counts.empty() || counts.back() != devices)
    if (devices > 1)
      counts.push_back(devices);
  return counts;
}

void AutoChooser::keepCheapest(Node &node, std::vector<Candidate> found) {
  statistics.candidates += found.size();
  std::stable_sort(found.begin(), found.end(),
                   [](const Candidate &a, const Candidate &b) {
                     double slack = 1e-9 * std::max(a.local, b.local);
                     if (std::abs(a.local - b.local) > slack)
                       return a.local < b.local;
                     return a.elementsRead < b.elementsRead;
                   });
  if (found.size() > kCandidatesPerCount)
    found.resize(kCandidatesPerCount);
  node.candidates.insert(node.candidates.end(), found.begin(), found.end());
}

void AutoChooser::einsumCandidates(Node &node) {
  Operation *op = node.op;
  EinsumShape shape = describeEinsum(op, nullptr);
  double whole = computeCostOf(*op, system);
  double elementBytes =
      valueBytes(op->getResult(0).getType()) / std::max(shape.outputElements, 1.0);
  auto make = [&](ArrayRef<int64_t> parts) {
    Candidate candidate;
    candidate.parts.assign(parts.begin(), parts.end());
    for (int64_t count : parts)
      candidate.blocks *= count;
    for (unsigned i : shape.outputDims)
      candidate.out.push_back(cutPoints(shape.extents[i], parts[i]));
    for (const SmallVector<unsigned> &dims : shape.inputDims) {
      Tiling cuts;
      for (unsigned i : dims)
        cuts.push_back(cutPoints(shape.extents[i], parts[i]));
      candidate.in.push_back(std::move(cuts));
    }
    // Replication of inputs that move (not parameters: they stay where
    // they are read) and partial results, in elements.
    double moved = 0;
    for (auto [t, dims] : llvm::enumerate(shape.inputDims)) {
      if (isParameter(op->getOperand(t)))
        continue;
      double copies = 1;
      for (unsigned i = 0; i < parts.size(); ++i)
        if (!llvm::is_contained(dims, i))
          copies *= double(parts[i]);
      moved += shape.inputElements[t] * (copies - 1);
    }
    int64_t partials = contractedBlocks(shape, parts);
    moved += shape.outputElements * double(partials - 1);
    candidate.local =
        blockTime(whole, candidate.blocks) +
        linkSeconds(moved * elementBytes / double(candidate.blocks)) +
        launch * std::ceil(std::log2(double(partials)));
    candidate.elementsRead = partitionCost(shape, parts);
    return candidate;
  };
  if (auto fixed = op->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr)) {
    node.fixed = true;
    node.candidates.push_back(make(fixed.asArrayRef()));
    return;
  }
  node.candidates.push_back(
      make(SmallVector<int64_t>(shape.indices.size(), 1)));
  for (int64_t k : blockCounts()) {
    std::vector<Candidate> found;
    SmallVector<int64_t> parts(shape.indices.size(), 1);
    forEachFactorisation(shape.extents, k, parts, 0,
                         [&](ArrayRef<int64_t> candidate) {
                           found.push_back(make(candidate));
                         });
    keepCheapest(node, std::move(found));
  }
}

void AutoChooser::windowCandidates(Node &node) {
  Operation *op = node.op;
  double whole = computeCostOf(*op, system);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  double elementBytes = valueBytes(resultType) /
                        std::max<double>(double(resultType.getNumElements()), 1);
  // What the blocks read beyond the operands, parameters aside (a weight
  // stays on every device that reads it).
  bool weights = op->getNumOperands() > 1 && !isParameter(op->getOperand(1));
  bool input = !isParameter(op->getOperand(0));
  double operandElements = 0;
  for (auto [t, operand] : llvm::enumerate(op->getOperands()))
    if (t == 0 || weights)
      operandElements += double(cast<RankedTensorType>(operand.getType())
                                    .getNumElements());
  auto make = [&](const WindowParts &parts) {
    Candidate candidate;
    candidate.parts.assign(parts.begin(), parts.end());
    candidate.blocks = parts[0] * parts[1] * parts[2];
    candidate.out = windowResultTiling(op, parts);
    candidate.in.push_back(windowInputTiling(op, parts));
    if (op->getNumOperands() > 1)
      candidate.in.push_back(std::nullopt); // the weight: a parameter
    double extra =
        input ? std::max(windowReadElements(op, parts, weights) -
                             operandElements,
                         0.0)
              : 0.0;
    candidate.local =
        blockTime(whole, candidate.blocks) +
        linkSeconds(extra * elementBytes / double(candidate.blocks));
    candidate.elementsRead = windowReadElements(op, parts, true);
    return candidate;
  };
  if (auto fixed = op->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr)) {
    node.fixed = true;
    node.candidates.push_back(make({fixed[0], fixed[1], fixed[2]}));
    return;
  }
  node.candidates.push_back(make({1, 1, 1}));
  for (int64_t k : blockCounts()) {
    std::vector<Candidate> found;
    forEachWindowParts(op, k, [&](const WindowParts &parts) {
      found.push_back(make(parts));
    });
    keepCheapest(node, std::move(found));
  }
}

void AutoChooser::reshapeCandidates(Node &node) {
  auto reshape = cast<ReshapeOp>(node.op);
  auto from = cast<RankedTensorType>(reshape.getInput().getType());
  int producer = node.producers[0];
  Candidate whole;
  whole.out = wholeTiling(reshape.getType());
  whole.in.push_back(std::nullopt);
  if (producer < 0) {
    node.candidates.push_back(whole);
    return;
  }
  // One candidate per producer candidate: the reshape follows its blocks
  // where they stay contiguous runs of the result, else it gathers them.
  for (const Candidate &source : nodes[producer].candidates) {
    Candidate candidate = whole;
    candidate.in[0] = source.out;
    if (std::optional<Tiling> mapped = reshapeTiling(
            from.getShape(), reshape.getType().getShape(), source.out)) {
      candidate.out = *mapped;
      candidate.blocks = source.blocks;
    } else {
      candidate.local = linkSeconds(valueBytes(from) *
                                    (1 - 1 / double(source.blocks)));
    }
    node.candidates.push_back(std::move(candidate));
  }
}

/// The cuts of `cuts` inside [lo, lo + extent), shifted to start at 0,
/// with both ends.
static SmallVector<int64_t> clipCuts(ArrayRef<int64_t> cuts, int64_t lo,
                                     int64_t extent) {
  SmallVector<int64_t> clipped = {0};
  for (int64_t cut : cuts)
    if (cut > lo && cut < lo + extent)
      clipped.push_back(cut - lo);
  clipped.push_back(extent);
  return clipped;
}

static int64_t blocksOf(const Tiling &cuts) {
  int64_t blocks = 1;
  for (const SmallVector<int64_t> &dim : cuts)
    blocks *= int64_t(dim.size()) - 1;
  return blocks;
}

void AutoChooser::sliceCandidates(Node &node) {
  // A slice takes the producer's blocks it overlaps (the decomposition
  // looks through it): one candidate per producer candidate.
  auto slice = cast<SliceOp>(node.op);
  Candidate whole;
  whole.out = wholeTiling(slice.getType());
  whole.in.push_back(std::nullopt);
  int producer = node.producers[0];
  if (producer < 0) {
    node.candidates.push_back(whole);
    return;
  }
  ArrayRef<int64_t> shape = slice.getType().getShape();
  for (const Candidate &source : nodes[producer].candidates) {
    Candidate candidate = whole;
    candidate.in[0] = source.out;
    for (size_t d = 0; d < shape.size(); ++d)
      candidate.out[d] =
          clipCuts(source.out[d], slice.getOffsets()[d], shape[d]);
    candidate.blocks = blocksOf(candidate.out);
    node.candidates.push_back(std::move(candidate));
  }
}

void AutoChooser::assembleCandidates(Node &node) {
  // An assemble of blocks that come from decomposed ops: candidate c puts
  // together every block's candidate c (where its producer has one), so a
  // split that runs through both halves of a rotary embedding stays one.
  auto assemble = cast<AssembleOp>(node.op);
  Candidate whole;
  whole.out = wholeTiling(assemble.getType());
  whole.in.assign(assemble.getBlocks().size(), std::nullopt);
  size_t count = 0;
  for (int producer : node.producers)
    if (producer >= 0)
      count = std::max(count, nodes[producer].candidates.size());
  if (count == 0) {
    node.candidates.push_back(whole);
    return;
  }
  for (size_t c = 0; c < count; ++c) {
    Candidate candidate = whole;
    for (auto [t, block] : llvm::enumerate(assemble.getBlocks())) {
      SmallVector<int64_t> offsets = assemble.getBlockOffsets(t);
      auto type = cast<RankedTensorType>(block.getType());
      int producer = node.producers[t];
      const Candidate *source =
          producer >= 0 && c < nodes[producer].candidates.size()
              ? &nodes[producer].candidates[c]
              : nullptr;
      if (source)
        candidate.in[t] = source->out;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        SmallVector<int64_t> &cuts = candidate.out[d];
        cuts.push_back(offsets[d]);
        cuts.push_back(offsets[d] + type.getDimSize(d));
        if (source)
          for (int64_t cut : source->out[d])
            cuts.push_back(offsets[d] + cut);
      }
    }
    for (SmallVector<int64_t> &cuts : candidate.out) {
      llvm::sort(cuts);
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    }
    candidate.blocks = blocksOf(candidate.out);
    node.candidates.push_back(std::move(candidate));
  }
}

double AutoChooser::repartition(const Candidate &from, const Candidate &to,
                                unsigned operand, Operation *consumer) const {
  const std::optional<Tiling> &reads = to.in[operand];
  if (!reads)
    return 0;
  double aligned = 1;
  for (size_t d = 0; d < reads->size(); ++d)
    aligned *= alignedFraction((*reads)[d], from.out[d]);
  double colocated =
      std::min(1.0, double(from.blocks) / double(std::max<int64_t>(to.blocks, 1)));
  double moved = 1 - aligned * colocated;
  if (moved <= 1e-12)
    return 0;
  return linkSeconds(valueBytes(consumer->getOperand(operand).getType()) *
                     moved / double(to.blocks));
}

double AutoChooser::external(const Candidate &to, unsigned operand,
                             Operation *consumer) const {
  Value value = consumer->getOperand(operand);
  if (!to.in[operand] || isParameter(value) || to.blocks <= 1)
    return 0;
  // One block on one device: the other blocks' shares move.
  return linkSeconds(valueBytes(value.getType()) *
                     (1 - 1 / double(to.blocks)) / double(to.blocks));
}

void AutoChooser::solve() {
  for (Node &node : nodes) {
    node.best.assign(node.candidates.size(), 0);
    for (auto [c, candidate] : llvm::enumerate(node.candidates)) {
      double total = candidate.local;
      for (auto [t, producer] : llvm::enumerate(node.producers)) {
        if (producer < 0) {
          total += external(candidate, t, node.op);
          continue;
        }
        const Node &from = nodes[producer];
        double floor = *llvm::min_element(from.best);
        double least = std::numeric_limits<double>::infinity();
        for (auto [p, source] : llvm::enumerate(from.candidates))
          least = std::min(least, from.best[p] - floor +
                                      repartition(source, candidate, t,
                                                  node.op));
        total += least;
      }
      node.best[c] = total;
    }
  }
}

void AutoChooser::choose() {
  for (int n = int(nodes.size()) - 1; n >= 0; --n) {
    Node &node = nodes[n];
    double least = std::numeric_limits<double>::infinity();
    for (auto [c, candidate] : llvm::enumerate(node.candidates)) {
      double total = node.best[c];
      for (auto [consumer, operand] : node.consumers) {
        const Node &reader = nodes[consumer];
        total += repartition(candidate, reader.candidates[reader.choice],
                             operand, reader.op);
      }
      if (total < least) {
        least = total;
        node.choice = int(c);
      }
    }
  }
}

void AutoChooser::weighThroughput(ArrayRef<Operation *> ops) {
  llvm::DenseMap<Operation *, double> finish;
  double work = 0, path = 0;
  for (Operation *op : ops) {
    double cost = computeCostOf(*op, system), start = 0;
    for (Value operand : op->getOperands()) {
      auto found = finish.find(operand.getDefiningOp());
      if (found != finish.end())
        start = std::max(start, found->second);
    }
    finish[op] = start + cost;
    work += cost;
    path = std::max(path, start + cost);
  }
  if (weightOverride >= 0)
    throughputWeight = std::min(1.0, weightOverride);
  else if (path > 0)
    throughputWeight = std::min(1.0, work / double(devices) / path);
}

AutoStatistics AutoChooser::run(ArrayRef<Operation *> ops) {
  weighThroughput(ops);
  for (Operation *op : ops) {
    if (!isDecomposable(op) &&
        !isa<ConvOp, PoolOp, ReshapeOp, SliceOp, AssembleOp>(op))
      continue;
    Node node;
    node.op = op;
    for (auto [t, operand] : llvm::enumerate(op->getOperands())) {
      auto found = indexOf.find(operand.getDefiningOp());
      int producer = found == indexOf.end() ? -1 : found->second;
      node.producers.push_back(producer);
      if (producer >= 0)
        nodes[producer].consumers.push_back({int(nodes.size()), unsigned(t)});
    }
    indexOf[op] = int(nodes.size());
    nodes.push_back(std::move(node));
    Node &added = nodes.back();
    if (isDecomposable(op))
      einsumCandidates(added);
    else if (isa<ReshapeOp>(op))
      reshapeCandidates(added);
    else if (isa<SliceOp>(op))
      sliceCandidates(added);
    else if (isa<AssembleOp>(op))
      assembleCandidates(added);
    else
      windowCandidates(added);
  }
  solve();
  choose();
  Builder builder(ops.empty() ? nullptr : ops.front()->getContext());
  for (Node &node : nodes) {
    if (isa<ReshapeOp, SliceOp, AssembleOp>(node.op) || node.fixed)
      continue;
    const Candidate &chosen = node.candidates[node.choice];
    node.op->setAttr(kPartsAttr, builder.getDenseI64ArrayAttr(chosen.parts));
    ++(chosen.blocks > 1 ? statistics.split : statistics.whole);
  }
  return statistics;
}

} // namespace

AutoStatistics mlir::doppler::decompose::choosePartitionsAuto(
    ArrayRef<Operation *> ops, const SystemDescription &system,
    int64_t devices, double throughputWeight) {
  return AutoChooser(system, devices, throughputWeight).run(ops);
}
