//===- EinsumSpec.h - Einsum specs, joins and aggregations ------*- C++ -*-===//
//
// The scalar vocabulary of Doppler's einsums, shared by the dialect, the
// placement core and the runtime. MLIR-free and exception-free: errors come
// back as strings so that both -fno-exceptions MLIR code and plain C++ can
// report them.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_EINSUMSPEC_H
#define DOPPLER_SUPPORT_EINSUMSPEC_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// The scalar function an einsum applies to one element of each input.
/// Keep in sync with `Doppler_JoinKind` in DopplerAttrs.td (a unit test
/// checks every case maps both ways by name).
enum class JoinKind : uint32_t {
  Identity, Add, Sub, Mul, Div, Max, Min, Pow,
  Neg, Exp, Log, Sqrt, Rsqrt, Reciprocal, Abs, Relu, Silu, Gelu, Tanh,
  Sigmoid, Square, Scale, Shift, Erf,
  // Comparisons, 1.0 where true and 0.0 where false (NaN: only `ne` is
  // true), and `where(c, a)` = c != 0 ? a : -0.0 (-0.0 is the identity of
  // addition, so where(c, a) + where(1 - c, b) selects exactly).
  Eq, Ne, Lt, Le, Gt, Ge, Where,
};
constexpr unsigned kNumJoinKinds = static_cast<unsigned>(JoinKind::Where) + 1;

/// How an einsum combines the values of a contracted index.
enum class AggKind : uint32_t { Add, Mul, Max, Min };
constexpr unsigned kNumAggKinds = 4;

std::string_view joinKindName(JoinKind kind);
std::optional<JoinKind> parseJoinKind(std::string_view name);
/// Number of inputs the join takes (1 or 2).
unsigned joinArity(JoinKind kind);
/// Whether the join reads the op's scalar constant (`scale`, `shift`).
bool joinTakesScalar(JoinKind kind);
/// Floating-point operations one application of the join costs. Counts
/// transcendental functions as one operation, as roofline models usually do.
unsigned joinFlops(JoinKind kind);
/// Applies the join to one element of each input (`b` unused for unary
/// joins). The reference semantics every backend must match.
double applyJoin(JoinKind kind, double a, double b, double scalar);

std::string_view aggKindName(AggKind kind);
std::optional<AggKind> parseAggKind(std::string_view name);
/// The aggregation's identity element (0 for add, 1 for mul, -inf/+inf).
double aggIdentity(AggKind kind);
double applyAgg(AggKind kind, double acc, double value);

/// A parsed einsum spec such as "bij,bjk->bik". Index names are single
/// letters; a term may be empty (a scalar). An index may appear at most once
/// per term; output indices must be unique and appear in some input.
struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;

  /// Parses `text`; on failure returns nullopt and sets `*error` to a
  /// one-line message (without trailing period).
  static std::optional<EinsumSpec> parse(std::string_view text,
                                         std::string *error = nullptr);

  unsigned numInputs() const { return static_cast<unsigned>(inputs.size()); }
  /// All distinct indices, in order of first appearance (inputs, then
  /// output).
  std::string allIndices() const;
  /// Indices that appear in some input but not in the output, in order of
  /// first appearance.
  std::string contractedIndices() const;
  bool contracts() const { return !contractedIndices().empty(); }
  /// True for "abc->abc": one input whose term equals the output.
  bool isIdentity() const;
  std::string str() const;
};

/// Index extents deduced from the inputs' shapes.
struct IndexSizes {
  std::string indices;        ///< EinsumSpec::allIndices()
  std::vector<int64_t> sizes; ///< extent of each index, same order

  int64_t sizeOf(char index) const;
  /// Product of every extent: the number of points the einsum visits.
  int64_t iterationSpace() const;
};

/// Binds every index to the extent it has in the inputs. Fails (message in
/// `*error`) when the operand count differs from the spec's terms, a term's
/// length differs from its operand's rank, or an index is bound to two
/// different extents.
std::optional<IndexSizes>
inferIndexSizes(const EinsumSpec &spec,
                const std::vector<std::vector<int64_t>> &inputShapes,
                std::string *error = nullptr);

/// The output shape implied by `sizes`.
std::vector<int64_t> outputShape(const EinsumSpec &spec,
                                 const IndexSizes &sizes);

/// What an einsum's operands bind and the result shape they imply.
struct EinsumSignature {
  IndexSizes sizes;
  std::vector<int64_t> outputShape;
};

/// The signature check every reader of an einsum makes (the dialect's
/// verifier; the runtime's task graph and kernels), in one order: operand
/// count, ranks and index extents (inferIndexSizes), the join's arity, its
/// scalar (given exactly when the join takes one, and finite), and the
/// aggregation (given exactly when the spec contracts). The first mismatch
/// is a one-line message in `*error`, worded as the verifier reports it.
std::optional<EinsumSignature>
checkEinsumSignature(const EinsumSpec &spec, JoinKind join,
                     std::optional<double> scalar,
                     std::optional<AggKind> aggregation,
                     const std::vector<std::vector<int64_t>> &inputShapes,
                     std::string *error = nullptr);

/// Work of one einsum application, for cost models.
struct EinsumWork {
  double flops = 0;
  double bytesRead = 0;
  double bytesWritten = 0;
};

/// Flops: per point of the iteration space, the join's cost plus one
/// operation of the aggregation when the spec contracts (so a matmul
/// M x K x N costs 2*M*N*K). Bytes: every input read once, the output
/// written once, `elementBytes` each.
EinsumWork estimateEinsumWork(const EinsumSpec &spec, const IndexSizes &sizes,
                              JoinKind join, bool hasAggregation,
                              unsigned elementBytes);

} // namespace doppler

#endif // DOPPLER_SUPPORT_EINSUMSPEC_H
