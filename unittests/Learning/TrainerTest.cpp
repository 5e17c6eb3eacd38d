//===- TrainerTest.cpp - Training stages, seeds, checkpoints --------------===//

#include "LearningTestSupport.h"
#include "PolicyImpl.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"
#include "Doppler/Placement/Learning/Trainer.h"
#include "Doppler/Placement/Simulator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace doppler::placement;

namespace {

using test_support::smallConfig;

Graph randomGraph(uint64_t seed, int32_t nodes) {
  return test_support::randomLayeredGraph(seed, nodes, /*maxWidth=*/5);
}

std::string trainerTempPath(const std::string &name) {
  return ::testing::TempDir() + "doppler-trainer-test-" + name;
}

TrainerOptions smallRun(uint64_t seed) {
  TrainerOptions options;
  options.graphs.push_back({"a", randomGraph(1, 30)});
  options.graphs.push_back({"b", randomGraph(2, 24)});
  options.deviceCounts = {2, 3};
  options.stages = {StageOptions::defaults(TrainingStage::Imitation, 12),
                    StageOptions::defaults(TrainingStage::SimulationRL, 12)};
  options.model = smallConfig();
  options.seed = seed;
  options.evaluateEvery = 5;
  options.progress = false;
  return options;
}

/// Every parameter equal, bit for bit.
bool sameParameters(LearnedPolicy &a, LearnedPolicy &b) {
  auto pa = a.impl().network->named_parameters();
  auto pb = b.impl().network->named_parameters();
  if (pa.size() != pb.size())
    return false;
  for (const auto &item : pa)
    if (!torch::equal(item.value(), pb[item.key()]))
      return false;
  return true;
}

/// Runs `episodes` episodes of `options` (which names a checkpoint) in one
/// session and saves the checkpoint, then returns a new session resumed
/// from it (null, after a test failure, when a step fails).
std::unique_ptr<TrainingSession> interruptAndResume(TrainerOptions options,
                                                    int episodes) {
  std::string error;
  {
    auto session = TrainingSession::create(options, &error);
    bool ran = session != nullptr;
    for (int i = 0; ran && i < episodes; ++i)
      ran = session->runEpisode(&error).has_value();
    if (!ran || !session->saveCheckpoint(&error)) {
      ADD_FAILURE() << error;
      return nullptr;
    }
  }
  options.resume = true;
  auto resumed = TrainingSession::create(options, &error);
  if (!resumed)
    ADD_FAILURE() << error;
  return resumed;
}

} // namespace

TEST(TrainerTest, ImitationReachesTheTeacher) {
  // A small graph with distinct b-levels; after imitation the greedy policy
  // follows the critical-path rule and places as well as it does.
  Graph graph = randomGraph(7, 36);
  const int32_t devices = 3;
  TrainerOptions options;
  options.graphs.push_back({"small", graph});
  options.deviceCounts = {devices};
  StageOptions il = StageOptions::defaults(TrainingStage::Imitation, 200);
  il.learningRate = 3e-3;
  options.stages = {il};
  options.model = smallConfig();
  options.seed = 1;
  options.evaluateEvery = 0;
  options.progress = false;
  std::string error;
  auto session = TrainingSession::create(options, &error);
  ASSERT_TRUE(session) << error;
  std::optional<EpisodeStats> last;
  while (!session->finished()) {
    last = session->runEpisode(&error);
    ASSERT_TRUE(last) << error;
  }
  // The last episodes explore little (epsilon -> 0): they match the teacher.
  EXPECT_GT(last->selectionMatch, 0.95);
  EXPECT_GT(last->placementMatch, 0.95);
  auto policy = session->currentPolicy(&error);
  ASSERT_TRUE(policy) << error;
  auto placed = policy->place(graph, devices, {}, &error);
  ASSERT_TRUE(placed) << error;
  double teacher =
      Simulator(graph, devices).run(placeCriticalPath(graph, devices));
  EXPECT_LE(placed->makespan, teacher * (1 + 1e-9));
}

