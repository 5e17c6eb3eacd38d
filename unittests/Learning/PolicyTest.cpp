//===- PolicyTest.cpp - LearnedPolicy: masking, seeds, model files --------===//

#include "LearningTestSupport.h"
#include "PolicyImpl.h"
#include "PolicyNetwork.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/Simulator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <numeric>

using namespace doppler::placement;
using namespace doppler::placement::learning;

namespace {

using test_support::smallConfig;

Graph testGraph(uint64_t seed = 3, int32_t nodes = 40) {
  return test_support::randomLayeredGraph(seed, nodes, /*maxWidth=*/6);
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "doppler-policy-test-" + name;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

} // namespace

TEST(PolicyTest, OnlyCandidatesAndDevicesGetProbability) {
  Graph graph = testGraph();
  auto policy = LearnedPolicy::create(ModelConfig::slim(), 1);
  ASSERT_TRUE(policy);
  for (int32_t devices : {1, 3}) {
    std::string error;
    auto steps = policy->trace(graph, devices, &error);
    ASSERT_TRUE(steps) << error;
    ASSERT_EQ(static_cast<int32_t>(steps->size()), graph.numNodes());
    std::vector<bool> placed(graph.numNodes(), false);
    std::vector<DeviceId> assignment(graph.numNodes(), -1);
    for (const PolicyStep &step : *steps) {
      // The candidates are exactly the unplaced nodes whose inputs are all
      // placed, and only they carry probability.
      std::vector<NodeId> expected;
      for (NodeId v = 0; v < graph.numNodes(); ++v) {
        bool ready = !placed[v];
        for (NodeId u : graph.predecessors(v))
          ready &= placed[u];
        if (ready)
          expected.push_back(v);
      }
      std::vector<NodeId> got = step.candidates;
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, expected);
      ASSERT_EQ(step.candidateProbability.size(), step.candidates.size());
      EXPECT_NEAR(std::accumulate(step.candidateProbability.begin(),
                                  step.candidateProbability.end(), 0.0),
                  1.0, 1e-9);
      size_t argmax = std::max_element(step.candidateProbability.begin(),
                                       step.candidateProbability.end()) -
                      step.candidateProbability.begin();
      EXPECT_EQ(step.node, step.candidates[argmax]);
      ASSERT_EQ(static_cast<int32_t>(step.deviceProbability.size()), devices);
      EXPECT_NEAR(std::accumulate(step.deviceProbability.begin(),
                                  step.deviceProbability.end(), 0.0),
                  1.0, 1e-9);
      EXPECT_GE(step.device, 0);
      EXPECT_LT(step.device, devices);
      placed[step.node] = true;
      assignment[step.node] = step.device;
    }
    auto result = policy->place(graph, devices, {}, &error);
    ASSERT_TRUE(result) << error;
    EXPECT_EQ(result->assignment, assignment);
    EXPECT_EQ(result->makespan, Simulator(graph, devices).run(assignment));
  }
}

