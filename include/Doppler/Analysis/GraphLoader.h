//===- GraphLoader.h - Placement graphs from any supported file -*- C++ -*-===//
//
// MLIR-free interface (tools that are otherwise MLIR-free include it) to
// load a placement graph from a reference `.txt` file or from a function of
// an `.mlir` file.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TARGET_GRAPHLOADER_H
#define DOPPLER_TARGET_GRAPHLOADER_H

#include "Doppler/Placement/Graph.h"

#include <optional>
#include <string>

namespace doppler {

struct GraphLoadOptions {
  /// .mlir: the function to load (default: the first function with a body).
  std::string function;
  /// .mlir: costs ops that lack them with doppler-annotate-costs on this
  /// system (a preset or a JSON file).
  std::string system = "h100x4";
  /// .mlir: the devices the caller will place on (0: unknown). When ops are
  /// costed with a system of fewer devices, a warning says so (as the
  /// doppler-place pass does): the extra devices take the others' costs.
  int32_t devices = 0;
};

/// Loads `path`: `.mlir` files through the IR (one node per op of the
/// function; doppler.transfer ops become the edges they implement), anything
/// else as the reference text format. Errors are one line.
std::optional<placement::Graph> loadPlacementGraph(const std::string &path,
                                                   const GraphLoadOptions &options,
                                                   std::string *error);

} // namespace doppler

#endif // DOPPLER_TARGET_GRAPHLOADER_H
