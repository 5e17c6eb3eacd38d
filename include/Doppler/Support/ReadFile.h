//===- ReadFile.h - Whole input files, with a size cap ----------*- C++ -*-===//
//
// The MLIR-free readers (reference graphs, assignments, system descriptions,
// runtime plans and outputs files) read their whole file into memory. This
// is the one helper they share: it stops after a cap instead of growing
// without bound on /dev/zero, a FIFO or a mistaken multi-gigabyte file.
//
// The cap is 256 MiB, far above any real input (a 100,000-node graph file
// is about 10 MB). The environment variable DOPPLER_MAX_INPUT_BYTES, a
// positive byte count, replaces it (tests use a small value; a user with a
// genuinely larger file can raise it).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_READFILE_H
#define DOPPLER_SUPPORT_READFILE_H

#include <cstdint>
#include <optional>
#include <string>

namespace doppler {

/// The default cap on an input file: 256 MiB.
constexpr int64_t kDefaultMaxInputBytes = int64_t(256) << 20;

/// The cap in force: DOPPLER_MAX_INPUT_BYTES when it is a positive integer,
/// kDefaultMaxInputBytes otherwise.
int64_t maxInputFileBytes();

/// The contents of `path`, or nullopt with `*error` set: "cannot open
/// 'PATH'", "cannot read 'PATH'", or "'PATH' is larger than N bytes (the
/// input size limit; DOPPLER_MAX_INPUT_BYTES raises it)". At most
/// `limit + 1` bytes are ever read.
std::optional<std::string> readFileCapped(const std::string &path,
                                          std::string *error,
                                          int64_t limit = maxInputFileBytes());

/// For tools whose input MLIR's own drivers read (doppler-opt,
/// doppler-translate): an error message when the named input would be read
/// without bound, nullopt when it is fine. A path must name a regular file
/// within maxInputFileBytes() ("-", standard input, is left to the user, as
/// for any filter); a device or a pipe (/dev/zero, a FIFO) is refused with a
/// hint to pipe it into "-" instead. A path that does not exist is fine
/// here: the driver reports it.
std::optional<std::string> unboundedInputError(const std::string &path);

} // namespace doppler

#endif // DOPPLER_SUPPORT_READFILE_H
