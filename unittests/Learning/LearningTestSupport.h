//===- LearningTestSupport.h - Graphs and models for the learning tests ---===//
#ifndef DOPPLER_UNITTESTS_LEARNING_LEARNINGTESTSUPPORT_H
#define DOPPLER_UNITTESTS_LEARNING_LEARNINGTESTSUPPORT_H

#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"

namespace doppler::placement::test_support {

/// A random layered DAG (layers 2 to `maxWidth` wide) with generated costs.
inline Graph randomLayeredGraph(uint64_t seed, int32_t nodes,
                                int32_t maxWidth) {
  RandomLayeredShape shape;
  shape.numNodes = nodes;
  shape.seed = seed;
  shape.minWidth = 2;
  shape.maxWidth = maxWidth;
  return generateRandomLayered(shape, CostRates())->graph;
}

/// A small network (hidden 32, head 16, 3 rounds), fast enough for tests.
inline ModelConfig smallConfig() {
  ModelConfig config;
  config.hiddenSize = 32;
  config.headHiddenSize = 16;
  config.messagePassingRounds = 3;
  return config;
}

} // namespace doppler::placement::test_support

#endif // DOPPLER_UNITTESTS_LEARNING_LEARNINGTESTSUPPORT_H
