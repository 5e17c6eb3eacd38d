//===- GraphReader.cpp - Reader of the reference graph format -------------===//
//
// The reference text format (METHOD section 8):
//   line 1      total node count T, input nodes included
//   line 2      ids of the K input nodes (only their count matters: they
//               are numbered apart from the graph's own nodes)
//   line 3      edge sources       line 4   matching edge destinations
//   lines 5..   N = T - K lines "compute_cost,comm_cost[,op_type]"
// The reference extracts the integers of each line with a regular
// expression, so separators are loose ("16,6, 16, " is fine). We accept the
// same separators (commas, blanks, trailing commas) but reject anything that
// is not an integer where one is expected, instead of silently reading, say,
// "-5" as 5 or "1.5" as two numbers the way the regular expression would.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Graph.h"
#include "Doppler/Support/ReadFile.h"

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

using namespace doppler::placement;

namespace {

/// Splits a line at commas and blanks, dropping empty fields.
std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  auto isSeparator = [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\v' ||
           c == '\f';
  };
  while (i < line.size()) {
    while (i < line.size() && isSeparator(line[i]))
      ++i;
    size_t begin = i;
    while (i < line.size() && !isSeparator(line[i]))
      ++i;
    if (i > begin)
      fields.push_back(line.substr(begin, i - begin));
  }
  return fields;
}

/// Parses a field made only of decimal digits.
std::optional<uint64_t> parseUnsigned(std::string_view field) {
  uint64_t value = 0;
  if (field.empty() || field[0] < '0' || field[0] > '9')
    return std::nullopt;
  auto [end, errc] =
      std::from_chars(field.data(), field.data() + field.size(), value);
  if (errc != std::errc() || end != field.data() + field.size())
    return std::nullopt;
  return value;
}

bool isOpTypeWord(std::string_view field) {
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  // A letter first (so that a third number is an error, not a type), then
  // letters, digits, '_' and '.': the reference's words ("einsummable") and
  // the dialect's op names ("doppler.gather") that formatReferenceGraph
  // writes for graphs read from .mlir.
  if (field.empty() || !letter(field.front()))
    return false;
  for (char c : field)
    if (!(letter(c) || (c >= '0' && c <= '9') || c == '.'))
      return false;
  return true;
}

/// Collects the text's lines and produces "name:line: ..." messages.
class Reader {
public:
  Reader(const std::string &text, const std::string &name, std::string *error)
      : name_(name), error_(error) {
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos)
        end = text.size();
      lines_.emplace_back(text.data() + begin, end - begin);
      begin = end + 1;
    }
  }

  std::optional<Graph> read();

private:
  bool fail(size_t lineNumber, const std::string &message) {
    if (error_)
      *error_ = name_ + ":" + std::to_string(lineNumber) + ": " + message;
    return false;
  }
  /// The fields of line `lineNumber` (1-based), or an error naming what the
  /// line should have held.
  std::optional<std::vector<std::string_view>> headerLine(size_t lineNumber,
                                                          const char *what) {
    if (lineNumber > lines_.size()) {
      fail(lineNumber, std::string("missing ") + what + " (the file has " +
                           std::to_string(lines_.size()) + " lines)");
      return std::nullopt;
    }
    return splitFields(lines_[lineNumber - 1]);
  }
  /// Parses the node ids of an edge line into `ids`.
  bool readIdList(size_t lineNumber, const char *what, int32_t numNodes,
                  std::vector<NodeId> &ids);

  const std::string &name_;
  std::string *error_;
  std::vector<std::string_view> lines_;
};

bool Reader::readIdList(size_t lineNumber, const char *what, int32_t numNodes,
                        std::vector<NodeId> &ids) {
  auto fields = headerLine(lineNumber, what);
  if (!fields)
    return false;
  ids.reserve(fields->size());
  for (size_t i = 0; i < fields->size(); ++i) {
    std::string_view field = (*fields)[i];
    std::optional<uint64_t> id = parseUnsigned(field);
    if (!id)
      return fail(lineNumber,
                  std::string(what) + " entry " + std::to_string(i) + ": '" +
                      std::string(field) + "' is not a non-negative integer");
    if (*id >= static_cast<uint64_t>(numNodes))
      return fail(lineNumber,
                  std::string(what) + " entry " + std::to_string(i) + ": " +
                      std::string(field) + " is not a node id " +
                      (numNodes == 0
                           ? std::string("(graph has no nodes)")
                           : "(graph has " + std::to_string(numNodes) +
                                 " nodes, ids 0.." +
                                 std::to_string(numNodes - 1) + ")"));
    ids.push_back(static_cast<NodeId>(*id));
  }
  return true;
}