TEST(TrainerTest, ImitationWithThePriorBecomesTheHeuristic) {
  // A decomposed matmul chain: many candidates share the largest b-level
  // and many devices the smallest est, so only the heuristic's own
  // tie-breaks give its placement. With the prior, imitation targets
  // exactly those choices, and the greedy policy becomes the heuristic.
  ChainMatmulShape shape;
  shape.numMatrices = 4;
  shape.partitions = 2;
  Graph graph = generateChainMatmul(shape, CostRates())->graph;
  const int32_t devices = 4;
  TrainerOptions options;
  options.graphs.push_back({"chain", graph});
  options.deviceCounts = {devices};
  StageOptions il = StageOptions::defaults(TrainingStage::Imitation, 150);
  il.learningRate = 3e-3;
  options.stages = {il};
  options.model = smallConfig();
  options.model.heuristicPrior = true;
  options.seed = 3;
  options.evaluateEvery = 0;
  options.progress = false;
  std::string error;
  auto session = TrainingSession::create(options, &error);
  ASSERT_TRUE(session) << error;
  while (!session->finished())
    ASSERT_TRUE(session->runEpisode(&error)) << error;
  auto policy = session->currentPolicy(&error);
  ASSERT_TRUE(policy) << error;
  auto placed = policy->place(graph, devices, {}, &error);
  ASSERT_TRUE(placed) << error;
  EXPECT_EQ(placed->assignment, placeCriticalPath(graph, devices));
}

TEST(TrainerTest, SameSeedSameModel) {
  std::string error;
  auto first = TrainingSession::create(smallRun(3), &error);
  auto second = TrainingSession::create(smallRun(3), &error);
  auto other = TrainingSession::create(smallRun(4), &error);
  ASSERT_TRUE(first && second && other) << error;
  for (auto *session : {first.get(), second.get(), other.get()})
    while (!session->finished())
      ASSERT_TRUE(session->runEpisode(&error)) << error;
  auto a = first->currentPolicy(), b = second->currentPolicy(),
       c = other->currentPolicy();
  EXPECT_TRUE(sameParameters(*a, *b));
  EXPECT_FALSE(sameParameters(*a, *c));
}

TEST(TrainerTest, JoinPriorStartAndFastPriorsSurviveAResume) {
  // The join-aware prior: imitation leaves it alone, RL picks its start
  // and moves it (here 20 times faster than the rest). Interrupted right
  // at the end of imitation and resumed, the run ends where an
  // uninterrupted one does.
  auto options = [](const std::string &checkpoint) {
    TrainerOptions run = smallRun(6);
    run.model.heuristicPrior = true;
    run.model.joinFeature = true;
    run.priorLearningRateScale = 20;
    run.sampleActions = true;
    run.checkpointPath = checkpoint;
    run.checkpointEvery = 0;
    return run;
  };
  std::string error;
  auto uninterrupted =
      TrainingSession::create(options(trainerTempPath("join-straight.ckpt")), &error);
  ASSERT_TRUE(uninterrupted) << error;
  const float start =
      uninterrupted->currentPolicy()->impl().network->joinPrior.item<float>();
  for (int i = 0; i < 12; ++i)
    ASSERT_TRUE(uninterrupted->runEpisode(&error)) << error;
  EXPECT_EQ(
      uninterrupted->currentPolicy()->impl().network->joinPrior.item<float>(),
      start);
  while (!uninterrupted->finished())
    ASSERT_TRUE(uninterrupted->runEpisode(&error)) << error;
  EXPECT_NE(
      uninterrupted->currentPolicy()->impl().network->joinPrior.item<float>(),
      start);

  TrainerOptions interrupted = options(trainerTempPath("join-interrupted.ckpt"));
  auto resumed = interruptAndResume(interrupted, 12);
  ASSERT_TRUE(resumed);
  while (!resumed->finished())
    ASSERT_TRUE(resumed->runEpisode(&error)) << error;
  EXPECT_TRUE(sameParameters(*uninterrupted->currentPolicy(),
                             *resumed->currentPolicy()));

  // Another prior learning rate is another setup: its checkpoint is refused.
  TrainerOptions other = options(interrupted.checkpointPath);
  other.priorLearningRateScale = 1;
  other.resume = true;
  EXPECT_FALSE(TrainingSession::create(other, &error));
  EXPECT_NE(error.find("different training setup"), std::string::npos)
      << error;
}

