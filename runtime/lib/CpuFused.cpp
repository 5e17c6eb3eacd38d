//===- CpuFused.cpp - Fused elementwise chains on the CPU -----------------===//
//
// A fused task applies a join program (JoinProgram.h) to every point of an
// elementwise spec. The kernel walks the dense output in its own index
// order, so a chunk of the walk is a contiguous range of the output:
//  - the iteration space is the output's dimensions with extent-1 ones
//    dropped and neighbours merged where every operand walks them as one;
//  - a chunk is a piece (at most kChunk elements) of one row of the
//    innermost dimension, or, when rows are shorter than that, as many
//    whole rows as fit, so short rows (a bias over 8 columns) still give
//    the joins long spans;
//  - an input is read in place where its chunk is contiguous (always for an
//    input laid out like the output), taken as one value where it is
//    broadcast along the chunk (the join then broadcasts it), and gathered
//    into a chunk buffer otherwise (transposed or broadcast-by-row inputs);
//    where rows are pieced and some input is gathered with a stride (a
//    transpose), 16 rows are walked together piece by piece, so their
//    gathers share the strided input's cache lines and pages;
//  - each step runs over the chunk with the span joins (CpuJoins.h) into a
//    chunk buffer; a step whose operands are all broadcast values is one
//    value too. Buffers are assigned once per kernel by liveness, so a
//    chain of any length uses a few of them (a step may overwrite the
//    operand it reads last), and the last step writes into the output.
// The buffers are per thread and grow once: a run allocates nothing after
// the first on its thread.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/TaskGraph.h"

#include "ContractionPlan.h"
#include "CpuJoins.h"

#include "Doppler/Support/ElementwiseWalk.h"
#include "Doppler/Support/JoinProgram.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