TEST(PolicyTest, RolloutScoresAgreeWithTheBatchedLoss) {
  // The rollout scores in plain C++; the loss recomputes every probability
  // with LibTorch. With all returns 1 the policy term is minus the summed
  // log-probabilities of the chosen actions, which the trace also gives.
  Graph graph = testGraph(5, 60);
  ModelConfig withPrior = smallConfig();
  withPrior.heuristicPrior = true;
  ModelConfig withJoin = smallConfig();
  withJoin.joinFeature = true;
  ModelConfig projected = withPrior;
  projected.projectSums = true;
  ModelConfig withMemory = withJoin;
  withMemory.memoryFeature = true;
  // Every column at once: the completion makespans sit between the join
  // split and the memory pressure.
  ModelConfig withLookahead = withMemory;
  withLookahead.lookahead = true;
  ASSERT_TRUE(graph.hasOutputBytes());
  // Tight enough that some devices overflow (the memory prior's rows).
  double total = 0;
  for (double bytes : graph.outputBytesList())
    total += bytes;
  const std::vector<double> capacities(4, total / 8);
  for (const ModelConfig &config :
       {smallConfig(), ModelConfig::reference(), withPrior, withJoin, projected,
        withMemory, withLookahead}) {
    torch::manual_seed(2);
    DualPolicyNetwork network(config);
    torch::NoGradGuard noGrad; // the loss's value is enough here
    if (config.heuristicPrior) {
      // Non-zero, different weights, so that both must agree on where the
      // heuristic's choice is.
      network->selPrior.fill_(1.5);
      network->plcPrior.fill_(-0.75);
    }
    if (config.projectSums) {
      // Gains other than their initial ones, different per unit, so that
      // both must apply each gain to its own unit.
      network->selBottomGain.copy_(torch::rand({config.headHiddenSize}) * 2);
      network->selTopGain.copy_(torch::rand({config.headHiddenSize}) * 2);
      network->plcSumGain.copy_(torch::rand({config.headHiddenSize}) * 2);
    }
    GraphTensors tensors = buildGraphTensors(graph);
    EncodedGraph encoded = encodeGraph(*network, tensors);
    RolloutInputs inputs = prepareRollout(*network, encoded, tensors);
    PlacementEnvironment env;
    RolloutEngine engine;
    EpisodeRecord record;
    std::vector<StepTrace> trace;
    Random random(0);
    RolloutOptions options;
    if (config.memoryFeature) {
      options.memoryCapacities = &capacities;
      // Not the initial value, so that both must agree on where it goes.
      network->memoryPrior.fill_(-1.25);
      inputs = prepareRollout(*network, encoded, tensors);
    }
    if (config.lookahead) {
      // Small enough that the network's scores still count.
      network->lookaheadPrior.fill_(0.9);
      inputs = prepareRollout(*network, encoded, tensors);
    }
    engine.run(env, graph, 4, config.startEstimate, inputs.weights,
               inputs.tables, options, random, &record, &trace);
    if (config.memoryFeature) {
      EXPECT_FALSE(record.plcMemoryRows.empty());
    }
    if (config.lookahead) {
      EXPECT_EQ(record.plcLookaheadRows.size(), record.node.size());
    }
    double expected = 0;
    for (const StepTrace &step : trace) {
      auto at = std::find(step.candidates.begin(), step.candidates.end(),
                          step.node) -
                step.candidates.begin();
      expected -= std::log(step.candidateProbability[at]);
      expected -= std::log(step.deviceProbability[step.device]);
    }
    LossWeights weights;
    weights.policyGradient = 1;
    weights.returns.assign(graph.numNodes(), 1.0);
    LossTerms terms =
        computeEpisodeLoss(*network, tensors, encoded, record, weights);
    EXPECT_NEAR(terms.policy, expected, 1e-3 * std::abs(expected) + 1e-3)
        << config.describe();
    EXPECT_GT(terms.decisions, graph.numNodes());
  }
}

TEST(PolicyTest, ArchitectureSpecsSetEveryKey) {
  std::string error;
  auto parsed = parseModelConfig(
      "slim,hidden=32,head=16,rounds=6,edge=full,rank=4,shared=0,"
      "estimate=device-load,prior=0,join=1,project=0,memory=1,lookahead=1",
      &error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->describe(),
            "hidden=32 head=16 rounds=6 edge=full encoders=separate "
            "estimate=device-load prior=off join=on project=off memory=on "
            "lookahead=on");
  EXPECT_EQ(parsed->deviceFeatureCount(), 8);
  EXPECT_EQ(parseModelConfig("reference,shared=1,prior=1,project=1", &error)
                ->describe(),
            "hidden=128 head=64 rounds=6 edge=full encoders=shared "
            "estimate=earliest-start prior=on join=off project=on "
            "memory=off lookahead=off");
  for (const char *spec :
       {"slim,shared=2", "slim,prior=yes", "slim,join=", "slim,project=-1",
        "slim,memory=2", "slim,lookahead=on"}) {
    EXPECT_FALSE(parseModelConfig(spec, &error)) << spec;
    EXPECT_NE(error.find("needs an integer in [0, 1]"), std::string::npos)
        << error;
  }
}

