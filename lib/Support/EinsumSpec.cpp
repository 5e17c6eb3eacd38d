//===- EinsumSpec.cpp - Einsum specs, joins and aggregations -------------===//

#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/ErrorString.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace doppler {
namespace {

struct JoinInfo {
  JoinKind kind;
  std::string_view name;
  unsigned arity;
  bool takesScalar;
  unsigned flops;
};

// One row per JoinKind, in enum order.
constexpr JoinInfo kJoins[] = {
    {JoinKind::Identity, "identity", 1, false, 0},
    {JoinKind::Add, "add", 2, false, 1},
    {JoinKind::Sub, "sub", 2, false, 1},
    {JoinKind::Mul, "mul", 2, false, 1},
    {JoinKind::Div, "div", 2, false, 1},
    {JoinKind::Max, "max", 2, false, 1},
    {JoinKind::Min, "min", 2, false, 1},
    {JoinKind::Pow, "pow", 2, false, 1},
    {JoinKind::Neg, "neg", 1, false, 1},
    {JoinKind::Exp, "exp", 1, false, 1},
    {JoinKind::Log, "log", 1, false, 1},
    {JoinKind::Sqrt, "sqrt", 1, false, 1},
    {JoinKind::Rsqrt, "rsqrt", 1, false, 1},
    {JoinKind::Reciprocal, "reciprocal", 1, false, 1},
    {JoinKind::Abs, "abs", 1, false, 1},
    {JoinKind::Relu, "relu", 1, false, 1},
    {JoinKind::Silu, "silu", 1, false, 3},
    {JoinKind::Gelu, "gelu", 1, false, 8},
    {JoinKind::Tanh, "tanh", 1, false, 1},
    {JoinKind::Sigmoid, "sigmoid", 1, false, 3},
    {JoinKind::Square, "square", 1, false, 1},
    {JoinKind::Scale, "scale", 1, true, 1},
    {JoinKind::Shift, "shift", 1, true, 1},
    {JoinKind::Erf, "erf", 1, false, 1},
    {JoinKind::Eq, "eq", 2, false, 1},
    {JoinKind::Ne, "ne", 2, false, 1},
    {JoinKind::Lt, "lt", 2, false, 1},
    {JoinKind::Le, "le", 2, false, 1},
    {JoinKind::Gt, "gt", 2, false, 1},
    {JoinKind::Ge, "ge", 2, false, 1},
    {JoinKind::Where, "where", 2, false, 1},
};
static_assert(sizeof(kJoins) / sizeof(kJoins[0]) == kNumJoinKinds,
              "one JoinInfo row per JoinKind");

constexpr std::string_view kAggNames[] = {"add", "mul", "max", "min"};

const JoinInfo &info(JoinKind kind) {
  return kJoins[static_cast<unsigned>(kind)];
}

} // namespace

std::string_view joinKindName(JoinKind kind) { return info(kind).name; }

std::optional<JoinKind> parseJoinKind(std::string_view name) {
  for (const JoinInfo &row : kJoins)
    if (row.name == name)
      return row.kind;
  return std::nullopt;
}

unsigned joinArity(JoinKind kind) { return info(kind).arity; }
bool joinTakesScalar(JoinKind kind) { return info(kind).takesScalar; }
unsigned joinFlops(JoinKind kind) { return info(kind).flops; }