TEST(TrainerTest, ResumedRunEqualsUninterruptedRun) {
  std::string error;
  TrainerOptions straight = smallRun(5);
  // Three episodes per update: the interruption below falls between two
  // updates, so the checkpoint must carry the pending gradients too.
  for (StageOptions &stage : straight.stages)
    stage.episodesPerUpdate = 3;
  straight.checkpointPath = trainerTempPath("straight.ckpt");
  straight.checkpointEvery = 0;
  auto uninterrupted = TrainingSession::create(straight, &error);
  ASSERT_TRUE(uninterrupted) << error;
  while (!uninterrupted->finished())
    ASSERT_TRUE(uninterrupted->runEpisode(&error)) << error;

  // Stop in the middle of the first stage, after an evaluation, and go on
  // in a new session from the checkpoint.
  TrainerOptions interrupted = smallRun(5);
  for (StageOptions &stage : interrupted.stages)
    stage.episodesPerUpdate = 3;
  interrupted.checkpointPath = trainerTempPath("interrupted.ckpt");
  interrupted.checkpointEvery = 0;
  auto resumed = interruptAndResume(interrupted, 7);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->episode(), 7);
  while (!resumed->finished())
    ASSERT_TRUE(resumed->runEpisode(&error)) << error;
  EXPECT_TRUE(sameParameters(*uninterrupted->currentPolicy(),
                             *resumed->currentPolicy()));
  // The cheapest placements seen survive the checkpoint too, and are what
  // the simulator says.
  std::vector<BestPlacement> bestA = uninterrupted->bestPlacements(),
                             bestB = resumed->bestPlacements();
  ASSERT_EQ(bestA.size(), bestB.size());
  ASSERT_FALSE(bestA.empty());
  for (size_t i = 0; i < bestA.size(); ++i) {
    EXPECT_EQ(bestA[i].assignment, bestB[i].assignment);
    const Graph &graph = straight.graphs[bestA[i].graph == "a" ? 0 : 1].graph;
    EXPECT_EQ(bestA[i].makespan,
              Simulator(graph, bestA[i].devices).run(bestA[i].assignment));
  }
  ASSERT_TRUE(uninterrupted->bestEvaluation() && resumed->bestEvaluation());
  EXPECT_EQ(uninterrupted->bestEvaluation()->ratioToCriticalPath,
            resumed->bestEvaluation()->ratioToCriticalPath);

  // The checkpoint is also a model file; the output is the best model.
  ASSERT_TRUE(resumed->saveModel(trainerTempPath("best.pt"), &error)) << error;
  EXPECT_TRUE(LearnedPolicy::load(trainerTempPath("best.pt"), &error)) << error;
  EXPECT_TRUE(LearnedPolicy::load(interrupted.checkpointPath, &error)) << error;

  // A checkpoint of another setup is refused.
  TrainerOptions different = smallRun(5);
  different.deviceCounts = {4};
  different.checkpointPath = interrupted.checkpointPath;
  different.resume = true;
  EXPECT_FALSE(TrainingSession::create(different, &error));
  EXPECT_NE(error.find("different training setup"), std::string::npos) << error;
}

