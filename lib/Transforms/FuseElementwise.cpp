//===- FuseElementwise.cpp - Merge chains of elementwise ops --------------===//
//
// doppler-fuse-elementwise: a producer-consumer chain of elementwise ops
// (einsums that contract nothing, or fused ops) becomes one doppler.fused
// whose join program applies the chain's joins per element. Bias add then
// GELU, softmax's subtract then exp, SwiGLU's silu then multiply each read
// and write their operands once instead of once per join, and the runtime
// launches one kernel instead of several.
//
// The pass walks each block in program order and, for each elementwise op,
// merges its producers into it while they qualify (see the pass
// description). Producers come first in a block, so by the time an op is
// visited its producers have already absorbed their own chains: a chain is
// fused front to back, and one longer than max-steps is cut where the next
// merge would exceed it.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/JoinProgram.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERFUSEELEMENTWISEPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// An elementwise op seen uniformly: its spec, its join program (a single
/// einsum is a one-step program) and its operands.
struct Elementwise {
  ::doppler::EinsumSpec spec;
  ::doppler::JoinProgram program;
  SmallVector<Value> inputs;
};

/// The op as an elementwise computation, or nullopt when it is not one: an
/// einsum that aggregates or contracts is a reduction or a contraction and
/// cannot run inside a per-element program.
std::optional<Elementwise> asElementwise(Operation *op) {
  Elementwise result;
  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    // A conversion (identity to another element type) changes the type the
    // program computes in: it stays an einsum.
    if (einsum.getAggregation() ||
        getElementTypeOrSelf(einsum.getInputs()[0].getType()) !=
            getElementTypeOrSelf(einsum.getType()))
      return std::nullopt;
    result.spec = einsum.getParsedSpec();
    if (result.spec.contracts())
      return std::nullopt;
    double scalar = 0;
    if (std::optional<APFloat> value = einsum.getScalar())
      scalar = value->convertToDouble();
    result.program =
        ::doppler::JoinProgram::single(toSupport(einsum.getJoin()), scalar);
    result.inputs.assign(einsum.getInputs().begin(), einsum.getInputs().end());
    return result;
  }
  if (auto fused = dyn_cast<FusedOp>(op)) {
    result.spec = fused.getParsedSpec();
    result.program = fused.getParsedProgram();
    result.inputs.assign(fused.getInputs().begin(), fused.getInputs().end());
    return result;
  }
  return std::nullopt;
}

/// Discardable attributes of the consumer that no longer hold for the
/// merged op: costs and schedule times describe the consumer alone and are
/// recomputed by doppler-annotate-costs / doppler-simulate; partition counts
/// name the consumer's indices, which the merged op may not have.
bool isStaleAfterFusion(StringRef name) {
  return name == kComputeCostAttr || name == kTransferCostAttr ||
         name == kStartAttr || name == kEndAttr || name == kMakespanAttr ||
         name == kPartsAttr;
}

class Fuser {
public:
  explicit Fuser(int64_t maxSteps) : maxSteps(maxSteps) {}

  /// Merges into `consumer` the first producer that qualifies; returns the
  /// merged op, or null when no producer does.
  Operation *fuseOnce(Operation *consumer);
  int64_t getMerges() const { return merges; }

private:
  bool canMerge(Operation *producer, Operation *consumer) const;

  int64_t maxSteps;
  int64_t merges = 0;
};

bool Fuser::canMerge(Operation *producer, Operation *consumer) const {
  // A second use would need the intermediate tensor anyway: merging would
  // compute the chain twice.
  if (!producer || !producer->getResult(0).hasOneUse())
    return false;
  if (producer->getBlock() != consumer->getBlock())
    return false;
  // Equal attributes, or both absent: fusion never moves work between
  // devices, so the pass is safe after placement.
  return producer->getDiscardableAttr(kDeviceAttr) ==
         consumer->getDiscardableAttr(kDeviceAttr);
}