double applyJoin(JoinKind kind, double a, double b, double scalar) {
  switch (kind) {
  case JoinKind::Identity: return a;
  case JoinKind::Add: return a + b;
  case JoinKind::Sub: return a - b;
  case JoinKind::Mul: return a * b;
  case JoinKind::Div: return a / b;
  case JoinKind::Max: return std::max(a, b);
  case JoinKind::Min: return std::min(a, b);
  case JoinKind::Pow: return std::pow(a, b);
  case JoinKind::Neg: return -a;
  case JoinKind::Exp: return std::exp(a);
  case JoinKind::Log: return std::log(a);
  case JoinKind::Sqrt: return std::sqrt(a);
  case JoinKind::Rsqrt: return 1.0 / std::sqrt(a);
  case JoinKind::Reciprocal: return 1.0 / a;
  case JoinKind::Abs: return std::fabs(a);
  case JoinKind::Relu: return a > 0 ? a : 0.0;
  case JoinKind::Silu: return a / (1.0 + std::exp(-a));
  case JoinKind::Gelu: // The tanh approximation, as PyTorch's gelu(approximate="tanh").
    return 0.5 * a *
           (1.0 + std::tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
  case JoinKind::Tanh: return std::tanh(a);
  case JoinKind::Sigmoid: return 1.0 / (1.0 + std::exp(-a));
  case JoinKind::Square: return a * a;
  case JoinKind::Scale: return a * scalar;
  case JoinKind::Shift: return a + scalar;
  case JoinKind::Erf: return std::erf(a);
  case JoinKind::Eq: return a == b ? 1.0 : 0.0;
  case JoinKind::Ne: return a != b ? 1.0 : 0.0;
  case JoinKind::Lt: return a < b ? 1.0 : 0.0;
  case JoinKind::Le: return a <= b ? 1.0 : 0.0;
  case JoinKind::Gt: return a > b ? 1.0 : 0.0;
  case JoinKind::Ge: return a >= b ? 1.0 : 0.0;
  case JoinKind::Where: return a != 0 ? b : -0.0;
  }
  return a;
}

std::string_view aggKindName(AggKind kind) {
  return kAggNames[static_cast<unsigned>(kind)];
}

std::optional<AggKind> parseAggKind(std::string_view name) {
  for (unsigned i = 0; i < kNumAggKinds; ++i)
    if (kAggNames[i] == name)
      return static_cast<AggKind>(i);
  return std::nullopt;
}

double aggIdentity(AggKind kind) {
  switch (kind) {
  case AggKind::Add: return 0.0;
  case AggKind::Mul: return 1.0;
  case AggKind::Max: return -std::numeric_limits<double>::infinity();
  case AggKind::Min: return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

double applyAgg(AggKind kind, double acc, double value) {
  switch (kind) {
  case AggKind::Add: return acc + value;
  case AggKind::Mul: return acc * value;
  case AggKind::Max: return std::max(acc, value);
  case AggKind::Min: return std::min(acc, value);
  }
  return acc;
}

//===----------------------------------------------------------------------===//
// EinsumSpec
//===----------------------------------------------------------------------===//

std::optional<EinsumSpec> EinsumSpec::parse(std::string_view text,
                                            std::string *error) {
  size_t arrow = text.find("->");
  if (arrow == std::string_view::npos) {
    setError(error, "spec '" + std::string(text) +
                        "' has no '->' (write e.g. \"ij,jk->ik\")");
    return std::nullopt;
  }
  if (text.find("->", arrow + 2) != std::string_view::npos) {
    setError(error, "spec '" + std::string(text) + "' has more than one '->'");
    return std::nullopt;
  }
  EinsumSpec spec;
  std::string_view lhs = text.substr(0, arrow);
  spec.output = std::string(text.substr(arrow + 2));

  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    spec.inputs.emplace_back(lhs.substr(start, comma == std::string_view::npos
                                                   ? std::string_view::npos
                                                   : comma - start));
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }

  auto checkTerm = [&](const std::string &term, const std::string &what) {
    for (size_t i = 0; i < term.size(); ++i) {
      char c = term[i];
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        setError(error, "spec '" + std::string(text) + "': " + what +
                            " has invalid character '" + std::string(1, c) +
                            "' (indices are single letters)");
        return false;
      }
      if (term.find(c, i + 1) != std::string::npos) {
        setError(error, "spec '" + std::string(text) + "': index '" +
                            std::string(1, c) + "' repeated in " + what);
        return false;
      }
    }
    return true;
  };
  for (size_t i = 0; i < spec.inputs.size(); ++i)
    if (!checkTerm(spec.inputs[i], "input " + std::to_string(i)))
      return std::nullopt;
  if (!checkTerm(spec.output, "the output"))
    return std::nullopt;
  for (char c : spec.output) {
    bool found = std::any_of(
        spec.inputs.begin(), spec.inputs.end(),
        [&](const std::string &t) { return t.find(c) != std::string::npos; });
    if (!found) {
      setError(error, "spec '" + std::string(text) + "': output index '" +
                          std::string(1, c) + "' appears in no input");
      return std::nullopt;
    }
  }
  return spec;
}

std::string EinsumSpec::allIndices() const {
  std::string all;
  auto add = [&](const std::string &term) {
    for (char c : term)
      if (all.find(c) == std::string::npos)
        all.push_back(c);
  };
  for (const std::string &term : inputs)
    add(term);
  add(output);
  return all;
}

std::string EinsumSpec::contractedIndices() const {
  std::string contracted;
  for (char c : allIndices())
    if (output.find(c) == std::string::npos)
      contracted.push_back(c);
  return contracted;
}

bool EinsumSpec::isIdentity() const {
  return inputs.size() == 1 && inputs[0] == output;
}

std::string EinsumSpec::str() const {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i)
      s.push_back(',');
    s += inputs[i];
  }
  return s + "->" + output;
}

//===----------------------------------------------------------------------===//
// Shapes and work
//===----------------------------------------------------------------------===//

int64_t IndexSizes::sizeOf(char index) const {
  size_t pos = indices.find(index);
  return pos == std::string::npos ? -1 : sizes[pos];
}

int64_t IndexSizes::iterationSpace() const {
  int64_t product = 1;
  for (int64_t s : sizes)
    product *= s;
  return product;
}

