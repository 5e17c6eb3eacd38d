//===- AssignmentFile.h - Placements as text files --------------*- C++ -*-===//
//
// The assignment file format that doppler-place reads (--assignment) and
// writes (-o), and doppler-train writes (--best-placement): one device id
// per node, in node-id order, separated by commas and/or whitespace. Errors
// are one line naming the file (and the line, for parse errors).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_ASSIGNMENTFILE_H
#define DOPPLER_PLACEMENT_ASSIGNMENTFILE_H

#include "Doppler/Placement/Graph.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

/// Device ids separated by commas and/or whitespace (a trailing comma is
/// fine; an empty entry between two commas is not). `name` prefixes errors
/// as "NAME:LINE: ".
std::optional<std::vector<DeviceId>>
parseAssignmentText(const std::string &text, const std::string &name,
                    std::string *error);

/// Reads and parses the file at `path` and checks that it places each of
/// `numNodes` nodes on a device in [0, numDevices).
std::optional<std::vector<DeviceId>> readAssignmentFile(const std::string &path,
                                                        int32_t numNodes,
                                                        int32_t numDevices,
                                                        std::string *error);

/// Writes `assignment` as one line, the ids joined by `separator`. Fails
/// with "cannot write 'PATH': REASON".
bool writeAssignmentFile(const std::string &path,
                         ArrayView<DeviceId> assignment,
                         std::string_view separator, std::string *error);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_ASSIGNMENTFILE_H
