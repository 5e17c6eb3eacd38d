//===- TrainTool.h - What doppler-train's files share -----------*- C++ -*-===//
//
// doppler-train.cpp reads the command line and trains; Compare.cpp holds its
// --compare mode (a model against the heuristics, on graph files or
// generated ones) and its --baseline mode (GDP, Placeto). Both use the parsed arguments, the error exit and the
// graph loading declared here.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TOOLS_DOPPLER_TRAIN_TRAINTOOL_H
#define DOPPLER_TOOLS_DOPPLER_TRAIN_TRAINTOOL_H

#include "Doppler/Analysis/GraphLoader.h"
#include "Doppler/Placement/Learning/Trainer.h"
#include "Doppler/Placement/Simulator.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace doppler_train {

/// The command line, parsed and checked (readArguments in doppler-train.cpp).
struct Arguments {
  std::string baseline;
  std::vector<std::string> graphs;
  std::string devices;
  std::string stages, episodes, lr, epsilon, entropy;
  std::string output, init, checkpoint, log, architecture;
  /// --architecture was given (its default is "slim").
  bool architectureGiven = false;
  std::string compare, writeGenerated, oracle, bestPlacement;
  std::string function, system, backend;
  std::string generateFamilies;
  int64_t repeat = 1, warmup = 1;
  int64_t seed = 0, checkpointEvery = 500, evaluateEvery = 100;
  int64_t evaluationPairs = 64, generate = 0, generateSeed = 0;
  int64_t generateMaxNodes = 320, samples = 0, horizon = -1;
  double capacityFactor = 0;
  std::string episodesPerUpdate;
  double gamma = 0.99;
  double regressionWeight = 1.0;
  double priorLearningRateScale = 1.0;
  double memoryTight = 0, memoryOverflowWeight = 2.0;
  bool resume = false, sampleActions = false, keepBest = true;
  bool criticalPathBaseline = false;
  bool imitateBetterHeuristic = false;
  bool progress = true;
};

/// Prints "error: MESSAGE" and exits with status 1.
[[noreturn]] void fail(const std::string &message);
/// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> splitList(const std::string &text);
/// --devices: "4", "2,4,8" or "2-8" (each count in [1, kMaxDevices]).
std::vector<int32_t> parseDevices(const std::string &text);
/// How .mlir graph files are read (--function, --system).
doppler::GraphLoadOptions graphLoadOptions(const Arguments &args);
bool isMLIRFile(const std::string &path);
/// The GRAPH files, then the generated graphs. `files`, when given,
/// receives per graph the file it came from ("" for generated ones).
std::vector<doppler::placement::TrainingGraph>
loadGraphs(const Arguments &args, std::vector<std::string> *files = nullptr);

/// A graph and a device count to place it on (--moves, --construct).
struct GraphPair {
  const doppler::placement::TrainingGraph *graph;
  int32_t devices;
};
/// --devices over the graphs: with as many lists as graphs (more than one)
/// each graph its own list, else every count for every graph.
std::vector<GraphPair>
graphPairs(const std::vector<doppler::placement::TrainingGraph> &graphs,
           const std::string &devicesText);
/// The better of critical path and join-aware (critical path on a tie):
/// "CP" or "JA" in *name, its makespan in *makespan when given; fails on
/// error.
std::vector<doppler::placement::DeviceId>
betterHeuristic(doppler::placement::Simulator &judge, const char **name,
                double *makespan = nullptr);
/// This thread's CPU seconds: what the time bars compare (less disturbed
/// by other processes on a shared machine than wall-clock time).
double threadCpuSeconds();
/// The middle value (the upper one of an even count); 0 for none.
double medianOf(std::vector<double> values);

/// --compare MODEL: the model against critical path and join-aware on every
/// (graph, device count) pair, or under memory with --capacity-factor.
int compare(const Arguments &args);
/// --baseline gdp|placeto: the baseline trained per (graph, device count)
/// pair for --episodes episodes against critical path; with --log, one
/// JSON line per episode (the sample-efficiency curve).
int trainBaselines(const Arguments &args);

/// --moves train|analyse|compare (Moves.cpp): the learned improvement moves
/// of LearnedMoves.h. movesRequested(): --moves was given.
extern llvm::cl::OptionCategory movesCategory;
bool movesRequested();
int moves(const Arguments &args);
/// --construct labels|train|eval (Construct.cpp): annealing distilled into
/// a construction (LearnedConstruct.h).
extern llvm::cl::OptionCategory constructCategory;
bool constructRequested();
int construct(const Arguments &args);

} // namespace doppler_train

#endif // DOPPLER_TOOLS_DOPPLER_TRAIN_TRAINTOOL_H