TEST(PolicyTest, SameSeedSamePlacement) {
  Graph graph = testGraph(9, 50);
  auto a = LearnedPolicy::create(smallConfig(), 42);
  auto b = LearnedPolicy::create(smallConfig(), 42);
  auto c = LearnedPolicy::create(smallConfig(), 43);
  auto traceA = a->trace(graph, 4), traceB = b->trace(graph, 4),
       traceC = c->trace(graph, 4);
  ASSERT_TRUE(traceA && traceB && traceC);
  bool anyDifferent = false;
  for (size_t i = 0; i < traceA->size(); ++i) {
    EXPECT_EQ((*traceA)[i].candidateProbability,
              (*traceB)[i].candidateProbability);
    EXPECT_EQ((*traceA)[i].deviceProbability, (*traceB)[i].deviceProbability);
    anyDifferent |=
        (*traceA)[i].deviceProbability != (*traceC)[i].deviceProbability;
  }
  EXPECT_TRUE(anyDifferent);

  // Sampled rollouts: same seed, same result; never worse than greedy.
  PlaceOptions options;
  options.samples = 8;
  options.seed = 3;
  auto greedy = a->place(graph, 4);
  auto first = a->place(graph, 4, options);
  auto second = b->place(graph, 4, options);
  ASSERT_TRUE(greedy && first && second);
  EXPECT_EQ(first->assignment, second->assignment);
  EXPECT_LE(first->makespan, greedy->makespan);
}

/// A small model with the join feature and the completions whose lookahead
/// prior (1000) outweighs everything else PLC scores.
std::unique_ptr<LearnedPolicy> lookaheadFollower(uint64_t seed) {
  ModelConfig config = ModelConfig::slim();
  config.joinFeature = true;
  config.lookahead = true;
  config.hiddenSize = 32;
  config.headHiddenSize = 16;
  auto policy = LearnedPolicy::create(config, seed);
  if (policy) {
    torch::NoGradGuard noGrad;
    policy->impl().network->lookaheadPrior.fill_(1000);
  }
  return policy;
}

/// The visits the completions of a whole pass cost (RolloutOptions::
/// lookaheadVisits): the two runs that choose the rule and D - 1 a node.
int64_t wholeLookaheadVisits(const Graph &graph, int32_t devices) {
  return (2 + int64_t(graph.numNodes()) * (devices - 1)) *
         rolloutRunVisits(graph, devices);
}

TEST(PolicyTest, LookaheadIsNeverWorseThanTheBetterHeuristic) {
  // A policy that follows its lookahead prior is the rollout algorithm over
  // the better of critical path and join-aware: whatever order SEL takes,
  // its placement is never worse than that heuristic's, and strictly better
  // somewhere. Past its budget it reads no completions at all.
  auto policy = lookaheadFollower(5);
  ASSERT_TRUE(policy);
  int32_t better = 0, changed = 0, pairs = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = testGraph(seed, 30 + 10 * static_cast<int32_t>(seed));
    for (int32_t devices : {2, 3, 5}) {
      Simulator simulator(graph, devices);
      const double heuristic =
          std::min(simulator.run(placeCriticalPath(graph, devices)),
                   simulator.run(placeJoinAware(graph, devices)));
      std::string error;
      auto placed = policy->place(graph, devices, {}, &error);
      ASSERT_TRUE(placed) << error;
      EXPECT_LE(placed->makespan, heuristic) << seed << " " << devices;
      better += placed->makespan < heuristic;
      ++pairs;
      // Same model, same placement.
      EXPECT_EQ(policy->place(graph, devices)->assignment, placed->assignment);
      // No budget: no completions, so the prior never applies.
      PlaceOptions none;
      none.lookaheadVisits = 0;
      auto steps = policy->trace(graph, devices);
      auto blind = policy->place(graph, devices, none, &error);
      ASSERT_TRUE(steps && blind) << error;
      for (const PolicyStep &step : *steps)
        EXPECT_EQ(placed->assignment[step.node], step.device);
      changed += blind->assignment != placed->assignment;
      // Every step's completions or none: the whole pass is the default's
      // (one visit short of it: PastTheBudgetFollowsTheBetterRule).
      PlaceOptions exact;
      exact.lookaheadVisits = wholeLookaheadVisits(graph, devices);
      EXPECT_EQ(policy->place(graph, devices, exact)->assignment,
                placed->assignment);
    }
  }
  EXPECT_GT(better, pairs / 3);
  EXPECT_GT(changed, pairs / 3);
}

