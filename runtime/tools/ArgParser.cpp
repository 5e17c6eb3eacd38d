//===- ArgParser.cpp - The command line of the MLIR-free tools ------------===//

#include "ArgParser.h"

#include "Doppler/Support/ParseNumber.h"

#include <algorithm>
#include <iostream>

namespace doppler::runtime::tools {
namespace {

constexpr size_t kUsageColumns = 76;

/// "--devices D", "-o system.json", "--json".
std::string spelling(const std::string &name, const ArgOption &option) {
  return option.valueName.empty() ? name : name + " " + option.valueName;
}

/// Stores `value` in the option's target; false when it is refused.
bool store(const ArgOption &option, const std::string &value) {
  if (std::string *const *text = std::get_if<std::string *>(&option.target)) {
    if (!option.choices.empty() &&
        std::find(option.choices.begin(), option.choices.end(), value) ==
            option.choices.end())
      return false;
    **text = value;
    return true;
  }
  if (int64_t *const *integer = std::get_if<int64_t *>(&option.target)) {
    std::optional<int64_t> parsed = parseInt64(value);
    if (!parsed || static_cast<double>(*parsed) < option.minimum)
      return false;
    **integer = *parsed;
    return true;
  }
  std::optional<double> parsed = parseFiniteDouble(value);
  if (!parsed || *parsed < option.minimum)
    return false;
  *std::get<double *>(option.target) = *parsed;
  return true;
}

} // namespace

ArgOption flagOption(std::vector<std::string> names, bool *target,
                     std::string help) {
  ArgOption option;
  option.names = std::move(names);
  option.target = target;
  option.help = std::move(help);
  return option;
}

ArgOption integerOption(std::vector<std::string> names, int64_t *target,
                        std::string valueName, std::string help,
                        std::string refusal, double minimum) {
  ArgOption option;
  option.names = std::move(names);
  option.target = target;
  option.valueName = std::move(valueName);
  option.help = std::move(help);
  option.refusal = std::move(refusal);
  option.minimum = minimum;
  return option;
}

ArgOption numberOption(std::vector<std::string> names, double *target,
                       std::string valueName, std::string help,
                       std::string refusal, double minimum) {
  ArgOption option = integerOption(std::move(names), nullptr,
                                   std::move(valueName), std::move(help),
                                   std::move(refusal), minimum);
  option.target = target;
  return option;
}

ArgOption textOption(std::vector<std::string> names, std::string *target,
                     std::string valueName, std::string help,
                     std::string refusal, std::vector<std::string> choices) {
  ArgOption option = integerOption(std::move(names), nullptr,
                                   std::move(valueName), std::move(help),
                                   std::move(refusal));
  option.target = target;
  option.choices = std::move(choices);
  return option;
}

std::string ArgParser::usage() const {
  std::string head = "usage: " + tool;
  std::string indent(head.size() + 1, ' ');
  std::vector<std::string> items;
  if (positional)
    items.push_back(positionalName);
  for (const ArgOption &option : options)
    items.push_back("[" + spelling(option.names.front(), option) + "]");
  std::string text, line = head;
  for (const std::string &item : items) {
    if (line != head && line.size() + 1 + item.size() > kUsageColumns) {
      text += line + "\n";
      line = indent + item;
    } else {
      line += " " + item;
    }
  }
  return text + line + "\n";
}

std::string ArgParser::help() const {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const ArgOption &option : options) {
    std::string names;
    for (const std::string &name : option.names)
      names += (names.empty() ? "" : ", ") + name;
    rows.emplace_back(spelling(names, option), option.help);
  }
  rows.emplace_back("-h, --help", "print this help and exit");
  size_t width = 0;
  for (const auto &row : rows)
    width = std::max(width, row.first.size());
  std::string text = usage() + "\noptions:\n";
  for (const auto &[names, description] : rows)
    text += "  " + names + std::string(width - names.size() + 2, ' ') +
            description + "\n";
  return text;
}

int ArgParser::fail(const std::string &message) const {
  std::cerr << tool << ": error: " << message << "\n";
  return 1;
}

std::optional<int> ArgParser::parse(int argc, char **argv) const {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> attached;
    if (size_t eq = arg.find('=');
        acceptEqualsForm && arg.rfind("--", 0) == 0 &&
        eq != std::string::npos) {
      attached = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << help();
      return 0;
    }
    auto option = std::find_if(options.begin(), options.end(),
                               [&](const ArgOption &candidate) {
                                 return std::find(candidate.names.begin(),
                                                  candidate.names.end(),
                                                  arg) != candidate.names.end();
                               });
    if (option != options.end()) {
      if (bool *const *flag = std::get_if<bool *>(&option->target)) {
        **flag = true;
        continue;
      }
      if (!attached && i + 1 < argc)
        attached = argv[++i];
      if (!attached || !store(*option, *attached))
        return fail(arg + " " + option->refusal);
    } else if (!positional) {
      return fail("unknown argument '" + arg + "'\n" + usage());
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "'\n" + usage());
    } else if (positional->empty()) {
      *positional = arg;
    } else {
      return fail("more than one " + positionalWhat + " given ('" +
                  *positional + "', '" + arg + "')");
    }
  }
  if (positional && positional->empty())
    return fail("no " + positionalWhat + " given\n" + usage());
  return std::nullopt;
}

} // namespace doppler::runtime::tools
