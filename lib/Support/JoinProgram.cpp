//===- JoinProgram.cpp - Chains of joins applied per element --------------===//

#include "Doppler/Support/JoinProgram.h"

#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/NumberFormat.h"
#include "Doppler/Support/ParseNumber.h"

#include <cctype>
#include <cmath>

namespace doppler {
namespace {

std::string operandName(const JoinOperand &operand) {
  return (operand.isStep ? "s" : "in") + std::to_string(operand.index);
}

/// A cursor over the program text; every `expect`/`parse` skips blanks
/// first.
class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}

  void skipBlanks() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool atEnd() {
    skipBlanks();
    return pos_ >= text_.size();
  }
  bool consume(char c) {
    skipBlanks();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  /// Letters, digits, '_', '.', '+', '-': a join name, an operand or a
  /// number (its validity is checked by the caller).
  std::string word() {
    skipBlanks();
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' &&
          c != '.' && c != '+' && c != '-')
        break;
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string where() {
    skipBlanks();
    if (pos_ >= text_.size())
      return "at the end";
    return "at '" + std::string(text_.substr(pos_, 12)) + "'";
  }

private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::optional<JoinOperand> parseOperand(const std::string &word) {
  JoinOperand operand;
  std::string digits;
  if (word.size() > 2 && word.compare(0, 2, "in") == 0)
    digits = word.substr(2);
  else if (word.size() > 1 && word[0] == 's') {
    operand.isStep = true;
    digits = word.substr(1);
  } else {
    return std::nullopt;
  }
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
  std::optional<int64_t> index = parseInt64(digits);
  if (!index || *index > 1'000'000)
    return std::nullopt;
  operand.index = static_cast<unsigned>(*index);
  return operand;
}

} // namespace

std::optional<JoinProgram> JoinProgram::parse(std::string_view text,
                                              unsigned numInputs,
                                              std::string *error) {
  JoinProgram program;
  program.numInputs = numInputs;
  Lexer lexer(text);
  do {
    if (program.steps.size() >= kMaxJoinProgramSteps) {
      setError(error, "join program has more than " +
                          std::to_string(kMaxJoinProgramSteps) + " steps");
      return std::nullopt;
    }
    std::string stepName = "step s" + std::to_string(program.steps.size());
    std::string name = lexer.word();
    std::optional<JoinKind> join = parseJoinKind(name);
    if (!join) {
      setError(error, stepName + ": unknown join '" + name + "'");
      return std::nullopt;
    }
    if (!lexer.consume('(')) {
      setError(error, stepName + ": expected '(' " + lexer.where());
      return std::nullopt;
    }
    JoinStep step;
    step.join = *join;
    bool scalarSeen = false;
    do {
      std::string word = lexer.word();
      if (std::optional<JoinOperand> operand = parseOperand(word)) {
        if (scalarSeen) {
          setError(error, stepName + ": the scalar comes after the operands");
          return std::nullopt;
        }
        step.operands.push_back(*operand);
        continue;
      }
      std::optional<double> value =
          word.empty() ? std::nullopt : parseFiniteDouble(word);
      if (!value || scalarSeen) {
        setError(error, stepName + ": expected an operand (inN or sN)" +
                            (scalarSeen ? "" : " or a finite scalar") + " " +
                            (word.empty() ? lexer.where()
                                          : "at '" + word + "'"));
        return std::nullopt;
      }
      if (!joinTakesScalar(*join)) {
        setError(error, stepName + ": join '" + name + "' takes no scalar");
        return std::nullopt;
      }
      step.scalar = *value;
      scalarSeen = true;
    } while (lexer.consume(','));
    if (!lexer.consume(')')) {
      setError(error, stepName + ": expected ',' or ')' " + lexer.where());
      return std::nullopt;
    }
    if (joinTakesScalar(*join) && !scalarSeen) {
      setError(error, stepName + ": join '" + name + "' needs a scalar");
      return std::nullopt;
    }
    program.steps.push_back(std::move(step));
  } while (lexer.consume(';'));
  if (!lexer.atEnd()) {
    setError(error, "expected ';' or the end " + lexer.where());
    return std::nullopt;
  }
  if (!program.verify(error))
    return std::nullopt;
  return program;
}

JoinProgram JoinProgram::single(JoinKind join, double scalar) {
  JoinProgram program;
  program.numInputs = joinArity(join);
  JoinStep step;
  step.join = join;
  for (unsigned i = 0; i < program.numInputs; ++i)
    step.operands.push_back(JoinOperand{false, i});
  step.scalar = joinTakesScalar(join) ? scalar : 0;
  program.steps.push_back(std::move(step));
  return program;
}

bool JoinProgram::verify(std::string *error) const {
  if (steps.empty()) {
    setError(error, "join program has no steps");
    return false;
  }
  if (steps.size() > kMaxJoinProgramSteps) {
    setError(error, "join program has " + std::to_string(steps.size()) +
                        " steps, more than " +
                        std::to_string(kMaxJoinProgramSteps));
    return false;
  }
  std::vector<bool> inputUsed(numInputs, false), stepUsed(steps.size(), false);
  for (size_t s = 0; s < steps.size(); ++s) {
    const JoinStep &step = steps[s];
    std::string stepName = "step s" + std::to_string(s);
    std::string name(joinKindName(step.join));
    if (step.operands.size() != joinArity(step.join)) {
      setError(error, stepName + ": join '" + name + "' takes " +
                          std::to_string(joinArity(step.join)) +
                          " operand(s), got " +
                          std::to_string(step.operands.size()));
      return false;
    }
    for (const JoinOperand &operand : step.operands) {
      if (operand.isStep ? operand.index >= s : operand.index >= numInputs) {
        setError(error,
                 stepName + ": operand " + operandName(operand) +
                     (operand.isStep
                          ? " is not an earlier step"
                          : " is out of range (the op has " +
                                std::to_string(numInputs) + " input(s))"));
        return false;
      }
      (operand.isStep ? stepUsed : inputUsed)[operand.index] = true;
    }
    if (!std::isfinite(step.scalar) ||
        (!joinTakesScalar(step.join) && step.scalar != 0)) {
      setError(error, stepName + ": join '" + name + "' has scalar " +
                          formatShortest(step.scalar));
      return false;
    }
  }
  for (unsigned i = 0; i < numInputs; ++i)
    if (!inputUsed[i]) {
      setError(error, "input in" + std::to_string(i) + " is never read");
      return false;
    }
  for (size_t s = 0; s + 1 < steps.size(); ++s)
    if (!stepUsed[s]) {
      setError(error, "step s" + std::to_string(s) + " is never read");
      return false;
    }
  return true;
}

std::string JoinProgram::str() const {
  std::string text;
  for (size_t s = 0; s < steps.size(); ++s) {
    const JoinStep &step = steps[s];
    if (s)
      text += "; ";
    text += joinKindName(step.join);
    text += '(';
    for (size_t i = 0; i < step.operands.size(); ++i) {
      if (i)
        text += ", ";
      text += operandName(step.operands[i]);
    }
    if (joinTakesScalar(step.join))
      text += ", " + formatShortest(step.scalar);
    text += ')';
  }
  return text;
}

unsigned JoinProgram::flopsPerElement() const {
  unsigned flops = 0;
  for (const JoinStep &step : steps)
    flops += joinFlops(step.join);
  return flops;
}

double JoinProgram::evaluate(const double *inputs) const {
  // Programs are short (kMaxJoinProgramSteps); a fixed buffer keeps the
  // interpreter's per-element loop free of allocations.
  double results[kMaxJoinProgramSteps];
  auto value = [&](const JoinOperand &operand) {
    return operand.isStep ? results[operand.index] : inputs[operand.index];
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    const JoinStep &step = steps[s];
    double a = value(step.operands[0]);
    double b = step.operands.size() > 1 ? value(step.operands[1]) : 0.0;
    results[s] = applyJoin(step.join, a, b, step.scalar);
  }
  return results[steps.size() - 1];
}

JoinProgram
JoinProgram::inlineInput(const JoinProgram &consumer, unsigned input,
                         const JoinProgram &producer,
                         const std::vector<unsigned> &consumerInputMap,
                         const std::vector<unsigned> &producerInputMap,
                         unsigned numInputs) {
  JoinProgram result;
  result.numInputs = numInputs;
  const unsigned producerSteps = static_cast<unsigned>(producer.steps.size());
  for (JoinStep step : producer.steps) {
    for (JoinOperand &operand : step.operands)
      if (!operand.isStep)
        operand.index = producerInputMap[operand.index];
    result.steps.push_back(std::move(step));
  }
  for (JoinStep step : consumer.steps) {
    for (JoinOperand &operand : step.operands) {
      if (operand.isStep)
        operand.index += producerSteps;
      else if (operand.index == input)
        operand = JoinOperand{true, producerSteps - 1};
      else
        operand.index = consumerInputMap[operand.index];
    }
    result.steps.push_back(std::move(step));
  }
  return result;
}

bool JoinProgram::operator==(const JoinProgram &other) const {
  if (numInputs != other.numInputs || steps.size() != other.steps.size())
    return false;
  for (size_t s = 0; s < steps.size(); ++s) {
    const JoinStep &a = steps[s], &b = other.steps[s];
    if (a.join != b.join || a.operands != b.operands || a.scalar != b.scalar)
      return false;
  }
  return true;
}

std::optional<EinsumSignature>
checkFusedSignature(const EinsumSpec &spec, std::string_view programText,
                    const std::vector<std::vector<int64_t>> &inputShapes,
                    JoinProgram *program, std::string *error) {
  const std::string contracted = spec.contractedIndices();
  if (!contracted.empty()) {
    setError(error, "spec '" + spec.str() + "' contracts index(es) '" +
                        contracted + "': a fused op is elementwise");
    return std::nullopt;
  }
  std::optional<IndexSizes> sizes = inferIndexSizes(spec, inputShapes, error);
  if (!sizes)
    return std::nullopt;
  std::string programError;
  std::optional<JoinProgram> parsed =
      JoinProgram::parse(programText, spec.numInputs(), &programError);
  if (!parsed) {
    setError(error, "invalid join program: " + programError);
    return std::nullopt;
  }
  if (!checkedElementCount(sizes->sizes)) {
    setError(error, "spec '" + spec.str() +
                        "' iterates over more points than the limit of " +
                        checkedSizeLimitText());
    return std::nullopt;
  }
  if (program)
    *program = std::move(*parsed);
  EinsumSignature signature;
  signature.outputShape = outputShape(spec, *sizes);
  signature.sizes = std::move(*sizes);
  return signature;
}

EinsumWork estimateFusedWork(const EinsumSpec &spec, const IndexSizes &sizes,
                             const JoinProgram &program,
                             unsigned elementBytes) {
  // The byte counts are an einsum's; only the flops differ.
  EinsumWork work = estimateEinsumWork(spec, sizes, JoinKind::Identity,
                                       /*hasAggregation=*/false, elementBytes);
  double points = 1;
  for (int64_t s : sizes.sizes)
    points *= static_cast<double>(s);
  work.flops = points * program.flopsPerElement();
  return work;
}

} // namespace doppler
