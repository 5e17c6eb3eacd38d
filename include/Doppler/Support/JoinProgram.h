//===- JoinProgram.h - Chains of joins applied per element ------*- C++ -*-===//
//
// A join program is what a fused elementwise op applies to one element of
// each of its inputs: a straight-line sequence of joins (EinsumSpec.h) whose
// operands are the op's inputs or earlier steps' results; the last step's
// result is the op's element. A single einsum is the one-step program
// "join(in0, in1)". The text form is shared by the dialect's attribute, the
// runtime plan's JSON and the runtime's C API:
//
//   add(in0, in1); gelu(s0)          bias add then GELU
//   silu(in0); mul(s0, in1)          SwiGLU's gate
//   scale(in0, 0.125); exp(s0)       a scalar join takes its constant last
//
// Every input and every step but the last is used at least once, so a
// program has no dead parts and prints back to the same text.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_JOINPROGRAM_H
#define DOPPLER_SUPPORT_JOINPROGRAM_H

#include "Doppler/Support/EinsumSpec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// The most steps a program may have: fusion stops there (a chain longer
/// than this is split into several ops).
constexpr unsigned kMaxJoinProgramSteps = 64;

/// What a step reads: input `index` of the op, or the result of step `index`.
struct JoinOperand {
  bool isStep = false;
  unsigned index = 0;
  bool operator==(const JoinOperand &other) const {
    return isStep == other.isStep && index == other.index;
  }
};

struct JoinStep {
  JoinKind join = JoinKind::Identity;
  /// joinArity(join) entries.
  std::vector<JoinOperand> operands;
  /// The scale/shift constant; 0 for joins that take none.
  double scalar = 0;
};

struct JoinProgram {
  unsigned numInputs = 0;
  std::vector<JoinStep> steps;

  /// Parses `text` for an op with `numInputs` inputs and validates it
  /// (see verify). On failure returns nullopt with a one-line message.
  static std::optional<JoinProgram> parse(std::string_view text,
                                          unsigned numInputs,
                                          std::string *error = nullptr);
  /// The one-step program of an einsum: join(in0[, in1]).
  static JoinProgram single(JoinKind join, double scalar = 0);

  /// Checks the program: 1 to kMaxJoinProgramSteps steps, each with its
  /// join's arity, operands naming an input below numInputs or an earlier
  /// step, a finite scalar exactly for the joins that take one, every input
  /// and every step but the last used. The first problem is a one-line
  /// message in `*error`.
  bool verify(std::string *error = nullptr) const;

  /// Canonical text ("add(in0, in1); gelu(s0)"); parse(str()) == *this.
  std::string str() const;

  /// Floating-point operations per element: the sum of the steps' joinFlops.
  unsigned flopsPerElement() const;

  /// The reference semantics: applies the steps to `inputs` (numInputs
  /// values) with applyJoin in double and returns the last step's result.
  double evaluate(const double *inputs) const;

  /// Inlines `producer` into `consumer` in place of the consumer's input
  /// `input` (which the producer computes). The result's inputs are given by
  /// the two maps: consumer input i (i != input) becomes input
  /// consumerInputMap[i], producer input j becomes producerInputMap[j], of
  /// `numInputs` in all (a value both read maps to one input). The
  /// producer's steps come first. The result may exceed
  /// kMaxJoinProgramSteps; callers check with verify().
  static JoinProgram inlineInput(const JoinProgram &consumer, unsigned input,
                                 const JoinProgram &producer,
                                 const std::vector<unsigned> &consumerInputMap,
                                 const std::vector<unsigned> &producerInputMap,
                                 unsigned numInputs);

  bool operator==(const JoinProgram &other) const;
};

/// The signature check of a fused elementwise op (the dialect's verifier,
/// the runtime's task graph): the spec contracts no index (every input index
/// is an output index, so the op is elementwise up to broadcasting), the
/// operands bind the indices consistently (inferIndexSizes), the program
/// parses for that many inputs, and the iteration space is within the
/// checked-size limit. On success `*program` (if given) holds the parsed
/// program. The first problem is a one-line message in `*error`.
std::optional<EinsumSignature>
checkFusedSignature(const EinsumSpec &spec, std::string_view programText,
                    const std::vector<std::vector<int64_t>> &inputShapes,
                    JoinProgram *program = nullptr,
                    std::string *error = nullptr);

/// Work of a fused op: per point, the program's flops; bytes as for an
/// einsum (each input read once, the output written once): the
/// intermediate results stay in registers.
EinsumWork estimateFusedWork(const EinsumSpec &spec, const IndexSizes &sizes,
                             const JoinProgram &program,
                             unsigned elementBytes);

} // namespace doppler

#endif // DOPPLER_SUPPORT_JOINPROGRAM_H
