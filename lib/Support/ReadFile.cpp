//===- ReadFile.cpp - Whole input files, with a size cap ------------------===//

#include "Doppler/Support/ReadFile.h"
#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/ParseNumber.h"

#include <cstdlib>
#include <fstream>

#include <sys/stat.h>

namespace doppler {

int64_t maxInputFileBytes() {
  if (const char *text = std::getenv("DOPPLER_MAX_INPUT_BYTES"))
    if (std::optional<int64_t> value = parseInt64(text); value && *value > 0)
      return *value;
  return kDefaultMaxInputBytes;
}

std::optional<std::string> readFileCapped(const std::string &path,
                                          std::string *error, int64_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    setError(error, "cannot open '" + path + "'");
    return std::nullopt;
  }
  // Chunk by chunk, so that an endless file (/dev/zero) or one whose size
  // the file system does not know (a pipe) stops at the cap as well.
  std::string text;
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof(chunk));
    std::streamsize got = in.gcount();
    if (got <= 0)
      break;
    if (static_cast<int64_t>(text.size()) + got > limit) {
      setError(error, "'" + path + "' is larger than " + std::to_string(limit) +
                          " bytes (the input size limit; "
                          "DOPPLER_MAX_INPUT_BYTES raises it)");
      return std::nullopt;
    }
    text.append(chunk, static_cast<size_t>(got));
  }
  if (in.bad()) {
    setError(error, "cannot read '" + path + "'");
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> unboundedInputError(const std::string &path) {
  if (path == "-")
    return std::nullopt;
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return std::nullopt;
  if (S_ISDIR(info.st_mode))
    return "'" + path + "' is a directory, not an input file";
  if (!S_ISREG(info.st_mode))
    return "'" + path +
           "' is not a regular file (a device or a pipe, which may not end); "
           "give a file, or '-' to read standard input";
  if (static_cast<int64_t>(info.st_size) > maxInputFileBytes())
    return "'" + path + "' is larger than " +
           std::to_string(maxInputFileBytes()) +
           " bytes (the input size limit; DOPPLER_MAX_INPUT_BYTES raises it)";
  return std::nullopt;
}

} // namespace doppler