TEST(TrainerTest, RealRLMeasuresThroughTheOracleAndLogs) {
  TrainerOptions options = smallRun(6);
  options.stages = {StageOptions::defaults(TrainingStage::RealRL, 5)};
  std::string error;
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_EQ(error, "the real-rl stage needs a cost oracle");

  SimulatorCostOracle oracle(3);
  options.realOracle = &oracle;
  options.logPath = trainerTempPath("log.jsonl");
  options.outputPath = trainerTempPath("real.pt");
  auto summary = trainPolicy(options, &error);
  ASSERT_TRUE(summary) << error;
  EXPECT_EQ(summary->episodes, 5);
  // One measurement per episode, and the final evaluation measures the
  // greedy and the critical-path placements of the 4 (graph, D) pairs.
  EXPECT_EQ(oracle.calls(), 5 + 2 * 4);
  std::ifstream log(options.logPath);
  std::string line;
  int episodes = 0;
  while (std::getline(log, line)) {
    auto json = nlohmann::json::parse(line);
    if (!json.contains("episode"))
      continue;
    ++episodes;
    for (const char *key : {"stage", "makespan", "running_average", "loss",
                            "imitation_loss", "policy_loss", "seconds"})
      EXPECT_TRUE(json.contains(key)) << key;
    EXPECT_EQ(json["stage"], "real-rl");
    EXPECT_EQ(json["cost_source"], "simulator");
  }
  EXPECT_EQ(episodes, 5);
  EXPECT_TRUE(LearnedPolicy::load(options.outputPath, &error)) << error;
}

namespace {
/// Costs a thousand times the simulator's: "measured" costs that are never
/// comparable with simulated ones.
class ScaledOracle : public CostOracle {
public:
  explicit ScaledOracle(int32_t devices) : simulator_(devices) {}
  std::optional<double> measure(const Graph &graph,
                                ArrayView<DeviceId> assignment,
                                std::string *error) override {
    std::optional<double> cost = simulator_.measure(graph, assignment, error);
    if (cost)
      *cost *= 1000;
    return cost;
  }
  const char *costSource() const noexcept override { return "scaled"; }

private:
  SimulatorCostOracle simulator_;
};
} // namespace

TEST(TrainerTest, AfterRealRLBestPlacementsAndEvaluationsAreMeasured) {
  TrainerOptions options = smallRun(8);
  options.deviceCounts = {3};
  options.stages = {StageOptions::defaults(TrainingStage::Imitation, 4),
                    StageOptions::defaults(TrainingStage::SimulationRL, 4),
                    StageOptions::defaults(TrainingStage::RealRL, 6)};
  options.evaluateEvery = 4;
  options.logPath = trainerTempPath("measured.jsonl");
  ScaledOracle oracle(3);
  options.realOracle = &oracle;
  std::string error;
  auto session = TrainingSession::create(options, &error);
  ASSERT_TRUE(session) << error;
  // Every best placement has `source` and costs `scale` x the simulator's.
  auto expectBest = [&](const std::string &source, double scale) {
    std::vector<BestPlacement> placements = session->bestPlacements();
    ASSERT_FALSE(placements.empty());
    for (const BestPlacement &best : placements) {
      EXPECT_EQ(best.costSource, source);
      const Graph &graph = best.graph == "a" ? options.graphs[0].graph
                                             : options.graphs[1].graph;
      EXPECT_EQ(best.makespan,
                scale * Simulator(graph, 3).run(best.assignment));
    }
  };
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(session->runEpisode(&error)) << error;
  expectBest("simulator", 1); // before real-rl
  while (!session->finished())
    ASSERT_TRUE(session->runEpisode(&error)) << error;
  // After: only measured ones, though every simulated cost is 1000x lower.
  expectBest("scaled", 1000);
  // Evaluations after episodes 4 and 8 simulate (no real-rl episode has run
  // yet), those after 12 and 14 measure; the kept model is one of the
  // latter, though the scores of all four are comparable ratios here.
  std::ifstream log(options.logPath);
  std::string line;
  std::vector<std::pair<int64_t, std::string>> evaluations;
  while (std::getline(log, line)) {
    auto json = nlohmann::json::parse(line);
    if (json.contains("evaluation"))
      evaluations.push_back({json["evaluation"].get<int64_t>(),
                             json["cost_source"].get<std::string>()});
  }
  std::vector<std::pair<int64_t, std::string>> expected = {
      {4, "simulator"}, {8, "simulator"}, {12, "scaled"}, {14, "scaled"}};
  EXPECT_EQ(evaluations, expected);
  ASSERT_TRUE(session->bestEvaluation());
  EXPECT_GE(session->bestEvaluation()->episode, 12);
  EXPECT_EQ(session->bestEvaluation()->costSource, "scaled");
}