TEST(PolicyTest, PastTheBudgetFollowsTheBetterRule) {
  // Without bounded-horizon completions (horizonNodes 0, the default), a
  // graph too large for the completions gets the rule they would complete
  // with: the
  // lookahead prior goes to the device the better of critical path and
  // join-aware picks at each step. With SEL following its critical-path
  // prior as well, the placement is that heuristic's. The two runs that
  // choose the rule are the least budget that does this; below it the
  // prior never applies.
  auto policy = lookaheadFollower(7);
  ASSERT_TRUE(policy);
  {
    torch::NoGradGuard noGrad;
    policy->impl().network->selPrior.fill_(1000);
  }
  int32_t joinAwareBetter = 0, criticalPathBetter = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = testGraph(seed, 30 + 10 * static_cast<int32_t>(seed));
    for (int32_t devices : {2, 3, 5}) {
      Simulator simulator(graph, devices);
      std::vector<DeviceId> critical = placeCriticalPath(graph, devices);
      std::vector<DeviceId> join = placeJoinAware(graph, devices);
      const bool joinWins = simulator.run(join) <= simulator.run(critical);
      if (critical != join)
        ++(joinWins ? joinAwareBetter : criticalPathBetter);
      const int64_t run = rolloutRunVisits(graph, devices);
      PlaceOptions past, least, below, none;
      past.lookaheadVisits = wholeLookaheadVisits(graph, devices) - 1;
      least.lookaheadVisits = 2 * run;
      below.lookaheadVisits = 2 * run - 1;
      none.lookaheadVisits = 0;
      std::string error;
      auto followed = policy->place(graph, devices, past, &error);
      ASSERT_TRUE(followed) << error;
      EXPECT_EQ(followed->assignment, joinWins ? join : critical)
          << seed << " " << devices;
      EXPECT_EQ(policy->place(graph, devices, least)->assignment,
                followed->assignment);
      EXPECT_EQ(policy->place(graph, devices, below)->assignment,
                policy->place(graph, devices, none)->assignment);
    }
  }
  // Both rules are followed somewhere.
  EXPECT_GT(joinAwareBetter, 0);
  EXPECT_GT(criticalPathBetter, 0);
}

TEST(PolicyTest, PastTheBudgetReadsBoundedHorizonCompletions) {
  // Asked for (horizonNodes > 0), a graph too large for the completions
  // gets bounded-horizon ones (Horizon.h) on top of the rule: the lookahead
  // prior goes to the device they estimate shortest where that beats the
  // rule's device. The placement is deterministic, differs from the rule's
  // somewhere, and is the same for any budget from the two runs that
  // choose the rule up to the whole completions (the horizon's cost is
  // bounded per step, not budgeted).
  auto policy = lookaheadFollower(7);
  ASSERT_TRUE(policy);
  {
    torch::NoGradGuard noGrad;
    policy->impl().network->selPrior.fill_(1000);
  }
  int32_t differs = 0, pairs = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = testGraph(seed, 30 + 10 * static_cast<int32_t>(seed));
    for (int32_t devices : {2, 3, 5}) {
      PlaceOptions past, little, rule;
      past.lookaheadVisits = wholeLookaheadVisits(graph, devices) - 1;
      past.horizonNodes = little.horizonNodes = kHorizonNodes;
      little.lookaheadVisits = 2 * rolloutRunVisits(graph, devices);
      rule = past;
      rule.horizonNodes = 0;
      std::string error;
      auto horizon = policy->place(graph, devices, past, &error);
      ASSERT_TRUE(horizon) << error;
      EXPECT_EQ(policy->place(graph, devices, past)->assignment,
                horizon->assignment);
      EXPECT_EQ(policy->place(graph, devices, little)->assignment,
                horizon->assignment);
      auto followed = policy->place(graph, devices, rule, &error);
      ASSERT_TRUE(followed) << error;
      differs += horizon->assignment != followed->assignment;
      ++pairs;
    }
  }
  EXPECT_GT(differs, pairs / 3);
}

