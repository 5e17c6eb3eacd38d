//===- AssignmentFile.cpp - Placements as text files ----------------------===//

#include "Doppler/Placement/AssignmentFile.h"

#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/ReadFile.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace doppler::placement {
namespace {

/// False with `*error` set when the file cannot be read or is over the
/// input size cap.
bool readFile(const std::string &path, std::string *text, std::string *error) {
  std::optional<std::string> contents = readFileCapped(path, error);
  if (!contents)
    return false;
  *text = std::move(*contents);
  return true;
}

bool isSpace(char ch) { return std::isspace(static_cast<unsigned char>(ch)); }

} // namespace

std::optional<std::vector<DeviceId>>
parseAssignmentText(const std::string &text, const std::string &name,
                    std::string *error) {
  std::vector<DeviceId> ids;
  int line = 1;
  bool entryOpen = false; // a comma has been seen since the last id
  bool sawId = false;
  size_t i = 0;
  auto where = [&] { return name + ":" + std::to_string(line) + ": "; };
  while (i < text.size()) {
    char ch = text[i];
    if (ch == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (isSpace(ch)) {
      ++i;
      continue;
    }
    if (ch == ',') {
      if (!sawId || entryOpen) {
        setError(error, where() + "empty entry before ','");
        return std::nullopt;
      }
      entryOpen = true;
      ++i;
      continue;
    }
    size_t tokenEnd = i;
    while (tokenEnd < text.size() && text[tokenEnd] != ',' &&
           !isSpace(text[tokenEnd]))
      ++tokenEnd;
    std::string token = text.substr(i, tokenEnd - i);
    bool digits = true;
    for (char c : token)
      digits &= std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digits) {
      setError(error, where() +
                          "expected a device id (a non-negative integer), "
                          "found '" +
                          token + "'");
      return std::nullopt;
    }
    if (token.size() > 9) {
      setError(error, where() + "device id " + token + " is out of range");
      return std::nullopt;
    }
    ids.push_back(
        static_cast<DeviceId>(std::strtol(token.c_str(), nullptr, 10)));
    sawId = true;
    entryOpen = false;
    i = tokenEnd;
  }
  return ids;
}

std::optional<std::vector<DeviceId>> readAssignmentFile(const std::string &path,
                                                        int32_t numNodes,
                                                        int32_t numDevices,
                                                        std::string *error) {
  std::string text, readError;
  if (!readFile(path, &text, &readError)) {
    // Keep the established wording for files that cannot be opened.
    setError(error, readError.rfind("cannot ", 0) == 0
                        ? "cannot read assignment file '" + path + "'"
                        : "assignment file: " + readError);
    return std::nullopt;
  }
  std::optional<std::vector<DeviceId>> ids =
      parseAssignmentText(text, path, error);
  if (!ids)
    return std::nullopt;
  if (static_cast<int64_t>(ids->size()) != numNodes) {
    setError(error, path + ": " + std::to_string(ids->size()) +
                        " device ids for a graph of " +
                        std::to_string(numNodes) + " nodes");
    return std::nullopt;
  }
  for (size_t v = 0; v < ids->size(); ++v)
    if ((*ids)[v] >= numDevices) {
      setError(error, path + ": node " + std::to_string(v) + ": device " +
                          std::to_string((*ids)[v]) + " is out of range [0, " +
                          std::to_string(numDevices) + ")");
      return std::nullopt;
    }
  return ids;
}

bool writeAssignmentFile(const std::string &path,
                         ArrayView<DeviceId> assignment,
                         std::string_view separator, std::string *error) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file) {
    setError(error, "cannot write '" + path + "': " + std::strerror(errno));
    return false;
  }
  std::string line;
  for (size_t i = 0; i < assignment.size(); ++i) {
    if (i)
      line += separator;
    line += std::to_string(assignment[i]);
  }
  line += "\n";
  bool written = std::fwrite(line.data(), 1, line.size(), file) == line.size();
  const int writeErrno = errno;
  if (std::fclose(file) != 0 || !written) {
    setError(error, "cannot write '" + path +
                        "': " + std::strerror(written ? errno : writeErrno));
    return false;
  }
  return true;
}

} // namespace doppler::placement
