//===- EntryTable.h - The C entry table of libDopplerLearning.so -*- C++ -*-===//
//
// What the loader (LearnedPolicyLoader.cpp) resolves with dlsym. Plain C
// types only, plus a pointer to a doppler::placement::Graph built by the
// caller: both sides are compiled from the same Graph.h, and the table
// carries sizeof(Graph) and an ABI number so that a mismatched library is
// refused instead of misread.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_ENTRYTABLE_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_ENTRYTABLE_H

#include <cstddef>
#include <cstdint>

#define DOPPLER_LEARNING_ABI_VERSION 3u
#define DOPPLER_LEARNING_ENTRY_SYMBOL "dopplerLearningEntryTable"

extern "C" {

struct DopplerLearningEntryTable {
  uint32_t abiVersion;
  uint32_t graphObjectSize;
  /// Places `graph` (a const doppler::placement::Graph *). Returns 1 and
  /// writes numNodes device ids to `assignment`, or returns 0 and writes a
  /// NUL-terminated message (truncated to fit) to `errorBuffer`. An empty
  /// `modelPath` selects the embedded default model. `memoryCapacities`:
  /// numDevices bytes per device (infinity: unlimited), or null for none
  /// (PlaceOptions::memoryCapacities). ABI 2 added it; ABI 3 added
  /// `samplingSeconds` (PlaceOptions::samplingSeconds).
  int (*place)(const void *graph, int32_t numDevices, const char *modelPath,
               int32_t samples, uint64_t seed, double samplingSeconds,
               const double *memoryCapacities,
               int32_t *assignment, char *errorBuffer,
               size_t errorBufferSize);
};

typedef const DopplerLearningEntryTable *(*DopplerLearningEntryFunction)(void);
}

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_ENTRYTABLE_H