// The greedy pass scores only the devices PLC's Lipschitz bound cannot
// rule out (DeviceBound.cpp); trace() scores every device. Both must pick
// the same devices: a bound short of the true difference would show here
// (the priors of a fresh model, 8 to 32, and of the default model, up to
// 128, leave most devices to the bound at D >= 8).
TEST(PolicyTest, BoundedDeviceChoiceIsTheFullArgmax) {
  std::vector<std::unique_ptr<LearnedPolicy>> policies;
  ModelConfig config = ModelConfig::slim();
  config.joinFeature = config.lookahead = true;
  policies.push_back(LearnedPolicy::create(config, 7));
  if (LearnedPolicy::hasDefaultModel())
    policies.push_back(LearnedPolicy::loadDefault());
  for (const auto &policy : policies) {
    ASSERT_TRUE(policy);
    for (uint64_t seed : {11, 12})
      for (int32_t devices : {2, 8, 32}) {
        Graph graph = test_support::randomLayeredGraph(seed, 120, 12);
        std::string error;
        auto steps = policy->trace(graph, devices, &error);
        ASSERT_TRUE(steps) << error;
        std::vector<DeviceId> traced(graph.numNodes(), -1);
        for (const PolicyStep &step : *steps)
          traced[step.node] = step.device;
        auto placed = policy->place(graph, devices, PlaceOptions(), &error);
        ASSERT_TRUE(placed) << error;
        EXPECT_EQ(placed->assignment, traced)
            << "seed " << seed << ", D = " << devices;
      }
  }
}

TEST(PolicyTest, ModelFileRoundTrip) {
  Graph graph = testGraph(11, 50);
  ModelConfig withPrior = smallConfig();
  withPrior.heuristicPrior = true;
  ModelConfig withJoin = withPrior;
  withJoin.joinFeature = true;
  ModelConfig projected = withPrior;
  projected.projectSums = true;
  ModelConfig withMemory = withPrior;
  withMemory.memoryFeature = true;
  for (const ModelConfig &config : {smallConfig(), ModelConfig::reference(),
                                    withPrior, withJoin, projected,
                                    withMemory}) {
    auto policy = LearnedPolicy::create(config, 7);
    std::string path = tempPath("roundtrip.pt"), error;
    ASSERT_TRUE(policy->save(path, &error)) << error;
    auto loaded = LearnedPolicy::load(path, &error);
    ASSERT_TRUE(loaded) << error;
    EXPECT_EQ(loaded->config().describe(), config.describe());
    EXPECT_EQ(loaded->numParameters(), policy->numParameters());
    auto before = policy->trace(graph, 3), after = loaded->trace(graph, 3);
    ASSERT_TRUE(before && after);
    for (size_t i = 0; i < before->size(); ++i) {
      EXPECT_EQ((*before)[i].candidateProbability,
                (*after)[i].candidateProbability);
      EXPECT_EQ((*before)[i].deviceProbability, (*after)[i].deviceProbability);
    }
    if (config.joinFeature) { // one more device-MLP column, the join prior
      EXPECT_EQ(policy->numParameters(),
                LearnedPolicy::create(withPrior, 7)->numParameters() +
                    config.hiddenSize + 1);
    }
    if (config.memoryFeature) { // one more device-MLP column, the prior
      EXPECT_EQ(policy->numParameters(),
                LearnedPolicy::create(withPrior, 7)->numParameters() +
                    config.hiddenSize + 1);
    }
    if (config.projectSums) { // three gains of head width
      EXPECT_EQ(policy->numParameters(),
                LearnedPolicy::create(withPrior, 7)->numParameters() +
                    3 * config.headHiddenSize);
    }
    std::string bytes = readBytes(path);
    auto fromMemory =
        LearnedPolicy::loadFromMemory(bytes.data(), bytes.size(), "bytes", &error);
    ASSERT_TRUE(fromMemory) << error;
    std::remove(path.c_str());
  }
}

