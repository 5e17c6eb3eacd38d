//===- LearnedConstructTest.cpp - Annealing distilled into a construction -===//
//
// LearnedConstruct.h: the pass is critical path's (a model that reads only
// is_cp places exactly as placeCriticalPath, and critical path's own
// placement as the teacher labels every step with that device); the fit
// learns a rule its features express (join-aware's); the device renaming
// of the DAgger roll-in undoes a permuted teacher; the window, the
// completion labels, the fit and the model file are deterministic and
// checked.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedConstruct.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"
#include "LearningTestSupport.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>

using namespace doppler::placement;
using doppler::placement::test_support::randomLayeredGraph;

namespace {

constexpr int kIsCp = 2, kIsJa = 3;

ConstructModel ruleModel(int feature) {
  ConstructModel model;
  model.weight[feature] = 1;
  return model;
}

TEST(LearnedConstructTest, ReadingOnlyIsCpIsCriticalPath) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Graph graph = randomLayeredGraph(seed, 150, 9);
    const int32_t devices = 2 + static_cast<int32_t>(seed) * 2;
    std::vector<DeviceId> cp = placeCriticalPath(graph, devices);
    EXPECT_EQ(placeLearnedConstruct(graph, devices, ruleModel(kIsCp)), cp);
    // Critical path as the teacher: every step's label is its device.
    std::vector<ConstructExample> examples;
    collectConstructExamples(graph, devices, cp, nullptr, ConstructRollIn{},
                             examples);
    ASSERT_EQ(examples.size(), static_cast<size_t>(graph.numNodes()));
    EXPECT_EQ(constructAgreement(ruleModel(kIsCp), examples), 1.0);
  }
}

TEST(LearnedConstructTest, FitLearnsJoinAwaresRule) {
  std::vector<ConstructExample> examples;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Graph graph = randomLayeredGraph(seed, 160, 8);
    collectConstructExamples(graph, 4, placeJoinAware(graph, 4), nullptr,
                             ConstructRollIn{}, examples);
  }
  EXPECT_EQ(constructAgreement(ruleModel(kIsJa), examples), 1.0);
  double loss = 0;
  ConstructModel model = fitConstructModel(examples, 30, 1e-3, &loss);
  // Critical path's rule agrees on 0.91 of these steps.
  EXPECT_GE(constructAgreement(model, examples), 0.99);
  EXPECT_LT(loss, 0.2);
  // Deterministic.
  ConstructModel again = fitConstructModel(examples, 30, 1e-3);
  EXPECT_EQ(model.weight, again.weight);
  // On a graph it was not fitted on, close to join-aware's placement.
  Graph unseen = randomLayeredGraph(21, 160, 8);
  Simulator judge(unseen, 4);
  const double learned = judge.run(placeLearnedConstruct(unseen, 4, model));
  EXPECT_LE(learned, 1.05 * judge.run(placeJoinAware(unseen, 4)));
}

TEST(LearnedConstructTest, RenamingUndoesAPermutedTeacher) {
  Graph graph = randomLayeredGraph(5, 200, 10);
  const int32_t devices = 4;
  std::vector<DeviceId> permuted = placeCriticalPath(graph, devices);
  for (DeviceId &d : permuted)
    d = devices - 1 - d;
  // Rolling in with critical path's rule itself, the renamed labels are
  // its own choices once the permutation is found.
  ConstructRollIn rollIn;
  rollIn.follow = 0;
  rollIn.remapEvery = 4;
  std::vector<ConstructExample> examples;
  collectConstructExamples(graph, devices, permuted, nullptr, rollIn,
                           examples);
  EXPECT_GE(constructAgreement(ruleModel(kIsCp), examples), 0.9);
}

TEST(LearnedConstructTest, WindowAndCompletionLabels) {
  Graph graph = randomLayeredGraph(3, 120, 8);
  const int32_t devices = 4;
  std::vector<DeviceId> cp = placeCriticalPath(graph, devices);
  ConstructRollIn rollIn;
  rollIn.window = 1e-9;
  std::vector<ConstructExample> narrow;
  collectConstructExamples(graph, devices, cp, nullptr, rollIn, narrow);
  for (const ConstructExample &e : narrow) {
    ASSERT_GE(e.numDevices, 1);
    ASSERT_LT(e.label, e.numDevices);
    for (int32_t d = 0; d < e.numDevices; ++d)
      EXPECT_LE(e.features[d * kConstructFeatureCount], 1e-9);
  }
  // Completion labels: deterministic, and the label's completion is never
  // longer than critical path's own device's.
  Simulator judge(graph, devices);
  rollIn = ConstructRollIn{};
  rollIn.follow = 0;
  rollIn.judge = &judge;
  std::vector<ConstructExample> first, second;
  ConstructModel model = ruleModel(kIsCp);
  collectConstructExamples(graph, devices, cp, &model, rollIn, first);
  collectConstructExamples(graph, devices, cp, &model, rollIn, second);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(first[i].label, second[i].label);
  // The first step: every device completed; the label is one of them.
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first[0].numDevices, devices);
}

TEST(LearnedConstructTest, ModelFileRoundTripsAndErrors) {
  ConstructModel model;
  for (int i = 0; i < kConstructFeatureCount; ++i) {
    model.mean[i] = 0.5 * i;
    model.scale[i] = 1 + i;
    model.weight[i] = -0.25 * i + 1.0 / 3;
  }
  model.window = 0.1;
  const std::string path = ::testing::TempDir() + "construct-model.txt";
  std::string error;
  ASSERT_TRUE(writeConstructModel(model, path, "a test\nof two lines", &error))
      << error;
  std::optional<ConstructModel> read = readConstructModel(path, &error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->mean, model.mean);
  EXPECT_EQ(read->scale, model.scale);
  EXPECT_EQ(read->weight, model.weight);
  EXPECT_EQ(read->window, model.window);
  {
    std::ofstream bad(path);
    bad << "// short\n1, 2, 3\n";
  }
  EXPECT_FALSE(readConstructModel(path, &error));
  EXPECT_NE(error.find("expected 49 numbers, found 3"), std::string::npos)
      << error;
  {
    std::ofstream bad(path);
    bad << "1, two, 3\n";
  }
  EXPECT_FALSE(readConstructModel(path, &error));
  EXPECT_NE(error.find("'two' is not a finite number"), std::string::npos)
      << error;
  std::remove(path.c_str());
  EXPECT_FALSE(readConstructModel(path, &error));
  EXPECT_NE(error.find("cannot read construct model"), std::string::npos);
}

} // namespace