std::optional<Graph> Reader::read() {
  // Line 1: total node count.
  auto totalFields = headerLine(1, "the total node count");
  if (!totalFields)
    return std::nullopt;
  std::optional<uint64_t> total;
  if (totalFields->size() == 1)
    total = parseUnsigned(totalFields->front());
  if (!total ||
      *total > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    fail(1, "expected the total node count (one non-negative integer), "
            "found '" +
                std::string(lines_[0]) + "'");
    return std::nullopt;
  }

  // Line 2: input node ids; only their count matters.
  auto inputFields = headerLine(2, "the input node ids");
  if (!inputFields)
    return std::nullopt;
  for (size_t i = 0; i < inputFields->size(); ++i) {
    if (!parseUnsigned((*inputFields)[i])) {
      fail(2, "input id entry " + std::to_string(i) + ": '" +
                  std::string((*inputFields)[i]) +
                  "' is not a non-negative integer");
      return std::nullopt;
    }
  }
  const auto numInputs = static_cast<int64_t>(inputFields->size());
  if (static_cast<int64_t>(*total) < numInputs) {
    fail(1, "total node count " + std::to_string(*total) +
                " is less than the " + std::to_string(numInputs) +
                " input ids on line 2");
    return std::nullopt;
  }
  const auto numNodes = static_cast<int32_t>(*total - numInputs);

  // Lines 3 and 4: edges.
  std::vector<NodeId> sources, destinations;
  if (!readIdList(3, "edge source", numNodes, sources) ||
      !readIdList(4, "edge destination", numNodes, destinations))
    return std::nullopt;
  if (sources.size() != destinations.size()) {
    fail(4, "expected " + std::to_string(sources.size()) +
                " edge destinations (one per source on line 3), found " +
                std::to_string(destinations.size()));
    return std::nullopt;
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i] == destinations[i]) {
      fail(4, "edge " + std::to_string(i) + " (" + std::to_string(sources[i]) +
                  " -> " + std::to_string(destinations[i]) +
                  ") is a self loop");
      return std::nullopt;
    }
  }

  // Lines 5..: one line per node.
  GraphBuilder builder;
  constexpr size_t kFirstNodeLine = 5;
  for (int32_t v = 0; v < numNodes; ++v) {
    const size_t lineNumber = kFirstNodeLine + v;
    if (lineNumber > lines_.size()) {
      fail(lineNumber, "expected " + std::to_string(numNodes) +
                           " node lines (lines 5.." +
                           std::to_string(kFirstNodeLine + numNodes - 1) +
                           "), found " + std::to_string(v));
      return std::nullopt;
    }
    std::vector<std::string_view> fields = splitFields(lines_[lineNumber - 1]);
    std::string opType;
    if (fields.size() == 3 && isOpTypeWord(fields[2])) {
      opType = std::string(fields[2]);
      fields.pop_back();
    }
    if (fields.size() != 2) {
      fail(lineNumber, "node " + std::to_string(v) +
                           ": expected 'compute_cost,comm_cost' and an "
                           "optional op type, found '" +
                           std::string(lines_[lineNumber - 1]) + "'");
      return std::nullopt;
    }
    std::optional<uint64_t> costs[2] = {parseUnsigned(fields[0]),
                                        parseUnsigned(fields[1])};
    const char *costNames[2] = {"compute cost", "comm cost"};
    for (int k = 0; k < 2; ++k) {
      if (!costs[k]) {
        fail(lineNumber, "node " + std::to_string(v) + ": " + costNames[k] +
                             " '" + std::string(fields[k]) +
                             "' is not a non-negative integer");
        return std::nullopt;
      }
    }
    builder.addNode(static_cast<double>(*costs[0]),
                    static_cast<double>(*costs[1]), std::move(opType));
  }
  // Blank lines may trail; anything else means the counts disagree.
  for (size_t lineNumber = kFirstNodeLine + numNodes;
       lineNumber <= lines_.size(); ++lineNumber) {
    if (!splitFields(lines_[lineNumber - 1]).empty()) {
      fail(lineNumber, "unexpected text after the " + std::to_string(numNodes) +
                           " node lines (line 1 says " +
                           std::to_string(*total) + " nodes, " +
                           std::to_string(numInputs) + " of them inputs)");
      return std::nullopt;
    }
  }

  for (size_t i = 0; i < sources.size(); ++i)
    builder.addEdge(sources[i], destinations[i]);
  std::string buildError;
  std::optional<Graph> graph = builder.build(&buildError);
  if (!graph && error_)
    *error_ = name_ + ": " + buildError;
  return graph;
}

} // namespace

std::optional<Graph> doppler::placement::parseReferenceGraph(
    const std::string &text, const std::string &name, std::string *error) {
  return Reader(text, name, error).read();
}

std::optional<Graph>
doppler::placement::readReferenceGraph(const std::string &path,
                                       std::string *error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    if (error)
      *error = path + ": cannot open file";
    return std::nullopt;
  }
  file.close();
  std::optional<std::string> contents = readFileCapped(path, error);
  if (!contents)
    return std::nullopt;
  return parseReferenceGraph(*contents, path, error);
}