TEST(PolicyTest, BadModelFilesGiveClearErrors) {
  std::string error;
  auto expectFailure = [&](const std::string &path, const std::string &phrase) {
    error.clear();
    EXPECT_FALSE(LearnedPolicy::load(path, &error)) << path;
    EXPECT_NE(error.find(phrase), std::string::npos)
        << "'" << error << "' lacks '" << phrase << "'";
  };
  expectFailure(tempPath("does-not-exist.pt"), "cannot open");
  writeBytes(tempPath("empty.pt"), "");
  expectFailure(tempPath("empty.pt"), "is empty");
  writeBytes(tempPath("text.pt"), std::string(4096, 'x'));
  expectFailure(tempPath("text.pt"), "not a readable model file");

  auto policy = LearnedPolicy::create(smallConfig(), 1);
  ASSERT_TRUE(policy->save(tempPath("good.pt"), &error));
  std::string good = readBytes(tempPath("good.pt"));
  for (double keep : {0.9, 0.5, 0.1}) {
    writeBytes(tempPath("truncated.pt"), good.substr(0, good.size() * keep));
    expectFailure(tempPath("truncated.pt"), "not a readable model file");
  }
  // A valid LibTorch archive that is not a policy.
  {
    torch::serialize::OutputArchive archive;
    archive.write("weights", torch::ones({3}));
    archive.save_to(tempPath("other.pt"));
    expectFailure(tempPath("other.pt"), "not a Doppler policy model");
  }
  // The configuration says hidden 32, a tensor has another shape.
  {
    DualPolicyNetwork network(smallConfig());
    torch::serialize::OutputArchive archive;
    writeNetwork(*network, archive);
    archive.write("param_selOut_weight", torch::zeros({1, 7}));
    archive.save_to(tempPath("shape.pt"));
    expectFailure(tempPath("shape.pt"),
                  "parameter 'selOut.weight' has shape [1, 7], expected [1, 16]");
  }
  // Says it reads the join-split feature, holds a 5-feature device MLP.
  {
    DualPolicyNetwork network(smallConfig());
    torch::serialize::OutputArchive archive;
    writeNetwork(*network, archive);
    archive.write("config_join", c10::IValue(int64_t(1)));
    archive.write("param_joinPrior", torch::zeros({1}));
    archive.save_to(tempPath("join.pt"));
    expectFailure(tempPath("join.pt"), "parameter 'plcDevice.weight' has "
                                       "shape [32, 5], expected [32, 6]");
  }
  // Says its sums are projected, holds no gains for them.
  {
    DualPolicyNetwork network(smallConfig());
    torch::serialize::OutputArchive archive;
    writeNetwork(*network, archive);
    archive.write("config_project", c10::IValue(int64_t(1)));
    archive.save_to(tempPath("project.pt"));
    expectFailure(tempPath("project.pt"),
                  "model lacks parameter 'selBottomGain'");
  }
  // Projected sums written, the configuration edited to say otherwise: the
  // gains have nowhere to go.
  {
    ModelConfig projected = smallConfig();
    projected.projectSums = true;
    DualPolicyNetwork network(projected);
    torch::serialize::OutputArchive archive;
    writeNetwork(*network, archive);
    archive.write("config_project", c10::IValue(int64_t(0)));
    archive.save_to(tempPath("unprojected.pt"));
    expectFailure(tempPath("unprojected.pt"),
                  "model holds parameter 'selBottomGain', which its "
                  "configuration (hidden=32 head=16 rounds=3");
  }
  // An absurd configuration value is refused before allocating anything.
  {
    DualPolicyNetwork network(smallConfig());
    torch::serialize::OutputArchive archive;
    writeNetwork(*network, archive);
    archive.write("config_hidden", c10::IValue(int64_t(1) << 40));
    archive.save_to(tempPath("config.pt"));
    expectFailure(tempPath("config.pt"), "'config_hidden' = 1099511627776 is out "
                                         "of range");
  }
  // The same errors through the on-demand loader.
  setenv("DOPPLER_LEARNING_LIBRARY", DOPPLER_LEARNING_LIBRARY_FILE, 1);
  LearnedPolicyOptions options;
  options.modelPath = tempPath("text.pt");
  EXPECT_FALSE(placeWithLearnedPolicy(testGraph(), 2, options, &error));
  EXPECT_NE(error.find("not a readable model file"), std::string::npos) << error;
}

