//===- ArgParser.h - The command line of the MLIR-free tools ----*- C++ -*-===//
//
// doppler-run-plan and doppler-calibrate link only the runtime (no LLVM
// CommandLine), so they share this small parser instead of a hand-written
// loop each. A tool declares its options in a table (spellings, where the
// value goes, the value's name, a line of help, the error when the value is
// missing or refused); the synopsis printed with usage errors and the
// --help text are generated from the same table.
//
// Errors are one line on stderr, "TOOL: error: MESSAGE", exit status 1:
//   OPTION REFUSAL                  value missing, not a number, below the
//                                   minimum or not one of the choices
//                                   ("--seed needs an integer");
//   unknown option 'X' + synopsis   (unknown argument 'X' when the tool
//                                   takes no positional argument);
//   no WHAT given + synopsis, more than one WHAT given ('A', 'B').
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_ARGPARSER_H
#define DOPPLER_RUNTIME_TOOLS_ARGPARSER_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace doppler::runtime::tools {

constexpr double kNoMinimum = -std::numeric_limits<double>::infinity();

/// One option. The value kind is the kind of `target`: a flag (bool, set to
/// true), an integer (parseInt64), a finite number (parseFiniteDouble) or
/// text.
struct ArgOption {
  /// Spellings, e.g. {"-o", "--output"}; the synopsis shows the first.
  std::vector<std::string> names;
  std::variant<bool *, int64_t *, double *, std::string *> target;
  /// The value's name in the synopsis and help ("N", "FILE", "cpu|cuda");
  /// empty for flags.
  std::string valueName;
  std::string help;
  /// The error after the option's name as typed, when the value is missing
  /// or refused ("needs an integer").
  std::string refusal;
  /// Integers and numbers below this are refused.
  double minimum = kNoMinimum;
  /// Text outside these is refused; empty: any text.
  std::vector<std::string> choices;
};

/// Table rows, one per value kind.
ArgOption flagOption(std::vector<std::string> names, bool *target,
                     std::string help);
ArgOption integerOption(std::vector<std::string> names, int64_t *target,
                        std::string valueName, std::string help,
                        std::string refusal,
                        double minimum = kNoMinimum);
ArgOption numberOption(std::vector<std::string> names, double *target,
                       std::string valueName, std::string help,
                       std::string refusal,
                       double minimum = kNoMinimum);
ArgOption textOption(std::vector<std::string> names, std::string *target,
                     std::string valueName, std::string help,
                     std::string refusal,
                     std::vector<std::string> choices = {});

/// A tool's command line: its options and at most one positional argument.
struct ArgParser {
  ArgParser(std::string tool, std::vector<ArgOption> options)
      : tool(std::move(tool)), options(std::move(options)) {}

  std::string tool;
  std::vector<ArgOption> options;
  /// The positional argument ("PLAN.json", called "plan file" in errors);
  /// none when `positional` is null.
  std::string positionalName;
  std::string positionalWhat;
  std::string *positional = nullptr;
  /// Also accept "--name=value" (a flag ignores the value).
  bool acceptEqualsForm = false;

  /// "usage: TOOL ..." wrapped at 76 columns, options in table order.
  std::string usage() const;
  /// The usage, then one line per option with its help (what --help and -h
  /// print).
  std::string help() const;
  /// Reads argv into the targets. Returns the exit status when the tool is
  /// done: 0 after printing the help, 1 after reporting an error; nullopt
  /// to go on. A missing positional argument is an error.
  std::optional<int> parse(int argc, char **argv) const;
  /// Reports "TOOL: error: MESSAGE" on stderr; returns 1.
  int fail(const std::string &message) const;
};

} // namespace doppler::runtime::tools

#endif // DOPPLER_RUNTIME_TOOLS_ARGPARSER_H