TEST(TrainerTest, BadOptionsAreReported) {
  std::string error;
  TrainerOptions options = smallRun(1);
  options.graphs.clear();
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_EQ(error, "no training graphs");
  options = smallRun(1);
  options.deviceCounts = {0};
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_EQ(error, "device count 0 is out of range [1, 4096]");
  options = smallRun(1);
  options.resume = true;
  options.checkpointPath = trainerTempPath("missing.ckpt");
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  options = smallRun(1);
  options.initModelPath = trainerTempPath("missing.pt");
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  options = smallRun(1);
  options.memoryTightFraction = 1.5;
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_EQ(error, "the memory-tight fraction must be in [0, 1]");
  options = smallRun(1);
  options.memoryOverflowWeight = -1;
  EXPECT_FALSE(TrainingSession::create(options, &error));
  EXPECT_EQ(error, "the memory overflow weight must be a finite number >= 0");
}

namespace {
struct LoggedEpisode {
  std::string stage;
  double cost = 0, overflow = -1, memoryPrior = 0;
};

std::vector<LoggedEpisode> readEpisodes(const std::string &path) {
  std::vector<LoggedEpisode> episodes;
  std::ifstream log(path);
  std::string line;
  while (std::getline(log, line)) {
    auto json = nlohmann::json::parse(line);
    if (!json.contains("episode"))
      continue;
    LoggedEpisode e;
    e.stage = json["stage"];
    e.cost = json["makespan"];
    if (json.contains("memory_overflow"))
      e.overflow = json["memory_overflow"];
    if (json.contains("memory_prior"))
      e.memoryPrior = json["memory_prior"];
    episodes.push_back(e);
  }
  return episodes;
}
} // namespace

TEST(TrainerTest, MemoryTightPairsPenaliseOverflow) {
  // Every pair memory-tight (all have 2 or 3 devices and output bytes).
  auto run = [](double weight, const std::string &log) {
    TrainerOptions options = smallRun(4);
    options.model.heuristicPrior = true;
    options.model.memoryFeature = true;
    options.memoryTightFraction = 1;
    options.memoryOverflowWeight = weight;
    options.evaluateEvery = 0;
    options.logPath = trainerTempPath(log);
    std::string error;
    EXPECT_TRUE(trainPolicy(options, &error)) << error;
    return readEpisodes(options.logPath);
  };
  std::vector<LoggedEpisode> weighted = run(2, "tight.jsonl");
  std::vector<LoggedEpisode> unweighted = run(0, "tight0.jsonl");
  ASSERT_EQ(weighted.size(), 24u);
  ASSERT_EQ(unweighted.size(), 24u);
  int overflowing = 0;
  for (size_t e = 0; e < weighted.size(); ++e) {
    ASSERT_GE(weighted[e].overflow, 0) << "episode " << e;
    if (weighted[e].stage != "il")
      continue;
    // Imitation does not read costs: both runs place alike, and the cost
    // is the makespan times 1 + 2 x the relative overflow.
    EXPECT_EQ(weighted[e].overflow, unweighted[e].overflow);
    EXPECT_NEAR(weighted[e].cost,
                unweighted[e].cost * (1 + 2 * unweighted[e].overflow),
                1e-9 * weighted[e].cost);
    overflowing += weighted[e].overflow > 0;
    // The memory prior is left to reinforcement.
    EXPECT_EQ(weighted[e].memoryPrior, weighted[0].memoryPrior);
  }
  // Capacities are just above the least any heuristic needs: imitating
  // the critical-path heuristic overflows somewhere.
  EXPECT_GT(overflowing, 0);
  EXPECT_LT(weighted[0].memoryPrior, 0);
}