TEST(PolicyTest, LoaderPlacesThroughTheSharedLibrary) {
  setenv("DOPPLER_LEARNING_LIBRARY", DOPPLER_LEARNING_LIBRARY_FILE, 1);
  std::string error;
  ASSERT_TRUE(isLearnedPolicyAvailable(&error)) << error;
  EXPECT_EQ(learnedPolicyLibraryPath(), DOPPLER_LEARNING_LIBRARY_FILE);
  Graph graph = testGraph(13, 60);
  auto policy = LearnedPolicy::create(smallConfig(), 5);
  std::string path = tempPath("loader.pt");
  ASSERT_TRUE(policy->save(path, &error)) << error;
  LearnedPolicyOptions options;
  options.modelPath = path;
  options.samples = 4;
  options.seed = 9;
  auto viaLoader = placeWithLearnedPolicy(graph, 3, options, &error);
  ASSERT_TRUE(viaLoader) << error;
  PlaceOptions direct;
  direct.samples = 4;
  direct.seed = 9;
  EXPECT_EQ(*viaLoader, policy->place(graph, 3, direct)->assignment);
  EXPECT_FALSE(placeWithLearnedPolicy(graph, 0, options, &error));
  EXPECT_EQ(error, "the device count must be at least 1, got 0");
  // The embedded default model, or a clear message that there is none.
  options.modelPath.clear();
  auto byDefault = placeWithLearnedPolicy(graph, 3, options, &error);
  if (LearnedPolicy::hasDefaultModel())
    EXPECT_TRUE(byDefault) << error;
  else
    EXPECT_NE(error.find("no embedded default model"), std::string::npos);
}