std::optional<IndexSizes>
inferIndexSizes(const EinsumSpec &spec,
                const std::vector<std::vector<int64_t>> &inputShapes,
                std::string *error) {
  if (inputShapes.size() != spec.inputs.size()) {
    setError(error, "spec '" + spec.str() + "' has " +
                        std::to_string(spec.inputs.size()) +
                        " input term(s) but " +
                        std::to_string(inputShapes.size()) +
                        " operand(s) were given");
    return std::nullopt;
  }
  IndexSizes result;
  result.indices = spec.allIndices();
  result.sizes.assign(result.indices.size(), -1);
  for (size_t i = 0; i < inputShapes.size(); ++i) {
    const std::string &term = spec.inputs[i];
    const std::vector<int64_t> &shape = inputShapes[i];
    if (term.size() != shape.size()) {
      setError(error, "operand " + std::to_string(i) + " has rank " +
                          std::to_string(shape.size()) + " but its term '" +
                          term + "' in spec '" + spec.str() + "' has " +
                          std::to_string(term.size()) + " indices");
      return std::nullopt;
    }
    for (size_t d = 0; d < term.size(); ++d) {
      size_t pos = result.indices.find(term[d]);
      int64_t &bound = result.sizes[pos];
      if (bound >= 0 && bound != shape[d]) {
        setError(error, "index '" + std::string(1, term[d]) +
                            "' is bound to both " + std::to_string(bound) +
                            " and " + std::to_string(shape[d]) +
                            " (operand " + std::to_string(i) + ", dimension " +
                            std::to_string(d) + ")");
        return std::nullopt;
      }
      bound = shape[d];
    }
  }
  return result;
}

std::vector<int64_t> outputShape(const EinsumSpec &spec,
                                 const IndexSizes &sizes) {
  std::vector<int64_t> shape;
  shape.reserve(spec.output.size());
  for (char c : spec.output)
    shape.push_back(sizes.sizeOf(c));
  return shape;
}

std::optional<EinsumSignature> checkEinsumSignature(
    const EinsumSpec &spec, JoinKind join, std::optional<double> scalar,
    std::optional<AggKind> aggregation,
    const std::vector<std::vector<int64_t>> &inputShapes, std::string *error) {
  std::optional<IndexSizes> sizes = inferIndexSizes(spec, inputShapes, error);
  if (!sizes)
    return std::nullopt;
  const std::string joinName(joinKindName(join));
  const unsigned arity = joinArity(join);
  if (arity != inputShapes.size()) {
    setError(error, "join '" + joinName + "' takes " + std::to_string(arity) +
                        " input(s) but the op has " +
                        std::to_string(inputShapes.size()));
    return std::nullopt;
  }
  if (joinTakesScalar(join) && !scalar) {
    setError(error, "join '" + joinName + "' needs a scalar, e.g. join(" +
                        joinName + ", 5.0e-01)");
    return std::nullopt;
  }
  if (!joinTakesScalar(join) && scalar) {
    setError(error, "join '" + joinName + "' takes no scalar");
    return std::nullopt;
  }
  if (scalar && !std::isfinite(*scalar)) {
    setError(error, "scalar must be finite");
    return std::nullopt;
  }
  const std::string contracted = spec.contractedIndices();
  if (!contracted.empty() && !aggregation) {
    setError(error, "spec '" + spec.str() + "' contracts index(es) '" +
                        contracted +
                        "' but no aggregation is given (e.g. agg(add))");
    return std::nullopt;
  }
  if (contracted.empty() && aggregation) {
    setError(error, "has aggregation '" +
                        std::string(aggKindName(*aggregation)) +
                        "' but spec '" + spec.str() + "' contracts no index");
    return std::nullopt;
  }
  // Every tensor of the einsum is a projection of its iteration space, so
  // one checked product bounds them all (and the kernels' loop counters).
  if (!checkedElementCount(sizes->sizes)) {
    double points = 1;
    for (int64_t s : sizes->sizes)
      points *= static_cast<double>(s);
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.3g", points);
    setError(error, "spec '" + spec.str() + "' iterates over " + buffer +
                        " points, more than the limit of " +
                        checkedSizeLimitText());
    return std::nullopt;
  }
  EinsumSignature signature;
  signature.outputShape = outputShape(spec, *sizes);
  signature.sizes = std::move(*sizes);
  return signature;
}

EinsumWork estimateEinsumWork(const EinsumSpec &spec, const IndexSizes &sizes,
                              JoinKind join, bool hasAggregation,
                              unsigned elementBytes) {
  EinsumWork work;
  // In doubles: the cost of an iteration space is meaningful past int64_t.
  double points = 1;
  for (int64_t s : sizes.sizes)
    points *= static_cast<double>(s);
  work.flops = points * (joinFlops(join) + (hasAggregation ? 1 : 0));
  for (const std::string &term : spec.inputs) {
    double elements = 1;
    for (char c : term)
      elements *= static_cast<double>(sizes.sizeOf(c));
    work.bytesRead += elements * elementBytes;
  }
  double outElements = 1;
  for (char c : spec.output)
    outElements *= static_cast<double>(sizes.sizeOf(c));
  work.bytesWritten = outElements * elementBytes;
  return work;
}

} // namespace doppler