Operation *Fuser::fuseOnce(Operation *consumerOp) {
  std::optional<Elementwise> consumer = asElementwise(consumerOp);
  if (!consumer)
    return nullptr;
  for (auto [slot, operand] : llvm::enumerate(consumer->inputs)) {
    Operation *producerOp = operand.getDefiningOp();
    if (!canMerge(producerOp, consumerOp))
      continue;
    std::optional<Elementwise> producer = asElementwise(producerOp);
    if (!producer)
      continue;
    // A consumer that broadcasts the producer's result along indices the
    // producer lacks would recompute the producer's joins at every point of
    // that broadcast (a row-wise rsqrt evaluated once per element of the
    // row): merge only when both cover the same iteration space. The
    // consumer contracts nothing, so that is when the term it reads the
    // producer with has all its output indices.
    const std::string &readAs = consumer->spec.inputs[slot];
    if (readAs.size() != consumer->spec.output.size())
      continue;
    // The merged program has exactly the steps of both.
    if (static_cast<int64_t>(producer->program.steps.size() +
                             consumer->program.steps.size()) > maxSteps)
      continue;

    // The producer's output index at position k is what the consumer calls
    // consumer->spec.inputs[slot][k]. Every producer index is an output
    // index (it contracts nothing), so the map renames all of them.
    const std::string &producerOut = producer->spec.output;
    std::string rename(128, '\0');
    for (auto [from, to] : llvm::zip_equal(producerOut, readAs))
      rename[static_cast<unsigned char>(from)] = to;

    // The merged operands: the producer's take the consumer's slot, in
    // order; a value read with the same term twice becomes one operand.
    SmallVector<Value> inputs;
    std::vector<std::string> terms;
    auto addInput = [&](Value value, const std::string &term) -> unsigned {
      for (unsigned i = 0; i < inputs.size(); ++i)
        if (inputs[i] == value && terms[i] == term)
          return i;
      inputs.push_back(value);
      terms.push_back(term);
      return static_cast<unsigned>(inputs.size() - 1);
    };
    std::vector<unsigned> consumerMap(consumer->inputs.size(), 0);
    std::vector<unsigned> producerMap(producer->inputs.size(), 0);
    for (auto [i, value] : llvm::enumerate(consumer->inputs)) {
      if (i != slot) {
        consumerMap[i] = addInput(value, consumer->spec.inputs[i]);
        continue;
      }
      for (auto [j, producerValue] : llvm::enumerate(producer->inputs)) {
        std::string term = producer->spec.inputs[j];
        for (char &index : term)
          index = rename[static_cast<unsigned char>(index)];
        producerMap[j] = addInput(producerValue, term);
      }
    }

    ::doppler::JoinProgram program = ::doppler::JoinProgram::inlineInput(
        consumer->program, static_cast<unsigned>(slot), producer->program,
        consumerMap, producerMap, static_cast<unsigned>(inputs.size()));
    // inlineInput keeps every input and step used, so this only fails on
    // programs past the hard step limit, which maxSteps already excludes.
    if (!program.verify())
      continue;

    ::doppler::EinsumSpec spec;
    spec.inputs = std::move(terms);
    spec.output = consumer->spec.output;

    OpBuilder builder(consumerOp);
    auto fused = FusedOp::create(builder, consumerOp->getLoc(),
                                 consumerOp->getResult(0).getType(),
                                 spec.str(), program.str(), inputs);
    for (NamedAttribute attr : consumerOp->getDiscardableAttrs())
      if (!isStaleAfterFusion(attr.getName().strref()))
        fused->setAttr(attr.getName(), attr.getValue());
    // Name the merged op after both parts, so diagnostics about it point
    // at the source of each.
    fused->setLoc(builder.getFusedLoc({producerOp->getLoc(),
                                       consumerOp->getLoc()}));
    consumerOp->getResult(0).replaceAllUsesWith(fused.getResult());
    consumerOp->erase();
    producerOp->erase();
    ++merges;
    return fused;
  }
  return nullptr;
}

class FuseElementwisePass
    : public mlir::doppler::impl::DopplerFuseElementwisePassBase<
          FuseElementwisePass> {
public:
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (maxSteps < 1 ||
        maxSteps > static_cast<int64_t>(::doppler::kMaxJoinProgramSteps))
      return emitError(UnknownLoc::get(context))
             << "doppler-fuse-elementwise: option 'max-steps' must be "
                "between 1 and "
             << ::doppler::kMaxJoinProgramSteps << ", got "
             << maxSteps.getValue();
    return success();
  }

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    Fuser fuser(maxSteps);
    for (Block *block : blocks) {
      // Merging erases the current op and its producer (which precedes it)
      // and inserts the merged op in the current op's place, so the next op
      // the iterator visits is untouched.
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        Operation *current = &op;
        while (Operation *merged = fuser.fuseOnce(current))
          current = merged;
      }
    }
    numMerges += fuser.getMerges();
  }
};

} // namespace