namespace doppler::runtime::cpu {
namespace {

using contraction::denseLayout;
using contraction::OperandLayout;

/// Elements per chunk: long enough that a span join's per-call cost and its
/// vector loop's tail vanish, short enough that a chunk's buffers (an
/// operand or two and a result per step) stay in L1.
constexpr int64_t kChunk = 512;

/// Rows walked together when an input is gathered with a stride (a
/// transposed operand): the rows' pieces are taken column piece by column
/// piece, so the 16 rows read neighbouring elements of the strided input
/// (one cache line, one page) instead of each row touching a new page per
/// element.
constexpr int64_t kTileRows = 16;

} // namespace

/// How a kernel reads one input (outside the anonymous namespace because
/// FusedPlan, declared in CpuKernels.h, holds it).
enum class FusedAccess : uint8_t {
  Dense,    ///< Laid out like the output: read in place at the chunk start.
  Constant, ///< One element for the whole space (all strides 0).
  Strided,  ///< Anything else: per chunk, in place, broadcast or gathered.
};

struct FusedPlan {
  ElementType type = ElementType::F32;
  Shape outShape;
  int64_t outElements = 0;
  unsigned numInputs = 0;
  JoinProgram program;
  /// Chunk buffer of each step's result; -1 for the last step, which writes
  /// into the output.
  std::vector<int> stepSlot;
  int numSlots = 0;
  /// The merged iteration space, outermost first (at least one dimension);
  /// the last one is the rows the chunks walk.
  std::vector<int64_t> extents;
  /// strides[i][d]: input i's stride along dimension d (0: broadcast).
  std::vector<std::vector<int64_t>> strides;
  std::vector<FusedAccess> access;
  int64_t inner = 1;      ///< Extent of the innermost dimension.
  int64_t outerCount = 1; ///< Rows: the product of the other extents.
  int64_t pieceLen = 1;   ///< Longest chunk within one row.
  int64_t chunkRows = 1;  ///< Whole rows per chunk (1: pieces of a row).
  /// Rows whose pieces are interleaved (kTileRows when pieces of rows are
  /// gathered with a stride, else 1).
  int64_t tileRows = 1;
};

namespace {

/// Assigns chunk buffers to the steps: a buffer is free again once the
/// last step reading it has run, and that step may write into it (span
/// joins allow the output to alias an operand).
void assignSlots(FusedPlan &plan) {
  const std::vector<JoinStep> &steps = plan.program.steps;
  std::vector<size_t> lastUse(steps.size(), 0);
  for (size_t j = 0; j < steps.size(); ++j)
    for (const JoinOperand &operand : steps[j].operands)
      if (operand.isStep)
        lastUse[operand.index] = j;
  plan.stepSlot.assign(steps.size(), -1);
  std::vector<int> free;
  for (size_t j = 0; j < steps.size(); ++j) {
    for (const JoinOperand &operand : steps[j].operands) {
      int slot = operand.isStep ? plan.stepSlot[operand.index] : -1;
      if (slot >= 0 && lastUse[operand.index] == j &&
          std::find(free.begin(), free.end(), slot) == free.end())
        free.push_back(slot);
    }
    if (j + 1 == steps.size())
      break; // The last step writes the output.
    if (free.empty()) {
      plan.stepSlot[j] = plan.numSlots++;
    } else {
      plan.stepSlot[j] = free.back();
      free.pop_back();
    }
  }
}

/// The output's dimensions with extent-1 ones dropped and neighbours merged
/// where every operand (output and inputs) walks them as one.
void buildSpace(FusedPlan &plan, const EinsumSpec &spec,
                const IndexSizes &sizes) {
  std::vector<OperandLayout> layouts = {
      denseLayout(spec.output, sizes.indices, sizes.sizes)};
  for (const std::string &term : spec.inputs)
    layouts.push_back(denseLayout(term, sizes.indices, sizes.sizes));
  std::vector<WalkDim> dims = mergedWalk(
      spec.output, sizes, layouts.size(),
      [&](size_t slot, char index) { return layouts[slot].strideOf(index); });
  if (dims.empty()) // A single point.
    dims.push_back(WalkDim{1, std::vector<int64_t>(layouts.size(), 0)});

  plan.strides.assign(plan.numInputs, {});
  plan.access.assign(plan.numInputs, FusedAccess::Strided);
  for (const WalkDim &dim : dims)
    plan.extents.push_back(dim.extent);
  for (unsigned i = 0; i < plan.numInputs; ++i) {
    bool dense = true, constant = true;
    for (const WalkDim &dim : dims) {
      plan.strides[i].push_back(dim.strides[i + 1]);
      dense &= dim.strides[i + 1] == dim.strides[0];
      constant &= dim.strides[i + 1] == 0;
    }
    plan.access[i] = dense ? FusedAccess::Dense
                     : constant ? FusedAccess::Constant
                                : FusedAccess::Strided;
  }
  plan.inner = plan.extents.back();
  plan.outerCount = 1;
  for (size_t d = 0; d + 1 < plan.extents.size(); ++d)
    plan.outerCount *= plan.extents[d];
  plan.pieceLen = std::min(plan.inner, kChunk);
  plan.chunkRows = plan.inner < kChunk ? kChunk / plan.inner : 1;
  plan.tileRows = 1;
  if (plan.chunkRows == 1)
    for (unsigned i = 0; i < plan.numInputs; ++i) {
      int64_t stride = plan.strides[i].back();
      if (plan.access[i] == FusedAccess::Strided && stride != 0 && stride != 1)
        plan.tileRows = kTileRows;
    }
}

/// A step's operand over the current chunk: `data[0..len)`, or `value` at
/// every position when `broadcast`.
template <typename T> struct Span {
  const T *data = nullptr;
  T value = 0;
  bool broadcast = false;
};

/// The calling thread's chunk buffers and walk state for element type T.
template <typename T> class FusedScratch {
public:
  FusedScratch() = default;
  FusedScratch(const FusedScratch &) = delete;
  FusedScratch &operator=(const FusedScratch &) = delete;
  ~FusedScratch() { std::free(block_); }

  /// `count` chunk buffers of kChunk elements, 64-byte aligned.
  T *buffers(size_t count) {
    size_t bytes = std::max<size_t>(64, count * kChunk * sizeof(T));
    if (bytes > bytes_) {
      std::free(block_);
      bytes = (bytes + 63) / 64 * 64;
      block_ = std::aligned_alloc(64, bytes);
      bytes_ = block_ ? bytes : 0;
    }
    return static_cast<T *>(block_);
  }

  std::vector<int64_t> rowOffsets; ///< [row of the chunk or tile][input]
  std::vector<int64_t> counter;    ///< The row odometer.
  std::vector<int64_t> offset;     ///< Each input's offset at that row.
  std::vector<Span<T>> inputs;

private:
  void *block_ = nullptr;
  size_t bytes_ = 0;
};

template <typename T> void fillSpan(T *out, T value, int64_t n) {
  std::fill(out, out + n, value);
}

/// One step over a chunk of `len` elements; `out` is its buffer.
template <typename T>
Span<T> runStep(const JoinStep &step, const Span<T> &a, const Span<T> &b,
                T *out, T *fillBuffer, int64_t len) {
  const JoinKind join = step.join;
  const T scalar = static_cast<T>(step.scalar);
  if (joinArity(join) == 1) {
    if (a.broadcast) {
      Span<T> result{nullptr, 0, true};
      applyJoinSpan(join, &a.value, nullptr, scalar, &result.value, 1);
      return result;
    }
    applyJoinSpan(join, a.data, nullptr, scalar, out, len);
    return Span<T>{out};
  }
  if (a.broadcast && b.broadcast) {
    Span<T> result{nullptr, 0, true};
    applyJoinSpan(join, &a.value, &b.value, scalar, &result.value, 1);
    return result;
  }
  if (b.broadcast) {
    applyJoinSpanBroadcastB(join, a.data, b.value, scalar, out, len);
  } else if (a.broadcast) {
    // Add and mul commute exactly in IEEE arithmetic; the others (and max
    // and min, whose NaN handling depends on the argument order) get the
    // broadcast value spelled out.
    if (join == JoinKind::Add || join == JoinKind::Mul) {
      applyJoinSpanBroadcastB(join, b.data, a.value, scalar, out, len);
    } else {
      fillSpan(fillBuffer, a.value, len);
      applyJoinSpan(join, fillBuffer, b.data, scalar, out, len);
    }
  } else {
    applyJoinSpan(join, a.data, b.data, scalar, out, len);
  }
  return Span<T>{out};
}

/// Moves the odometer `counter` (over the outer dimensions) one row on,
/// updating every input's offset.
void nextRow(const FusedPlan &plan, std::vector<int64_t> &counter,
             std::vector<int64_t> &offset) {
  for (size_t d = counter.size(); d-- > 0;) {
    for (unsigned i = 0; i < plan.numInputs; ++i)
      offset[i] += plan.strides[i][d];
    if (++counter[d] < plan.extents[d])
      return;
    for (unsigned i = 0; i < plan.numInputs; ++i)
      offset[i] -= plan.strides[i][d] * plan.extents[d];
    counter[d] = 0;
  }
}

template <typename T>
void runFused(const FusedPlan &plan, const void *const *inputs, void *output) {
  if (plan.outElements == 0)
    return;
  thread_local FusedScratch<T> scratch;
  const unsigned numInputs = plan.numInputs;
  const std::vector<JoinStep> &steps = plan.program.steps;
  // Step buffers, one gather buffer per input, one for a broadcast first
  // operand of a non-commuting join.
  T *buffers = scratch.buffers(plan.numSlots + numInputs + 1);
  T *gatherBuffers = buffers + plan.numSlots * kChunk;
  T *fillBuffer = gatherBuffers + numInputs * kChunk;
  const int64_t groupRows = std::max(plan.chunkRows, plan.tileRows);
  scratch.rowOffsets.resize(static_cast<size_t>(groupRows) * numInputs);
  scratch.counter.assign(plan.extents.size() - 1, 0);
  scratch.offset.assign(numInputs, 0);
  scratch.inputs.resize(numInputs);
  T *out = static_cast<T *>(output);
  const int64_t inner = plan.inner;
  const size_t innerDim = plan.extents.size() - 1;

  // Every step's result over the current chunk.
  std::array<Span<T>, kMaxJoinProgramSteps> results;

  // The chunk of `len` output elements from `start`: whole rows (`rows` >
  // 1) or a piece of one row from column `col0`; `rowOffsets` holds the
  // inputs' offsets at each of its rows.
  auto runChunk = [&](int64_t start, int64_t len, int64_t rows, int64_t col0,
                      const int64_t *rowOffsets) {
    for (unsigned i = 0; i < numInputs; ++i) {
      const T *base = static_cast<const T *>(inputs[i]);
      Span<T> &span = scratch.inputs[i];
      span = Span<T>{};
      if (plan.access[i] == FusedAccess::Dense) {
        span.data = base + start;
        continue;
      }
      if (plan.access[i] == FusedAccess::Constant) {
        span.value = base[0];
        span.broadcast = true;
        continue;
      }
      const int64_t stride = plan.strides[i][innerDim];
      T *gather = gatherBuffers + i * kChunk;
      if (rows == 1) {
        const T *from = base + rowOffsets[i] + col0 * stride;
        if (stride == 0) {
          span.value = *from;
          span.broadcast = true;
        } else if (stride == 1) {
          span.data = from;
        } else {
          for (int64_t k = 0; k < len; ++k)
            gather[k] = from[k * stride];
          span.data = gather;
        }
        continue;
      }
      for (int64_t r = 0; r < rows; ++r) {
        const T *from = base + rowOffsets[r * numInputs + i];
        T *to = gather + r * inner;
        if (stride == 1)
          std::memcpy(to, from, static_cast<size_t>(inner) * sizeof(T));
        else if (stride == 0)
          fillSpan(to, *from, inner);
        else
          for (int64_t k = 0; k < inner; ++k)
            to[k] = from[k * stride];
      }
      span.data = gather;
    }

    auto operand = [&](const JoinOperand &ref) -> const Span<T> & {
      return ref.isStep ? results[ref.index] : scratch.inputs[ref.index];
    };
    for (size_t j = 0; j < steps.size(); ++j) {
      const JoinStep &step = steps[j];
      const Span<T> &a = operand(step.operands[0]);
      const Span<T> &b =
          step.operands.size() > 1 ? operand(step.operands[1]) : a;
      T *to = plan.stepSlot[j] < 0 ? out + start
                                   : buffers + plan.stepSlot[j] * kChunk;
      results[j] = runStep(step, a, b, to, fillBuffer, len);
    }
    const Span<T> &last = results[steps.size() - 1];
    if (last.broadcast)
      fillSpan(out + start, last.value, len);
  };

  const int64_t *offsets = scratch.rowOffsets.data();
  for (int64_t row = 0; row < plan.outerCount;) {
    const int64_t rows = std::min(groupRows, plan.outerCount - row);
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(scratch.offset.begin(), scratch.offset.end(),
                scratch.rowOffsets.begin() + r * numInputs);
      nextRow(plan, scratch.counter, scratch.offset);
    }
    if (plan.chunkRows > 1) {
      runChunk(row * inner, rows * inner, rows, 0, offsets);
    } else {
      // Pieces of `rows` rows (one row unless tiling), column piece by
      // column piece.
      for (int64_t col0 = 0; col0 < inner; col0 += plan.pieceLen) {
        const int64_t len = std::min(plan.pieceLen, inner - col0);
        for (int64_t r = 0; r < rows; ++r)
          runChunk((row + r) * inner + col0, len, 1, col0,
                   offsets + r * numInputs);
      }
    }
    row += rows;
  }
}

} // namespace

Result<FusedKernel> FusedKernel::create(const EinsumSpec &spec,
                                        std::string_view program,
                                        const std::vector<Shape> &inputShapes,
                                        ElementType type) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure("fused on " + std::string(elementTypeName(type)) +
                           " is not supported on the CPU (f32, f64 only)");
  auto plan = std::make_shared<FusedPlan>();
  std::string error;
  std::optional<EinsumSignature> signature =
      checkFusedSignature(spec, program, inputShapes, &plan->program, &error);
  if (!signature)
    return Status::failure(error);
  plan->type = type;
  plan->outShape = signature->outputShape;
  plan->outElements = numElements(plan->outShape);
  plan->numInputs = spec.numInputs();
  assignSlots(*plan);
  buildSpace(*plan, spec, signature->sizes);
  return FusedKernel(std::move(plan));
}

void FusedKernel::run(const void *const *inputs, void *output) const {
  if (plan_->type == ElementType::F64)
    runFused<double>(*plan_, inputs, output);
  else
    runFused<float>(*plan_, inputs, output);
}

const Shape &FusedKernel::outputShape() const { return plan_->outShape; }

} // namespace doppler::runtime::cpu