TEST(PolicyTest, CapacitiesSteerAMemoryAwareModel) {
  // Generated graphs, each device given 1.05 x the least busiest-device
  // peak of the heuristics (as memory-tight training does): a fresh model
  // with the priors places like the critical-path heuristic, which
  // overflows there; with the capacities its memory prior steers it off
  // devices the node would overflow.
  TrainingSetOptions set;
  set.count = 12;
  set.seed = 20261;
  set.maxNodes = 160;
  ModelConfig config = smallConfig();
  config.heuristicPrior = true;
  config.memoryFeature = true;
  auto policy = LearnedPolicy::create(config, 3);
  double blindOverflow = 0, awareOverflow = 0;
  int32_t pairs = 0;
  std::optional<PlacementResult> aware;
  Graph lastGraph;
  PlaceOptions tight;
  for (GeneratedGraph &g : generateTrainingSet(set)) {
    ASSERT_TRUE(g.graph.hasOutputBytes());
    for (int32_t devices : {2, 4}) {
      SimulatorOptions memory;
      memory.trackMemory = true;
      Simulator simulator(g.graph, devices, memory);
      auto busiest = [&](const std::vector<DeviceId> &placement) {
        simulator.run(placement);
        const std::vector<double> &peaks = simulator.schedule().peakMemory;
        return *std::max_element(peaks.begin(), peaks.end());
      };
      double least = std::min(
          {busiest(placeRoundRobin(g.graph, devices)),
           busiest(placeCriticalPath(g.graph, devices)),
           busiest(placeJoinAware(g.graph, devices)),
           busiest(placeHeft(g.graph, devices))});
      tight.memoryCapacities.assign(devices, 1.05 * least);
      auto blind = policy->place(g.graph, devices);
      aware = policy->place(g.graph, devices, tight);
      ASSERT_TRUE(blind && aware);
      EXPECT_EQ(blind->memoryOverflowBytes, 0); // nothing to judge by
      simulator.run(blind->assignment);
      for (double peak : simulator.schedule().peakMemory)
        blindOverflow += std::max(0.0, peak - 1.05 * least) / least;
      awareOverflow += aware->memoryOverflowBytes / least;
      ++pairs;
      lastGraph = g.graph;
    }
  }
  EXPECT_GT(blindOverflow, 0);
  EXPECT_LT(awareOverflow, 0.75 * blindOverflow)
      << "over " << pairs << " pairs, blind " << blindOverflow;
  // Sampled rollouts rank by makespan (the fit comes after): never slower
  // than greedy; their overflow is the winner's.
  const Graph &graph = lastGraph;
  tight.samples = 6;
  tight.seed = 2;
  auto sampled = policy->place(graph, 4, tight);
  ASSERT_TRUE(sampled);
  EXPECT_LE(sampled->makespan, aware->makespan);
  tight.samples = 0;

  std::string error;
  PlaceOptions wrongCount;
  wrongCount.memoryCapacities.assign(3, 1e6);
  EXPECT_FALSE(policy->place(graph, 4, wrongCount, &error));
  EXPECT_EQ(error, "expected 4 memory capacities, got 3");
  PlaceOptions negative;
  negative.memoryCapacities = {1e6, -1, 1e6, 1e6};
  EXPECT_FALSE(policy->place(graph, 4, negative, &error));
  EXPECT_EQ(error, "device 1: memory capacity -1 is negative or not a number");

  // Through the shared library (the capacities cross the C entry table).
  setenv("DOPPLER_LEARNING_LIBRARY", DOPPLER_LEARNING_LIBRARY_FILE, 1);
  std::string path = tempPath("memory.pt");
  ASSERT_TRUE(policy->save(path, &error)) << error;
  LearnedPolicyOptions options;
  options.modelPath = path;
  options.memoryCapacities = tight.memoryCapacities;
  auto viaLoader = placeWithLearnedPolicy(graph, 4, options, &error);
  ASSERT_TRUE(viaLoader) << error;
  EXPECT_EQ(*viaLoader, aware->assignment);
  options.memoryCapacities.pop_back();
  EXPECT_FALSE(placeWithLearnedPolicy(graph, 4, options, &error));
  EXPECT_EQ(error, "expected 4 memory capacities, got 3");
}

TEST(PolicyTest, LoaderReportsAMissingLibrary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // In a fresh process, so that no earlier test has loaded the library.
  EXPECT_EXIT(
      {
        setenv("DOPPLER_LEARNING_LIBRARY", "/nonexistent/libDopplerLearning.so",
               1);
        std::string error;
        bool placed = placeWithLearnedPolicy(testGraph(), 2, {}, &error)
                          .has_value();
        bool clear =
            error.rfind("learned policy unavailable: cannot load "
                        "libDopplerLearning.so (tried "
                        "/nonexistent/libDopplerLearning.so: not found)",
                        0) == 0;
        std::fprintf(stderr, "%s\n", error.c_str());
        std::exit(!placed && clear ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "learned policy unavailable");
}
